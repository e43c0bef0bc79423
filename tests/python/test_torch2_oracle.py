"""The partition engine against real torch 2 (torch.compile): the torch 2 model zoo exported live, each case
partitioned by jointscope-cli with the ruleset it picks itself (no --ruleset).

Run with a torch >= 2 python (the venv: ~/.cache/jointscope/torch-2.15/bin/python), PYTHONPATH=python:tests/python,
JOINTSCOPE_CLI = the CLI, JOINTSCOPE_BUILD_DIR = a scratch folder. The zoo (jointscope_torch.models.
torch2_zoo_builders) is exported once into $JOINTSCOPE_BUILD_DIR/oracle-torch2 and reused while the torch version,
the case list and the jointscope_torch sources are unchanged (index.json records their fingerprint).

For every case (one subTest each):
- the capture worked and recorded torch's min-cut and default decisions (torch.compile's joint graph, torch's
  partitioners called as torch calls them, under the case's memory budget and solver);
- torch's recorded decisions are what an ordinary torch.compile run with those partitioners produces (forward
  outputs, forward and backward nodes): a check of the capture itself, without the CLI;
- `jointscope-cli partition FILE --json` (plus --memory-budget / --solver when the case sets them) saves torch's
  min-cut list in torch's order, its saved_sym list, and reports the RNG states torch's forward returns
  ("rng_states": the joint graph's random ops, in torch's order);
- `--strategy default` saves torch's default-partition set (and saved_sym set);
- the forward / backward graphs `--out DIR` writes have exactly the call_function nodes of torch's (nodes torch
  created after deciding, RNG functionalization, counted as the joint node they stand for).
A missing torch 2, CLI or case is a failure, never a skip.
"""

import hashlib
import json
import os
import sys
import tempfile
import unittest

from clitool import require_torch2  # noqa: E402

torch = require_torch2("test_torch2_oracle")

import jointscope_torch
from jointscope_torch.models import torch2_zoo_builders
from jointscope_torch.zoo import export_case

from clitool import budget_args, cli_path, run_cli, saved_diff


def sources_fingerprint(names):
    """torch version + case names + the jointscope_torch sources: a cached export is reused only when equal."""
    digest = hashlib.sha256()
    digest.update(torch.__version__.encode())
    digest.update(json.dumps(names).encode())
    folder = os.path.dirname(jointscope_torch.__file__)
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as f:
                digest.update(name.encode() + b"\0" + f.read())
    return digest.hexdigest()


def export_zoo(folder):
    """Exports every zoo case into folder (or reuses a matching earlier export); returns index["cases"]."""
    builders = torch2_zoo_builders()
    names = list(builders)
    fingerprint = sources_fingerprint(names)
    index_path = os.path.join(folder, "index.json")
    if os.path.isfile(index_path):
        with open(index_path, encoding="utf-8") as f:
            index = json.load(f)
        if index.get("fingerprint") == fingerprint and all(
                os.path.isfile(p) for c in index["cases"].values() for p in c.get("paths", [c["path"]])):
            return index["cases"]
    os.makedirs(folder, exist_ok=True)
    cases = {}
    for name in names:
        cases[name] = export_case(name, builders[name], folder)
        print("exported %-28s %s" % (name, "ok" if cases[name]["ok"] else "FAIL " + cases[name]["error"]),
              file=sys.stderr, flush=True)
    with open(index_path, "w", encoding="utf-8") as f:
        json.dump({"torch_version": torch.__version__, "fingerprint": fingerprint, "cases": cases}, f, indent=1)
    return cases


def load_graph(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)["graph"]


def partition(path, *args):
    return json.loads(run_cli("partition", path, "--json", *args))




def set_diff(ours, torchs, what):
    ours, torchs = set(ours), set(torchs)
    return "%s: torch has, ours lacks %s; ours has, torch lacks %s" % (what, sorted(torchs - ours),
                                                                     sorted(ours - torchs))


def torch_node_set(decision, side):
    """torch's call_function nodes of one side as torch names them: the nodes it creates after deciding
    (functionalize_rng_ops' run_and_save_rng_state / run_with_rng_state and their getitems) included, which
    jointscope makes too."""
    return set(decision[side + "_nodes"])


def cli_node_set(path):
    return {n["name"] for n in load_graph(path)["nodes"] if n["op"] == "call_function"}


