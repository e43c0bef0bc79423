"""Runs autoparallel (a checkout given by --autoparallel) on its LLaMA-3 example with a fake process group on
the CPU, writing TORCH_TRACE into --trace-dir; prints one JSON line with its timings and ILP objective.

Run under torch 2.15 (autoparallel needs pulp). Used by bench/shard_vs_autoparallel.py and by
tests/data/autoparallel/record.sh; the model settings follow autoparallel's examples/example_llama3.py
(input S(0)R, output S(0)S(2) vocab-parallel, default parameter-memory constraint, repeated_subgraphs).
"""

import argparse
import json
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--autoparallel", required=True, help="autoparallel checkout (the repository root)")
    p.add_argument("--trace-dir", required=True)
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--mesh", default="8x8")
    p.add_argument("--dim", type=int, default=4096)
    p.add_argument("--heads", type=int, default=32)
    p.add_argument("--kv-heads", type=int, default=8)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--seqlen", type=int, default=2048 * 4)
    p.add_argument("--multiple-of", type=int, default=1024)
    p.add_argument("--batch-per-dp", type=int, default=2, help="batch = this x the first mesh size")
    return p.parse_args()


def main():
    args = parse_args()
    # TORCH_TRACE is read when torch's logging initialises: set it before importing torch.
    os.environ["TORCH_TRACE"] = args.trace_dir
    sys.path.insert(0, os.path.abspath(args.autoparallel))
    from unittest.mock import patch

    import torch
    from torch.distributed.fsdp import MixedPrecisionPolicy
    from torch.distributed.tensor.placement_types import Replicate, Shard
    from torch.testing._internal.distributed.fake_pg import FakeStore

    shape = tuple(int(s) for s in args.mesh.split("x"))
    world = 1
    for s in shape:
        world *= s

    # No GPU here: autoparallel asks torch.cuda about the devices of its "cuda" mesh; answer as an H100 node
    # would (autoparallel's tests/conftest.py does the same).
    props = type("Props", (), {"major": 9, "minor": 0, "name": "H100", "total_memory": 80 * 1024**3,
                               "multi_processor_count": 132})()
    patches = [
        patch("torch.cuda.device_count", lambda: 8),
        patch("torch.cuda.current_device", lambda: 0),
        patch("torch.cuda.get_device_name", lambda *a, **k: "H100"),
        patch("torch.cuda.get_device_capability", lambda *a, **k: (9, 0)),
        patch("torch.cuda.get_device_properties", lambda *a, **k: props),
    ]
    for q in patches:
        q.start()

    torch.distributed.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    names = ("dp", "tp", "cp", "ep")[: len(shape)]
    # Fake tensors on a "cuda" device need a CUDA context for autograd; a "cpu" mesh traces the same graph,
    # while the cost models still price an H100 (its compute model asks the current device module, which is
    # the CPU's here: point it at the H100 entry of its own table).
    mesh = torch.distributed.device_mesh.init_device_mesh("cpu", shape, mesh_dim_names=names)
    import autoparallel.cost_models.compute_estimation as compute_estimation

    h100 = next(d for d in compute_estimation.DEVICE_LIMITS if d.name == "H100")
    patch.object(compute_estimation, "_get_device_limit", lambda: h100).start()

    from autoparallel._testing.models.llama3 import Transformer, TransformerModelArgs, apply_ac
    from autoparallel.api import AutoParallel

    model_args = TransformerModelArgs(
        dim=args.dim, n_layers=args.layers, n_heads=args.heads, n_kv_heads=args.kv_heads,
        ffn_dim_multiplier=1.3, multiple_of=args.multiple_of, rope_theta=500000,
        vocab_size=args.vocab, max_seq_len=args.seqlen)
    batch = args.batch_per_dp * shape[0]

    def input_fn():
        return torch.randint(0, args.vocab, (batch, args.seqlen), device=torch.device("cpu"))

    with torch.device("meta"):
        model = Transformer(model_args)
    apply_ac(model, mode="selective", selective_ac_option="op")
    mp_policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)

    times = {}
    original_build = AutoParallel.build_model_graph

    def timed_build(self):
        t = time.perf_counter()
        original_build(self)
        times["trace_seconds"] = time.perf_counter() - t

    AutoParallel.build_model_graph = timed_build
    t0 = time.perf_counter()
    with AutoParallel(model, input_fn, mesh, mp_policy, repeated_subgraphs=True) as autop:
        t_entered = time.perf_counter()
        autop.add_parameter_memory_constraint(low=None, high=None)
        x_sharding = (Shard(0),) + (Replicate(),) * (mesh.ndim - 1)
        out_sharding = (Shard(0), Shard(2)) if mesh.ndim == 2 else x_sharding
        autop.add_input_constraints([x_sharding])
        autop.add_output_constraints([out_sharding])
        t_solve = time.perf_counter()
        autop.optimize_placement()
        t_done = time.perf_counter()
        import pulp

        objective = pulp.value(autop.sharding_optimizer.prob.objective)
        summary = autop.sharding_optimizer.get_json()["summary"]
    times["optimizer_build_seconds"] = t_entered - t0 - times["trace_seconds"]
    times["solve_seconds"] = t_done - t_solve
    print(json.dumps({
        "autoparallel_objective": objective,
        "autoparallel_summary": summary,
        "autoparallel_seconds": times["optimizer_build_seconds"] + times["solve_seconds"],
        **times,
        "mesh": list(shape),
        "layers": args.layers,
        "trace_dir": args.trace_dir,
    }))


if __name__ == "__main__":
    main()
