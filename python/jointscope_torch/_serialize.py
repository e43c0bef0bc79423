"""FX graph -> jointscope JSON (docs/formats.md, "jointscope JSON, version 1").

Only reads the graph; nothing here executes graph code.
"""

import json
import math
import operator
import re

import torch
import torch.fx as fx

FORMAT_NAME = "jointscope-graph"
FORMAT_VERSION = 1

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

_SYM_TYPE_NAMES = {
    "SymInt": "sym_int",
    "PySymInt": "sym_int",
    "SymIntNode": "sym_int",
    "SymFloat": "sym_float",
    "PySymFloat": "sym_float",
    "SymFloatNode": "sym_float",
    "SymBool": "sym_bool",
}


def sym_kind(value):
    """'sym_int' / 'sym_float' / 'sym_bool' for torch's symbolic scalars, else None.

    Detected by type name: the classes moved between torch 1.13 (PySymInt) and 2.x (torch.SymInt).
    """
    for cls in type(value).__mro__:
        kind = _SYM_TYPE_NAMES.get(cls.__name__)
        if kind:
            return kind
    return None


def _torch_name(obj):
    """torch.float32 -> 'float32', torch.channels_last -> 'channels_last'."""
    text = str(obj)
    return text[len("torch."):] if text.startswith("torch.") else text


def dtype_name(dtype):
    return _torch_name(dtype)


def _dim(d):
    """A size / stride entry: an int, or the expression string of a SymInt."""
    if isinstance(d, bool):
        return int(d)
    if isinstance(d, int):
        return d
    if sym_kind(d):
        node = getattr(d, "node", None)
        expr = getattr(node, "expr", None)
        text = str(expr) if expr is not None else str(d)
        try:
            return int(text)
        except ValueError:
            return text
    return str(d)


def tensor_entry(dtype, sizes, strides=None, device=None):
    entry = {"dtype": dtype_name(dtype), "sizes": [_dim(s) for s in sizes]}
    if strides is not None:
        entry["strides"] = [_dim(s) for s in strides]
    if device is not None:
        entry["device"] = str(device)
    return entry


def tensor_entry_from_value(value):
    """TENSOR from a (fake / meta / real) tensor, without touching its data."""
    strides = None
    try:
        strides = value.stride()
    except (RuntimeError, NotImplementedError):  # sparse / nested tensors have no strides
        pass
    return tensor_entry(value.dtype, value.shape, strides, value.device)


def tensor_entry_from_meta(tm, device=None):
    """TENSOR from torch.fx.passes.shape_prop.TensorMetadata."""
    return tensor_entry(tm.dtype, tm.shape, getattr(tm, "stride", None), device)


def _float_value(x):
    if math.isnan(x):
        return {"float": "nan"}
    if math.isinf(x):
        return {"float": "inf" if x > 0 else "-inf"}
    return float(x)


def _fallback_text(x):
    if isinstance(x, torch.Tensor):
        # A constant tensor: describe it, never print its data (may be huge or fake).
        return "Tensor(shape=%s, dtype=%s, device=%s)" % (list(x.shape), dtype_name(x.dtype), x.device)
    try:
        return str(x)
    except Exception:  # a broken __repr__ must not break the export
        return "<%s>" % type(x).__name__


def value_to_json(x):
    """The typed VALUE tree of docs/formats.md for one FX argument."""
    if isinstance(x, fx.Node):
        return {"node": x.name}
    if x is None:
        return None
    if isinstance(x, bool):
        return x
    if isinstance(x, int):
        if _INT64_MIN <= x <= _INT64_MAX:
            return int(x)
        return {"opaque": str(x)}
    if isinstance(x, float):
        return _float_value(x)
    if isinstance(x, str):
        return x
    if isinstance(x, torch.dtype):
        return {"dtype": dtype_name(x)}
    if isinstance(x, torch.device):
        return {"device": str(x)}
    if isinstance(x, torch.layout):
        return {"layout": _torch_name(x)}
    if isinstance(x, torch.memory_format):
        return {"memory_format": _torch_name(x)}
    if isinstance(x, slice):
        return {"slice": [value_to_json(x.start), value_to_json(x.stop), value_to_json(x.step)]}
    if x is Ellipsis:
        return {"ellipsis": True}
    if sym_kind(x):
        return {"sym": str(_dim(x)) if sym_kind(x) == "sym_int" else str(x)}
    if isinstance(x, tuple):  # includes NamedTuples and torch.Size
        return {"tuple": [value_to_json(e) for e in x]}
    if isinstance(x, list):
        return [value_to_json(e) for e in x]
    if isinstance(x, dict):
        return {"dict": [[value_to_json(k), value_to_json(v)] for k, v in x.items()]}
    return {"opaque": _fallback_text(x)}


