"""apply_partition in real torch 1.13 training: a forced saved set is what the forward saves, and outputs and
gradients equal eager.

The forced decisions differ from torch's min cut: torch's own default-partition set, every forward value the
backward reads (computed here from the graph, independently of jointscope), and decisions jointscope-cli writes
with a policy (jointscope-cli partition --policy ... --out DIR: decision.json). Training runs through
functorch.compile.aot_module with the applied partition function and pass-through compilers. Only the
jointscope_* tests need the CLI; a missing torch or CLI is a failure, not a skip.
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

from functorch._src.compile_utils import fx_graph_cse
from functorch.compile import min_cut_rematerialization_partition

from jointscope_torch import apply_partition, capture_joint, export_joint
from jointscope_torch.models import GPTBlock, MLP, TinyLM

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


VIEW_OPS = {torch.ops.aten.t.default, torch.ops.aten.transpose.int, torch.ops.aten.view.default,
            torch.ops.aten.detach.default, torch.ops.aten._unsafe_view.default}


def forward_values_backward_reads(model, args, views_from_bases=False):
    """Every forward value (primals included) that a backward node reads, in graph order, on the graph torch's
    partitioners see (after DCE and CSE). Backward = the users-closure of the tangents; a multi-output node is
    represented by its getitems. Saving all of them recomputes nothing. With views_from_bases, a view (t,
    transpose, view, detach) is replaced by its base, transitively, so the backward recomputes the views."""
    joint = capture_joint(copy.deepcopy(model), args, min_cut=False, default_partition=False).joint_module
    joint.graph.eliminate_dead_code()
    graph = fx_graph_cse(joint.graph)
    backward = set()
    for node in graph.nodes:
        if node.op == "placeholder" and node.name.startswith("tangents"):
            backward.add(node)
        elif node.op == "call_function" and any(a in backward for a in node.all_input_nodes):
            backward.add(node)
    saved = []
    for node in graph.nodes:
        if node in backward or node.op == "output":
            continue
        if type(node.meta.get("tensor_meta")).__name__ != "TensorMetadata":
            continue  # tuple outputs: their getitems are saved instead
        if any(user in backward for user in node.users):
            while views_from_bases and node.target in VIEW_OPS:
                node = node.args[0]
            if node.name not in saved:
                saved.append(node.name)
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    return sorted(saved, key=order.get)


def torch_decision(model, args, name, in_graph_order=False):
    """torch's own decision `name` on the exported graph, as a decision dict without node facts."""
    capture = capture_joint(copy.deepcopy(model), args)
    saved = [d for d in capture.decisions if d["name"] == name][0]["saved"]
    if in_graph_order:  # torch 1.13 keeps the default partition in set order; graph order is as valid
        order = {n.name: i for i, n in enumerate(capture.joint_module.graph.nodes)}
        saved = sorted(saved, key=order.get)
    return {"format": "jointscope-decision", "version": 1, "saved": saved, "nodes": {}}


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

    def test_jointscope_mlp_forced_save(self):
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        decision = self.jointscope_decision(model, args, "mlp", {"gelu": "MUST_SAVE"})
        self.assertIn("gelu", decision["saved"])  # torch's own min-cut recomputes gelu
        self.check(model, args, decision)

    def test_jointscope_gpt_block_forced_recompute(self):
        model, args = GPTBlock(32, 4), (torch.randn(2, 8, 32, requires_grad=True),)
        decision = self.jointscope_decision(model, args, "gpt", {"_softmax": "MUST_RECOMPUTE"})
        self.assertNotIn("_softmax", decision["saved"])
        self.check(model, args, decision)

    def models(self):
        return {"mlp": (MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)),
                "gpt_block": (GPTBlock(32, 4), (torch.randn(2, 8, 32, requires_grad=True),))}

    def test_torch_default_partition_set(self):
        for name, (model, args) in self.models().items():
            with self.subTest(model=name):
                decision = torch_decision(model, args, "torch_default_partition", in_graph_order=True)
                min_cut = torch_decision(model, args, "torch_min_cut")["saved"]
                self.assertNotEqual(sorted(decision["saved"]), sorted(min_cut))
                self.check(model, args, decision)

    def test_every_forward_value_the_backward_reads(self):
        for name, (model, args) in self.models().items():
            with self.subTest(model=name):
                saved = forward_values_backward_reads(model, args)
                self.assertTrue(any(n.startswith("primals_") for n in saved))
                self.check(model, args, {"format": "jointscope-decision", "version": 1, "saved": saved})

    def test_views_recomputed_from_their_bases(self):
        for name, (model, args) in self.models().items():
            with self.subTest(model=name):
                saved = forward_values_backward_reads(model, args, views_from_bases=True)
                self.assertNotEqual(sorted(saved), sorted(torch_decision(model, args, "torch_min_cut")["saved"]))
                self.check(model, args, {"format": "jointscope-decision", "version": 1, "saved": saved})

    def test_decision_from_file_with_node_facts(self):
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        decision = {"format": "jointscope-decision", "version": 1, "saved": ["primals_5", "addmm", "gelu", "t_2", "t_6"],
                    "nodes": {"addmm": {"target": "aten.addmm.default", "shape": [4, 64], "dtype": "float32"},
                              "gelu": {"target": "aten.gelu.default", "shape": [4, 64], "dtype": "float32"},
                              "primals_5": {"target": "placeholder", "shape": [4, 16], "dtype": "float32"}}}
        path = os.path.join(self.tmp.name, "decision.json")
        with open(path, "w") as f:
            json.dump(decision, f)
        self.assertEqual(apply_partition(path).saved_names, decision["saved"])
        self.check(model, args, decision)

    def test_renamed_value_found_by_unique_target_and_shape(self):
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        # gelu is the graph's only aten.gelu.default [4, 64]
        decision = {"format": "jointscope-decision", "version": 1, "saved": ["primals_5", "addmm", "my_gelu", "t_2", "t_6"],
                    "nodes": {"my_gelu": {"target": "torch.ops.aten.gelu.default", "shape": [4, 64]}}}
        _, _, saved = train_step(copy.deepcopy(model), args, apply_partition(decision).partition_fn)
        self.assertEqual(saved[1:], ["primals_5", "addmm", "gelu", "t_2", "t_6"])

    def test_fallback_never_takes_a_named_value(self):
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        decision = {"format": "jointscope-decision", "version": 1, "saved": ["primals_5", "my_gelu", "gelu"],
                    "nodes": {"my_gelu": {"target": "aten.gelu.default", "shape": [4, 64]}}}
        with self.assertRaises(ValueError) as ctx:
            apply_partition(decision).partition_fn(*self.joint(model, args))
        self.assertIn("my_gelu", str(ctx.exception))

    def test_unmatched_name_is_reported(self):
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        decision = {"format": "jointscope-decision", "version": 1,
                    "saved": ["addmm", "no_such_value", "other_t", "gelu"],
                    # four aten.t.default [16, 64] in the graph: ambiguous; gelu with a wrong shape
                    "nodes": {"no_such_value": {"target": "aten.mm.default", "shape": [999, 999]},
                              "other_t": {"target": "aten.t.default", "shape": [16, 64]},
                              "gelu": {"target": "aten.gelu.default", "shape": [4, 65]}}}
        with self.assertRaises(ValueError) as ctx:
            apply_partition(decision).partition_fn(*self.joint(model, args))
        message = str(ctx.exception)
        for name in ("no_such_value", "other_t", "gelu"):
            self.assertIn(name, message)
        self.assertNotIn("addmm", message)

    def test_invalid_cut_names_the_missing_input(self):
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        saved = torch_decision(model, args, "torch_min_cut")["saved"]
        self.assertIn("primals_5", saved)  # the input x: fc1's weight gradient reads it
        decision = {"format": "jointscope-decision", "version": 1, "saved": [n for n in saved if n != "primals_5"]}
        with self.assertRaises(ValueError) as ctx:
            apply_partition(decision).partition_fn(*self.joint(model, args))
        self.assertIn("primals_5", str(ctx.exception))

    def test_recomputed_random_op_is_refused(self):
        torch.manual_seed(0)
        model = TinyLM(layers=1)
        args = (torch.randint(0, 64, (2, 16)), torch.randint(0, 64, (2, 16)))
        joint = capture_joint(copy.deepcopy(model), args, default_partition=False)
        random = [n.name for n in joint.joint_module.graph.nodes if n.op == "call_function"
                  and torch.Tag.nondeterministic_seeded in getattr(n.target, "tags", ())]
        saved = [d for d in joint.decisions if d["name"] == "torch_min_cut"][0]["saved"]
        # torch saves dropout's draw (bernoulli_ in torch 1.13); without it the backward would draw again
        self.assertTrue(random and set(random) <= set(saved), (random, saved))
        decision = {"format": "jointscope-decision", "version": 1, "saved": [n for n in saved if n not in random]}
        with self.assertRaises(ValueError) as ctx:
            apply_partition(decision).partition_fn(*self.joint(model, args))
        for name in random:
            self.assertIn(name, str(ctx.exception))

    def test_torch_min_cut_applied_trains_like_torch_min_cut(self):
        """With dropout, eager draws differently; torch's own min cut through the same aot_module is the reference."""
        torch.manual_seed(0)
        model = TinyLM(layers=2)
        args = (torch.randint(0, 64, (2, 16)), torch.randint(0, 64, (2, 16)))
        decision = torch_decision(model, args, "torch_min_cut")
        results = []
        for partition_fn in (min_cut_rematerialization_partition, apply_partition(decision).partition_fn):
            torch.manual_seed(1)
            results.append(train_step(copy.deepcopy(model), args, partition_fn))
        (want_out, want_grads, want_saved), (out, grads, saved) = results
        self.assertEqual(saved, want_saved)
        self.assertEqual(saved[1:], decision["saved"])
        torch.testing.assert_close(out, want_out, rtol=0, atol=0)
        for got, want in zip(grads, want_grads):
            torch.testing.assert_close(got, want, rtol=0, atol=0)

    def test_joint_pass_without_checkpoint_policy_leaves_graph(self):
        import torch.utils.checkpoint

        if hasattr(torch.utils.checkpoint, "CheckpointPolicy"):
            self.skipTest("torch 2: joint_pass tags the graph")  # this suite runs on torch 1.13
        model, args = MLP(16, 64), (torch.randn(4, 16, requires_grad=True),)
        gm = self.joint(model, args)[0]
        before = gm.code
        with self.assertWarns(UserWarning):
            self.assertIs(apply_partition({"format": "jointscope-decision", "saved": ["gelu"]}).joint_pass(gm), gm)
        self.assertEqual(gm.code, before)

    def test_not_a_decision(self):
        with self.assertRaises(ValueError):
            apply_partition({"format": "jointscope-graph", "saved": []})

    @staticmethod
    def joint(model, args):
        capture = capture_joint(copy.deepcopy(model), args, min_cut=False, default_partition=False)
        return capture.joint_module, capture.joint_inputs


if __name__ == "__main__":
    unittest.main(verbosity=2)
