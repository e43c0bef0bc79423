"""apply_partition in real torch 1.13 training: a forced saved set is what the forward saves, and outputs and
gradients equal eager.

The decisions come from jointscope itself (jointscope-cli partition --policy ... --out DIR writes decision.json)
and from torch's own default partition; the training runs through functorch.compile.aot_module with the
applied partition function. A missing torch or CLI is a failure, not a skip.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import torch
    from functorch.compile import aot_module, make_boxed_func
except ImportError as e:
    print("FAIL: test_apply_partition needs torch 1.13 with functorch: %s" % e, file=sys.stderr)
    sys.exit(1)

from jointscope_torch import apply_partition, export_joint
from jointscope_torch.models import GPTBlock, MLP

from clitool import cli_path


def train_step(model, args, partition_fn=None):
    """One forward + backward; with partition_fn through aot_module. Returns (output, grads, saved names)."""
    saved = []

    def fw_compiler(gm, _inputs):
        outputs = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
        saved.extend(n.name for n in outputs if isinstance(n, torch.fx.Node))
        return make_boxed_func(gm.forward)

    def bw_compiler(gm, _inputs):
        return make_boxed_func(gm.forward)

    module = model
    if partition_fn is not None:
        module = aot_module(model, fw_compiler=fw_compiler, bw_compiler=bw_compiler, partition_fn=partition_fn)
    args = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    out = module(*args)
    out.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()] + [a.grad.clone() for a in args if a.requires_grad]
    for p in model.parameters():
        p.grad = None
    return out.detach(), grads, saved


class ApplyPartition(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, model, args, decision, num_fwd_outputs=1):
        eager_out, eager_grads, _ = train_step(copy.deepcopy(model), args)
        applied = apply_partition(decision)
        out, grads, saved = train_step(copy.deepcopy(model), args, applied.partition_fn)
        # The forward returns its outputs, then exactly the forced saved values (in the decision's order).
        self.assertEqual(saved[num_fwd_outputs:], decision["saved"])
        torch.testing.assert_close(out, eager_out)
        self.assertEqual(len(grads), len(eager_grads))
        for got, want in zip(grads, eager_grads):
            torch.testing.assert_close(got, want)

    def jointscope_decision(self, model, args, name, policy):
        """Export, then partition with a policy through the CLI; returns decision.json's content."""
        path = os.path.join(self.tmp.name, name + ".json")
        export_joint(copy.deepcopy(model), args, path, name=name)
        policy_path = os.path.join(self.tmp.name, name + ".policy.json")
        with open(policy_path, "w") as f:
            json.dump(policy, f)
        out = os.path.join(self.tmp.name, name + ".out")
        proc = subprocess.run([cli_path(), "partition", path, "--ruleset", "torch-1.13", "--policy", policy_path,
                               "--out", out], capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(out, "decision.json")) as f:
            return json.load(f)

    def test_mlp_forced_save_from_jointscope(self):
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        decision = self.jointscope_decision(model, args, "mlp", {"gelu": "MUST_SAVE"})
        self.assertIn("gelu", decision["saved"])  # torch's own min-cut recomputes gelu
        self.check(model, args, decision)

    def test_gpt_block_forced_recompute_from_jointscope(self):
        model, args = GPTBlock(32, 4), (torch.randn(2, 8, 32, requires_grad=True),)
        decision = self.jointscope_decision(model, args, "gpt", {"_softmax": "MUST_RECOMPUTE"})
        self.assertNotIn("_softmax", decision["saved"])
        self.check(model, args, decision)

    def test_torch_default_partition_set(self):
        model, args = GPTBlock(32, 4), (torch.randn(2, 8, 32, requires_grad=True),)
        capture = export_joint(copy.deepcopy(model), args, os.path.join(self.tmp.name, "g.json"))
        graph = capture.document["graph"]
        default = [d for d in graph["decisions"] if d["name"] == "torch_default_partition"][0]
        # torch 1.13 keeps this list in set order; saving in graph order is as valid.
        order = {n["name"]: i for i, n in enumerate(graph["nodes"])}
        saved = sorted(default["saved"], key=order.get)
        decision = {"format": "jointscope-decision", "version": 1, "saved": saved, "nodes": {}}
        self.check(model, args, decision)

    def test_unmatched_name_is_reported(self):
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        decision = {"format": "jointscope-decision", "version": 1, "saved": ["addmm", "no_such_value"],
                    "nodes": {"no_such_value": {"target": "aten.mm.default", "shape": [999, 999]}}}
        with self.assertRaises(Exception) as ctx:
            train_step(copy.deepcopy(model), args, apply_partition(decision).partition_fn)
        self.assertIn("no_such_value", str(ctx.exception))


if __name__ == "__main__":
    unittest.main(verbosity=2)
