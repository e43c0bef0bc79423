"""jointscope_torch.export_joint against real torch (Debian's python3-torch 1.13 in CI) and jointscope-cli.

Run by CTest as py_test_export with PYTHONPATH=<repo>/python and JOINTSCOPE_CLI set. A missing torch is a
failure, not a skip: CI installs python3-torch.
"""

import json
import math
import operator
import os
import sys
import tempfile
import unittest

try:
    import torch
    import torch.fx as fx
except ImportError as e:  # never skip: the oracle must run
    print("FAIL: test_export needs torch (apt install python3-torch): %s" % e, file=sys.stderr)
    sys.exit(1)

from jointscope_torch import capture_joint, export_joint
from jointscope_torch._serialize import value_to_json
from jointscope_torch.models import MLP, ConvNet, GPTBlock

from clitool import run_cli


def cli_info(path):
    return json.loads(run_cli("info", path, "--json"))


def tensor_metas(gm):
    """Node name -> TensorMetadata that torch recorded on the joint graph."""
    return {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes if hasattr(n.meta.get("tensor_meta"), "shape")}


def expected_tensor_bytes(gm):
    """Sum of output sizes from torch's metadata; tuple outputs through their getitem users (1.13 keeps no
    metadata on the tuple node itself), each element once."""
    def nbytes(tm):
        return math.prod(tm.shape) * torch.empty((), dtype=tm.dtype).element_size()

    total = 0
    for node in gm.graph.nodes:
        tm = node.meta.get("tensor_meta")
        if hasattr(tm, "shape"):
            total += nbytes(tm)
        elif node.op == "call_function":
            elements = {}
            for user in node.users:
                if user.target is operator.getitem and hasattr(user.meta.get("tensor_meta"), "shape"):
                    elements[user.args[1]] = nbytes(user.meta["tensor_meta"])
            total += sum(elements.values())
    return total


def torch_partition_saved(model, args, partition):
    """The saved values torch itself picks in a normal aot_module run: the forward graph's outputs after
    the model's outputs (the compiled forward and backward really run)."""
    from functorch.compile import aot_module, make_boxed_func  # the public API of the shared reference graphs

    saved = []

    def fw_compiler(gm, _inputs):
        outputs = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
        saved.extend(a.name for a in outputs[1:])
        return make_boxed_func(gm.forward)

    def bw_compiler(gm, _inputs):
        return make_boxed_func(gm.forward)

    compiled = aot_module(model, fw_compiler=fw_compiler, bw_compiler=bw_compiler, partition_fn=partition)
    compiled(*args).sum().backward()
    return saved


def normalize_roundtrip(doc):
    """A document as the reader keeps it: source_line added, empty strides of scalars dropped."""
    for node in doc["graph"]["nodes"]:
        meta = node.get("meta", {})
        meta.pop("source_line", None)
        if "meta" in node and not meta:
            del node["meta"]
        for out in node.get("outputs") or []:
            if out is not None and out.get("strides") == []:
                del out["strides"]
    return doc


# The DECISION fields the C++ reader models (core/graph/Graph.h PartitionDecision); the capture also records
# python-side facts (forward_outputs, forward_nodes, backward_nodes, rng_states, memory_budget, solver, ...) that the
# reader does not keep.
READER_DECISION_KEYS = ("name", "origin", "saved", "saved_sym", "seconds")


def reader_decisions(decisions):
    return [{k: d[k] for k in READER_DECISION_KEYS if k in d} for d in decisions]


