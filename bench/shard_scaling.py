#!/usr/bin/env python3
"""`jointscope-cli shard` on production-shaped LLaMA joint graphs, captured on torch's meta device.

Graphs (jointscope_torch.export_joint under torch 1.13, nothing allocated):
  - llama8b_32: 32 LLaMA-3-8B-shaped layers (dim 4096, 32 heads, hidden 14336), batch 8 x 1024, bf16, on 8x8;
  - block6144: one 6144-dim layer (48 heads, hidden 16384), batch 64 x 256 (autoparallel's seed example), on 16x8.
For each --cluster-rounds value: the wall time of the whole command, the CLI's own `seconds` (strategies + ILP),
the number of variable groups, the plan's cost and the replicate / data-parallel baselines under the same model.

The anchor is autoparallel's own report on LLaMA-3 8B over 64 GPUs (15 s to build the ILP + 36 s in CBC); running
autoparallel needs torch 2.x with DTensor, which the project machine does not have (torch 1.13).

Usage: python3 bench/shard_scaling.py --cli build/app/jointscope-cli [--rounds 0,1,2,3] [--out DIR]

--meshes 8x8,4x4x4,2x4x8,2x2x4x4 runs the mesh suite instead (issue 17): LLaMA-3-8B-shaped layers (dim 4096,
hidden 14336), batch 8 x 4096 tokens, 1 and 32 layers (--layers), on each mesh with the default solver (exact
on 2-D meshes, decomposed on 3-D and 4-D ones), and prints the plan's cost, its certified lower bound and gap.
--baseline-cli runs a second build on each row right after the first (before / after under one load); --solver
passes shard --solver to both.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

import torch  # noqa: E402

from jointscope_torch import export_joint  # noqa: E402
from jointscope_torch.models import LlamaStack  # noqa: E402

CASES = [
    # name, dim, heads, hidden, layers, batch, seq, mesh
    ("llama8b_32", 4096, 32, 14336, 32, 8, 1024, "8x8"),
    ("block6144", 6144, 48, 16384, 1, 64, 256, "16x8"),
]


def capture(out, name, dim, heads, hidden, layers, batch, seq):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        model = LlamaStack(dim, heads, hidden, layers, device="meta").to(torch.bfloat16)
        x = torch.randn(batch, seq, dim, device="meta", dtype=torch.bfloat16)
        export_joint(model, (x,), path, name=name)
    return path


def mesh_suite(args, out):
    print("| layers | mesh | build | solver | groups | wall s | solve s | cost µs | lower bound µs | gap % |")
    print("|---:|---|---|---|---:|---:|---:|---:|---:|---:|")
    clis = [("new", args.cli)] + ([("baseline", args.baseline_cli)] if args.baseline_cli else [])
    for layers in [int(n) for n in args.layers.split(",")]:
        path = capture(out, "llama8b_seq4096_%d" % layers, 4096, 32, 14336, layers, 8, 4096)
        for mesh in args.meshes.split(","):
            # Each build on the row in turn, so that both see the same load.
            for build, cli in clis:
                command = [cli, "shard", path, "--mesh", mesh, "--json", "--time-limit", str(args.time_limit)]
                if args.solver:
                    command += ["--solver", args.solver]
                start = time.perf_counter()
                proc = subprocess.run(command, capture_output=True, text=True)
                wall = time.perf_counter() - start
                if proc.returncode != 0:
                    print("| %d | %s | %s | failed: %s |" % (layers, mesh, build, proc.stderr.strip()[:200]))
                    continue
                r = json.loads(proc.stdout)
                print("| %d | %s | %s | %s | %d | %.2f | %.2f | %.0f | %.0f | %.2f |" % (
                    layers, mesh, build, r["solver"], r["variable_groups"], wall, r["seconds"],
                    r["total_cost"], r["lower_bound"], 100 * r["gap"]))
                sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--rounds", default="0,1,2,3")
    ap.add_argument("--out", default=None)
    ap.add_argument("--skip-unclustered-above", type=int, default=1,
                    help="run --cluster-rounds 0 only on graphs with at most this many layers")
    ap.add_argument("--meshes", default=None, help="run the mesh suite on these meshes (comma-separated)")
    ap.add_argument("--layers", default="1,32", help="mesh suite: layer counts")
    ap.add_argument("--time-limit", type=float, default=60)
    ap.add_argument("--solver", default=None, help="mesh suite: shard --solver (default: the CLI's own)")
    ap.add_argument("--baseline-cli", default=None,
                    help="mesh suite: another build run on each row right after --cli (before / after at one load)")
    args = ap.parse_args()
    out = args.out or tempfile.mkdtemp(prefix="shard_scaling_")
    if args.meshes:
        mesh_suite(args, out)
        return
    print("| graph | mesh | cluster rounds | groups | wall s | solve s | cost µs | replicate µs | data parallel µs |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, dim, heads, hidden, layers, batch, seq, mesh in CASES:
        path = capture(out, name, dim, heads, hidden, layers, batch, seq)
        for rounds in [int(r) for r in args.rounds.split(",")]:
            if rounds == 0 and layers > args.skip_unclustered_above:
                continue
            start = time.perf_counter()
            proc = subprocess.run([args.cli, "shard", path, "--mesh", mesh, "--cluster-rounds", str(rounds),
                                   "--json"], capture_output=True, text=True)
            wall = time.perf_counter() - start
            if proc.returncode != 0:
                print("| %s | %s | %d | failed: %s |" % (name, mesh, rounds, proc.stderr.strip()[:200]))
                continue
            r = json.loads(proc.stdout)
            dp = r["baselines"]["data_parallel"]
            print("| %s | %s | %d | %d | %.2f | %.2f | %.0f%s | %.0f | %s |" % (
                name, mesh, rounds, r["variable_groups"], wall, r["seconds"], r["total_cost"],
                "" if r["optimal"] else " (not proven optimal)", r["baselines"]["replicate"]["total_cost"],
                "%.0f" % dp["total_cost"] if dp else "n/a"))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
