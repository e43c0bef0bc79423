"""The partition engine against torch's own decisions on joint graphs torch recorded on a GPU.

tests/data/torch2-cuda holds torch 2 zoo cases exported on an NVIDIA H200 under torch 2.11.0+cu130 (index.json
says how; docs/benchmarks.md "GPU"). On CUDA, F.scaled_dot_product_attention is CUDA's memory-efficient attention
(_scaled_dot_product_efficient_attention and its backward, which torch calls with attn_bias=None), dropout draws
from the Philox generator, and torch 2.11 gives every nondeterministic_seeded op in a recomputed region an RNG
state, even with dropout_p=0. The CPU oracle (test_torch2_oracle) never sees these ops.

For every recorded case, as test_torch2_oracle does live: `jointscope-cli partition FILE --json` (with the case's
memory budget / solver) saves torch's min-cut list in torch's order, its saved_sym list and its RNG-state list, and
`--strategy default` saves torch's default-partition set. The ruleset is the one the CLI picks by itself from the
recorded torch version. Expected values are the decisions torch recorded in each file. Needs no torch.
"""

import json
import os
import unittest

from clitool import budget_args, run_cli, saved_diff

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "torch2-cuda")
CUDA_ATTENTION = "torch.ops.aten._scaled_dot_product_efficient_attention"


def load_index():
    with open(os.path.join(DATA, "index.json"), encoding="utf-8") as f:
        return json.load(f)


def load_graph(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["graph"]




class RecordedCudaOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.index = load_index()
        cls.cases = {}
        for name, case in cls.index["cases"].items():
            path = os.path.join(DATA, case["file"])
            graph = load_graph(path)
            cls.cases[name] = (path, case.get("options", {}), {d["name"]: d for d in graph["decisions"]}, graph)

    def test_recorded_on_cuda_with_cuda_attention(self):
        self.assertTrue(self.index["torch_version"].startswith("2.11.0+cu"), self.index["torch_version"])
        self.assertGreaterEqual(len(self.cases), 8)
        with_attention = [n for n, (_, _, _, g) in self.cases.items()
                          if any(node.get("target", "").startswith(CUDA_ATTENTION) for node in g["nodes"])]
        self.assertGreaterEqual(len(with_attention), 7, with_attention)
        devices = {o.get("device") for _, _, _, g in self.cases.values() for node in g["nodes"]
                   for o in node.get("outputs") or [] if isinstance(o, dict) and o.get("device")}
        self.assertIn("cuda:0", devices)

    def test_ruleset_follows_recorded_version(self):
        for name, (path, options, _, _) in self.cases.items():
            with self.subTest(case=name):
                ours = json.loads(run_cli("partition", path, "--json", *budget_args(options)))
                self.assertEqual(ours["ruleset"], "torch-2.13", ours["ruleset_choice"])

    def test_min_cut_saved_list_is_torchs(self):
        for name, (path, options, decisions, _) in self.cases.items():
            with self.subTest(case=name):
                ours = json.loads(run_cli("partition", path, "--json", *budget_args(options)))
                torchs = decisions["torch_min_cut"]
                self.assertEqual(ours["saved"], torchs["saved"], saved_diff(ours["saved"], torchs["saved"]))
                self.assertEqual(ours["saved_sym"], torchs.get("saved_sym", []))
                self.assertEqual(ours.get("rng_states", []), torchs.get("rng_states", []),
                                 saved_diff(ours.get("rng_states", []), torchs.get("rng_states", [])))

    def test_graphsafe_rng_ops_are_recomputed_without_saved_states(self):
        # On one CUDA device torch wraps each recomputed random op in graphsafe_run_with_rng_state (its forward
        # takes the generator state as an input) and returns no RNG state: torch 2.11 does it for the SDPA with
        # dropout_p=0 as well. jointscope recomputes the same ops and reports no saved state for them.
        path, options, decisions, _ = self.cases["gpt_stack_ac_dropout"]
        torchs = decisions["torch_min_cut"]
        wrapped = sorted(joint for created, joint in torchs["forward_created"].items()
                         if created.startswith("graphsafe_run_with_rng_state"))
        self.assertEqual(wrapped, ["_scaled_dot_product_efficient_attention",
                                   "_scaled_dot_product_efficient_attention_1", "native_dropout", "native_dropout_1",
                                   "native_dropout_2", "native_dropout_3"])
        self.assertNotIn("rng_states", torchs)
        ours = json.loads(run_cli("partition", path, "--json", *budget_args(options)))
        self.assertEqual(ours["rng_states"], [])
        self.assertTrue(set(wrapped) <= set(ours["recomputed"]), sorted(set(wrapped) - set(ours["recomputed"])))

    def test_default_partition_set_is_torchs(self):
        for name, (path, options, decisions, _) in self.cases.items():
            with self.subTest(case=name):
                ours = json.loads(run_cli("partition", path, "--json", "--strategy", "default"))
                torchs = decisions["torch_default_partition"]
                self.assertEqual(set(ours["saved"]), set(torchs["saved"]), saved_diff(ours["saved"], torchs["saved"]))
                self.assertEqual(set(ours["saved_sym"]), set(torchs.get("saved_sym", [])))


if __name__ == "__main__":
    unittest.main()
