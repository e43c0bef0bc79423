"""Capture of AOTAutograd's joint forward+backward graph through a partition-function hook.

Two ways in (via=): "aot" (aot_module / aot_function; torch 1.13 and 2.x) and "compile" (torch.compile with a
dynamo backend built on torch._dynamo.backends.common.aot_autograd; torch >= 2).
"""

import contextlib
import copy
import importlib
import json
import operator
import os
import time

import torch
import torch.fx as fx
import torch.nn as nn
import torch.utils._pytree as pytree

from . import _serialize


VIA_CHOICES = ("aot", "compile")
GRAPH_BREAK_CHOICES = ("error", "all")


class _CaptureComplete(Exception):
    """Raised by the hook once the joint graph is captured: nothing after partitioning is needed."""


class JointCapture:
    """What export_joint captured: one joint graph.

    joint_module: the fx.GraphModule torch handed to the partitioner (a snapshot taken before any partitioner ran:
        torch's min-cut partitioner mutates the module it is given).
    num_fwd_outputs: number of forward outputs (the first outputs of the joint graph).
    joint_inputs: torch's example inputs of the joint graph ((primals, tangents) on torch 2).
    partition_kwargs: the keyword arguments torch passed to the partition function (torch 2: num_fwd_outputs,
        static_lifetime_input_indices); {} on torch 1.13.
    decisions: DECISION dicts (docs/formats.md, plus the keys listed in export_joint) for torch's min-cut and
        default partitions, each taken by torch's partitioner called the way torch calls it.
    errors: partitioner failures ("label: Type: message").
    api: the torch entry point, e.g. "functorch.compile.aot_module" or "torch.compile".
    via: "aot" or "compile".  compile_id: dynamo's compile id ("0/0") with via="compile", else None.
    settings: the partitioner configuration in effect (memory_budget, solver, ...; torch 2 only).
    graphs: every JointCapture of this capture in compile order (several when dynamo split the program at graph
        breaks and graph_breaks="all"); [self] otherwise. The capture returned is graphs[0].
    hop_partitions: decisions torch's min-cut took on the bodies of invoke_subgraph HOPs
        (torch.compiler.nested_compile_region) before the outer graph was partitioned.
    """

    def __init__(self):
        self.joint_module = None
        self.num_fwd_outputs = None
        self.joint_inputs = None
        self.partition_kwargs = {}
        self.decisions = []
        self.api = None
        self.via = None
        self.compile_id = None
        self.settings = {}
        self.errors = []
        self.graphs = [self]
        self.hop_partitions = []


def has_torch_compile():
    """True when this torch has torch.compile with dynamo's aot_autograd backend helper (torch >= 2)."""
    if not hasattr(torch, "compile"):
        return False
    try:
        importlib.import_module("torch._dynamo.backends.common").aot_autograd  # noqa: B018
    except Exception:
        return False
    return True


def default_via():
    """"compile" (torch.compile, the path users take and the only one where torch.utils.checkpoint reaches the
    partitioner as recompute tags) when this torch has it, else "aot" (torch 1.13)."""
    return "compile" if has_torch_compile() else "aot"


def _aot_entry_points():
    """(aot_function, aot_module, api prefix), chosen by what this torch provides."""
    try:  # torch >= 2.0
        from torch._functorch import aot_autograd as aot

        return aot.aot_function, aot.aot_module, "torch._functorch.aot_autograd"
    except ImportError:
        pass
    from functorch import compile as fc  # torch 1.13: the separate functorch package

    return fc.aot_function, fc.aot_module, "functorch.compile"


def _torch_partitioners():
    """(min_cut_rematerialization_partition, default_partition) of this torch, by feature detection."""
    try:
        from torch._functorch import partitioners as p
    except ImportError:
        from functorch.compile import default_partition, min_cut_rematerialization_partition

        return min_cut_rematerialization_partition, default_partition
    return p.min_cut_rematerialization_partition, p.default_partition


