"""apply_partition under torch 2 (torch.compile): a forced decision is what the compiled forward saves, and one
training step gives eager's outputs and gradients, for a plain model and for activation-checkpointed ones.

Decisions come from torch itself (the min-cut and default-partition decisions export_joint records) and from
jointscope-cli (partition --out DIR, with and without a policy). Training runs through torch.compile with a dynamo
backend aot_autograd(partition_fn=apply_partition(decision).partition_fn) and pass-through compilers.
Run with a torch >= 2 python (the venv ~/.cache/jointscope/torch-2.15/bin/python), PYTHONPATH=python:tests/python,
JOINTSCOPE_CLI set. A missing torch 2 or CLI is a failure, not a skip.
"""

import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

from clitool import require_torch2  # noqa: E402

torch = require_torch2("test_torch2_apply")

from torch._dynamo.backends.common import aot_autograd
from torch._functorch.aot_autograd import make_boxed_func

from jointscope_torch import apply_partition, export_joint
from jointscope_torch.models import MLP, CheckpointedStack, GPTBlockSDPA, Llama3Block, RMSNorm, sac_context

from clitool import cli_path


def flat_outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def train_step(model, args, partition_fn=None):
    """One forward + backward, eager or (with partition_fn) through torch.compile. Returns (outputs, grads of the
    parameters then of the inputs, the compiled forward's output names)."""
    saved = []

    def fw_compiler(gm, _inputs):
        outputs = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
        saved.extend(n.name if isinstance(n, torch.fx.Node) else str(n) for n in outputs)
        return make_boxed_func(gm.forward)

    def bw_compiler(gm, _inputs):
        return make_boxed_func(gm.forward)

    args = [a.detach().clone().requires_grad_(a.requires_grad) for a in args]
    run = model
    if partition_fn is not None:
        torch._dynamo.reset()
        backend = aot_autograd(fw_compiler=fw_compiler, bw_compiler=bw_compiler, partition_fn=partition_fn)
        run = torch.compile(model, backend=backend, fullgraph=True)
    out = flat_outputs(run(*args))
    sum(o.sum() for o in out if o.requires_grad).backward()
    grads = [p.grad.clone() for p in model.parameters()] + [a.grad.clone() for a in args if a.requires_grad]
    for p in model.parameters():
        p.grad = None
    torch._dynamo.reset()
    return [o.detach() for o in out], grads, saved


def gpt_stack(checkpoint, context_fn=None):
    torch.manual_seed(0)
    blocks = [GPTBlockSDPA(32, 4) for _ in range(2)]
    return CheckpointedStack(blocks, torch.nn.LayerNorm(32), checkpoint=checkpoint, context_fn=context_fn)


def llama_stack_ac():
    torch.manual_seed(0)
    return CheckpointedStack([Llama3Block(32, 4, 2, 64) for _ in range(2)], RMSNorm(32), checkpoint=True)


def models():
    """name -> (model factory, example args): a plain MLP, a plain GPT stack, checkpointed GPT / LLaMA stacks and a
    selectively checkpointed GPT stack."""
    torch.manual_seed(1)
    x16, x32 = torch.randn(8, 16, requires_grad=True), torch.randn(2, 16, 32, requires_grad=True)
    return {
        "mlp": (lambda: (torch.manual_seed(0), MLP(16, 64))[1], (x16,)),
        "gpt_stack": (lambda: gpt_stack(False), (x32,)),
        "gpt_stack_ac": (lambda: gpt_stack(True), (x32,)),
        "llama3_stack_ac": (llama_stack_ac, (x32,)),
        "gpt_stack_sac": (lambda: gpt_stack(True, sac_context([("MUST_SAVE", ("mm.default", "addmm.default"))])),
                          (x32,)),
    }


class ApplyPartitionTorch2(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cli_path()  # a missing CLI fails here, clearly
        cls.tmp = tempfile.TemporaryDirectory()
        cls.exports = {}
        for name, (make, args) in models().items():
            path = os.path.join(cls.tmp.name, name + ".json")
            capture = export_joint(make(), args, path, name=name)
            assert capture.via == "compile" and not capture.errors, (name, capture.errors)
            cls.exports[name] = (path, {d["name"]: d for d in capture.decisions})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, name, decision):
        make, args = models()[name]
        model = make()
        eager_out, eager_grads, _ = train_step(copy.deepcopy(model), args)
        applied = apply_partition(decision)
        out, grads, saved = train_step(copy.deepcopy(model), args, applied.partition_fn)
        # the compiled forward returns its outputs, then exactly the forced values, tensors first (decision order)
        self.assertEqual(saved[len(eager_out):], decision["saved"] + decision.get("saved_sym", []))
        self.assertEqual(len(out), len(eager_out))
        for got, want in zip(out, eager_out):
            torch.testing.assert_close(got, want)
        self.assertEqual(len(grads), len(eager_grads))
        for got, want in zip(grads, eager_grads):
            torch.testing.assert_close(got, want)

    def torch_decision(self, name, label):
        d = self.exports[name][1][label]
        return {"format": "jointscope-decision", "version": 1, "saved": d["saved"],
                "saved_sym": d.get("saved_sym", []), "nodes": {}}

    def cli_decision(self, name, policy=None):
        path = self.exports[name][0]
        out = os.path.join(self.tmp.name, name + (".policy" if policy else "") + ".out")
        command = [cli_path(), "partition", path, "--out", out]
        if policy:
            policy_path = os.path.join(self.tmp.name, name + ".policy.json")
            with open(policy_path, "w") as f:
                json.dump(policy, f)
            command += ["--policy", policy_path]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(os.path.join(out, "decision.json")) as f:
            return json.load(f)

    def test_torch_min_cut_decision(self):
        for name in models():
            with self.subTest(model=name):
                self.check(name, self.torch_decision(name, "torch_min_cut"))

    def test_torch_default_partition_decision(self):
        for name in models():
            with self.subTest(model=name):
                self.check(name, self.torch_decision(name, "torch_default_partition"))

    def test_jointscope_decision(self):
        for name in models():
            with self.subTest(model=name):
                self.check(name, self.cli_decision(name))

    def test_jointscope_decision_with_policy(self):
        # an edited decision, applied: MUST_SAVE a value jointscope's own decision recomputes, or (when it recomputes
        # nothing) MUST_RECOMPUTE a computed value it saves
        for name in models():
            with self.subTest(model=name):
                plain = self.cli_decision(name)
                # torch ignores MUST_SAVE on a view (ban_recomputation_if_allowed): edit a computed value instead
                from torch._functorch.partitioners import get_default_op_list

                views = {str(op) for op in get_default_op_list().view_ops}

                def is_view(n):
                    target = plain["nodes"].get(n, {}).get("target", "")
                    return any(target.startswith("torch.ops.%s." % v) for v in views)

                recomputed = [n for n in plain["recomputed"]
                              if plain["nodes"].get(n, {}).get("shape") is not None and not is_view(n)]
                if recomputed:
                    node = recomputed[-1]
                    decision = self.cli_decision(name, {node: "MUST_SAVE"})
                    self.assertIn(node, decision["saved"])
                    self.assertNotIn(node, plain["saved"])
                else:
                    node = [n for n in plain["saved"] if plain["nodes"][n]["target"] != "placeholder"][-1]
                    decision = self.cli_decision(name, {node: "MUST_RECOMPUTE"})
                    self.assertNotIn(node, decision["saved"])
                self.check(name, decision)

if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    ok = result.wasSuccessful() and result.testsRun > 0 and not result.skipped
    sys.exit(0 if ok else 1)
