"""core/runtime against real torch 1.13 models exported live: validate and profile through jointscope-cli.

- Each oracle model's joint graph, with torch's own min-cut and default-partition decisions (recorded by
  export_joint from torch's partitioners), validates: exit 0, every output and gradient bitwise equal on the CPU.
  The language model exercises the integer-input rules (token ids, targets within the vocabulary).
- The interpreter against torch: `run FILE --save` writes the generated inputs and the joint's outputs
  (safetensors, read here without any library); torch's captured fx.GraphModule runs on the same inputs with the
  same seed, and every output must be bit-identical (dropout masks included).
- A 12-layer GPT stack measures no more op signatures than a 1-layer stack of the same width: repeated layers are
  measured once.
A missing torch or CLI is a failure, not a skip; a CLI built without LibTorch fails too (no `validate`).
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

try:
    import torch  # noqa: F401
except ImportError as e:
    print("FAIL: test_runtime needs torch (apt install python3-torch): %s" % e, file=sys.stderr)
    sys.exit(1)

from jointscope_torch import export_joint
from jointscope_torch.models import gpt_stack, oracle_models

from clitool import cli_path


def cli(*args):
    proc = subprocess.run([cli_path()] + list(args), capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


class Runtime(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        code, _, err = cli("help", "validate")
        if code != 0:
            raise AssertionError("jointscope-cli has no `validate` (built without LibTorch?): %s" % err)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.exports = {}
        cls.captures = {}
        for name, (model, args) in oracle_models().items():
            path = os.path.join(cls.tmp.name, name + ".json")
            capture = export_joint(model, args, path, name=name)
            assert not capture.errors, (name, capture.errors)
            decisions = {d["name"]: d for d in capture.document["graph"]["decisions"]}
            cls.exports[name] = (path, decisions)
            cls.captures[name] = capture

    def check_ok(self, path, *extra):
        code, out, err = cli("validate", path, "--json", *extra)
        self.assertEqual(code, 0, err + out)
        report = json.loads(out)
        self.assertTrue(report["ok"])
        for o in report["outputs"]:
            self.assertIn(o["status"], ("bitwise", "none"), o)
        return report

    def test_torch_min_cut_validates(self):
        for name, (path, decisions) in self.exports.items():
            with self.subTest(model=name):
                report = self.check_ok(path)
                self.assertIn("torch_min_cut", report["decision"]["source"])
                self.assertEqual(sorted(report["decision"]["saved"]), sorted(decisions["torch_min_cut"]["saved"]))

    def test_torch_default_partition_validates(self):
        for name, (path, decisions) in self.exports.items():
            with self.subTest(model=name):
                decision = os.path.join(self.tmp.name, name + ".default.json")
                with open(decision, "w") as f:
                    json.dump({"saved": decisions["torch_default_partition"]["saved"]}, f)
                self.check_ok(path, "--partition", decision)

    def test_interpreter_matches_torch(self):
        dtypes = {"F64": torch.float64, "F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16,
                  "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8, "U8": torch.uint8,
                  "BOOL": torch.bool}
        for name, (path, _) in self.exports.items():
            with self.subTest(model=name):
                out = os.path.join(self.tmp.name, name + ".safetensors")
                code, _, err = cli("run", path, "--save", out, "--seed", "7")
                self.assertEqual(code, 0, err)
                with open(out, "rb") as f:
                    data = f.read()
                (size,) = struct.unpack("<Q", data[:8])
                header = json.loads(data[8:8 + size])
                base = 8 + size
                tensors = {}
                for key, entry in header.items():
                    if key == "__metadata__":
                        continue
                    begin, end = entry["data_offsets"]
                    raw = bytearray(data[base + begin:base + end])
                    t = torch.frombuffer(raw, dtype=dtypes[entry["dtype"]]) if raw else torch.empty(0, dtype=dtypes[entry["dtype"]])
                    tensors[key] = t.reshape(entry["shape"])
                module = self.captures[name].joint_module
                placeholders = [n.target for n in module.graph.nodes if n.op == "placeholder"]
                primals = [tensors["input:" + p] for p in placeholders if p.startswith("primals")]
                tangents = [tensors["input:" + p] for p in placeholders if p.startswith("tangents")]
                torch.manual_seed(7)
                with torch.no_grad():
                    expected = torch.utils._pytree.tree_flatten(module(primals, tangents))[0]
                self.assertEqual(int(header["__metadata__"]["outputs"]), len(expected))
                for i, e in enumerate(expected):
                    key = "output:%d" % i
                    if e is None:
                        self.assertNotIn(key, tensors)
                        continue
                    ours = tensors[key]
                    self.assertEqual(ours.dtype, e.dtype, key)
                    self.assertEqual(tuple(ours.shape), tuple(e.shape), key)
                    self.assertTrue(torch.equal(ours, e.contiguous()), "%s of %s differs: max abs %s" % (
                        key, name, (ours.double() - e.double()).abs().max().item()))

    def test_repeated_layers_measured_once(self):
        measured = {}
        for layers in (1, 12):
            model, args = gpt_stack(layers=layers, seed=1)
            path = os.path.join(self.tmp.name, "gpt_%d.json" % layers)
            export_joint(model, args, path, name="gpt_%d" % layers)
            code, out, err = cli("profile", path, "--no-db", "--reps", "1", "--warmup", "0", "--json")
            self.assertEqual(code, 0, err)
            report = json.loads(out)
            self.assertFalse([n for n in report["nodes"] if "error" in n])
            measured[layers] = report["measured"]
            timed = sum(1 for n in report["nodes"] if "time_us" in n)
            self.assertGreater(timed, 0)
        self.assertLessEqual(measured[12], measured[1], measured)


if __name__ == "__main__":
    unittest.main(verbosity=2)
