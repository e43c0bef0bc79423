"""pip install ./python: the jointscope_torch helper installs as a package, into a fresh virtual environment.

The environment sees the system's site packages (Debian's torch 1.13: the helper brings no torch of its own), pip
installs from (a copy of) the source folder without the network (--no-build-isolation, --no-deps), and then, from another
folder with no PYTHONPATH, `import jointscope_torch` must come from the environment's site-packages, expose its
API, and the console scripts must start (--help).
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class PythonPackage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.venv = os.path.join(cls.tmp.name, "venv")
        subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", cls.venv], check=True)
        cls.env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        cls.python = os.path.join(cls.venv, "bin", "python")
        # A copy: setuptools builds in the source folder (build/, *.egg-info), which must stay clean.
        source = os.path.join(cls.tmp.name, "python")
        shutil.copytree(os.path.join(ROOT, "python"), source,
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        proc = subprocess.run([cls.python, "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                               "--disable-pip-version-check", source],
                              env=cls.env, cwd=cls.tmp.name, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise AssertionError("pip install ./python failed:\n" + proc.stdout[-3000:] + proc.stderr[-3000:])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_in_venv(self, *argv):
        return subprocess.run(list(argv), env=self.env, cwd=self.tmp.name, capture_output=True, text=True,
                              timeout=300)

    def test_imports_from_site_packages(self):
        proc = self.run_in_venv(self.python, "-c", "import jointscope_torch as j; print(j.__file__); "
                                "print(' '.join(sorted(j.__all__)))")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        where, names = proc.stdout.splitlines()[:2]
        self.assertIn(os.path.join(self.venv, "lib"), where)
        self.assertNotIn(os.path.join(ROOT, "python"), where)
        for name in ("export_joint", "apply_partition", "log_partitioner_input"):
            self.assertIn(name, names.split())

    def test_console_scripts_start(self):
        for script in ("jointscope-calibrate", "jointscope-zoo"):
            with self.subTest(script=script):
                proc = self.run_in_venv(os.path.join(self.venv, "bin", script), "--help")
                self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
                self.assertIn("usage:", proc.stdout)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 and not result.skipped else 1)