def target_text(node):
    """The target as FX prints it: 'torch.ops.aten.mm.default', 'operator.getitem', plain names."""
    t = node.target
    if node.op != "call_function":
        return str(t)
    if isinstance(t, torch._ops.OpOverload) or isinstance(t, torch._ops.OpOverloadPacket):
        return "torch.ops." + str(t)
    hop = getattr(torch._ops, "HigherOrderOperator", None)
    if hop is not None and isinstance(t, hop):
        hop_name = getattr(t, "__name__", None) or t.name()
        return "torch.ops.higher_order." + hop_name
    if getattr(t, "__module__", None) in ("_operator", "operator"):
        return "operator." + t.__name__
    try:
        return fx.node._get_qualified_name(t)
    except Exception:
        return getattr(t, "__name__", str(t))


_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>.+?)\s*$')


def stack_trace_lines(text):
    """Python traceback text -> ['File: a.py:12 in fn, code: x = y', ...] (the FX comment form)."""
    if isinstance(text, (list, tuple)):
        return [str(t) for t in text]
    lines = str(text).splitlines()
    out = []
    i = 0
    while i < len(lines):
        m = _FRAME_RE.match(lines[i])
        if m:
            code = ""
            if i + 1 < len(lines) and not _FRAME_RE.match(lines[i + 1]) and lines[i + 1].strip():
                code = lines[i + 1].strip()
                i += 1
            out.append("File: %s:%s in %s, code: %s" % (m["file"], m["line"], m["fn"], code))
        elif lines[i].strip():
            out.append(lines[i].strip())
        i += 1
    return out


def _module_type_text(t):
    if isinstance(t, type):
        return "%s.%s" % (t.__module__, t.__qualname__)
    return str(t)


def nn_module_stack_entries(stack):
    """node.meta['nn_module_stack'] (key -> (path, type), outermost first) -> [{key, path, type}]."""
    out = []
    for key, value in stack.items():
        if isinstance(value, (tuple, list)) and len(value) == 2:
            path, typ = value
        else:  # torch 1.13 stores key -> type only
            path, typ = key, value
        out.append({"key": str(key), "path": str(path), "type": _module_type_text(typ)})
    return out


_EXTRA_META_KEYS = ("seq_nr", "original_aten", "source_fn_stack", "is_backward", "custom", "memory_budget",
                    "aot_runtime_epilogue_input_mutation", "saved_tensor_with_no_vc_check")


def _meta_json(node):
    nm = node.meta
    meta = {}
    if nm.get("stack_trace"):
        meta["stack_trace"] = stack_trace_lines(nm["stack_trace"])
    if nm.get("nn_module_stack"):
        meta["nn_module_stack"] = nn_module_stack_entries(nm["nn_module_stack"])
    if nm.get("recompute") is not None:
        meta["recompute"] = getattr(nm["recompute"], "name", str(nm["recompute"]))
    if nm.get("ac_graph_id") is not None:
        meta["ac_graph_id"] = int(nm["ac_graph_id"])
    if nm.get("partitioner_tag") is not None:
        meta["partitioner_tag"] = str(nm["partitioner_tag"])
    if nm.get("desc") is not None:
        meta["descriptor"] = str(nm["desc"])
    extra = {}
    for key in _EXTRA_META_KEYS:
        v = nm.get(key)
        if v is None:
            continue
        if isinstance(v, (bool, int, str)) or (isinstance(v, float) and math.isfinite(v)):
            extra[key] = json.dumps(v)
        else:
            extra[key] = json.dumps(_fallback_text(v))
    if extra:
        meta["extra"] = extra
    return meta


def _getitem_outputs(node, value_of):
    """Tuple element metadata from the node's getitem users (torch 1.13 keeps none on tuple nodes)."""
    by_index = {}
    for user in node.users:
        if user.op == "call_function" and user.target is operator.getitem and isinstance(user.args[1], int):
            entry = value_of(user)
            if entry is not None:
                by_index[user.args[1]] = entry
    if not by_index:
        return None
    return [by_index.get(i) for i in range(max(by_index) + 1)]


