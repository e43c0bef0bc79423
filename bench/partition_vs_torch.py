#!/usr/bin/env python3
"""jointscope's partition engine against torch 1.13's own min-cut partitioner, on the same real joint graphs.

Captures GPT stacks (jointscope_torch.models.gpt_stack: dim 32, 4 heads; 48 layers = 7,645 nodes) in torch 1.13 on
the CPU (the graph, not the arithmetic, is what a partitioner works on) and writes them as jointscope JSON, cached
in the output folder and rewritten only when the capture's node count or torch version changed. Then:
  - torch: min_cut_rematerialization_partition on a fresh copy of the joint graph each time (median of 3), exactly
    as export_joint runs it (jointscope_torch._capture._run_partitioner);
  - jointscope: `jointscope-cli partition FILE --ruleset torch-1.13 --json`, 5 cold processes: the median of the
    engine `seconds` they report and the median process wall time (reading the JSON file included); and one warm
    process with `--repeat 20` (median engine time over 20 runs, like torch's, which also runs in a warm process);
checks that every saved list is identical to torch's, and prints markdown rows for docs/benchmarks.md.
Exit status 1 when a saved list differs.

Usage: python3 bench/partition_vs_torch.py --cli build/app/jointscope-cli [--layers 12 48] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402

from jointscope_torch import _capture, _serialize, capture_joint  # noqa: E402
from jointscope_torch.models import gpt_stack  # noqa: E402


def is_cached(path, nodes):
    """Whether `path` holds an export of a graph of `nodes` nodes by this torch."""
    try:
        with open(path) as f:
            graph = json.load(f)["graph"]
        return len(graph["nodes"]) == nodes and graph["attributes"].get("torch_version") == torch.__version__
    except (OSError, ValueError, KeyError):
        return False


def exports_folder(cli, out, name):
    """The folder for cached exports, created: `out`, else <build dir>/name, the build dir being
    JOINTSCOPE_BUILD_DIR, else the CLI's folder, or the one above it when that is app/."""
    cli_dir = os.path.dirname(cli)  # <build>/app/jointscope-cli in a CMake build
    build_dir = os.environ.get("JOINTSCOPE_BUILD_DIR") or (
        os.path.dirname(cli_dir) if os.path.basename(cli_dir) == "app" else cli_dir)
    folder = out or os.path.join(build_dir, name)
    os.makedirs(folder, exist_ok=True)
    print("torch %s, %d cores; exports in %s" % (torch.__version__, os.cpu_count(), folder), file=sys.stderr)
    return folder


def same_saved(label, torch_saved, ours):
    """Whether the saved lists are identical; on stderr what differs when not."""
    if ours == torch_saved:
        return True
    missing = [n for n in torch_saved if n not in ours]
    extra = [n for n in ours if n not in torch_saved]
    print("%s: saved lists differ: missing %s, extra %s" % (label, missing[:20], extra[:20]), file=sys.stderr)
    return False


def export_cached(layers, folder):
    """Captures the stack; writes its JSON unless an identical capture is cached. (capture, path)."""
    model, args = gpt_stack(layers=layers)
    capture = capture_joint(model, args, min_cut=False, default_partition=False)
    name = "gpt_%d_layers" % layers
    path = os.path.join(folder, name + ".json")
    if is_cached(path, len(capture.joint_module.graph.nodes)):
        return capture, path
    attributes = {"torch_version": torch.__version__, "kind": "aot_joint_graph", "capture": capture.api}
    graph = _serialize.graph_to_json(capture.joint_module, name=name, num_fwd_outputs=capture.num_fwd_outputs,
                                     attributes=attributes, decisions=[], devices=_capture._node_devices(capture))
    _serialize.write_document(graph, path)
    return capture, path


