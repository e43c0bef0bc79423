#!/usr/bin/env python3
"""jointscope's partition engine against torch 2.x's own min-cut partitioner, on the same joint graphs, in one run.

Graphs, captured through torch.compile (dynamo -> AOTAutograd, the path users take) by jointscope_torch.export_joint:
  gpt48    jointscope_torch.models.gpt_stack(48): dim 32, 4 heads (CPU tensors, small weights)
  llama32  32 LLaMA-3-8B layers (dim 4096, 32 heads, 8 KV heads, SwiGLU 14336, RoPE; batch 1 x 2048 tokens),
           built on the `meta` device: nothing is allocated, the partitioner sees production shapes
Then, for each graph:
  torch       min_cut_rematerialization_partition on a fresh copy of the joint graph each time (median of 3),
              called as torch calls it (the joint inputs and kwargs torch passed: num_fwd_outputs,
              static_lifetime_input_indices);
  jointscope  `jointscope-cli partition FILE --json` (ruleset chosen by the CLI from the graph): the engine time of a
              warm process (--repeat 20, median), and 5 cold processes (median wall time, reading the file included);
checks that the saved lists are identical and prints markdown rows for docs/benchmarks.md.

Usage: ~/.cache/jointscope/torch-2.15/bin/python bench/partition_vs_torch2.py --cli build/app/jointscope-cli
       [--graphs gpt48 llama32] [--out DIR]
Exports are cached in DIR (default <build>/partition-bench-torch2) while torch's version and node count match.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

from jointscope_torch import capture_joint, export_joint  # noqa: E402
from jointscope_torch.models import CheckpointedStack, Llama3Block, RMSNorm, gpt_stack  # noqa: E402
# The same export cache and comparison (here with the CLI's own ruleset).
from partition_vs_torch import compare, exports_folder, is_cached, torch_min_cut  # noqa: E402


def build(name):
    if name.startswith("gpt"):
        return gpt_stack(layers=int(name[3:]))
    if name.startswith("llama"):
        layers = int(name[5:])
        dim, seq = 4096, 2048
        blocks = [Llama3Block(dim, 32, 8, 14336, max_seq=seq, device="meta") for _ in range(layers)]
        model = CheckpointedStack(blocks, RMSNorm(dim, device="meta"), checkpoint=False)
        return model, (torch.randn(1, seq, dim, device="meta", requires_grad=True),)
    raise SystemExit("unknown graph %r (gptN or llamaN)" % name)


def capture(name, folder):
    """The capture (torch's joint module, inputs, kwargs) and its JSON file, written unless cached."""
    model, args = build(name)
    cap = capture_joint(model, args, min_cut=False, default_partition=False)
    path = os.path.join(folder, name + ".json")
    if is_cached(path, len(cap.joint_module.graph.nodes)):
        return cap, path
    model, args = build(name)
    export_joint(model, args, path, name=name, min_cut=False, default_partition=False)
    return cap, path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True, help="path of jointscope-cli")
    ap.add_argument("--graphs", nargs="+", default=["gpt48", "llama32"])
    ap.add_argument("--out", help="folder for the cached exports")
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)
    out = exports_folder(cli, args.out, "partition-bench-torch2")
    print("| graph | nodes | saved | torch %s min-cut | jointscope engine (warm) | ratio | engine (cold) "
          "| `jointscope-cli` cold wall | ratio | ruleset | identical |" % torch.__version__.split("+")[0])
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    identical = True
    for name in args.graphs:
        cap, path = capture(name, out)
        r = compare(cli, name, cap, path, torch_min_cut, ())
        identical = identical and r.same
        print("| %s | %s | %s | %.3f s | %.2f ms | **%.0f×** | %.2f ms | %.1f ms | **%.0f×** | %s | %s |" % (
            name, r.nodes, r.saved, r.torch_s, r.warm_s * 1e3, r.torch_s / r.warm_s, r.cold_s * 1e3,
            r.wall_s * 1e3, r.torch_s / r.wall_s, r.ruleset, "yes" if r.same else "NO"), flush=True)
    sys.exit(0 if identical else 1)


if __name__ == "__main__":
    main()