def reference_run(builder, partition_fn):
    """An ordinary run of a zoo case through torch.compile (or aot_module for via="aot") with
    aot_autograd(partition_fn=...) and recording compilers, the backward lowered eagerly
    (force_non_lazy_backward_lowering); returns one (forward output names, forward call_function names, backward
    call_function names) per graph, in compile order, as torch's compilers received them. nested_compile_region
    bodies are partitioned with min-cut, as export_joint does."""
    from torch._dynamo.backends.common import aot_autograd
    from torch._functorch.aot_autograd import aot_module, make_boxed_func
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    from jointscope_torch._capture import _config_patch, _is_hop_body_call

    model, args, options = builder()
    graphs = []

    def fw_compiler(gm, _inputs):
        out = [n for n in gm.graph.nodes if n.op == "output"][0].args[0]
        graphs.append([[a.name if isinstance(a, torch.fx.Node) else (None if a is None else str(a)) for a in out],
                       [n.name for n in gm.graph.nodes if n.op == "call_function"], None])
        return make_boxed_func(gm.forward)

    def bw_compiler(gm, _inputs):
        graphs[-1][2] = [n.name for n in gm.graph.nodes if n.op == "call_function"]
        return make_boxed_func(gm.forward)

    def partition(joint, inputs, **kwargs):
        if _is_hop_body_call(inputs):
            return min_cut_rematerialization_partition(joint, inputs, **kwargs)
        return partition_fn(joint, inputs, **kwargs)

    functorch_config = dict(options.get("functorch_config") or {}, force_non_lazy_backward_lowering=True)
    with _config_patch(options.get("memory_budget"), options.get("solver"), functorch_config):
        if options.get("via", "compile") == "aot":  # aot_module lowers the backward when it first runs
            out = aot_module(model, fw_compiler=fw_compiler, bw_compiler=bw_compiler, partition_fn=partition)(*args)
            flat = out if isinstance(out, (tuple, list)) else (out,)
            sum(o.sum() for o in flat if isinstance(o, torch.Tensor) and o.requires_grad).backward()
        else:
            for index, dims in (options.get("dynamic") or {}).items():
                torch._dynamo.mark_dynamic(args[index], dims)
            torch._dynamo.reset()
            backend = aot_autograd(fw_compiler=fw_compiler, bw_compiler=bw_compiler, partition_fn=partition)
            fullgraph = options.get("graph_breaks", "error") == "error"
            torch.compile(model, backend=backend, fullgraph=fullgraph)(*args)
            torch._dynamo.reset()
    return [tuple(g) for g in graphs]


