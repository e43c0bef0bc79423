"""Capture of AOTAutograd's joint forward+backward graph through a partition-function hook."""

import contextlib
import copy
import time

import torch
import torch.fx as fx
import torch.nn as nn
import torch.utils._pytree as pytree

from . import _serialize


class _CaptureComplete(Exception):
    """Raised by the hook once the joint graph is captured: nothing after partitioning is needed."""


class JointCapture:
    """What export_joint captured.

    joint_module: the fx.GraphModule torch handed to the partitioner (untouched by partitioning).
    num_fwd_outputs: number of forward outputs (the first outputs of the joint graph).
    joint_inputs: torch's (primals, tangents) example inputs of the joint graph.
    decisions: DECISION dicts (docs/formats.md) for torch's min-cut and default partitions.
    api: which torch entry point produced the capture, e.g. "functorch.compile.aot_module".
    """

    def __init__(self):
        self.joint_module = None
        self.num_fwd_outputs = None
        self.joint_inputs = None
        self.decisions = []
        self.api = None
        self.errors = []


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


def _num_fwd_outputs(joint_module, partition_kwargs):
    if partition_kwargs.get("num_fwd_outputs") is not None:  # torch 2.x passes it
        return int(partition_kwargs["num_fwd_outputs"])
    # torch 1.13: the joint returns (fwd_outputs, grads); its pytree out spec counts them.
    return joint_module._out_spec.children_specs[0].num_leaves


def _forward_outputs(fw_module):
    for node in fw_module.graph.nodes:
        if node.op == "output":
            return [a for a in pytree.tree_flatten(node.args)[0] if isinstance(a, fx.Node)]
    return []


def _run_partitioner(label, partition, joint_module, joint_inputs, partition_kwargs, num_fwd_outputs):
    """Runs one of torch's partitioners on a deep copy of the joint graph; its saved values as a DECISION."""
    # A fresh graph (node meta dicts copied shallowly, as torch's own Graph.__deepcopy__ does) over the same
    # attributes: fake / meta tensors in node.meta are shared, never deep-copied.
    work = fx.GraphModule(joint_module, copy.deepcopy(joint_module.graph))
    start = time.perf_counter()
    fw_module, _bw_module = partition(work, joint_inputs, **partition_kwargs)
    seconds = time.perf_counter() - start
    saved, saved_sym = [], []
    for node in _forward_outputs(fw_module)[num_fwd_outputs:]:
        (saved_sym if _serialize.sym_kind(node.meta.get("val")) else saved).append(node.name)
    decision = {
        "name": label,
        "origin": "%s.%s (torch %s)" % (partition.__module__, partition.__name__, torch.__version__),
        "saved": saved,
    }
    if saved_sym:
        decision["saved_sym"] = saved_sym
    decision["seconds"] = round(seconds, 6)
    return decision


def _identity_compiler(gm, example_inputs):
    # Only reached when no input needs a gradient (inference path); returns a boxed callable as torch expects.
    try:
        from torch._functorch.aot_autograd import make_boxed_func
    except ImportError:
        from functorch.compile import make_boxed_func
    return make_boxed_func(gm.forward)


def capture_joint(model_or_fn, example_args, decompositions=None, min_cut=True, default_partition=True):
    """Traces model_or_fn(*example_args) with AOTAutograd and returns a JointCapture.

    Modules go through aot_module (parameters and buffers become the first primals, as in torch);
    plain callables through aot_function. Tracing stops inside the partition hook, so no compiled
    forward or backward runs: meta-device models and inputs work and allocate nothing.
    """
    aot_function, aot_module, api = _aot_entry_points()
    min_cut_fn, default_fn = _torch_partitioners()
    capture = JointCapture()

    def partition_hook(joint_module, joint_inputs, **partition_kwargs):
        capture.joint_module = joint_module
        capture.joint_inputs = joint_inputs
        capture.num_fwd_outputs = _num_fwd_outputs(joint_module, partition_kwargs)
        runs = []
        if min_cut:
            runs.append(("torch_min_cut", min_cut_fn))
        if default_partition:
            runs.append(("torch_default_partition", default_fn))
        for label, fn in runs:
            try:
                capture.decisions.append(
                    _run_partitioner(label, fn, joint_module, joint_inputs, partition_kwargs, capture.num_fwd_outputs)
                )
            except Exception as e:  # keep the graph even when torch's partitioner fails on it
                capture.errors.append("%s: %s: %s" % (label, type(e).__name__, e))
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

    if not isinstance(example_args, (tuple, list)):
        example_args = (example_args,)
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


def export_joint(model_or_fn, example_args, path, name=None, **options):
    """Captures the joint graph of model_or_fn(*example_args) and writes it as jointscope JSON to path.

    options:
      decompositions: dict passed to AOTAutograd (default: torch's own).
      min_cut, default_partition: bool (default True): record torch's decisions on the same graph.
      attributes: dict of extra graph attributes (strings).
      devices: bool (default True): recover per-node devices by fake-tensor propagation on torch 1.13.
    Returns the JointCapture; its `document` attribute holds the written JSON object.
    """
    unknown = set(options) - {"decompositions", "min_cut", "default_partition", "attributes", "devices"}
    if unknown:
        raise TypeError("export_joint: unknown options %s" % sorted(unknown))
    capture = capture_joint(
        model_or_fn,
        example_args,
        decompositions=options.get("decompositions"),
        min_cut=options.get("min_cut", True),
        default_partition=options.get("default_partition", True),
    )
    attributes = {"torch_version": torch.__version__, "kind": "aot_joint_graph", "capture": capture.api}
    attributes.update(options.get("attributes") or {})
    devices = _node_devices(capture) if options.get("devices", True) else {}
    graph = _serialize.graph_to_json(
        capture.joint_module,
        name=name or _default_name(model_or_fn),
        num_fwd_outputs=capture.num_fwd_outputs,
        attributes=attributes,
        decisions=capture.decisions,
        devices=devices,
    )
    _serialize.write_document(graph, path)
    capture.document = {"format": _serialize.FORMAT_NAME, "version": _serialize.FORMAT_VERSION, "graph": graph}
    return capture
