#!/usr/bin/env python3
"""Builds the TORCH_LOGS terminal pastes in this folder from real graph texts of shared/graphs/torch-trace.

No real TORCH_LOGS paste is in shared/, so these mirror what torch prints, using real print_readable() payloads
(capture_pastes.py beside this script captures real compiled-autograd pastes live from torch 2.x instead):
- torch/_dynamo/utils.py lazy_format_graph_code(): "TRACED GRAPH\\n ===== {name} =====\\n {co_filename} {print_readable}\\n"
- torch/_logging/_internal.py TorchLogsFormatter: every line of the message gets
  "{[rankN]:}{V|I}{MMDD HH:MM:SS}.{usec} {process} {path}:{lineno}]{ [compile id]}{ [__artifact]}" + " " before it
- torch/fx/graph.py print_readable(colored=True): annotations as red(dtype) blue(shape) dim_blue(stride)
  dim_green(device), dim(";  x = None"), dim("# File: ...") (ANSI "\\x1b[31m" ... "\\x1b[0m")
- torch 2.0/2.1 used Python logging: "[2023-10-10 10:00:00,000] [0/0] logger.__artifact: [INFO] " on the first line.
Usage: python3 make_pastes.py /path/to/shared/graphs/torch-trace   (writes next to this script)
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RED, BLUE, DIM, DIM_BLUE, DIM_GREEN, RESET = "\x1b[31m", "\x1b[34m", "\x1b[2m", "\x1b[2m\x1b[34m", "\x1b[2m\x1b[32m", "\x1b[0m"


def payloads(path, kind):
    """Tab-stripped payloads of the records whose JSON starts with {"kind"."""
    out = []
    lines = open(path, encoding="utf-8", newline="").read().replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if '] {"%s"' % kind not in line:
            continue
        body = []
        while i < len(lines) and lines[i].startswith("\t"):
            body.append(lines[i][1:])
            i += 1
        out.append("\n".join(body))
    return out


def colour_annotation(match):
    dtype, shape, stride, device = match.group(1), match.group(2), match.group(3) or "", match.group(4) or ""
    text = RED + dtype + RESET + BLUE + shape + RESET
    if stride:
        text += DIM_BLUE + stride + RESET
    if device:
        text += DIM_GREEN + device + RESET
    return '"' + text + '"'


def colour(graph):
    out = []
    for line in graph.split("\n"):
        line = re.sub(r'"([a-z]+[0-9]*)(\[[^\]"]*\])(\[[^\]"]*\])?([a-z]+(?::[0-9]+)?)?"', colour_annotation, line)
        line = re.sub(r";  (.*)$", lambda m: ";  " + DIM + m.group(1) + RESET, line)
        stripped = line.lstrip(" ")
        if stripped.startswith("# "):
            line = line[: len(line) - len(stripped)] + DIM + stripped + RESET
        out.append(line)
    return "\n".join(out)


def traced_graph(name, filename, graph):
    return "TRACED GRAPH\n ===== %s =====\n %s %s\n" % (name, filename, graph)


def with_prefix(prefix, message):
    return "\n".join("%s %s" % (prefix, l) for l in message.split("\n"))


def main(trace_dir):
    jit = os.path.join(trace_dir, "inductor_provenance_jit_debug_handle_log.txt")
    multi = os.path.join(trace_dir, "multi_rank_rank_1.log")
    dynamo = payloads(jit, "dynamo_output_graph")[0]
    joint = payloads(jit, "aot_joint_graph")[0]
    forward = payloads(jit, "aot_forward_graph")[0]
    backward = payloads(jit, "aot_backward_graph")[0]
    inference = payloads(multi, "aot_inference_graph")

    # 1. TORCH_LOGS="graph_code,aot_graphs,aot_joint_graph" on a colour terminal, single process.
    dyn = "V0819 12:42:50.481000 888578 torch/_dynamo/output_graph.py:1752] [0/0] [__graph_code]"
    aot = "I0819 12:42:50.635000 888578 torch/_functorch/_aot_autograd/graph_compile.py:%d] [0/0] [__aot_graphs]"
    jnt = "I0819 12:42:50.635000 888578 torch/_functorch/_aot_autograd/graph_compile.py:1356] [0/0] [__aot_joint_graph]"
    parts = [
        "I0819 12:42:50.400000 888578 torch/_dynamo/eval_frame.py:1001] [0/0] Compiling function forward",
        with_prefix(dyn, traced_graph("__compiled_fn_1", "<eval_with_key>.0", colour(dynamo))),
        with_prefix(jnt, traced_graph("Joint graph 0", "<eval_with_key>.1", colour(joint))),
        with_prefix(aot % 1620, "aot_config id: 0, fw_metadata=ViewAndMutationMeta(input_info=[InputAliasInfo(is_leaf=True, mutates_data=False)]), inner_meta=ViewAndMutationMeta(num_intermediate_bases=0)"),
        with_prefix(aot % 1633, traced_graph("Forward graph 0", "<eval_with_key>.3", colour(forward))),
        with_prefix(aot % 1634, traced_graph("Backward graph 0", "/home/user/pytorch/torch/fx/_lazy_graph_module.py", colour(backward))),
    ]
    write("aot_graphs_colored.log", "\n".join(parts) + "\n")

    # 2. Two ranks printing at once: their lines interleave.
    rank0 = with_prefix("[rank0]:I0718 15:30:02.272000 1337 torch/_functorch/_aot_autograd/graph_compile.py:1633] [0/0] [__aot_graphs]",
                        traced_graph("Forward graph 0", "<eval_with_key>.2", inference[0]))
    rank1 = with_prefix("[rank1]:I0718 15:30:02.273000 1338 torch/_functorch/_aot_autograd/graph_compile.py:1633] [0/1] [__aot_graphs]",
                        traced_graph("Forward graph 1", "<eval_with_key>.5", inference[1]))
    a, b = rank0.split("\n"), rank1.split("\n")
    mixed = []
    for i in range(max(len(a), len(b))):
        mixed += a[i : i + 1] + b[i : i + 1]
    write("multi_rank_interleaved.log", "\n".join(mixed) + "\n")

    # 3. Pastes without glog prefixes: a coloured message copied without its prefixes, a bare print_readable()
    #    indented by 4 (quoted), and a graph printed right after a glog prefix on the same line.
    bare = traced_graph("Forward graph 0", "<eval_with_key>.3", colour(forward))
    quoted = "\n".join(("    " + l) if l else l for l in inference[2].split("\n"))
    same_line = with_prefix("I0718 15:30:03.236000 1337 torch/_inductor/compile_fx.py:900] [0/3]", inference[3])
    write("bare_paste.txt", "Here is the forward graph:\n\n" + bare + "\nand the inference graph:\n\n" + quoted + "\n\n" + same_line + "\n")

    # 4. torch 2.1 Python logging format: prefix on the first line only.
    old = "[2023-10-10 10:00:00,123] [0/0] torch._functorch.aot_autograd.__aot_graphs: [INFO] " + traced_graph(
        "Forward graph 0", "<eval_with_key>.4", forward)
    write("python_logging.log", old)

    # 5. Problems: TORCH_LOGS=graph (a table, not code), a graph with a damaged line, a good graph, a cut-off end.
    table = with_prefix("V0819 12:42:50.481000 888578 torch/_dynamo/output_graph.py:1750] [0/0] [__graph]",
                        "TRACED GRAPH\n ===== __compiled_fn_1 =====\n <eval_with_key>.0 opcode         name    target                   args        kwargs\n"
                        "-------------  ------  -----------------------  ----------  --------\nplaceholder    l_x_    L_x_                     ()          {}\n")
    damaged = forward.split("\n")
    for i, l in enumerate(damaged):
        if " = torch.ops.aten.addmm.default(primals_2, " in l:
            damaged[i] = l.replace(" = torch.ops.aten.addmm", " = = torch.ops.aten.addmm", 1)  # a doubled "="
            break
    bad = with_prefix(aot % 1633, traced_graph("Forward graph 0", "<eval_with_key>.3", "\n".join(damaged)))
    good = with_prefix(aot % 1634, traced_graph("Backward graph 0", "<eval_with_key>.4", backward))
    cut = with_prefix(aot % 1633, "TRACED GRAPH\n ===== Forward graph 1 =====")
    write("broken.log", "\n".join([table, bad, good, cut]) + "\n")


def write(name, text):
    with open(os.path.join(HERE, name), "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../../../shared/graphs/torch-trace"))