class ExportSmallModels(unittest.TestCase):
    CASES = {
        "mlp": (lambda: MLP(16, 64), lambda: (torch.randn(8, 16),)),
        "gpt_block": (lambda: GPTBlock(32, 4), lambda: (torch.randn(2, 8, 32),)),
        "convnet": (lambda: ConvNet(8, 10), lambda: (torch.randn(2, 3, 8, 8),)),
    }

    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.tmp = tempfile.TemporaryDirectory()
        cls.results = {}
        for name, (make_model, make_args) in cls.CASES.items():
            model, args = make_model(), make_args()
            path = os.path.join(cls.tmp.name, name + ".json")
            capture = export_joint(model, args, path)
            cls.results[name] = (model, args, path, capture)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_info_counts_match_torch_graph(self):
        for name, (model, args, path, capture) in self.results.items():
            with self.subTest(model=name):
                nodes = list(capture.joint_module.graph.nodes)
                info = cli_info(path)
                self.assertEqual(info["nodes"], len(nodes))
                self.assertEqual(info["placeholders"], sum(n.op == "placeholder" for n in nodes))
                self.assertEqual(info["call_function"], sum(n.op == "call_function" for n in nodes))
                # aot_module lifts parameters and buffers into primals ahead of the inputs
                n_state = len(list(model.parameters())) + len(list(model.buffers()))
                self.assertEqual(info["primals"], n_state + len(args))
                self.assertEqual(info["tangents"], 1)  # one differentiable model output
                self.assertEqual(info["num_fwd_outputs"], 1)
                self.assertEqual(info["tensor_bytes"], expected_tensor_bytes(capture.joint_module))

    def test_node_shapes_match_tensor_meta(self):
        for name, (model, args, path, capture) in self.results.items():
            with self.subTest(model=name):
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
                by_name = {n["name"]: n for n in doc["graph"]["nodes"]}
                metas = tensor_metas(capture.joint_module)
                self.assertGreater(len(metas), 10)
                for node_name, tm in metas.items():
                    out = by_name[node_name]["outputs"][0]
                    self.assertEqual(out["sizes"], list(tm.shape), node_name)
                    self.assertEqual(out["strides"], list(tm.stride), node_name)
                    self.assertEqual("torch." + out["dtype"], str(tm.dtype), node_name)
                # the first primal is the first parameter, with its real shape
                first_param = next(iter(model.parameters()))
                self.assertEqual(by_name["primals_1"]["outputs"][0]["sizes"], list(first_param.shape))
                self.assertEqual(by_name["primals_1"]["outputs"][0]["device"], "cpu")

    def test_fx_conversion_prints_shapes(self):
        _model, _args, path, capture = self.results["mlp"]
        out = os.path.join(self.tmp.name, "mlp.txt")
        run_cli("convert", path, "--to", "fx", "-o", out)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        tm = tensor_metas(capture.joint_module)["primals_1"]
        self.assertIn('primals_1: "f32[%s]' % ", ".join(str(d) for d in tm.shape), text)
        self.assertIn("torch.ops.aten.addmm.default(", text)

    def test_json_roundtrips_through_reader(self):
        # everything the capture writes is understood by the C++ reader (unknown keys would be dropped)
        for name, (_model, _args, path, _capture) in self.results.items():
            with self.subTest(model=name):
                out = os.path.join(self.tmp.name, name + ".rt.json")
                run_cli("convert", path, "--to", "json", "-o", out)
                with open(path, encoding="utf-8") as f:
                    mine = normalize_roundtrip(json.load(f))
                with open(out, encoding="utf-8") as f:
                    theirs = normalize_roundtrip(json.load(f))
                self.assertEqual(mine["graph"]["nodes"], theirs["graph"]["nodes"])
                self.assertEqual(reader_decisions(mine["graph"]["decisions"]), theirs["graph"]["decisions"])
                self.assertEqual(mine["graph"]["attributes"], theirs["graph"]["attributes"])

    def test_min_cut_decision_matches_torch_run(self):
        from functorch.compile import default_partition, min_cut_rematerialization_partition

        for name, (make_model, make_args) in self.CASES.items():
            with self.subTest(model=name):
                _model, _args, path, capture = self.results[name]
                decisions = {d["name"]: d for d in capture.decisions}
                model, args = make_model(), make_args()
                expected = torch_partition_saved(model, args, min_cut_rematerialization_partition)
                self.assertEqual(decisions["torch_min_cut"]["saved"], expected)
                # default_partition saves list(set(...)): its order is not reproducible, its content is
                expected = torch_partition_saved(model, args, default_partition)
                self.assertEqual(sorted(decisions["torch_default_partition"]["saved"]), sorted(expected))
                self.assertGreater(decisions["torch_min_cut"]["seconds"], 0)
                with open(path, encoding="utf-8") as f:
                    written = json.load(f)["graph"]["decisions"]
                self.assertEqual(written, capture.decisions)

    def test_special_floats_are_tagged(self):
        _model, _args, path, _capture = self.results["gpt_block"]
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.assertNotIn("Infinity", text)
        self.assertNotIn("NaN", text)
        doc = json.loads(text)
        fills = [n for n in doc["graph"]["nodes"] if n["target"] == "torch.ops.aten.masked_fill.Scalar"]
        self.assertTrue(fills)
        self.assertEqual(fills[0]["args"][2], {"float": "-inf"})