def _functorch_config():
    """torch._functorch.config on torch 2, None on torch 1.13 (whose partitioner has no memory budget)."""
    try:
        from torch._functorch import config
    except ImportError:
        return None
    return config


def _config_patch(memory_budget=None, solver=None, functorch_config=None):
    """A context manager setting torch._functorch.config for the capture (tracing and partitioning)."""
    patches = dict(functorch_config or {})
    if memory_budget is not None:
        patches["activation_memory_budget"] = float(memory_budget)
    if solver is not None:
        patches["activation_memory_budget_solver"] = solver
    if not patches:
        return contextlib.nullcontext()
    config = _functorch_config()
    missing = sorted(k for k in patches if config is None or not hasattr(config, k))
    if missing:
        raise ValueError("jointscope_torch: torch %s has no torch._functorch.config.%s"
                         % (torch.__version__, ", ".join(missing)))
    return config.patch(**patches)


def _setting_text(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    return type(value).__name__  # a CustomKnapsackSolver / CustomRuntimeEstimator instance


def _partition_settings(joint_module):
    """The partitioner configuration in effect, as the min-cut partitioner reads it (torch 2; {} on 1.13).

    memory_budget follows min_cut_rematerialization_partition's precedence: torch._functorch.config, then a node's
    meta["memory_budget"], then a region_activation_memory_budget annotation."""
    config = _functorch_config()
    if config is None or not hasattr(config, "activation_memory_budget"):
        return {}
    budget, source = float(config.activation_memory_budget), "torch._functorch.config.activation_memory_budget"
    nodes = list(joint_module.graph.nodes)
    for node in nodes:
        if isinstance(node.meta.get("memory_budget", None), float):
            budget, source = node.meta["memory_budget"], "node.meta['memory_budget']"
            break
    try:
        from torch._functorch.partitioners import _get_memory_budget_annotation
    except ImportError:
        _get_memory_budget_annotation = None
    if _get_memory_budget_annotation is not None:
        for node in nodes:
            annotated = _get_memory_budget_annotation(node)
            if annotated is not None:
                budget, source = float(annotated), "torch.autograd.graph.region_activation_memory_budget"
                break
    settings = {"memory_budget": budget, "memory_budget_source": source,
                "solver": _setting_text(getattr(config, "activation_memory_budget_solver", None))}
    for key in ("activation_memory_budget_runtime_estimator", "cse", "treat_parameters_as_free_to_save",
                "recompute_views", "aggressive_recomputation", "unsafe_allow_optimization_of_collectives"):
        if hasattr(config, key):
            settings[key] = _setting_text(getattr(config, key))
    return settings


def _num_fwd_outputs(joint_module, partition_kwargs):
    if partition_kwargs.get("num_fwd_outputs") is not None:  # torch 2.x passes it
        return int(partition_kwargs["num_fwd_outputs"])
    # torch 1.13: the joint returns (fwd_outputs, grads); its pytree out spec counts them.
    return joint_module._out_spec.children_specs[0].num_leaves


def _output_values(gm):
    """The values a graph returns, as its output node lists them (torch's partitioners return one flat tuple)."""
    for node in gm.graph.nodes:
        if node.op == "output":
            out = node.args[0] if len(node.args) == 1 else node.args
            if isinstance(out, (tuple, list)):
                return list(out)
            return pytree.tree_flatten(out)[0]
    return []


def _snapshot(gm):
    """A fresh graph (node meta dicts copied shallowly, as torch's own Graph.__deepcopy__ does) over the same
    attributes: fake / meta tensors in node.meta are shared, never deep-copied."""
    return fx.GraphModule(gm, copy.deepcopy(gm.graph))


def _rng_wrappers():
    """torch 2's RNG functionalization wrappers -> (position of the wrapped op in their args, whether they return
    (rng state, the op's result) rather than the op's result)."""
    wrappers = {}
    try:
        from torch._prims import rng_prims
    except ImportError:
        return wrappers
    for name, position, with_state in (("run_and_save_rng_state", 0, True), ("graphsafe_run_with_rng_state", 0, False),
                                       ("run_with_rng_state", 1, False)):
        op = getattr(rng_prims, name, None)
        if op is not None:
            wrappers[op] = (position, with_state)
    return wrappers


def _arg_key(value, names):
    if isinstance(value, fx.Node):
        return ("node", names.get(value.name, value.name))
    return ("value", repr(value))


def _args_key(args, kwargs, names):
    flat = pytree.tree_flatten((list(args), dict(kwargs)))[0]
    return tuple(_arg_key(a, names) for a in flat)


def _joint_names(gm, joint_graph, wrappers):
    """For a forward / backward graph torch extracted from joint_graph: torch node name -> joint node name.

    Nodes copied from the joint graph keep their names (same name, target and arguments). Nodes torch created
    after the partition decision (functionalize_rng_ops: run_and_save_rng_state / run_with_rng_state and their
    getitems, which replace a random op of the joint graph) map to the joint random op they stand for; a created
    node with no joint counterpart maps to None. Returns (names for every node, {created name: joint name})."""
    joint_by_name = {n.name: n for n in joint_graph.nodes}
    names, created, wrapped = {}, {}, {}
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            names[node.name] = node.name
            continue
        if node.op != "call_function":
            names[node.name] = node.name
            continue
        if node.target in wrappers:
            position, with_state = wrappers[node.target]
            op, op_args = node.args[position], node.args[position + 1:]
            op_kwargs = {k: v for k, v in node.kwargs.items() if k != "rng_state"}
            key = _args_key(op_args, op_kwargs, names)
            match = None
            for joint in joint_graph.nodes:
                if joint.op == "call_function" and joint.target == op and _args_key(joint.args, joint.kwargs, {}) == key:
                    match = joint.name
                    break
            if match is None:
                # an input the partitioner's CSE renamed (a checkpointed region's duplicate view): the joint's only
                # call of that random op is the one
                calls = [j.name for j in joint_graph.nodes if j.op == "call_function" and j.target == op]
                match = calls[0] if len(calls) == 1 else None
            names[node.name] = match
            created[node.name] = match
            if with_state:
                wrapped[node.name] = match
            continue
        if node.target is operator.getitem and isinstance(node.args[0], fx.Node) and node.args[0].name in wrapped:
            # run_and_save_rng_state returns (rng state, the op's result): both stand for the random op
            names[node.name] = wrapped[node.args[0].name]
            created[node.name] = names[node.name]
            continue
        joint = joint_by_name.get(node.name)
        if (joint is not None and joint.op == node.op and joint.target == node.target
                and _args_key(joint.args, joint.kwargs, {}) == _args_key(node.args, node.kwargs, names)):
            names[node.name] = node.name
        else:
            names[node.name] = None
            created[node.name] = None
    return names, created


def _rng_state_output(node, wrappers):
    """True for getitem(run_and_save_rng_state(...), 0): an RNG state the forward returns for the backward."""
    return (isinstance(node, fx.Node) and node.op == "call_function" and node.target is operator.getitem
            and isinstance(node.args[0], fx.Node) and node.args[0].target in wrappers
            and wrappers[node.args[0].target][1] and node.args[1] == 0)


def _value_text(value):
    if isinstance(value, fx.Node):
        return value.name
    return None if value is None else str(value)


def _decision(label, partition, joint_graph, fw_module, bw_module, num_fwd_outputs, seconds, settings):
    """DECISION for the forward / backward modules a torch partitioner returned from joint_graph (the graph it
    partitioned, after its own DCE / CSE)."""
    wrappers = _rng_wrappers()
    fw_names, fw_created = _joint_names(fw_module, joint_graph, wrappers)
    bw_names, bw_created = _joint_names(bw_module, joint_graph, wrappers)
    outputs = _output_values(fw_module)
    saved, saved_sym, saved_opaque, rng_states = [], [], [], []
    # torch's _categorize_saved_tensors_for_backward: the forward's outputs after its first num_fwd_outputs
    # (tensors, then RNG states, then symbolic values); values that are not nodes carry nothing to save
    for value in outputs[num_fwd_outputs:]:
        if not isinstance(value, fx.Node):
            continue
        joint_name = fw_names.get(value.name) or value.name
        val = value.meta.get("val")
        if _rng_state_output(value, wrappers):
            rng_states.append(joint_name)
        elif _serialize.sym_kind(val):
            saved_sym.append(joint_name)
        elif type(val).__name__ == "FakeScriptObject" or value.meta.get("is_opaque"):
            saved_opaque.append(joint_name)
        else:
            saved.append(joint_name)
    decision = {
        "name": label,
        "origin": "%s.%s (torch %s)" % (partition.__module__, partition.__name__, torch.__version__),
        "saved": saved,
    }
    if saved_sym:
        decision["saved_sym"] = saved_sym
    if saved_opaque:
        decision["saved_opaque"] = saved_opaque
    if rng_states:
        decision["rng_states"] = rng_states
    if settings and label == "torch_min_cut":
        decision["memory_budget"] = settings["memory_budget"]
        decision["solver"] = settings["solver"]
    decision["forward_outputs"] = [_value_text(v) for v in outputs]
    decision["forward_nodes"] = [n.name for n in fw_module.graph.nodes if n.op == "call_function"]
    decision["backward_nodes"] = [n.name for n in bw_module.graph.nodes if n.op == "call_function"]
    if fw_created:
        decision["forward_created"] = fw_created
    if bw_created:
        decision["backward_created"] = bw_created
    decision["seconds"] = round(seconds, 6)
    return decision


def _run_partitioner(label, partition, work, joint_inputs, partition_kwargs, num_fwd_outputs, settings):
    """Runs one of torch's partitioners on `work` (mutated, as torch mutates what it partitions) with the kwargs
    torch passed; returns (fw_module, bw_module, DECISION)."""
    start = time.perf_counter()
    fw_module, bw_module = partition(work, joint_inputs, **partition_kwargs)
    seconds = time.perf_counter() - start
    decision = _decision(label, partition, work.graph, fw_module, bw_module, num_fwd_outputs, seconds, settings)
    return fw_module, bw_module, decision


def _explain_error(label, error, joint_module):
    text = "%s: %s: %s" % (label, type(error).__name__, error)
    tagged = [n for n in joint_module.graph.nodes if n.meta.get("recompute") is not None]
    if tagged and all(n.meta.get("ac_graph_id") is None for n in tagged):
        text += (" (the joint graph has recompute tags but no ac_graph_id: torch.utils.checkpoint's tags reach the "
                 "partitioner consistently only through torch.compile; capture with via='compile')")
    return text


def _symbol_hints(joint_module):
    """{symbol: example value} of the shape environment (torch 2): what optimization_hint() gives the partitioner
    for a symbolic size. {} on static graphs and torch 1.13."""
    try:
        from torch._guards import detect_fake_mode
    except ImportError:
        return {}
    vals = [n.meta.get("val") for n in joint_module.graph.nodes if n.op == "placeholder"]
    mode = detect_fake_mode([v for v in vals if isinstance(v, torch.Tensor)])
    shape_env = getattr(mode, "shape_env", None) if mode is not None else None
    if shape_env is None:
        return {}
    hints = {}
    backed = getattr(shape_env, "backed_var_to_val", None)  # torch >= 2.12; var_to_val before
    for symbol, value in (backed if backed is not None else shape_env.var_to_val).items():
        try:
            hints[str(symbol)] = int(value)
        except (TypeError, ValueError):
            pass
    return hints


def _partition_and_record(capture, joint_module, joint_inputs, partition_kwargs, runs):
    """The hook's work: snapshot the joint graph, run each of torch's partitioners the way torch calls its
    partition function (same joint inputs, same kwargs, the config in effect), record the decisions.

    torch's min-cut partitioner runs on the very module torch handed over (it mutates it: DCE, CSE, tags), the
    others on snapshots taken before. Returns the (fw, bw) modules of the first partitioner that succeeded."""
    capture.joint_module = _snapshot(joint_module)
    capture.joint_inputs = joint_inputs
    capture.partition_kwargs = dict(partition_kwargs)
    capture.num_fwd_outputs = _num_fwd_outputs(joint_module, partition_kwargs)
    capture.settings = _partition_settings(joint_module)
    capture.symbol_hints = _symbol_hints(joint_module)
    # snapshots first: the first partitioner (the min-cut one when requested) runs on joint_module and mutates it
    works = [(label, fn, joint_module if i == 0 else _snapshot(joint_module)) for i, (label, fn) in enumerate(runs)]
    results = []
    for label, fn, work in works:
        try:
            fw, bw, decision = _run_partitioner(label, fn, work, joint_inputs, partition_kwargs,
                                                capture.num_fwd_outputs, capture.settings)
            results.append((fw, bw))
            capture.decisions.append(decision)
        except Exception as e:  # keep the graph even when torch's partitioner fails on it
            capture.errors.append(_explain_error(label, e, capture.joint_module))
    return results[0] if results else None


def _identity_compiler(gm, example_inputs):
    # Returns a boxed callable as torch expects (the forward / backward run uncompiled).
    try:
        from torch._functorch.aot_autograd import make_boxed_func
    except ImportError:
        from functorch.compile import make_boxed_func
    return make_boxed_func(gm.forward)


def _partitioner_runs(min_cut, default_partition):
    min_cut_fn, default_fn = _torch_partitioners()
    runs = []
    if min_cut:
        runs.append(("torch_min_cut", min_cut_fn))
    if default_partition:
        runs.append(("torch_default_partition", default_fn))
    return runs


def capture_joint(model_or_fn, example_args, decompositions=None, min_cut=True, default_partition=True, via=None,
                  dynamic=None, graph_breaks="error", memory_budget=None, solver=None, functorch_config=None):
    """Captures the joint forward+backward graph of model_or_fn(*example_args); returns a JointCapture.

    via="aot": aot_module for an nn.Module (parameters and buffers become the first primals, as in torch),
        aot_function for other callables. Tracing stops inside the partition hook, so no compiled forward or
        backward runs: meta-device models and inputs work and allocate nothing. The only choice on torch 1.13.
    via="compile" (torch >= 2; the default there, see default_via()): torch.compile(model_or_fn,
        backend=aot_autograd(partition_fn=hook)), the path torch.compile users take: dynamo lifts parameters
        (torch passes their indices as static_lifetime_input_indices), lowers torch.utils.checkpoint and
        selective-checkpoint policies to recompute tags, and supports dynamic shapes. torch._dynamo.reset() runs
        first. The hook returns torch's min-cut partition of the graph and the forward really runs (once) with
        pass-through compilers, so that every graph of the program is reached; the backward never runs.
    dynamic (via="compile"): {argument index: dim or [dims]} marked with torch._dynamo.mark_dynamic (on the
        example tensors themselves): the joint graph gets SymInt placeholders.
    graph_breaks (via="compile"): "error" (default): fullgraph=True, a graph break is a RuntimeError naming
        dynamo's reason; "all": capture every graph (JointCapture.graphs, in compile order).
    memory_budget, solver, functorch_config: torch._functorch.config.activation_memory_budget,
        activation_memory_budget_solver and any other torch._functorch.config entries, in effect during tracing
        and partitioning (torch 2).
    min_cut, default_partition: record torch's decisions (bool, default True).
    """
    if via is None:
        via = default_via()
    if via not in VIA_CHOICES:
        raise ValueError("capture_joint: via must be one of %s, got %r" % (VIA_CHOICES, via))
    if graph_breaks not in GRAPH_BREAK_CHOICES:
        raise ValueError("capture_joint: graph_breaks must be one of %s, got %r" % (GRAPH_BREAK_CHOICES,
                                                                                    graph_breaks))
    if not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
    runs = _partitioner_runs(min_cut, default_partition)
    with _config_patch(memory_budget, solver, functorch_config):
        if via == "compile":
            return _capture_compile(model_or_fn, example_args, decompositions, runs, dynamic, graph_breaks)
        if dynamic:
            raise ValueError("capture_joint: dynamic shapes need via='compile'")
        return _capture_aot(model_or_fn, example_args, decompositions, runs)


def _capture_aot(model_or_fn, example_args, decompositions, runs):
    aot_function, aot_module, api = _aot_entry_points()
    capture = JointCapture()
    capture.via = "aot"

    def partition_hook(joint_module, joint_inputs, **partition_kwargs):
        _partition_and_record(capture, joint_module, joint_inputs, partition_kwargs, runs)
        raise _CaptureComplete()

    options = dict(fw_compiler=_identity_compiler, bw_compiler=_identity_compiler, partition_fn=partition_hook)
    if decompositions is not None:
        options["decompositions"] = decompositions
    if isinstance(model_or_fn, nn.Module):
        compiled = aot_module(model_or_fn, **options)
        capture.api = api + ".aot_module"
    else:
        compiled = aot_function(model_or_fn, **options)
        capture.api = api + ".aot_function"

    try:
        with torch.enable_grad():
            compiled(*example_args)
    except _CaptureComplete:
        pass
    except Exception:
        # torch may wrap the hook's exception; the capture is what counts.
        if capture.joint_module is None:
            raise
    if capture.joint_module is None:
        raise RuntimeError(
            "jointscope_torch: AOTAutograd produced no joint graph (does any input or parameter require grad?)"
        )
    return capture


def _is_hop_body_call(joint_inputs):
    # run_joint_graph_passes_on_hops partitions invoke_subgraph bodies with joint inputs [] before the outer graph
    return isinstance(joint_inputs, list) and len(joint_inputs) == 0


def _current_compile_id():
    try:
        from torch._guards import CompileContext

        compile_id = CompileContext.current_compile_id()
    except Exception:
        return None
    return None if compile_id is None else str(compile_id)


def _capture_compile(model_or_fn, example_args, decompositions, runs, dynamic, graph_breaks):
    if not has_torch_compile():
        raise RuntimeError("jointscope_torch: via='compile' needs torch.compile (torch >= 2); this is torch %s"
                           % torch.__version__)
    dynamo = importlib.import_module("torch._dynamo")
    aot_autograd = importlib.import_module("torch._dynamo.backends.common").aot_autograd

    captures, hop_partitions = [], []
    min_cut_fn, _default_fn = _torch_partitioners()

    def partition_hook(joint_module, joint_inputs, **partition_kwargs):
        if _is_hop_body_call(joint_inputs):
            # a nested_compile_region body: partitioned by torch's min-cut, as inductor's partition_fn does
            start = time.perf_counter()
            fw, bw = min_cut_fn(joint_module, joint_inputs, **partition_kwargs)
            num_fwd = int(partition_kwargs.get("num_fwd_outputs", 0))
            hop_partitions.append(_decision("torch_min_cut", min_cut_fn, joint_module.graph, fw, bw, num_fwd,
                                            time.perf_counter() - start, _partition_settings(joint_module)))
            return fw, bw
        capture = JointCapture()
        capture.via = "compile"
        capture.api = "torch.compile"
        capture.compile_id = _current_compile_id()
        capture.hop_partitions = list(hop_partitions)
        del hop_partitions[:]
        captures.append(capture)
        result = _partition_and_record(capture, joint_module, joint_inputs, partition_kwargs, runs)
        if result is None:
            if runs:
                raise RuntimeError("jointscope_torch: every torch partitioner failed: %s" % "; ".join(capture.errors))
            result = min_cut_fn(joint_module, joint_inputs, **partition_kwargs)
        return result

    backend_options = dict(fw_compiler=_identity_compiler, bw_compiler=_identity_compiler,
                           partition_fn=partition_hook)
    if decompositions is not None:
        backend_options["decompositions"] = decompositions
    backend = aot_autograd(**backend_options)
    for index, dims in (dynamic or {}).items():
        dynamo.mark_dynamic(example_args[index], dims)
    dynamo.reset()
    compiled = torch.compile(model_or_fn, backend=backend, fullgraph=(graph_breaks == "error"))
    try:
        with torch.enable_grad():
            compiled(*example_args)
    except Exception as e:
        unsupported = getattr(getattr(dynamo, "exc", None), "Unsupported", None)
        if unsupported is not None and isinstance(e, unsupported):
            raise RuntimeError("jointscope_torch: torch.compile cannot trace %s as one graph (graph break): %s\n"
                               "Pass graph_breaks='all' to capture every graph." % (_default_name(model_or_fn), e)
                               ) from e
        raise
    finally:
        dynamo.reset()
    if not captures:
        raise RuntimeError(
            "jointscope_torch: torch.compile produced no joint graph (does any input or parameter require grad?)"
        )
    for capture in captures:
        capture.graphs = captures
    return captures[0]


def _placeholder_devices(capture):
    """Node name -> device for the joint graph's placeholders, from torch's joint inputs."""
    flat_inputs = pytree.tree_flatten(capture.joint_inputs)[0]
    placeholders = [n for n in capture.joint_module.graph.nodes if n.op == "placeholder"]
    devices = {}
    if len(flat_inputs) == len(placeholders):
        for node, value in zip(placeholders, flat_inputs):
            if isinstance(value, torch.Tensor):
                devices[node.name] = value.device
    return devices


def _propagated_devices(capture):
    """Node name -> device by running the joint graph on fake tensors (torch 1.13 records no device).

    Fake tensors carry shapes, strides and devices only: nothing is computed or allocated.
    Returns {} when fake propagation is unavailable or fails.
    """
    try:
        from torch._subclasses.fake_tensor import FakeTensorMode
    except ImportError:
        return {}
    devices = {}
    try:
        flat_inputs = pytree.tree_flatten(capture.joint_inputs)[0]
        tensors = [x for x in flat_inputs if isinstance(x, torch.Tensor)]
        if tensors and all(x.is_meta for x in tensors):
            # torch 1.13 cannot wrap meta tensors in fake ones; meta tensors are already data-free.
            mode, fake_inputs = contextlib.nullcontext(), flat_inputs
        else:
            mode = FakeTensorMode()
            fake_inputs = [mode.from_tensor(x) if isinstance(x, torch.Tensor) else x for x in flat_inputs]

        class Recorder(fx.Interpreter):
            def run_node(self, n):
                result = super().run_node(n)
                if isinstance(result, torch.Tensor):
                    devices[n.name] = result.device
                return result

        with mode:
            with torch.no_grad():
                Recorder(capture.joint_module).run(*fake_inputs)
    except Exception:
        return {}
    return devices


def _node_devices(capture):
    needs_devices = any(
        n.meta.get("tensor_meta") is not None and not isinstance(n.meta.get("val"), torch.Tensor)
        for n in capture.joint_module.graph.nodes
    )
    devices = _propagated_devices(capture) if needs_devices else {}
    devices.update(_placeholder_devices(capture))
    return devices


def _default_name(model_or_fn):
    if isinstance(model_or_fn, nn.Module):
        return type(model_or_fn).__name__
    return getattr(model_or_fn, "__name__", None) or type(model_or_fn).__name__


EXPORT_OPTIONS = ("decompositions", "min_cut", "default_partition", "attributes", "devices", "via", "dynamic",
                  "graph_breaks", "memory_budget", "solver", "functorch_config")


def graph_paths(path, count):
    """Where export_joint writes `count` graphs: path itself, then <root>.1<ext>, <root>.2<ext>, ..."""
    root, ext = os.path.splitext(path)
    return [path] + ["%s.%d%s" % (root, i, ext or ".json") for i in range(1, count)]


def _graph_attributes(capture, index, count, options):
    attributes = {"torch_version": torch.__version__, "kind": "aot_joint_graph", "capture": capture.api,
                  "via": capture.via}
    if capture.compile_id is not None:
        attributes["compile_id"] = capture.compile_id
    if count > 1:
        attributes["graph_index"] = "%d of %d" % (index, count)
    indices = capture.partition_kwargs.get("static_lifetime_input_indices")
    if indices is not None:
        attributes["static_lifetime_input_indices"] = json.dumps([int(i) for i in indices])
    if getattr(capture, "symbol_hints", None):
        attributes["symbol_hints"] = json.dumps(capture.symbol_hints, sort_keys=True)
    if capture.settings:
        attributes["partitioner_config"] = json.dumps(capture.settings, sort_keys=True)
    if options.get("dynamic"):
        attributes["dynamic"] = json.dumps({str(k): v for k, v in options["dynamic"].items()}, sort_keys=True)
    if capture.hop_partitions:
        attributes["hop_partitions"] = json.dumps(capture.hop_partitions)
    attributes.update(options.get("attributes") or {})
    return attributes


def export_joint(model_or_fn, example_args, path, name=None, **options):
    """Captures the joint graph of model_or_fn(*example_args) and writes it as jointscope JSON to path.

    options:
      via: "compile" (torch.compile; default on torch >= 2) or "aot" (aot_module / aot_function; default and
        only choice on torch 1.13). See capture_joint.
      dynamic: {argument index: dim or [dims]} for torch._dynamo.mark_dynamic (via="compile").
      graph_breaks: "error" (default) or "all": with "all", graph i > 0 of a program dynamo split is written to
        <root>.<i><ext> (graph_paths(path, n)); JointCapture.paths lists the files.
      memory_budget, solver, functorch_config: torch._functorch.config in effect (torch 2).
      decompositions: dict passed to AOTAutograd (default: none, as torch.compile's aot_eager).
      min_cut, default_partition: bool (default True): record torch's decisions on the same graph.
      attributes: dict of extra graph attributes (strings).
      devices: bool (default True): recover per-node devices by fake-tensor propagation on torch 1.13.
    Returns the JointCapture (the first graph); its `document` attribute holds the written JSON object,
    `documents` / `paths` those of every graph.
    """
    unknown = set(options) - set(EXPORT_OPTIONS)
    if unknown:
        raise TypeError("export_joint: unknown options %s" % sorted(unknown))
    capture = capture_joint(
        model_or_fn,
        example_args,
        decompositions=options.get("decompositions"),
        min_cut=options.get("min_cut", True),
        default_partition=options.get("default_partition", True),
        via=options.get("via"),
        dynamic=options.get("dynamic"),
        graph_breaks=options.get("graph_breaks", "error"),
        memory_budget=options.get("memory_budget"),
        solver=options.get("solver"),
        functorch_config=options.get("functorch_config"),
    )
    graphs = capture.graphs
    paths = graph_paths(path, len(graphs))
    base_name = name or _default_name(model_or_fn)
    documents = []
    for index, (one, one_path) in enumerate(zip(graphs, paths)):
        devices = _node_devices(one) if options.get("devices", True) else {}
        graph = _serialize.graph_to_json(
            one.joint_module,
            name=base_name if index == 0 else "%s.%d" % (base_name, index),
            num_fwd_outputs=one.num_fwd_outputs,
            attributes=_graph_attributes(one, index, len(graphs), options),
            decisions=one.decisions,
            devices=devices,
        )
        _serialize.write_document(graph, one_path)
        one.document = {"format": _serialize.FORMAT_NAME, "version": _serialize.FORMAT_VERSION, "graph": graph}
        one.path = one_path
        documents.append(one.document)
    capture.documents = documents
    capture.paths = paths
    return capture
