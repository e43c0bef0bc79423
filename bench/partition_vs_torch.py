#!/usr/bin/env python3
"""jointscope's partition engine against torch 1.13's own min-cut partitioner, on the same real joint graphs.

Exports GPT stacks with jointscope_torch (torch 1.13, CPU, small dims: the graph, not the arithmetic, is what the
partitioner works on), times torch's min_cut_rematerialization_partition on fresh copies of that joint graph
(median of 3, as export_joint runs it) and `jointscope-cli partition FILE --ruleset torch-1.13 --json --repeat 20`
(the engine's median `seconds` in one warm process, like torch's), plus the wall time of single cold CLI runs
(median of 5, reading the JSON file included), checks that the saved lists are identical, and prints markdown
rows for docs/benchmarks.md.

Usage: python3 bench/partition_vs_torch.py --cli build/app/jointscope-cli [--layers 12 48] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402

from jointscope_torch import _capture, export_joint  # noqa: E402
from jointscope_torch.models import GPTStack  # noqa: E402


def torch_min_cut_seconds(capture, repeats):
    min_cut, _ = _capture._torch_partitioners()
    times, saved = [], None
    for _ in range(repeats):
        decision = _capture._run_partitioner("torch_min_cut", min_cut, capture.joint_module, capture.joint_inputs, {},
                                             capture.num_fwd_outputs)
        times.append(decision["seconds"])
        saved = decision["saved"]
    return statistics.median(times), saved


def jointscope_seconds(cli, path, repeats):
    wall, saved = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.run([cli, "partition", path, "--ruleset", "torch-1.13", "--json"], capture_output=True,
                              text=True, check=True)
        wall.append(time.perf_counter() - start)
        saved = json.loads(proc.stdout)["saved"]
    warm = subprocess.run([cli, "partition", path, "--ruleset", "torch-1.13", "--json", "--repeat", "20"],
                          capture_output=True, text=True, check=True)
    engine = json.loads(warm.stdout)
    assert engine["saved"] == saved
    return engine["seconds"], statistics.median(wall), saved


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--layers", type=int, nargs="+", default=[12, 48])
    ap.add_argument("--out", default=os.path.join(os.getcwd(), "partition-bench"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    print("torch %s, %d cores" % (torch.__version__, os.cpu_count()), file=sys.stderr)
    print("| graph | nodes | saved | torch 1.13 min-cut | jointscope engine | ratio | jointscope-cli wall | ratio | identical |")
    print("|---|---|---|---|---|---|---|---|---|")
    for layers in args.layers:
        torch.manual_seed(0)
        model = GPTStack(dim=32, heads=4, layers=layers)
        x = torch.randn(2, 16, 32, requires_grad=True)
        path = os.path.join(args.out, "gpt_%d_layers.json" % layers)
        capture = export_joint(model, (x,), path, name="gpt_%d_layers" % layers, min_cut=False, default_partition=False)
        nodes = len(capture.joint_module.graph.nodes)
        torch_s, torch_saved = torch_min_cut_seconds(capture, 3)
        engine_s, wall_s, ours = jointscope_seconds(args.cli, path, 5)
        same = ours == torch_saved
        print("| GPT, %d layers | %d | %d | %.3f s | %.2f ms | %.0fx | %.1f ms | %.0fx | %s |" % (
            layers, nodes, len(ours), torch_s, engine_s * 1e3, torch_s / engine_s, wall_s * 1e3, torch_s / wall_s,
            "yes" if same else "NO"))
        if not same:
            print("saved lists differ for %d layers" % layers, file=sys.stderr)
            sys.exit(1)


if __name__ == "__main__":
    main()
