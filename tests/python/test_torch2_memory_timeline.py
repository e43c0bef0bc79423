"""jointscope's memory timeline against torch 2: every case of the torch 2 model zoo (jointscope_torch.models.
torch2_zoo_builders) captured live with export_joint, partitioned by torch's own min_cut_rematerialization_partition
(as torch.compile calls it, under the case's budget and solver), and the forward and backward modules torch made
run on real tensors under memtrack.LiveStorages. `jointscope-cli partition FILE --json --decision D` (D = torch's
saved list, so that only the memory estimate is compared) must list the same nodes in the same order with live
bytes within 1 % of torch's at every step.

Run with the torch 2 venv (~/.cache/jointscope/torch-2.15/bin/python), PYTHONPATH=python:tests/python,
JOINTSCOPE_CLI = the CLI. A missing torch 2 or CLI is a failure, never a skip; a case whose capture or torch
partition fails is reported as a failure of that case.
"""

import contextlib
import json
import operator
import os
import sys
import tempfile
import unittest

from clitool import require_torch2, run_cli

torch = require_torch2("test_torch2_memory_timeline")

import torch.utils._pytree as pytree  # noqa: E402

from jointscope_torch._capture import _config_patch, _snapshot, _torch_partitioners, export_joint  # noqa: E402
from jointscope_torch.models import torch2_zoo_builders  # noqa: E402
from jointscope_torch.zoo import export_options  # noqa: E402
from memtrack import compare, real_tensor, run_partitioned  # noqa: E402


def concrete(x):
    if isinstance(x, torch.SymInt):
        return int(x.node.hint)
    return int(x)


def real_values(joint_module, joint_inputs):
    """Placeholder name -> a real value laid out as torch's (fake) joint input."""
    names = [n.name for n in joint_module.graph.nodes if n.op == "placeholder"]
    flat = pytree.tree_flatten(joint_inputs)[0]
    assert len(names) == len(flat), "%d placeholders, %d joint inputs" % (len(names), len(flat))
    values = {}
    for i, (name, x) in enumerate(zip(names, flat)):
        if isinstance(x, torch.Tensor):
            values[name] = real_tensor([concrete(s) for s in x.shape], [concrete(s) for s in x.stride()], x.dtype,
                                       seed=i)
        elif isinstance(x, torch.SymInt):
            values[name] = concrete(x)
        else:
            values[name] = x
    return values


def partition_like_compile(min_cut, one):
    """torch's min-cut on a snapshot of the captured joint, inside a tracing context holding the joint's fake mode
    (RNG functionalization asks it for one, as it does under torch.compile)."""
    from torch._guards import TracingContext, detect_fake_mode, tracing

    fake_mode = detect_fake_mode(pytree.tree_flatten(one.joint_inputs)[0])
    context = tracing(TracingContext(fake_mode)) if fake_mode is not None else contextlib.nullcontext()
    with context:
        return min_cut(_snapshot(one.joint_module), one.joint_inputs, **one.partition_kwargs)


def joint_step_names(gm, joint_graph):
    """For one of torch's modules: torch's RNG functionalization replaces a recomputed random op by
    run_and_save_rng_state (forward) and run_with_rng_state (backward); those steps get the joint op's name (as
    the oracle test maps them), and the getitems that only unpack run_and_save_rng_state's (state, result) pair
    are dropped (they allocate nothing). Returns (rename, drop), by node name in gm."""
    from jointscope_torch._capture import _joint_names, _rng_wrappers

    wrappers = _rng_wrappers()
    rename, drop = {}, set()
    names = _joint_names(gm, joint_graph, wrappers)[0]
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target in wrappers:
            rename[node.name] = names.get(node.name) or node.name
        elif node.target is operator.getitem and isinstance(node.args[0], torch.fx.Node) and \
                node.args[0].target in wrappers and wrappers[node.args[0].target][1]:
            drop.add(node.name)  # unpacks run_and_save_rng_state's (state, result)
    return rename, drop


class Torch2MemoryTimeline(unittest.TestCase):
    def test_zoo(self):
        min_cut = _torch_partitioners()[0]
        builders = torch2_zoo_builders()
        only = os.environ.get("JOINTSCOPE_ZOO_ONLY")  # comma-separated case names, for a quick look at a few
        if only:
            builders = {k: v for k, v in builders.items() if k in only.split(",")}
        compared = 0
        with tempfile.TemporaryDirectory() as tmp:
            for name, builder in builders.items():
                with self.subTest(case=name):
                    model, args, options = builder()
                    capture = export_joint(model, args, os.path.join(tmp, name + ".json"), name=name,
                                           **export_options(options))
                    for index, (one, path) in enumerate(zip(capture.graphs, capture.paths)):
                        self.assertEqual(one.errors, [], "%s[%d]: torch's partitioners failed" % (name, index))
                        torch_min_cut = [d for d in one.decisions if d["name"] == "torch_min_cut"][0]
                        with _config_patch(options.get("memory_budget"), options.get("solver"),
                                           options.get("functorch_config")):
                            fw, bw = partition_like_compile(min_cut, one)
                        steps, between = run_partitioned(fw.graph, bw.graph,
                                                         real_values(one.joint_module, one.joint_inputs), fw, bw,
                                                         one.num_fwd_outputs)
                        forward_count = sum(1 for n in fw.graph.nodes if n.op == "call_function")
                        renamed = []
                        for module, part in ((fw, steps[:forward_count]), (bw, steps[forward_count:])):
                            rename, drop = joint_step_names(module, one.joint_module.graph)
                            renamed += [(rename.get(n, n), b) for n, b in part if n not in drop]
                        steps = renamed
                        decision = os.path.join(tmp, "%s.%d.decision.json" % (name, index))
                        with open(decision, "w", encoding="utf-8") as f:
                            json.dump({"saved": torch_min_cut["saved"],
                                       "saved_sym": torch_min_cut.get("saved_sym", [])}, f)
                        ours = json.loads(run_cli("partition", path, "--json", "--decision", decision))
                        timeline = ours["memory_timeline"]
                        problems = compare(timeline, steps)
                        peak = max([b for _, b in steps] or [0])
                        print("%-28s %4d steps, peak %10d bytes at %-24s torch %10d%s"
                              % ("%s[%d]" % (name, index), len(steps), ours["peak_bytes"] or 0,
                                 timeline["peak_node"], peak, "" if not problems else "  MISMATCH"),
                              file=sys.stderr, flush=True)
                        self.assertEqual(problems, [], "%s[%d]: %d steps\n%s"
                                         % (name, index, len(steps), "\n".join(problems[:20])))
                        self.assertLessEqual(abs(timeline["saved_bytes"] - between), 0.01 * between)
                        compared += 1
        self.assertGreaterEqual(compared, 3 if only else 20)


if __name__ == "__main__":
    unittest.main(verbosity=2)