class ExportFunction(unittest.TestCase):
    def test_plain_function_and_tuple_outputs(self):
        def fn(x, w):
            y = torch.nn.functional.layer_norm(x @ w, (w.shape[1],))
            return y.relu(), y.sum()

        x = torch.randn(4, 8, requires_grad=True)
        w = torch.randn(8, 8, requires_grad=True)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "fn.json")
            capture = export_joint(fn, (x, w), path)
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            info = cli_info(path)
        graph = doc["graph"]
        self.assertEqual(graph["name"], "fn")
        self.assertEqual(graph["num_fwd_outputs"], 2)
        self.assertEqual(info["num_fwd_outputs"], 2)
        self.assertEqual(info["primals"], 2)
        self.assertEqual(info["tangents"], 2)
        self.assertEqual(graph["attributes"]["torch_version"], torch.__version__)
        ln = [n for n in graph["nodes"] if n["target"] == "torch.ops.aten.native_layer_norm.default"]
        self.assertEqual(len(ln), 1)
        self.assertEqual(ln[0]["output_kind"], "tuple")
        self.assertEqual(ln[0]["outputs"][0]["sizes"], [4, 8])
        outputs = [n for n in capture.joint_module.graph.nodes if n.op == "output"]
        self.assertEqual(graph["nodes"][-1]["op"], "output")
        self.assertEqual(len(graph["nodes"]), len(list(capture.joint_module.graph.nodes)))
        self.assertEqual(len(outputs), 1)

    def test_no_grad_inputs_is_an_error(self):
        with self.assertRaises(Exception):
            capture_joint(lambda x: x.sin(), (torch.randn(3),))


