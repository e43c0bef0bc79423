"""`jointscope-cli check` on TORCH_TRACE logs recorded on a GPU, which CI cannot capture live.

tests/data/torch2.11-cuda-logs: logs of the torch 2 zoo compiled with torch.compile(backend="inductor") at
activation_memory_budget 0.5, every tensor on an NVIDIA H200, torch 2.11.0+cu130 (tests/python/device_log_zoo.py;
docs/benchmarks.md "On a GPU"), xz-compressed as recorded. What each one holds that CPU logs do not:
- dynamic_gpt_seq_budget05: CUDA's efficient attention under a dynamic sequence length; its logsumexp is
  f32[2, 4, 32*CeilToInt(IntTrueDiv(s27, 32))], whose bytes weigh in the knapsack.
- ac_dropout_masked_attention_budget05: dropout under checkpointing (graphsafe_run_with_rng_state, CUDA's RNG
  states as graph inputs) and a compile dynamo restarted (attempt 1: its graphs say compile 0/0_1, its
  compilation_metrics record says 0/0 inside).
- budget05_aot_cache_hit: three compiles, the last served by the AOTAutograd cache, which logs no
  torch._functorch.config (its budget is the process's).
Expected values: torch's own saved lists in each log; `check` must find them for every compile.
"""

import json
import lzma
import os
import shutil
import subprocess
import tempfile
import unittest

from clitool import cli_path

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "torch2.11-cuda-logs")


class RecordedLogs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp()
        cls.reports = {}
        for name in sorted(os.listdir(DATA)):
            if not name.endswith(".log.xz"):
                continue
            log = os.path.join(cls.tmp, name[:-3])
            with lzma.open(os.path.join(DATA, name)) as src, open(log, "wb") as dst:
                shutil.copyfileobj(src, dst)
            proc = subprocess.run([cli_path(), "check", log, "--json"], capture_output=True, text=True, timeout=600)
            cls.reports[name[:-len(".log.xz")]] = (proc, json.loads(proc.stdout) if proc.stdout.strip() else None)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def compiles(self, name):
        proc, report = self.reports[name]
        self.assertIsNotNone(report, proc.stderr)
        return [c for c in report["compiles"] if c["status"] != "skipped"]

    def test_three_logs(self):
        self.assertEqual(sorted(self.reports), ["ac_dropout_masked_attention_budget05", "budget05_aot_cache_hit",
                                                "dynamic_gpt_seq_budget05"])

    def test_every_compile_is_torchs_decision(self):
        for name in self.reports:
            compiles = self.compiles(name)
            self.assertGreaterEqual(len(compiles), 1)
            for c in compiles:
                with self.subTest(log=name, compile_id=c["compile_id"]):
                    self.assertEqual(c["status"], "identical", json.dumps(c, indent=1)[:4000])
                    self.assertEqual(c["ruleset_choice"],
                                     "torch 2.11.0+cu130 recorded in the graph: ruleset torch-2.13")
                    self.assertIn("activation_memory_budget = 0.5 (log)", c["settings"])

    def test_restarted_compile_reads_its_metrics(self):
        ids = [c["compile_id"] for c in self.compiles("ac_dropout_masked_attention_budget05")]
        self.assertIn("0/0_1", ids)

    def test_cache_hit_takes_the_process_config(self):
        last = self.compiles("budget05_aot_cache_hit")[-1]
        self.assertTrue(any("the AOTAutograd cache served this compile, which logs none" in s
                            for s in last["settings"]), last["settings"])


if __name__ == "__main__":
    unittest.main()
