"""pip install jointscope: the headless CLI as a wheel, built by scripts/build-wheel from this build's
jointscope-cli, its shared libraries bundled by auditwheel, installed into a clean venv (no system site packages,
no network: --no-index), then run on a real TORCH_TRACE log from another folder.

Expected graphs come from counting the log's graph records here (record kinds as tlparse names them), not from the
code under test; the wheel's `info` must also print exactly what the build's own jointscope-cli prints.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("JOINTSCOPE_SHARED_DIR", os.path.join(os.path.dirname(ROOT), "shared"))
LOG = os.path.join(SHARED, "graphs", "torch-trace", "multi_rank_rank_1.log")
GRAPH_KINDS = ("dynamo_output_graph", "aot_joint_graph", "aot_forward_graph", "aot_backward_graph",
               "aot_inference_graph", "inductor_post_grad_graph", "inductor_pre_grad_graph")


class CliWheel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        wheels = os.path.join(cls.tmp.name, "wheels")
        env = dict(os.environ, JOINTSCOPE_WHEEL_DIR=wheels)
        proc = subprocess.run([os.path.join(ROOT, "scripts", "build-wheel"), os.environ["JOINTSCOPE_CLI"]],
                              env=env, capture_output=True, text=True, timeout=900)
        if proc.returncode != 0:
            raise AssertionError("scripts/build-wheel failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:])
        found = [f for f in os.listdir(wheels) if f.endswith(".whl")]
        if len(found) != 1:
            raise AssertionError(f"expected one wheel in {wheels}, found {found}")
        cls.wheel = os.path.join(wheels, found[0])
        cls.venv = os.path.join(cls.tmp.name, "venv")
        subprocess.run([sys.executable, "-m", "venv", cls.venv], check=True)
        cls.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
        proc = subprocess.run([os.path.join(cls.venv, "bin", "pip"), "install", "-q", "--no-index",
                               "--disable-pip-version-check", cls.wheel], env=cls.env, capture_output=True,
                              text=True, timeout=300)
        if proc.returncode != 0:
            raise AssertionError("pip install of the wheel failed:\n" + proc.stderr[-3000:])
        cls.cli = os.path.join(cls.venv, "bin", "jointscope-cli")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_cli(self, *args):
        return subprocess.run([self.cli, *args], env=self.env, cwd=self.tmp.name, capture_output=True, text=True,
                              timeout=300)

    def test_wheel_is_a_repaired_platform_wheel(self):
        name = os.path.basename(self.wheel)
        self.assertRegex(name, r"^jointscope-0\.1\.0-py3-none-manylinux_\d+_\d+_x86_64.*\.whl$")
        with zipfile.ZipFile(self.wheel) as wheel:
            files = wheel.namelist()
        self.assertIn("jointscope/bin/jointscope-cli", files)
        # The ILP solver and SQLite come inside the wheel, not from the machine it lands on.
        bundled = [f for f in files if f.startswith("jointscope.libs/")]
        for lib in ("libCbc", "libsqlite3"):
            self.assertTrue(any(os.path.basename(f).startswith(lib) for f in bundled), (lib, bundled))

    def test_info_lists_every_graph_of_a_real_log(self):
        with open(LOG, encoding="utf-8") as f:
            expected = sum(1 for line in f
                           if re.match(r'^\S+ \S+ \d+ \S+\] \{"(' + "|".join(GRAPH_KINDS) + r')"', line))
        self.assertGreater(expected, 0)
        proc = self.run_cli("info", "--json", LOG)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        info = json.loads(proc.stdout)
        listed = [g for g in info["graphs"] if g["kind"] in GRAPH_KINDS]
        self.assertEqual(len(listed), expected)
        own = subprocess.run([os.environ["JOINTSCOPE_CLI"], "info", "--json", LOG], capture_output=True, text=True)
        self.assertEqual(proc.stdout, own.stdout)

    def test_a_graph_loads_and_errors_stay_located(self):
        proc = self.run_cli("info", "--json", LOG, "--graph", "aot_inference_graph")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertGreater(json.loads(proc.stdout)["nodes"], 1)
        bad = os.path.join(self.tmp.name, "bad.txt")
        with open(bad, "w") as f:
            f.write("class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        y = torch.ops.aten.(\n")
        proc = self.run_cli("info", bad)
        self.assertEqual(proc.returncode, 2)
        self.assertRegex(proc.stderr, re.escape(bad) + r":\d+:\d+: error: ")


if __name__ == "__main__":
    unittest.main()