class HandBuiltGraph(unittest.TestCase):
    """The node metadata torch 2.x records (activation checkpointing, module stacks, HOP bodies), built by
    hand since torch 1.13 records none of it; the C++ reader must keep every field."""

    def test_meta_fields_and_subgraphs_roundtrip(self):
        import enum

        from jointscope_torch import graph_to_json, write_document

        class CheckpointPolicy(enum.Enum):  # the shape of torch.utils.checkpoint.CheckpointPolicy
            MUST_SAVE = 0
            PREFER_RECOMPUTE = 3

        body = fx.Graph()
        b_x = body.placeholder("arg0_1")
        b_cos = body.create_node("call_function", torch.ops.aten.cos.default, (b_x,), name="cos")
        body.output((b_cos,))
        body_module = fx.GraphModule(torch.nn.Module(), body)

        g = fx.Graph()
        x = g.placeholder("primals_1")
        x.meta["val"] = torch.empty(4, 8, device="meta", dtype=torch.bfloat16)
        sin = g.create_node("call_function", torch.ops.aten.sin.default, (x,), name="sin")
        sin.meta["val"] = torch.empty(4, 8, device="meta", dtype=torch.bfloat16)
        sin.meta["stack_trace"] = '  File "/src/model.py", line 12, in forward\n    y = x.sin()\n'
        sin.meta["nn_module_stack"] = {"L__self___fc1": ("fc1", torch.nn.Linear)}
        sin.meta["recompute"] = CheckpointPolicy.PREFER_RECOMPUTE
        sin.meta["ac_graph_id"] = 2
        sin.meta["partitioner_tag"] = "must_be_in_backward"
        sin.meta["seq_nr"] = 7
        clamp = g.create_node("call_function", torch.ops.aten.clamp.default, (sin, float("-inf"), float("nan")),
                              name="clamp")
        body_attr = g.get_attr("repeated_subgraph0")
        view = g.create_node("call_function", torch.ops.aten.view.dtype, (clamp, torch.float16), name="view")
        full = g.create_node(
            "call_function",
            torch.ops.aten.full.default,
            ([2, 3], 1.0),
            {"dtype": torch.float32, "layout": torch.strided, "device": torch.device("cpu"), "pin_memory": False},
            name="full",
        )
        item = g.create_node("call_function", operator.getitem, ((clamp, view), slice(0, 1, None)), name="getitem")
        g.output((view, full, item, body_attr))
        root = torch.nn.Module()
        root.repeated_subgraph0 = body_module
        gm = fx.GraphModule(root, g)

        graph = graph_to_json(gm, name="hand", num_fwd_outputs=1, attributes={"torch_version": "2.9.0"})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "hand.json")
            write_document(graph, path)
            out = os.path.join(tmp, "hand.rt.json")
            run_cli("convert", path, "--to", "json", "-o", out)
            info = cli_info(path)
            with open(path, encoding="utf-8") as f:
                mine = normalize_roundtrip(json.load(f))
            with open(out, encoding="utf-8") as f:
                theirs = normalize_roundtrip(json.load(f))
        self.assertEqual(info["nodes"], 8)
        self.assertEqual(info["subgraphs"], 1)
        nodes = {n["name"]: n for n in mine["graph"]["nodes"]}
        meta = nodes["sin"]["meta"]
        self.assertEqual(meta["stack_trace"], ["File: /src/model.py:12 in forward, code: y = x.sin()"])
        self.assertEqual(meta["nn_module_stack"], [{"key": "L__self___fc1", "path": "fc1",
                                                    "type": "torch.nn.modules.linear.Linear"}])
        self.assertEqual(meta["recompute"], "PREFER_RECOMPUTE")
        self.assertEqual(meta["ac_graph_id"], 2)
        self.assertEqual(meta["partitioner_tag"], "must_be_in_backward")
        self.assertEqual(meta["extra"], {"seq_nr": "7"})
        self.assertEqual(nodes["sin"]["outputs"], [{"dtype": "bfloat16", "sizes": [4, 8], "strides": [8, 1],
                                                    "device": "meta"}])
        self.assertEqual(nodes["clamp"]["args"][1:], [{"float": "-inf"}, {"float": "nan"}])
        self.assertEqual(nodes["full"]["kwargs"], {"dtype": {"dtype": "float32"}, "layout": {"layout": "strided"},
                                                   "device": {"device": "cpu"}, "pin_memory": False})
        self.assertEqual(nodes["getitem"]["target"], "operator.getitem")
        self.assertEqual(nodes["getitem"]["args"][1], {"slice": [0, 1, None]})
        self.assertEqual(nodes["repeated_subgraph0"]["subgraph"], 0)
        self.assertEqual(mine["graph"]["subgraphs"][0]["name"], "repeated_subgraph0")
        self.assertEqual(mine["graph"]["subgraphs"][0]["nodes"][1]["target"], "torch.ops.aten.cos.default")
        self.assertEqual(theirs["graph"]["nodes"], mine["graph"]["nodes"])
        self.assertEqual(theirs["graph"]["subgraphs"][0]["nodes"], normalize_roundtrip(
            {"graph": mine["graph"]["subgraphs"][0]})["graph"]["nodes"])


class ValueTree(unittest.TestCase):
    def test_tagged_values(self):
        self.assertEqual(value_to_json(float("inf")), {"float": "inf"})
        self.assertEqual(value_to_json(float("-inf")), {"float": "-inf"})
        self.assertEqual(value_to_json(float("nan")), {"float": "nan"})
        self.assertEqual(value_to_json(1.0), 1.0)
        self.assertEqual(json.dumps(value_to_json(1.0)), "1.0")
        self.assertEqual(value_to_json(True), True)
        self.assertEqual(value_to_json(2**63 - 1), 2**63 - 1)
        self.assertEqual(value_to_json(2**64), {"opaque": str(2**64)})
        self.assertEqual(value_to_json(torch.bfloat16), {"dtype": "bfloat16"})
        self.assertEqual(value_to_json(torch.device("cuda", 1)), {"device": "cuda:1"})
        self.assertEqual(value_to_json(torch.strided), {"layout": "strided"})
        self.assertEqual(value_to_json(torch.channels_last), {"memory_format": "channels_last"})
        self.assertEqual(value_to_json(slice(None, 4, None)), {"slice": [None, 4, None]})
        self.assertEqual(value_to_json(Ellipsis), {"ellipsis": True})
        self.assertEqual(value_to_json((1, [2, None])), {"tuple": [1, [2, None]]})
        self.assertEqual(value_to_json({"a": 1}), {"dict": [["a", 1]]})
        graph = fx.Graph()
        node = graph.placeholder("x")
        self.assertEqual(value_to_json([node, "tanh"]), [{"node": "x"}, "tanh"])


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    ok = result.wasSuccessful() and result.testsRun > 0 and not result.skipped
    sys.exit(0 if ok else 1)
