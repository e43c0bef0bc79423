"""`jointscope-cli check` on TORCH_TRACE logs written live by torch 2.x.

Five zoo models (an MLP, a GPT block with SDPA, a LLaMA-3 block, and two checkpointed ones: full activation
checkpointing of GPT blocks and selective checkpointing that saves the matmuls) are compiled with torch.compile in
a child process with TORCH_TRACE set; their forward and backward run once. The log then holds, per compile id, the
joint graph AOTAutograd traced and the forward / backward torch partitioned it into. The backend is
aot_eager_decomp_partition: inductor's decompositions and its min-cut partitioner call, without inductor's
joint-graph passes (pattern rewrites, no-op removal), which run after the joint graph is logged and which
jointscope does not replay.
`jointscope-cli check LOG --json` must find every compile's decision identical to torch's (exit 0).
Run with the torch 2 venv (~/.cache/jointscope/torch-2.15/bin/python), PYTHONPATH=python:tests/python and
JOINTSCOPE_CLI. A missing torch 2 or CLI is a failure, never a skip.
"""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

from clitool import require_torch2  # noqa: E402

torch = require_torch2("test_torch2_trace_check")

from clitool import cli_path

CASES = ("mlp", "gpt_block_sdpa", "llama3_block", "gpt_stack_ac", "sac_save_matmuls")
CHECKPOINTED = ("gpt_stack_ac", "sac_save_matmuls")

# Runs in the child: TORCH_TRACE must be set before torch starts logging.
CHILD = r"""
import sys, torch
from jointscope_torch.models import torch2_zoo_builders
builders = torch2_zoo_builders()
for name in sys.argv[1:]:
    model, args, options = builders[name]()
    torch._dynamo.reset()
    out = torch.compile(model, fullgraph=True, backend="aot_eager_decomp_partition")(*args)
    out = out if isinstance(out, (tuple, list)) else (out,)
    sum(o.float().sum() for o in out if isinstance(o, torch.Tensor) and o.requires_grad).backward()
    print("compiled", name, flush=True)
"""


class TraceCheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cli_path()
        base = os.environ.get("JOINTSCOPE_BUILD_DIR")
        cls.tmp = None if base else tempfile.TemporaryDirectory()
        cls.dir = os.path.join(base, "trace-torch2") if base else cls.tmp.name
        for old in glob.glob(os.path.join(cls.dir, "*.log")):
            os.remove(old)
        os.makedirs(cls.dir, exist_ok=True)
        env = dict(os.environ, TORCH_TRACE=cls.dir)
        proc = subprocess.run([sys.executable, "-c", CHILD, *CASES], env=env, capture_output=True, text=True,
                              timeout=1200)
        if proc.returncode != 0:
            raise AssertionError("compiling the models under TORCH_TRACE failed:\n%s" % proc.stderr[-4000:])
        logs = glob.glob(os.path.join(cls.dir, "*.log"))
        if len(logs) != 1:
            raise AssertionError("expected one TORCH_TRACE log in %s, found %s" % (cls.dir, logs))
        cls.log = logs[0]
        proc = subprocess.run([cli_path(), "check", cls.log, "--json"], capture_output=True, text=True, timeout=600)
        cls.returncode, cls.stderr = proc.returncode, proc.stderr
        cls.report = json.loads(proc.stdout) if proc.stdout.strip() else None

    @classmethod
    def tearDownClass(cls):
        if cls.tmp:
            cls.tmp.cleanup()

    def test_every_compile_is_checked(self):
        self.assertIsNotNone(self.report, self.stderr)
        checked = [c for c in self.report["compiles"] if c["status"] != "skipped"]
        # one compile per model (fullgraph), each with its joint graph and torch's forward / backward
        self.assertEqual(len(checked), len(CASES), json.dumps(self.report["compiles"], indent=1)[:4000])

    def test_every_decision_is_torchs(self):
        self.assertIsNotNone(self.report, self.stderr)
        for c in self.report["compiles"]:
            with self.subTest(compile_id=c["compile_id"]):
                self.assertEqual(c["status"], "identical", json.dumps(c, indent=1)[:4000])
        self.assertEqual(self.returncode, 0, self.stderr)

    def test_checkpointed_models_carry_tags(self):
        # the two checkpointed models really reach the partitioner with recompute tags (the log shows them)
        with open(self.log, encoding="utf-8") as f:
            text = f.read()
        self.assertIn("recompute", text)
        self.assertEqual(self.report["identical"], len(CASES))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 and not result.skipped else 1)