def median_decision(run, repeats):
    """Median "seconds" of `repeats` decisions run() returns, and their "saved" list (which must not change)."""
    times, saved = [], None
    for _ in range(repeats):
        decision = run()
        times.append(decision["seconds"])
        if saved is not None and decision["saved"] != saved:
            raise RuntimeError("torch's min-cut gave different saved lists on copies of one graph")
        saved = decision["saved"]
    return statistics.median(times), saved


def torch_min_cut(capture, repeats):
    """Median seconds of torch's min-cut over `repeats` fresh copies of the captured joint graph, called as torch
    calls it (the joint inputs and the kwargs torch passed), and its saved list."""
    min_cut, _ = _capture._torch_partitioners()

    def run():
        _fw, _bw, decision = _capture._run_partitioner(
            "torch_min_cut", min_cut, _capture._snapshot(capture.joint_module), capture.joint_inputs,
            capture.partition_kwargs, capture.num_fwd_outputs, capture.settings)
        return decision

    return median_decision(run, repeats)


def jointscope(cli, path, repeats, ruleset_args=("--ruleset", "torch-1.13")):
    """(median engine seconds of cold runs, median wall seconds of cold runs, warm engine seconds, saved list,
    the ruleset the CLI used)."""
    command = [cli, "partition", path, *ruleset_args, "--json"]
    engine, wall, saved = [], [], None
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, check=True)
        wall.append(time.perf_counter() - start)
        result = json.loads(proc.stdout)
        engine.append(result["seconds"])
        if saved is not None and result["saved"] != saved:
            raise RuntimeError("jointscope-cli gave different saved lists on one graph")
        saved = result["saved"]
    warm = json.loads(subprocess.run(command + ["--repeat", "20"], capture_output=True, text=True, check=True).stdout)
    if warm["saved"] != saved:
        raise RuntimeError("jointscope-cli --repeat gave another saved list")
    return statistics.median(engine), statistics.median(wall), warm["seconds"], saved, warm["ruleset"]


def compare(cli, label, capture, path, torch_partition, ruleset_args):
    """torch's min-cut (median of 3, by `torch_partition`) against jointscope-cli (5 cold processes and a warm
    one) on one capture: the numbers of its markdown row, and whether the saved lists are identical."""
    torch_s, torch_saved = torch_partition(capture, 3)
    cold_s, wall_s, warm_s, ours, ruleset = jointscope(cli, path, 5, ruleset_args)
    return types.SimpleNamespace(nodes=format(len(capture.joint_module.graph.nodes), ","),
                                 saved=format(len(ours), ","), torch_s=torch_s, cold_s=cold_s, wall_s=wall_s,
                                 warm_s=warm_s, ruleset=ruleset, same=same_saved(label, torch_saved, ours))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="path of jointscope-cli")
    ap.add_argument("--layers", type=int, nargs="+", default=[12, 48])
    ap.add_argument("--out", help="folder for the cached exports (default: <build dir>/partition-bench, the build "
                    "dir being JOINTSCOPE_BUILD_DIR, else the CLI's folder, or the one above it when that is app/)")
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)
    out = exports_folder(cli, args.out, "partition-bench")
    print("| graph | nodes | saved | torch 1.13 min-cut | jointscope engine (warm) | ratio "
          "| engine (cold) | `jointscope-cli` cold wall | ratio | identical |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    identical = True
    for layers in args.layers:
        capture, path = export_cached(layers, out)
        r = compare(cli, "%d layers" % layers, capture, path, torch_min_cut, ("--ruleset", "torch-1.13"))
        identical = identical and r.same
        print("| GPT, %d layers | %s | %s | %.3f s | %.2f ms | **%.0f×** | %.2f ms | %.1f ms | %.0f× | %s |" % (
            layers, r.nodes, r.saved, r.torch_s, r.warm_s * 1e3, r.torch_s / r.warm_s, r.cold_s * 1e3,
            r.wall_s * 1e3, r.torch_s / r.wall_s, "yes" if r.same else "NO"), flush=True)
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
