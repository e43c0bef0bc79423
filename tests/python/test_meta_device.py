"""Production-size capture on the meta device: two LLaMA-7B-shaped layers (dim 4096, hidden 11008, bf16).

The weights alone would take 0.8 GB and the joint graph's tensors over 5 GB; on meta nothing is allocated.
Run by CTest as py_test_meta_device (PYTHONPATH=<repo>/python, JOINTSCOPE_CLI). Missing torch fails.
"""

import json
import math
import os
import resource
import sys
import tempfile
import unittest

try:
    import torch
except ImportError as e:  # never skip: the oracle must run
    print("FAIL: test_meta_device needs torch (apt install python3-torch): %s" % e, file=sys.stderr)
    sys.exit(1)

from jointscope_torch import export_joint
from jointscope_torch.models import LlamaStack

from clitool import run_cli

DIM, HEADS, HIDDEN, LAYERS = 4096, 32, 11008, 2
BATCH, SEQ = 2, 128


def max_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB


class MetaDeviceExport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.path = os.path.join(cls.tmp.name, "llama2.json")
        cls.model = LlamaStack(DIM, HEADS, HIDDEN, LAYERS, device="meta").to(torch.bfloat16)
        x = torch.randn(BATCH, SEQ, DIM, device="meta", dtype=torch.bfloat16)
        cls.capture = export_joint(cls.model, (x,), cls.path, name="llama2")
        cls.rss_after_capture = max_rss_bytes()
        with open(cls.path, encoding="utf-8") as f:
            cls.doc = json.load(f)
        cls.by_name = {n["name"]: n for n in cls.doc["graph"]["nodes"]}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_memory_stays_small(self):
        weight_bytes = sum(p.numel() * p.element_size() for p in self.model.parameters())
        self.assertGreater(weight_bytes, 8e8)  # the model is production-size ...
        # ... the whole capture process (python + torch included) stays below the weights alone
        self.assertLess(self.rss_after_capture, weight_bytes)

    def test_parameters_keep_real_shapes(self):
        params = list(self.model.parameters())
        for i, p in enumerate(params, start=1):
            out = self.by_name["primals_%d" % i]["outputs"][0]
            self.assertEqual(out["sizes"], list(p.shape))
            self.assertEqual(out["dtype"], "bfloat16")
            self.assertEqual(out["device"], "meta")
        x = self.by_name["primals_%d" % (len(params) + 1)]["outputs"][0]
        self.assertEqual(x["sizes"], [BATCH, SEQ, DIM])

    def test_info_matches_torch_graph(self):
        info = json.loads(run_cli("info", self.path, "--json"))
        nodes = list(self.capture.joint_module.graph.nodes)
        self.assertEqual(info["nodes"], len(nodes))
        self.assertEqual(info["primals"], LAYERS * 9 + 1 + 1)  # 9 weights a layer, final norm, input
        self.assertEqual(info["tangents"], 1)
        self.assertEqual(info["num_fwd_outputs"], 1)
        expected = 0
        for n in nodes:
            tm = n.meta.get("tensor_meta")
            if hasattr(tm, "shape"):
                expected += math.prod(tm.shape) * torch.empty((), dtype=tm.dtype).element_size()
        self.assertGreater(expected, 5e9)
        self.assertEqual(info["tensor_bytes"], expected)

    def test_fx_text_shows_production_shapes(self):
        out = os.path.join(self.tmp.name, "llama2.txt")
        run_cli("convert", self.path, "--to", "fx", "-o", out)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        self.assertIn('primals_2: "bf16[%d, %d]' % (DIM, DIM), text)
        self.assertIn("[%d, %d]" % (HIDDEN, DIM), text)

    def test_torch_decisions_recorded(self):
        decisions = {d["name"]: d for d in self.doc["graph"]["decisions"]}
        self.assertEqual(set(decisions), {"torch_min_cut", "torch_default_partition"})
        for d in decisions.values():
            self.assertTrue(d["saved"])
            for name in d["saved"]:
                self.assertIn(name, self.by_name)
        # the min-cut partitioner recomputes cheap ops, so it saves no more than the default partition
        self.assertLessEqual(len(decisions["torch_min_cut"]["saved"]), len(decisions["torch_default_partition"]["saved"]))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    ok = result.wasSuccessful() and result.testsRun > 0 and not result.skipped
    sys.exit(0 if ok else 1)
