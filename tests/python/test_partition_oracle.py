"""The partition engine against real torch 1.13: models exported live, partitioned with --ruleset torch-1.13.

For each model torch's own min_cut_rematerialization_partition and default_partition ran on the very graph
export_joint wrote (their saved lists are in the JSON's decisions); jointscope-cli partition must give exactly the
min-cut saved list (same order) and the default-partition set (torch 1.13 builds that list with list(set(...)),
so only the set is torch's). The three shared torch 1.13 graphs are checked against their reference.json too.
A missing torch or CLI is a failure, not a skip.
"""

import json
import os
import sys
import tempfile
import unittest

try:
    import torch  # noqa: F401  (a missing torch fails here, clearly)
except ImportError as e:
    print("FAIL: test_partition_oracle needs torch (apt install python3-torch): %s" % e, file=sys.stderr)
    sys.exit(1)

from jointscope_torch import export_joint
from jointscope_torch.models import oracle_models

from clitool import cli_path, run_cli, saved_diff


def require_partition_command():
    """A CLI without `partition` is a clear failure, not a skip."""
    import subprocess

    proc = subprocess.run([cli_path(), "help", "partition"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0 and "unknown command" in proc.stderr:
        raise AssertionError("%s has no `partition` command (%s): build jointscope-cli with the partition engine"
                             % (cli_path(), proc.stderr.strip().splitlines()[0]))


def partition(path, *args):
    return json.loads(run_cli("partition", path, "--json", *args))



class PartitionOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_partition_command()
        base = os.environ.get("JOINTSCOPE_BUILD_DIR")
        if base:
            cls.dir = os.path.join(base, "oracle")
            os.makedirs(cls.dir, exist_ok=True)
        else:
            cls.tmp = tempfile.TemporaryDirectory()
            cls.dir = cls.tmp.name
        cls.exports = {}
        for name, (model, args) in oracle_models().items():
            path = os.path.join(cls.dir, name + ".json")
            capture = export_joint(model, args, path, name=name)
            assert not capture.errors, (name, capture.errors)
            decisions = {d["name"]: d for d in capture.document["graph"]["decisions"]}
            cls.exports[name] = (path, decisions)

    def test_at_least_six_models(self):
        self.assertGreaterEqual(len(self.exports), 6)

    def test_min_cut_saved_list_is_torchs(self):
        for name, (path, decisions) in self.exports.items():
            with self.subTest(model=name):
                ours = partition(path, "--ruleset", "torch-1.13")
                torchs = decisions["torch_min_cut"]
                self.assertEqual(ours["saved"], torchs["saved"], saved_diff(ours["saved"], torchs["saved"]))
                self.assertEqual(ours["saved_sym"], torchs.get("saved_sym", []))
                self.assertGreater(len(ours["saved"]), 0)

    def test_default_partition_set_is_torchs(self):
        for name, (path, decisions) in self.exports.items():
            with self.subTest(model=name):
                ours = partition(path, "--ruleset", "torch-1.13", "--strategy", "default")
                torchs = decisions["torch_default_partition"]
                self.assertEqual(sorted(ours["saved"]), sorted(torchs["saved"]),
                                 saved_diff(ours["saved"], torchs["saved"]))

    def test_shared_torch113_graphs(self):
        shared = os.environ.get("JOINTSCOPE_SHARED_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                                      "shared"))
        for model in ("mlp", "gpt_block2", "convnet"):
            with self.subTest(model=model):
                folder = os.path.join(shared, "graphs", "torch-1.13", model)
                with open(os.path.join(folder, "reference.json")) as f:
                    reference = json.load(f)
                joint = os.path.join(folder, "joint.txt")
                ours = partition(joint, "--ruleset", "torch-1.13")
                torchs = reference["min_cut_saved"]
                self.assertEqual(ours["saved"], torchs, saved_diff(ours["saved"], torchs))
                self.assertEqual(ours["saved_sym"], [])  # torch 1.13 traces static shapes
                ours = partition(joint, "--ruleset", "torch-1.13", "--strategy", "default")["saved"]
                torchs = reference["default_partition_saved"]
                self.assertEqual(sorted(ours), sorted(torchs), saved_diff(ours, torchs))


if __name__ == "__main__":
    unittest.main(verbosity=2)
