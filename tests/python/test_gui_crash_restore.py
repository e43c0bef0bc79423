"""Crash recovery of the real GUI: killed with SIGKILL at random moments during edits, it restores every settled edit.

20 rounds. Each starts `jointscope GRAPH --script-pins 40 --restore-answer no` (offscreen): once the graph is shown it
pins call nodes MUST_SAVE one by one, printing "pin K NAME" before the K-th edit and "autosaved K" once the
autosave holding the first K pins is on disk. A random moment after its first autosave the process is killed with
SIGKILL. Then `jointscope --restore-answer yes --dump-session OUT` (no file given: the bundled example would load)
must find the dead instance's autosave, restore its graph and pins, and write the session: its policies must hold
every pin that was settled (autosaved) before the kill. XDG_DATA_HOME is a temporary folder (the user's own
autosaves are never touched). Needs the GUI built (JOINTSCOPE_BUILD_DIR/app/jointscope).
"""

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("JOINTSCOPE_SHARED_DIR", os.path.join(HERE, "..", "..", "..", "shared"))
GRAPH = os.path.join(SHARED, "graphs", "torch-1.13", "gpt_block2", "joint.txt")
ROUNDS = 20


def gui_path():
    path = os.path.join(os.environ.get("JOINTSCOPE_BUILD_DIR", ""), "app", "jointscope")
    if not os.path.isfile(path):
        raise AssertionError("the GUI is not built at %r (set JOINTSCOPE_BUILD_DIR)" % path)
    return path


class CrashRestore(unittest.TestCase):
    def test_kill_during_edits_and_restore(self):
        gui = gui_path()
        rng = random.Random(1234)
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, XDG_DATA_HOME=tmp, XDG_CONFIG_HOME=tmp, QT_QPA_PLATFORM="offscreen")
            restored_rounds = 0
            for round_ in range(ROUNDS):
                with self.subTest(round=round_):
                    proc = subprocess.Popen([gui, GRAPH, "--script-pins", "40", "--restore-answer", "no"], env=env,
                                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
                    lines, first_save = [], threading.Event()

                    def read(stream=proc.stdout):
                        for line in stream:
                            lines.append(line.split())
                            if line.startswith("autosaved"):
                                first_save.set()

                    reader = threading.Thread(target=read, daemon=True)
                    reader.start()
                    self.assertTrue(first_save.wait(60), "no autosave within 60 s")
                    time.sleep(rng.uniform(0.0, 1.0))  # somewhere among the edits (40 pins take ~1 s)
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(30)
                    reader.join(10)
                    pins = {int(w[1]): w[2] for w in lines if w[0] == "pin"}
                    settled = max(int(w[1]) for w in lines if w[0] == "autosaved")
                    out = os.path.join(tmp, "restored-%d.json" % round_)
                    restore = subprocess.run([gui, "--restore-answer", "yes", "--dump-session", out], env=env,
                                             capture_output=True, text=True, timeout=120)
                    self.assertEqual(restore.returncode, 0, restore.stderr[-2000:])
                    with open(out) as f:
                        session = json.load(f)
                    self.assertEqual(os.path.realpath(session["graph"]["path"]), os.path.realpath(GRAPH))
                    policies = session.get("policies", {})
                    for k in range(1, settled + 1):
                        self.assertEqual(policies.get(pins[k]), "MUST_SAVE", "pin %d (%s) settled before the kill"
                                         % (k, pins[k]))
                    restored_rounds += 1
            self.assertEqual(restored_rounds, ROUNDS)


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)
