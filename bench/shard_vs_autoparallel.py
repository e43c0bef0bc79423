#!/usr/bin/env python3
"""autoparallel and jointscope on the same joint graph, in one run.

1. Runs autoparallel (the user's checkout, --autoparallel; never part of this repository) under torch 2.x on
   its LLaMA-3 8B example (bench/autoparallel_llama3.py: examples/example_llama3.py's model, constraints and
   memory bound) with a fake process group on the CPU, TORCH_TRACE on. Its joint graph, optimizer log and
   chosen plan land in the trace as the autoparallel_joint_graph / _sharding_optimizer_log / _solution
   artifacts.
2. Runs `jointscope-cli shard` on that trace's joint graph with the same constraints (the input and output
   placements autoparallel was given, parameters at most 1/world of their bytes) and --compare-plan on the
   same trace, so both plans are costed with jointscope's model.

Prints (JSON with --json):
  autoparallel_seconds        joint graph -> plan in autoparallel: ShardingOptimizer build + optimize_placement
  jointscope_seconds          joint graph -> plan in jointscope: the whole CLI process (reads the trace, builds
                              strategies, solves, costs both plans)
  autoparallel_objective      autoparallel's ILP objective (compute + comm + 1 per redistribution)
  jointscope_cost_of_autoparallel_plan, jointscope_plan_cost   under jointscope's model (--cost-model)
and the ratios the goals are stated in. No GPU is needed: the cost models price an H100 cluster.

Usage: python3 bench/shard_vs_autoparallel.py --autoparallel DIR --cli build/app/jointscope-cli --json
       [--layers 32] [--mesh 8x8] [--python TORCH2_PYTHON] [--trace-dir DIR] [--reuse]
       [--cost-model autoparallel|roofline]
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PYTHON = os.path.expanduser("~/.cache/jointscope/torch-2.15/bin/python")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--autoparallel", required=True, help="autoparallel checkout (repository root)")
    p.add_argument("--cli", required=True, help="jointscope-cli")
    p.add_argument("--json", action="store_true")
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--mesh", default="8x8")
    p.add_argument("--python", default=DEFAULT_PYTHON, help="python with torch 2.x and pulp")
    p.add_argument("--trace-dir", default=None, help="where autoparallel's TORCH_TRACE goes")
    p.add_argument("--reuse", action="store_true",
                   help="reuse a finished autoparallel run in --trace-dir (its run.json) instead of running it")
    p.add_argument("--cost-model", default="autoparallel", help="jointscope's compute model")
    p.add_argument("--time-limit", default="600", help="jointscope's ILP time limit, seconds")
    return p.parse_args()


def run_autoparallel(args, trace_dir):
    record = os.path.join(trace_dir, "run.json")
    if args.reuse and os.path.exists(record):
        with open(record) as f:
            return json.load(f)
    os.makedirs(trace_dir, exist_ok=True)
    for name in os.listdir(trace_dir):
        if name.endswith(".log"):
            os.remove(os.path.join(trace_dir, name))
    cmd = [args.python, os.path.join(HERE, "autoparallel_llama3.py"), "--autoparallel", args.autoparallel,
           "--trace-dir", trace_dir, "--layers", str(args.layers), "--mesh", args.mesh]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit("autoparallel failed:\n" + done.stderr[-4000:])
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_seconds"] = wall
    with open(record, "w") as f:
        json.dump(result, f)
    return result


def trace_log(trace_dir):
    logs = [os.path.join(trace_dir, n) for n in os.listdir(trace_dir) if n.endswith(".log")]
    if len(logs) != 1:
        sys.exit(f"expected one TORCH_TRACE log in {trace_dir}, found {len(logs)}")
    return logs[0]


def artifact(log, name):
    """The payload of the last artifact record `name` (tab-indented lines after the record)."""
    payload, found, inside = None, None, False
    with open(log) as f:
        for line in f:
            if line.startswith("\t"):
                if inside:
                    payload.append(line[1:].rstrip("\n"))
                continue
            inside = f'"artifact": {{"name": "{name}"' in line
            if inside:
                payload = []
                found = payload
    return "\n".join(found) if found is not None else None


def constraints(log, world):
    """The pins autoparallel was given (input and output placements, as its solution records them) and its
    parameter-memory bound."""
    solution = json.loads(artifact(log, "autoparallel_solution"))
    pins = [f"{n['name']}={n['placement']}" for n in solution["nodes"]
            if n.get("placeholder_kind") in ("input", "tangent")]
    return pins, f"0:{1.0 / world!r}"


def graph_index(cli, log):
    info = json.loads(subprocess.run([cli, "info", log, "--json"], capture_output=True, text=True,
                                     check=True).stdout)
    for g in info["graphs"]:
        if g["kind"] == "artifact:autoparallel_joint_graph":
            return g["index"]
    sys.exit(f"{log}: no autoparallel_joint_graph artifact")


def main():
    args = parse_args()
    shape = [int(s) for s in args.mesh.split("x")]
    world = 1
    for s in shape:
        world *= s
    trace_dir = args.trace_dir or os.path.join("/tmp", f"shard_vs_autoparallel_{args.layers}l_{args.mesh}")
    ap = run_autoparallel(args, trace_dir)
    log = trace_log(trace_dir)
    pins, memory = constraints(log, world)
    names = ",".join(("dp", "tp", "cp", "ep")[: len(shape)])
    cmd = [args.cli, "shard", log, "--graph", str(graph_index(args.cli, log)), "--mesh", args.mesh,
           "--mesh-names", names, "--param-memory", memory, "--cost-model", args.cost_model,
           "--time-limit", args.time_limit, "--compare-plan", log, "--json"]
    for pin in pins:
        cmd += ["--pin", pin]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    js_seconds = time.perf_counter() - t0
    if done.returncode != 0:
        sys.exit("jointscope-cli failed: " + done.stderr[-4000:])
    js = json.loads(done.stdout)
    c = js["compare"]
    theirs = c["jointscope_cost_of_autoparallel_plan"]
    objective = ap["autoparallel_objective"]
    out = {
        "layers": args.layers,
        "mesh": args.mesh,
        "autoparallel_seconds": ap["autoparallel_seconds"],
        "autoparallel_trace_seconds": ap["trace_seconds"],
        "autoparallel_optimizer_build_seconds": ap["optimizer_build_seconds"],
        "autoparallel_solve_seconds": ap["solve_seconds"],
        "jointscope_seconds": js_seconds,
        "jointscope_solver_seconds": js["seconds"],
        "speedup": ap["autoparallel_seconds"] / js_seconds,
        "autoparallel_objective": objective,
        "autoparallel_objective_parts": c["autoparallel_objective"],
        "jointscope_cost_of_autoparallel_plan": theirs["total_cost"],
        "jointscope_cost_of_autoparallel_plan_parts": theirs,
        "jointscope_plan_cost": js["total_cost"],
        "jointscope_plan_parts": c["jointscope_plan_cost"],
        "objective_gap_percent": 100.0 * (theirs["total_cost"] - objective) / objective,
        "jointscope_plan_vs_autoparallel_plan_percent":
            100.0 * (js["total_cost"] - theirs["total_cost"]) / theirs["total_cost"],
        "jointscope_optimal": js["optimal"],
        "nodes": c["nodes_placed"],
        "nodes_placed_differently": len(c["differing"]),
        "nodes_without_autoparallel_option": len(c["unmatched"]),
        "cost_model": args.cost_model,
        "pins": pins,
        "param_memory": memory,
        "warnings": js["warnings"],
        "command": " ".join(cmd),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
