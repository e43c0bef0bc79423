"""`jointscope-cli info` on TORCH_LOGS pastes captured live from torch 2.x with compiled autograd.

tests/data/logs/capture_pastes.py runs each case (an MLP trained one step under torch.compile with compiled
autograd: plainly with aot_eager; with a graph break, inductor, and the user's script printed before the log; and
with a graph break and dynamo's debug output, +dynamo,guards,bytecode, besides) in a child with
TORCH_LOGS="graph_code,aot_graphs,compiled_autograd_verbose", and records what torch
logged: each graph's "===== HEADER =====" and len(gm.graph.nodes), counted in torch.
`jointscope-cli info PASTE --json` must list exactly those graphs, in order, with those node counts, none failed,
the compiled-autograd graph (printed as "<eval_with_key>.N class CompiledAutograd0(torch.nn.Module):") as kind
compiled_autograd, and never the user's nn.Module source as a graph.
Run with the torch 2 venv (~/.cache/jointscope/torch-2.15/bin/python), PYTHONPATH=python:tests/python and
JOINTSCOPE_CLI. A missing torch 2 or CLI is a failure, never a skip.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

from clitool import cli_path, require_torch2

torch = require_torch2("test_torch2_paste_capture")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "logs"))
import capture_pastes  # noqa: E402

KIND_OF_HEADER = (("__compiled_fn", "graph_code"), ("Forward graph", "forward"), ("Backward graph", "backward"),
                  ("Compiled autograd graph", "compiled_autograd"))


class PasteCaptureTest(unittest.TestCase):
    def check_case(self, name):
        with tempfile.TemporaryDirectory() as tmp:
            path, logged = capture_pastes.capture(name, tmp)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            proc = subprocess.run([cli_path(), "info", "--json", path], capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        listed = json.loads(proc.stdout)
        problems = listed.get("problems", [])
        self.assertFalse([p for p in problems if ": error: " in p], problems)
        graphs = listed["graphs"]
        self.assertEqual([g["nodes"] for g in graphs], [g["nodes"] for g in logged],
                         "jointscope vs torch node counts, headers %s" % [g["header"] for g in logged])
        for g, t in zip(graphs, logged):
            self.assertNotIn("error", g)
            expected = next(kind for prefix, kind in KIND_OF_HEADER if t["header"].startswith(prefix))
            self.assertEqual(g["kind"], expected, t["header"])
        autograd = [g for g in graphs if g["kind"] == "compiled_autograd"]
        self.assertGreaterEqual(len(autograd), 1)
        self.assertEqual(len(autograd), sum(t["header"] == "Compiled autograd graph" for t in logged))
        self.assertEqual({g["compile_id"] for g in autograd}, {"!0"})
        self.assertIn("<eval_with_key>.", text)
        self.assertIn("class CompiledAutograd0(torch.nn.Module):", text)
        return text, problems, graphs

    def test_mlp(self):
        self.check_case("compiled_autograd_mlp")

    def test_graph_break_with_user_source(self):
        text, problems, graphs = self.check_case("compiled_autograd_graph_break")
        self.assertIn("class MLP(torch.nn.Module):", text)
        # The break: two dynamo graphs of the user's frame, each with a backward, besides compiled autograd's.
        self.assertEqual(sum(g["kind"] == "backward" for g in graphs), 2)
        self.assertTrue(any("'class MLP(torch.nn.Module):' is Python source" in p and ": note: " in p
                            for p in problems), problems)

    def test_dynamo_debug_output(self):
        # +dynamo, guards, bytecode: the user's source lines dynamo traces, bytecode listings and guards between
        # the graphs; none of it is a graph.
        text, problems, graphs = self.check_case("compiled_autograd_dynamo_debug")
        self.assertIn("ORIGINAL BYTECODE", text)
        self.assertIn("GUARDS", text)
        self.assertEqual(sum(g["kind"] == "backward" for g in graphs), 2)


if __name__ == "__main__":
    unittest.main()
