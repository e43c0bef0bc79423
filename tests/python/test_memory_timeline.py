"""jointscope's memory timeline against torch 1.13, on the shared graphs (shared/graphs/torch-1.13/*: joint.txt
with its sidecar, and fw.txt / bw.txt, the forward and backward torch's min-cut partitioner made from it).

torch's fw.txt and bw.txt are read by jointscope-cli convert (nothing in them is executed), rebuilt as fx graphs
and run on real tensors under memtrack.LiveStorages; `jointscope-cli partition joint.txt --json` must report the
same nodes in the same order, with live bytes within 1 % of torch's at every step, and peak_bytes its maximum.
A missing torch or CLI is a failure, not a skip.
"""

import json
import os
import sys
import tempfile
import unittest

try:
    import torch
except ImportError as e:
    print("FAIL: test_memory_timeline needs torch (apt install python3-torch): %s" % e, file=sys.stderr)
    sys.exit(1)

from clitool import run_cli
from memtrack import compare, graph_from_json, real_tensor, run_partitioned

SHARED = os.environ.get("JOINTSCOPE_SHARED_DIR",
                        os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared"))
MODELS = ("mlp", "gpt_block2", "convnet")


def torch_graph(path):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "g.json")
        run_cli("convert", path, "--to", "json", "-o", out)
        with open(out, encoding="utf-8") as f:
            return graph_from_json(json.load(f))


def real_inputs(meta_path):
    """Real tensors for the joint graph's placeholders (primals and tangents), laid out as the sidecar says."""
    with open(meta_path, encoding="utf-8") as f:
        nodes = json.load(f)["nodes"]
    values = {}
    for i, n in enumerate(nodes):
        if n["op"] == "placeholder":
            values[n["name"]] = real_tensor(n["shape"], n["stride"], getattr(torch, n["dtype"]), seed=i)
    return values


class MemoryTimelineTorch113(unittest.TestCase):
    def test_shared_graphs(self):
        for model in MODELS:
            with self.subTest(model=model):
                folder = os.path.join(SHARED, "graphs", "torch-1.13", model)
                with open(os.path.join(folder, "reference.json"), encoding="utf-8") as f:
                    torch_saved = json.load(f)["min_cut_saved"]
                ours = json.loads(run_cli("partition", os.path.join(folder, "joint.txt"), "--json"))
                self.assertEqual(ours["saved"], torch_saved)  # the timeline is of torch's own decision
                steps, between = run_partitioned(torch_graph(os.path.join(folder, "fw.txt")),
                                                 torch_graph(os.path.join(folder, "bw.txt")),
                                                 real_inputs(os.path.join(folder, "joint.meta.json")))
                timeline = ours["memory_timeline"]
                problems = compare(timeline, steps)
                self.assertEqual(problems, [], "%s: %d steps\n%s" % (model, len(steps), "\n".join(problems[:20])))
                fw_calls = [n for n in torch_graph(os.path.join(folder, "fw.txt")).nodes if n.op == "call_function"]
                self.assertEqual(timeline["forward_steps"], len(fw_calls))
                self.assertEqual(ours["peak_bytes"], max(timeline["live_bytes"]))
                self.assertGreater(ours["peak_bytes"], 0)
                peak = max(b for _, b in steps)
                self.assertLessEqual(abs(ours["peak_bytes"] - peak), 0.01 * peak)
                self.assertLessEqual(abs(timeline["saved_bytes"] - between), 0.01 * between)
                print("%-11s %4d steps, peak %9d bytes at %s (torch %d), saved %d bytes (torch %d)"
                      % (model, len(steps), ours["peak_bytes"], timeline["peak_node"], peak,
                         timeline["saved_bytes"], between), file=sys.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
