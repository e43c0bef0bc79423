"""Four `jointscope-cli profile` runs and four readers (`profile-db list`, `cost --db`) on one profile database at once.

Every profile must succeed, every reader too (no "database is locked"), and at the end the database must hold every
signature each profile reported as measured (no record lost). Real processes on real graphs (the shared torch 1.13
graphs and the bundled example). Needs a jointscope-cli built with LibTorch (jointscope-cli-runtime beside it).
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import unittest

from clitool import cli_path

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("JOINTSCOPE_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
GRAPHS = [os.path.join(SHARED, "graphs", "torch-1.13", m, "joint.txt") for m in ("mlp", "gpt_block2", "convnet")] + [
    os.path.join(HERE, "..", "..", "resources", "examples", "gpt_block2.json")]


class ProfileConcurrency(unittest.TestCase):
    def test_four_profiles_and_four_readers(self):
        cli = cli_path()
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, "profiles.sqlite")
            profiles = [subprocess.Popen([cli, "profile", g, "--db", db, "--reps", "150", "--warmup", "2", "--json"],
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for g in GRAPHS]
            readers_failed = []
            reads = 0
            deadline = time.time() + 600
            while any(p.poll() is None for p in profiles) and time.time() < deadline:
                if not os.path.exists(db):  # readers refuse a database no profile has created yet
                    time.sleep(0.05)
                    continue
                readers = [subprocess.Popen([cli, "profile-db", "list", "--db", db, "--json"], stdout=subprocess.PIPE,
                                            stderr=subprocess.PIPE, text=True) for _ in range(3)]
                readers.append(subprocess.Popen([cli, "cost", GRAPHS[0], "--db", db, "--json"],
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
                for r in readers:
                    out, err = r.communicate(timeout=120)
                    reads += 1
                    if r.returncode != 0:
                        readers_failed.append(err.strip())
            measured = set()
            for graph, p in zip(GRAPHS, profiles):
                out, err = p.communicate(timeout=600)
                self.assertEqual(p.returncode, 0, "%s: %s" % (graph, err))
                report = json.loads(out)
                measured |= {n["signature"] for n in report["nodes"] if "time_us" in n and not n.get("cached")}
            self.assertEqual(readers_failed, [])
            self.assertGreater(reads, 4)
            listed = json.loads(subprocess.run([cli, "profile-db", "list", "--db", db, "--json"], capture_output=True,
                                               text=True, check=True).stdout)
            stored = {r["signature"] for r in listed["records"]}
            self.assertGreater(len(measured), 10)
            self.assertEqual(measured - stored, set(), "measured but not stored")


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
