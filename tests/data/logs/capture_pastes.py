#!/usr/bin/env python3
"""Captures real TORCH_LOGS pastes with compiled autograd, live from torch 2.x, and torch's own node counts.

Each case is a small model trained one step under torch.compile with compiled autograd on
(torch._dynamo.config.compiled_autograd = True) and TORCH_LOGS="graph_code,aot_graphs,compiled_autograd_verbose":
dynamo's graphs (graph_code), AOTAutograd's forward / backward graphs (aot_graphs) and the compiled-autograd graph,
whose class header torch prints as "<eval_with_key>.N class CompiledAutograd0(torch.nn.Module):".
A paste is what a user copies from the terminal: with `user_source`, the script itself comes first
(`cat repro.py; python repro.py`), so the paste also holds Python classes that are not graphs.

The child wraps torch.fx.GraphModule.print_readable (what every graph log line is formatted by) and records, in
printing order, each printed graph's class name and len(gm.graph.nodes): the expected values of the reader tests,
counted by torch, never by jointscope. They go to NAME.nodes.json beside NAME.log.

Trimmed: the "aot_config id: N, fw_metadata=ViewAndMutationMeta(...)" lines (one ~10 kB line per compile, not a
graph) are dropped whole; nothing else is changed.

Usage: ~/.cache/jointscope/torch-2.15/bin/python capture_pastes.py [OUT_DIR]   (default: next to this script)
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_LOGS = "graph_code,aot_graphs,compiled_autograd_verbose"

# The user's script: an MLP trained one step; "break" adds a graph break inside forward.
USER_SCRIPT = r'''import sys
import torch

torch.manual_seed(0)
torch._dynamo.config.compiled_autograd = True


class MLP(torch.nn.Module):
    def __init__(self, graph_break):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)
        self.graph_break = graph_break

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if self.graph_break:
            torch._dynamo.graph_break()
        return self.fc2(h).sum()


model = MLP(graph_break="break" in sys.argv)
opt = torch.optim.SGD(model.parameters(), lr=0.1)


@torch.compile(backend=sys.argv[1])
def train_step(x):
    loss = model(x)
    loss.backward()
    return loss


train_step(torch.randn(4, 8))
opt.step()
'''

# Runs the user's script with the logged graphs counted; writes the counts to argv[1]. Every graph log line is
# torch.fx._utils._format_graph_code(header, filename, gm.print_readable(...)), called when the record is emitted:
# print_readable's wrapper remembers each text's len(gm.graph.nodes), _format_graph_code's records what was logged
# (print_readable also runs for graphs that are never logged).
RECORDER = r'''
import json, runpy, sys
import torch.fx, torch.fx._utils
counts_path = sys.argv.pop(1)
nodes_of_text = {}
logged = []
original_print_readable = torch.fx.GraphModule.print_readable
original_format = torch.fx._utils._format_graph_code
def counting_print_readable(self, *args, **kwargs):
    text = original_print_readable(self, *args, **kwargs)
    nodes_of_text[text] = len(self.graph.nodes)
    return text
def recording_format(name, filename, graph_str):
    # "class NAME(torch.nn.Module):" is graph_str's first line.
    logged.append({"header": name.strip().strip("=").strip(), "class": graph_str.split("(", 1)[0].split()[-1],
                   "nodes": nodes_of_text[graph_str]})
    return original_format(name, filename, graph_str)
torch.fx.GraphModule.print_readable = counting_print_readable
torch.fx._utils._format_graph_code = recording_format
sys.argv = sys.argv[1:]  # the user's script sees its own argv
try:
    runpy.run_path(sys.argv[0], run_name="__main__")
finally:
    json.dump(logged, open(counts_path, "w"), indent=1)
'''

CASES = {
    # name: (script arguments, paste starts with the user's script, TORCH_LOGS)
    "compiled_autograd_mlp": (["aot_eager"], False, TORCH_LOGS),
    "compiled_autograd_graph_break": (["inductor", "break"], True, TORCH_LOGS),
    # Dynamo's debug output besides: the user's source lines it traces, bytecode listings, guards.
    "compiled_autograd_dynamo_debug": (["aot_eager", "break"], True, "+dynamo,guards,bytecode," + TORCH_LOGS),
}
# Too large to keep in tests/data/logs (+dynamo prints ~1 MB); test_torch2_paste_capture.py captures it live.
COMMITTED = ("compiled_autograd_mlp", "compiled_autograd_graph_break")


def capture(name, out_dir, python=sys.executable):
    """Writes NAME.log and NAME.nodes.json to out_dir; returns (log path, counts)."""
    args, user_source, torch_logs = CASES[name]
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "repro.py")
        recorder = os.path.join(tmp, "recorder.py")
        counts_path = os.path.join(tmp, "counts.json")
        with open(script, "w") as f:
            f.write(USER_SCRIPT)
        with open(recorder, "w") as f:
            f.write(RECORDER)
        env = dict(os.environ, TORCH_LOGS=torch_logs)
        proc = subprocess.run([python, recorder, counts_path, script] + args, env=env, capture_output=True,
                              text=True, timeout=900)
        if proc.returncode != 0:
            raise RuntimeError("%s failed (%d):\n%s" % (name, proc.returncode, proc.stderr[-4000:]))
        with open(counts_path) as f:
            counts = json.load(f)
    lines = [line for line in proc.stderr.split("\n") if "fw_metadata=ViewAndMutationMeta" not in line]
    text = (("$ cat repro.py\n" + USER_SCRIPT + "$ python repro.py\n") if user_source else "") + "\n".join(lines)
    log_path = os.path.join(out_dir, name + ".log")
    with open(log_path, "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, name + ".nodes.json"), "w") as f:
        json.dump(counts, f, indent=1)
        f.write("\n")
    return log_path, counts


if __name__ == "__main__":
    out_dir = sys.argv[1] if len(sys.argv) > 1 else HERE
    import torch

    for case in COMMITTED:
        path, counts = capture(case, out_dir)
        print("%s: torch %s, %d graphs printed %s" % (path, torch.__version__, len(counts),
                                                      [(c["header"], c["nodes"]) for c in counts]))
