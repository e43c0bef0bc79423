#!/usr/bin/env python3
"""jointscope's runtime (core/runtime, LibTorch through the c10 dispatcher) against torch running the same joint
graph, on the CPU.

For each model the joint graph is captured in torch 1.13 (jointscope_torch.capture_joint) and written as jointscope
JSON. Then, in the same run:
  - torch (the anchor): the captured fx.GraphModule called on torch's own example inputs under no_grad, median of
    --reps runs after warm-up (FX's generated Python calling the same ATen kernels);
  - jointscope: `profile FILE --replay --no-db --json`: the whole graph end to end through our interpreter
    (replay_us, median of --reps) and the sum of per-op medians (sum_us), so Σ per-op / replay shows how well the
    per-op times add up to the graph (the GPU goal is within 10 %);
  - `validate FILE` wall time (joint + forward + backward runs, comparison included).
Prints markdown rows for docs/benchmarks.md.

Usage: python3 bench/runtime_vs_torch.py --cli build/app/jointscope-cli [--reps 10] [--out DIR]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402

from jointscope_torch import _serialize, capture_joint  # noqa: E402
from jointscope_torch.models import GPTBlock, gpt_stack  # noqa: E402


def models():
    torch.manual_seed(0)
    return {
        "gpt_block (dim 256, batch 8x128)": (GPTBlock(256, 8), (torch.randn(8, 128, 256, requires_grad=True),)),
        "gpt_stack 4 layers (dim 128, batch 4x64)": gpt_stack(layers=4, dim=128, heads=4, batch=4, seq=64),
        "gpt_stack 12 layers (dim 32)": gpt_stack(layers=12, seed=1),
    }


def flat_inputs(capture):
    primals, tangents = capture.joint_inputs
    return list(primals), list(tangents)


def time_torch(capture, reps):
    primals, tangents = flat_inputs(capture)
    with torch.no_grad():
        for _ in range(3):
            capture.joint_module(primals, tangents)
        times = []
        for _ in range(reps):
            start = time.perf_counter()
            capture.joint_module(primals, tangents)
            times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="runtime-bench-")
    os.makedirs(out, exist_ok=True)
    rows = []
    for label, (model, example) in models().items():
        capture = capture_joint(model, example, min_cut=True, default_partition=False)
        path = os.path.join(out, label.split(" ")[0] + "_%d.json" % len(capture.joint_module.graph.nodes))
        graph = _serialize.graph_to_json(capture.joint_module, name="bench", num_fwd_outputs=capture.num_fwd_outputs,
                                         attributes={"torch_version": torch.__version__}, decisions=capture.decisions)
        _serialize.write_document(graph, path)
        torch_us = time_torch(capture, args.reps)
        proc = subprocess.run([args.cli, "profile", path, "--replay", "--no-db", "--json", "--reps", str(args.reps)],
                              capture_output=True, text=True, check=True)
        report = json.loads(proc.stdout)
        start = time.perf_counter()
        v = subprocess.run([args.cli, "validate", path], capture_output=True, text=True)
        validate_s = time.perf_counter() - start
        timed = sum(1 for n in report["nodes"] if "time_us" in n)
        rows.append((label, len(capture.joint_module.graph.nodes), timed, report["measured"], torch_us,
                     report["replay_us"], report["sum_us"], validate_s, v.returncode))
    print("| graph | nodes | ops timed | signatures measured | torch GraphModule (µs) | jointscope replay (µs) "
          "| replay / torch | Σ per-op (µs) | Σ / replay | validate wall (s), exit |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for label, nodes, timed, measured, t, replay, total, vs, code in rows:
        print("| %s | %d | %d | %d | %.0f | %.0f | %.2f | %.0f | %.2f | %.2f, %d |"
              % (label, nodes, timed, measured, t, replay, replay / t, total, total / replay, vs, code))


if __name__ == "__main__":
    main()
