"""Clustering of repeated layers in `jointscope-cli shard`, on LLaMA-7B-shaped stacks captured on meta by torch.

Independent facts: the layer count and each layer's parameter count come from the torch module; parameters are
the first primals, layer by layer (AOTAutograd's order). A clustered ILP is a restriction of the unclustered
one, so it can never beat the unclustered optimum; it must still beat the replicate / data-parallel baselines.
Run by CTest as py_test_shard_clusters (PYTHONPATH=<repo>/python, JOINTSCOPE_CLI).
"""

import json
import os
import sys
import tempfile
import unittest

try:
    import torch
except ImportError as e:  # never skip: the oracle must run
    print("FAIL: test_shard_clusters needs torch (apt install python3-torch): %s" % e, file=sys.stderr)
    sys.exit(1)

from jointscope_torch import export_joint
from jointscope_torch.models import LlamaStack

from clitool import run_cli

DIM, HEADS, HIDDEN, BATCH, SEQ = 4096, 32, 11008, 8, 1024


def capture(directory, layers):
    model = LlamaStack(DIM, HEADS, HIDDEN, layers, device="meta").to(torch.bfloat16)
    x = torch.randn(BATCH, SEQ, DIM, device="meta", dtype=torch.bfloat16)
    path = os.path.join(directory, "llama%d.json" % layers)
    cap = export_joint(model, (x,), path, name="llama%d" % layers)
    per_layer = len(list(model.layers[0].parameters()))
    return path, len(cap.joint_module.graph.nodes), per_layer


def shard(path, rounds, mesh="2x2"):
    return json.loads(run_cli("shard", path, "--mesh", mesh, "--cluster-rounds", str(rounds), "--json",
                              timeout=600))


class ShardClusters(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path4, cls.nodes4, cls.per_layer = capture(cls.tmp.name, 4)
        cls.path2, _, _ = capture(cls.tmp.name, 2)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def assert_beats_baselines(self, r):
        self.assertLessEqual(r["total_cost"], r["baselines"]["replicate"]["total_cost"] * (1 + 1e-9))
        if r["baselines"]["data_parallel"] is not None:
            self.assertLessEqual(r["total_cost"], r["baselines"]["data_parallel"]["total_cost"] * (1 + 1e-9))

    def test_middle_layers_share_their_placements(self):
        r = shard(self.path4, 3)
        self.assertTrue(r["optimal"])
        # far fewer variable groups than nodes: the four layers share theirs
        self.assertLess(r["variable_groups"], self.nodes4 / 2)
        p = self.per_layer

        def layer(i):
            return [r["placements"]["primals_%d" % (i * p + k + 1)]["output"] for k in range(p)]

        self.assertEqual(layer(1), layer(2))
        # and the plan actually shards something: a test of all-replicated layers would prove nothing
        self.assertTrue(any(pl != "RR" for pl in layer(1)), layer(1))
        self.assert_beats_baselines(r)

    def test_clustered_plan_never_beats_the_exact_optimum(self):
        exact = shard(self.path2, 0)
        self.assertTrue(exact["optimal"])
        for rounds in (1, 3):
            clustered = shard(self.path2, rounds)
            self.assertLess(clustered["variable_groups"], exact["variable_groups"])
            self.assertGreaterEqual(clustered["total_cost"], exact["total_cost"] * (1 - 1e-9))
            self.assertLessEqual(clustered["total_cost"], exact["total_cost"] * 1.05)
            self.assert_beats_baselines(clustered)


if __name__ == "__main__":
    unittest.main()
