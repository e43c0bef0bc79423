"""The partition engine against torch's own decisions on joint graphs recorded by torch versions CI cannot run.

CI runs torch 2.15 (test_torch2_oracle) and Debian's 1.13 live. Two more recordings keep the other paths honest:
- tests/data/torch2-cuda: torch 2 zoo cases exported on an NVIDIA H200 under torch 2.11.0+cu130 (index.json says
  how; docs/benchmarks.md "On a GPU"). On CUDA, F.scaled_dot_product_attention is CUDA's memory-efficient attention
  (_scaled_dot_product_efficient_attention and its backward, which torch calls with attn_bias=None), dropout draws
  from the Philox generator, and a recomputed random op takes its RNG state as a graph input
  (graphsafe_run_with_rng_state) instead of the forward returning it.
- tests/data/torch2.13-cpu: zoo cases exported on the CPU under torch 2.13.0, the last release before
  is_nonzero_dropout_sdpa: every recomputed SDPA gets an RNG state, dropout_p 0 or not.
Each is checked under the ruleset generated from its torch (torch-2.11, torch-2.13).

For every recorded case, as test_torch2_oracle does live: `jointscope-cli partition FILE --json` (with the case's
memory budget / solver) saves torch's min-cut list in torch's order, its saved_sym list and its RNG-state list, and
`--strategy default` saves torch's default-partition set. The ruleset is the one the CLI picks by itself from the
recorded torch version. Expected values are the decisions torch recorded in each file. Needs no torch.
"""

import json
import os
import tempfile
import unittest

from clitool import budget_args, run_cli, saved_diff

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data")
CUDA_ATTENTION = "torch.ops.aten._scaled_dot_product_efficient_attention"
# folder -> (torch version prefix recorded, device of the tensors, fewest cases)
RECORDINGS = {
    "torch2-cuda": ("2.11.0+cu", "cuda:0", 8),
    "torch2.13-cpu": ("2.13.0", "cpu", 4),
}
# the ruleset generated from each recording's torch (scripts/gen-ruleset)
RULESET = {"torch2-cuda": "torch-2.11", "torch2.13-cpu": "torch-2.13"}


def load_graph(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["graph"]


def load_recording(folder):
    """(index, {case: (path, options, decisions by name, graph)})."""
    with open(os.path.join(DATA, folder, "index.json"), encoding="utf-8") as f:
        index = json.load(f)
    cases = {}
    for name, case in index["cases"].items():
        path = os.path.join(DATA, folder, case["file"])
        graph = load_graph(path)
        cases[name] = (path, case.get("options", {}), {d["name"]: d for d in graph["decisions"]}, graph)
    return index, cases


class RecordedOracles(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.recordings = {folder: load_recording(folder) for folder in RECORDINGS}

    def every_case(self):
        for folder, (_, cases) in self.recordings.items():
            for name, case in cases.items():
                yield folder, name, case

    def test_recordings_are_what_they_say(self):
        for folder, (version, device, fewest) in RECORDINGS.items():
            with self.subTest(recording=folder):
                index, cases = self.recordings[folder]
                self.assertTrue(index["torch_version"].startswith(version), index["torch_version"])
                self.assertGreaterEqual(len(cases), fewest)
                devices = {o.get("device") for _, _, _, g in cases.values() for node in g["nodes"]
                           for o in node.get("outputs") or [] if isinstance(o, dict) and o.get("device")}
                self.assertEqual(devices, {device})

    def test_cuda_recording_has_cuda_attention(self):
        _, cases = self.recordings["torch2-cuda"]
        with_attention = [n for n, (_, _, _, g) in cases.items()
                          if any(node.get("target", "").startswith(CUDA_ATTENTION) for node in g["nodes"])]
        self.assertGreaterEqual(len(with_attention), 7, with_attention)

    def test_ruleset_follows_recorded_version(self):
        for folder, name, (path, options, _, _) in self.every_case():
            with self.subTest(recording=folder, case=name):
                ours = json.loads(run_cli("partition", path, "--json", *budget_args(options)))
                self.assertEqual(ours["ruleset"], RULESET[folder], ours["ruleset_choice"])

    def test_min_cut_saved_list_is_torchs(self):
        for folder, name, (path, options, decisions, _) in self.every_case():
            with self.subTest(recording=folder, case=name):
                ours = json.loads(run_cli("partition", path, "--json", *budget_args(options)))
                torchs = decisions["torch_min_cut"]
                self.assertEqual(ours["saved"], torchs["saved"], saved_diff(ours["saved"], torchs["saved"]))
                self.assertEqual(ours["saved_sym"], torchs.get("saved_sym", []))
                self.assertEqual(ours.get("rng_states", []), torchs.get("rng_states", []),
                                 saved_diff(ours.get("rng_states", []), torchs.get("rng_states", [])))

    def test_dropout_free_sdpa_gets_an_rng_state_before_torch_2_14(self):
        # torch 2.13 saves an RNG state for a recomputed SDPA whose dropout_p is 0 (torch 2.15 does not): the
        # CPU recording must show it, or the test above would not tell the two rulesets apart.
        _, cases = self.recordings["torch2.13-cpu"]
        _, _, decisions, _ = cases["gpt_stack_ac"]
        self.assertEqual(decisions["torch_min_cut"]["rng_states"],
                         ["_scaled_dot_product_flash_attention_for_cpu",
                          "_scaled_dot_product_flash_attention_for_cpu_1"])

    def test_graphsafe_rng_ops_are_recomputed_without_saved_states(self):
        # On one CUDA device torch wraps each recomputed random op in graphsafe_run_with_rng_state (its forward
        # takes the generator state as an input) and returns no RNG state: torch 2.11 does it for the SDPA with
        # dropout_p=0 as well. jointscope recomputes the same ops and reports no saved state for them.
        _, cases = self.recordings["torch2-cuda"]
        path, options, decisions, _ = cases["gpt_stack_ac_dropout"]
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

    def test_extracted_graphs_have_torchs_nodes(self):
        # The forward and backward `partition --out` writes hold torch's call_function nodes by name, the nodes
        # torch made after deciding included: graphsafe_run_with_rng_state on CUDA, run_and_save_rng_state /
        # run_with_rng_state and their numbered getitems on the CPU.
        with tempfile.TemporaryDirectory() as out:
            for folder, name, (path, options, decisions, _) in self.every_case():
                for label, args in (("torch_min_cut", budget_args(options)),
                                    ("torch_default_partition", ["--strategy", "default"])):
                    with self.subTest(recording=folder, case=name, decision=label):
                        where = os.path.join(out, folder, name, label)
                        run_cli("partition", path, "--out", where, *args)
                        for side in ("forward", "backward"):
                            ours = {n["name"] for n in load_graph(os.path.join(where, side + ".json"))["nodes"]
                                    if n["op"] == "call_function"}
                            torchs = set(decisions[label][side + "_nodes"])
                            self.assertEqual(ours, torchs, (side, sorted(ours - torchs), sorted(torchs - ours)))

    def test_default_partition_set_is_torchs(self):
        for folder, name, (path, _, decisions, _) in self.every_case():
            with self.subTest(recording=folder, case=name):
                ours = json.loads(run_cli("partition", path, "--json", "--strategy", "default"))
                torchs = decisions["torch_default_partition"]
                self.assertEqual(set(ours["saved"]), set(torchs["saved"]),
                                 saved_diff(ours["saved"], torchs["saved"]))
                self.assertEqual(set(ours["saved_sym"]), set(torchs.get("saved_sym", [])))


if __name__ == "__main__":
    unittest.main()