def _output_fields(node, devices):
    """output_kind / outputs / sym for one node."""

    def tensor_of(n):
        v = n.meta.get("val")
        if isinstance(v, torch.Tensor):
            return tensor_entry_from_value(v)
        tm = n.meta.get("tensor_meta")
        if tm is not None and hasattr(tm, "shape"):
            return tensor_entry_from_meta(tm, devices.get(n.name))
        return None

    if node.op == "output":
        return {}
    v = node.meta.get("val", None)
    if "val" in node.meta and v is None:
        return {"output_kind": "none"}
    kind = sym_kind(v) if v is not None else None
    if kind:
        return {"output_kind": kind, "sym": str(_dim(v)) if kind == "sym_int" else str(v)}
    if isinstance(v, int) and not isinstance(v, bool) and node.op == "call_function":
        return {"output_kind": "sym_int", "sym": str(v)}
    entry = tensor_of(node)
    if entry is not None:
        return {"output_kind": "tensor", "outputs": [entry]}
    if isinstance(v, (tuple, list)):
        outs = [tensor_entry_from_value(e) if isinstance(e, torch.Tensor) else None for e in v]
        return {"output_kind": "tuple", "outputs": outs}
    tm = node.meta.get("tensor_meta")
    if isinstance(tm, (tuple, list)):
        outs = [tensor_entry_from_meta(e, None) if hasattr(e, "shape") else None for e in tm]
        return {"output_kind": "tuple", "outputs": outs}
    outs = _getitem_outputs(node, tensor_of)
    if outs is not None:
        return {"output_kind": "tuple", "outputs": outs}
    return {}


def graph_to_json(gm, name=None, num_fwd_outputs=None, attributes=None, decisions=None, devices=None):
    """GRAPH object for an fx.GraphModule (HOP bodies reached by get_attr become `subgraphs`)."""
    devices = devices or {}
    graph = {}
    if name:
        graph["name"] = name
    if num_fwd_outputs is not None:
        graph["num_fwd_outputs"] = int(num_fwd_outputs)
    if attributes:
        graph["attributes"] = {str(k): str(v) for k, v in attributes.items()}
    nodes = []
    subgraphs = []
    for node in gm.graph.nodes:
        j = {"name": node.name, "op": node.op, "target": target_text(node)}
        if node.args:
            j["args"] = [value_to_json(a) for a in node.args]
        if node.kwargs:
            j["kwargs"] = {str(k): value_to_json(v) for k, v in node.kwargs.items()}
        j.update(_output_fields(node, devices))
        if node.op == "get_attr":
            try:
                attr = gm
                for part in str(node.target).split("."):
                    attr = getattr(attr, part)
            except AttributeError:
                attr = None
            if isinstance(attr, fx.GraphModule):
                j["subgraph"] = len(subgraphs)
                subgraphs.append(graph_to_json(attr, name=str(node.target)))
        meta = _meta_json(node)
        if meta:
            j["meta"] = meta
        nodes.append(j)
    graph["nodes"] = nodes
    if subgraphs:
        graph["subgraphs"] = subgraphs
    if decisions:
        graph["decisions"] = decisions
    return graph


def _dumps(obj):
    # allow_nan=False: every non-finite float must already be a {"float": ...} tag.
    return json.dumps(obj, allow_nan=False, ensure_ascii=False)


def write_document(graph, path):
    """Writes the document with 1-space indentation and one line per node (docs/formats.md)."""
    parts = ["{\n", ' "format": %s,\n' % _dumps(FORMAT_NAME), ' "version": %d,\n' % FORMAT_VERSION]
    parts.append(' "graph": ')
    parts.append(_graph_text(graph, 1))
    parts.append("\n}\n")
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(parts))


def _graph_text(graph, depth):
    pad = " " * (depth + 1)
    items = []
    for key, value in graph.items():
        if key == "nodes":
            body = (",\n").join(pad + " " + _dumps(n) for n in value)
            items.append('%s"nodes": [\n%s\n%s]' % (pad, body, pad) if value else '%s"nodes": []' % pad)
        elif key == "subgraphs":
            body = (",\n").join(pad + " " + _graph_text(g, depth + 2) for g in value)
            items.append('%s"subgraphs": [\n%s\n%s]' % (pad, body, pad))
        else:
            items.append("%s%s: %s" % (pad, _dumps(key), _dumps(value)))
    return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