class Torch2PartitionOracle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cli_path()  # a missing CLI fails here, clearly
        base = os.environ.get("JOINTSCOPE_BUILD_DIR")
        if base:
            cls.dir = os.path.join(base, "oracle-torch2")
        else:
            cls.tmp = tempfile.TemporaryDirectory()
            cls.dir = cls.tmp.name
        cls.builders = torch2_zoo_builders()
        cls.cases = export_zoo(cls.dir)
        cls.out = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.out.cleanup()

    def exported(self):
        """(subTest label, path, options, decisions by name) of every graph of every case whose capture worked
        (a case dynamo split at graph breaks has several)."""
        for name, case in self.cases.items():
            if not case["ok"]:
                continue
            paths = case.get("paths", [case["path"]])
            for index, path in enumerate(paths):
                decisions = {d["name"]: d for d in load_graph(path)["decisions"]}
                label = name if len(paths) == 1 else "%s[graph %d]" % (name, index)
                yield label, path, case.get("options", {}), decisions

    def test_zoo_size(self):
        self.assertGreaterEqual(len(self.cases), 25)

    def test_every_case_captured_with_torch_decisions(self):
        for name, case in self.cases.items():
            with self.subTest(case=name):
                self.assertTrue(case["ok"], "capture failed: %s\n%s" % (case["error"], case.get("traceback", "")))
                graph = load_graph(case["path"])
                self.assertEqual([d["name"] for d in graph["decisions"]], ["torch_min_cut", "torch_default_partition"])
                attributes = graph["attributes"]
                self.assertEqual(attributes["torch_version"], torch.__version__)
                self.assertEqual(attributes["via"], case["options"].get("via", "compile"))
                mc = graph["decisions"][0]
                options = case["options"]
                self.assertEqual(mc["memory_budget"], float(options.get("memory_budget", 1.0)))
                self.assertEqual(mc["solver"], options.get("solver", "dp"))

    def test_zoo_covers_torch2_features(self):
        graphs = {name: load_graph(case["path"]) for name, case in self.cases.items() if case["ok"]}

        def tags(name):
            return {n.get("meta", {}).get("recompute") for n in graphs[name]["nodes"]} - {None}

        def targets(name):
            return {n["target"] for n in graphs[name]["nodes"]}

        self.assertIn("MUST_SAVE", tags("sac_save_matmuls"))
        self.assertIn("PREFER_RECOMPUTE", tags("gpt_stack_ac"))
        self.assertIn("MUST_RECOMPUTE", tags("sac_must_recompute"))
        self.assertTrue(graphs["gpt_stack_ac_dropout"]["decisions"][0].get("rng_states"))
        for name in ("dynamic_mlp_batch", "dynamic_gpt_seq", "dynamic_size_output"):
            placeholders = [n for n in graphs[name]["nodes"] if n["op"] == "placeholder"]
            self.assertIn("sym_int", {n.get("output_kind") for n in placeholders}, name)
            self.assertTrue(graphs[name]["decisions"][0].get("saved_sym"), name)
        self.assertIn("torch.ops.higher_order.invoke_subgraph", targets("nested_compile_region"))
        self.assertTrue(any("_c10d_functional" in t for t in targets("functional_collectives")))
        self.assertIn("torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default", targets("gpt_block_sdpa"))
        solvers = {(g["decisions"][0]["memory_budget"], g["decisions"][0]["solver"]) for g in graphs.values()}
        for budget in (0.1, 0.5, 0.8):
            for solver in ("greedy", "ilp", "dp"):
                self.assertIn((budget, solver), solvers)

    def test_recorded_decisions_are_torch_compiles(self):
        from torch._functorch.partitioners import default_partition, min_cut_rematerialization_partition

        for name, case in self.cases.items():
            if not case["ok"]:
                continue
            paths = case.get("paths", [case["path"]])
            for label, fn in (("torch_min_cut", min_cut_rematerialization_partition),
                              ("torch_default_partition", default_partition)):
                with self.subTest(case=name, decision=label):
                    reference = reference_run(self.builders[name], fn)
                    self.assertEqual(len(reference), len(paths), "graphs")
                    for index, (path, (outputs, forward, backward)) in enumerate(zip(paths, reference)):
                        d = {x["name"]: x for x in load_graph(path)["decisions"]}[label]
                        self.assertEqual(d["forward_outputs"], outputs, "graph %d" % index)
                        self.assertEqual(d["forward_nodes"], forward, "graph %d" % index)
                        self.assertEqual(d["backward_nodes"], backward, "graph %d" % index)

    def test_min_cut_saved_list_is_torchs(self):
        for name, path, options, decisions in self.exported():
            with self.subTest(case=name):
                ours = partition(path, *budget_args(options))
                torchs = decisions["torch_min_cut"]
                self.assertEqual(ours["saved"], torchs["saved"], saved_diff(ours["saved"], torchs["saved"]))
                self.assertEqual(ours["saved_sym"], torchs.get("saved_sym", []),
                                 saved_diff(ours["saved_sym"], torchs.get("saved_sym", [])))
                self.assertEqual(ours.get("rng_states", []), torchs.get("rng_states", []),
                                 "RNG states torch's forward returns (joint random ops, in order)")

    def test_default_partition_set_is_torchs(self):
        for name, path, _options, decisions in self.exported():
            with self.subTest(case=name):
                ours = partition(path, "--strategy", "default")
                torchs = decisions["torch_default_partition"]
                self.assertEqual(sorted(ours["saved"]), sorted(torchs["saved"]),
                                 saved_diff(ours["saved"], torchs["saved"]))
                self.assertEqual(sorted(ours["saved_sym"]), sorted(torchs.get("saved_sym", [])))

    def test_extracted_graphs_have_torchs_nodes(self):
        for name, path, options, decisions in self.exported():
            for label, args in (("torch_min_cut", budget_args(options)),
                                ("torch_default_partition", ["--strategy", "default"])):
                with self.subTest(case=name, decision=label):
                    out = os.path.join(self.out.name, name, label)
                    partition(path, "--out", out, *args)
                    for side in ("forward", "backward"):
                        ours = cli_node_set(os.path.join(out, side + ".json"))
                        torchs = torch_node_set(decisions[label], side)
                        self.assertEqual(ours, torchs, set_diff(ours, torchs, side))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    ok = result.wasSuccessful() and result.testsRun > 0 and not result.skipped
    sys.exit(0 if ok else 1)
