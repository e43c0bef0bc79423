"""The torchrun gloo calibration checked end to end (shared by test_calibrate_torchrun.py under torch 1.13 and
test_torch2_calibrate_torchrun.py under torch 2.x).

Runs `torchrun --standalone --nproc_per_node 4 -m jointscope_torch.calibrate --mesh 2x2` (real processes, gloo),
then checks, independently of the code under test:
- every (mesh dimension, collective) has a fit with positive latency and bandwidth, and a sample per size;
- the fit reproduces the samples: the test evaluates the fitted segments at every sample itself; their RMS
  relative error must be the one the file reports, at most FIT_TOLERANCE, and no worse than the plain
  least-squares line (relative error, closed form, computed here) whenever that line has a positive latency and
  bandwidth (a second segment is only kept when it fits better);
- `jointscope-cli profile-db import` accepts the file;
- `jointscope-cli shard --comm-model measured --db DB --json` says "comm_model": "measured" and every
  collective of every redistribution costs latency_us + bytes / bytes_per_s * 1e6 of the fitted segment, the
  formula recomputed here from the calibration file (and "analytic" without the option, at other costs).
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time
import unittest

from clitool import run_cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GRAPH = os.path.join(REPO, "tests", "data", "sharding", "llama_block_meta.json")
COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce", "all_to_all")
MIN_BYTES, MAX_BYTES, REPS = 16 << 10, 4 << 20, 5
# gloo over loopback on a shared 2-core CI machine: 4 ranks, other jobs, timer noise of milliseconds. The RMS
# relative error of a fit stays well under this when the machine is quiet; the bound catches fits that do not
# follow the samples at all (a wrong unit, a swapped coefficient, a segment applied to the wrong sizes).
FIT_TOLERANCE = 1.0


def torchrun_command(python, out):
    import torch

    cmd = [python, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "4"]
    if int(torch.__version__.split(".")[0]) < 2:
        # torch 1.13's torchrun turns its default --redirects 0 into None under Python >= 3.11 (IntFlag no longer
        # iterates its zero member) and fails; an explicit non-zero value (stderr to log files, teed back) works.
        cmd += ["--redirects", "2", "--tee", "2"]
    return cmd + ["-m", "jointscope_torch.calibrate", "--mesh", "2x2", "--out", out, "--min-bytes", str(MIN_BYTES),
                  "--max-bytes", str(MAX_BYTES), "--reps", str(REPS)]


def segment_us(segments, nbytes):
    for s in segments:
        if s["max_bytes"] is None or nbytes <= s["max_bytes"] or s is segments[-1]:
            return s["latency_us"] + nbytes / s["bytes_per_s"] * 1e6
    raise AssertionError("no segments")


def rms_rel(samples, f):
    return math.sqrt(sum((f(x) / t - 1) ** 2 for x, t in samples) / len(samples))


def least_squares_line(samples):
    """time = a + b x minimising sum ((a + b x) / t - 1)^2: the normal equations with weights 1 / t^2."""
    w = [1 / (t * t) for _, t in samples]
    s0 = sum(w)
    s1 = sum(wi * x for wi, (x, _) in zip(w, samples))
    s2 = sum(wi * x * x for wi, (x, _) in zip(w, samples))
    r0 = sum(wi * t for wi, (_, t) in zip(w, samples))
    r1 = sum(wi * x * t for wi, (x, t) in zip(w, samples))
    det = s0 * s2 - s1 * s1
    return (r0 * s2 - s1 * r1) / det, (s0 * r1 - s1 * r0) / det


class CalibrateTorchrun(unittest.TestCase):
    torch_major = None  # set by the test file

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "comm.json")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        start = time.monotonic()
        proc = subprocess.run(torchrun_command(sys.executable, cls.out), capture_output=True, text=True, env=env,
                              cwd=cls.tmp.name, timeout=600)
        cls.seconds = time.monotonic() - start
        print("torchrun calibration: %.1f s\n%s" % (cls.seconds, proc.stdout[-3000:]))
        if proc.returncode != 0:
            raise AssertionError("torchrun failed (%d):\n%s\n%s" % (proc.returncode, proc.stdout[-4000:],
                                                                    proc.stderr[-4000:]))
        with open(cls.out) as f:
            cls.doc = json.load(f)
        cls.fits = {(e["dim"], e["collective"]): e for e in cls.doc["collectives"]}
        cls.db = os.path.join(cls.tmp.name, "profiles.sqlite")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_dimension_and_collective(self):
        import torch

        self.assertEqual(self.doc["format"], "jointscope-profile")
        self.assertEqual(self.doc["version"], 2)
        self.assertEqual(sorted(self.fits), sorted((d, c) for d in (0, 1) for c in COLLECTIVES))
        sizes = []
        size = MIN_BYTES
        while size <= MAX_BYTES:
            sizes.append(size)
            size *= 2
        for (d, c), e in self.fits.items():
            self.assertEqual((e["backend"], e["world_size"], e["mesh"], e["group_size"]), ("gloo", 4, [2, 2], 2))
            self.assertEqual(e["torch"], torch.__version__)
            self.assertTrue(e["hosts"])
            self.assertEqual([x for x, _ in e["samples"]], sizes, (d, c))
            self.assertTrue(all(t > 0 for _, t in e["samples"]))
            self.assertIn(len(e["segments"]), (1, 2))
            self.assertIsNone(e["segments"][-1]["max_bytes"])
            for s in e["segments"]:
                self.assertGreater(s["latency_us"], 0, (d, c))
                self.assertGreater(s["bytes_per_s"], 0, (d, c))

    def test_fit_reproduces_samples(self):
        for key, e in sorted(self.fits.items()):
            samples = [tuple(s) for s in e["samples"]]
            err = rms_rel(samples, lambda x: segment_us(e["segments"], x))
            print("d%d %-14s segments %s rms relative error %.3f" % (key[0], key[1], e["segments"], err))
            self.assertAlmostEqual(err, e["rms_rel_error"], delta=1e-9 + 1e-6 * err, msg=key)
            self.assertLessEqual(err, FIT_TOLERANCE, key)
            a, b = least_squares_line(samples)
            if a > 0 and b > 0:
                self.assertLessEqual(err, rms_rel(samples, lambda x: a + b * x) * (1 + 1e-9), key)

    def test_import_and_shard_with_measured_model(self):
        imported = run_cli("profile-db", "import", self.out, "--db", self.db)
        self.assertIn("imported 8 records", imported)
        analytic = json.loads(run_cli("shard", GRAPH, "--mesh", "2x2", "--json"))
        self.assertEqual(analytic["comm_model"], "analytic")
        data = analytic["roles"]["data_inputs"][0]
        # The batch pinned sharded over both dimensions: whatever the solver then chooses, something
        # redistributes (the activations are gathered, or the weight gradients reduced).
        args = ["shard", GRAPH, "--mesh", "2x2", "--pin", data + "=S(0)S(0)", "--json"]
        measured = json.loads(run_cli(*(args + ["--comm-model", "measured", "--db", self.db])))
        self.assertEqual(measured["comm_model"], "measured")
        self.assertIn("gloo 2x2", measured["comm_model_source"])
        steps = [s for r in measured["redistributions"] for s in r["steps"]]
        self.assertTrue(steps, "no redistribution to check")
        for s in steps:
            self.assertEqual(s["comm_model"], "measured")
            fit = self.fits[(s["mesh_dim"], s["collective"])]
            expected = segment_us(fit["segments"], s["bytes"])
            self.assertAlmostEqual(s["us"], expected, delta=1e-9 * expected, msg=s)
        for r in measured["redistributions"]:
            self.assertAlmostEqual(r["us"], sum(s["us"] for s in r["steps"]), delta=1e-9 * r["us"])
        # The analytic model prices the same plan's steps differently (it knows nothing of this machine).
        pinned = json.loads(run_cli(*args))
        self.assertEqual(pinned["comm_model"], "analytic")
        self.assertNotEqual(pinned["comm_cost"], measured["comm_cost"])
        # Explain names the model that priced each redistribution into the explained node.
        consumer = measured["redistributions"][0]["consumer"]
        explained = json.loads(run_cli(*(args + ["--comm-model", "measured", "--db", self.db, "--explain",
                                                 consumer])))["explain"][0]
        self.assertIn("[measured gloo 2x2", explained)

    def test_missing_mesh_says_what_to_run(self):
        proc = subprocess.run([os.environ.get("JOINTSCOPE_CLI") or os.path.join(os.environ["JOINTSCOPE_BUILD_DIR"],
                                                                                 "app", "jointscope-cli"),
                               "shard", GRAPH, "--mesh", "2x4", "--comm-model", "measured", "--db", self.db],
                              capture_output=True, text=True, timeout=300)
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn("no measured collectives for mesh 2x4", proc.stderr)
        self.assertIn("torchrun --nproc_per_node 8 -m jointscope_torch.calibrate --mesh 2x4", proc.stderr)
