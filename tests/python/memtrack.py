"""Measures live activation bytes while torch runs a partitioned forward and backward, to check jointscope's
memory timeline (`jointscope-cli partition --json`: memory_timeline) against torch.

What is measured (docs/partition.md, "How peak memory is estimated"): a TorchDispatchMode sees every tensor every
aten op returns and files it under its storage (data pointer); a storage is live while one tensor on it is still
alive (weak references), so a view and its base count once, with the base's storage size. Storages of the graph
inputs (primals, tangents, anything they alias) are not activations and are never counted. After each
call_function node (its inputs still held, its outputs just made) the live bytes are recorded.

The modules are run as torch's generated code runs them: each value is dropped after its last use (inductor's
generated code does the same with its inputs; saved values therefore die at their last backward use).
"""

import operator
import weakref

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode


def _storage_key(t):
    """(data pointer, bytes) of the storage under t."""
    if hasattr(t, "untyped_storage"):  # torch >= 2
        s = t.untyped_storage()
    else:  # torch 1.13
        s = t.storage()
    return s.data_ptr(), s.nbytes()


class LiveStorages(TorchDispatchMode):
    """Every storage an aten op hands back, live while one of its tensors is."""

    def __init__(self):
        super().__init__()
        self.storages = {}  # data pointer -> [bytes, [weakref to tensor, ...]]
        self.excluded = set()  # data pointers of the graph inputs' storages

    def exclude(self, tensors):
        for t in tensors:
            if isinstance(t, torch.Tensor):
                self.excluded.add(_storage_key(t)[0])

    def _prune(self, ptr):
        entry = self.storages.get(ptr)
        if entry is not None:
            entry[1] = [r for r in entry[1] if r() is not None]
            if not entry[1]:
                del self.storages[ptr]

    def track(self, t):
        ptr, nbytes = _storage_key(t)
        self._prune(ptr)  # a freed storage's address may come back for a new one
        entry = self.storages.setdefault(ptr, [nbytes, []])
        entry[0] = max(entry[0], nbytes)
        entry[1].append(weakref.ref(t))

    def live_bytes(self):
        for ptr in list(self.storages):
            self._prune(ptr)
        return sum(nbytes for ptr, (nbytes, _) in self.storages.items() if ptr not in self.excluded)

    def track_all(self, value):
        """Tracks every tensor in value (a function of its own: no loop variable outlives it and keeps the last
        tensor alive)."""
        for t in pytree.tree_flatten(value)[0]:
            if isinstance(t, torch.Tensor):
                self.track(t)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.track_all(out)
        return out


def _attribute(owner, target):
    obj = owner
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def run_module(graph, inputs, tracker, steps, owner=None):
    """Runs an fx.Graph as its generated code would, every value dropped after its last use. `inputs`: placeholder
    name -> value, popped (the caller keeps no reference). Appends (node name, live bytes) to steps after each
    call_function node. Returns the output node's values, flattened."""
    nodes = list(graph.nodes)
    last_use = {}
    for i, node in enumerate(nodes):
        for arg in node.all_input_nodes:
            last_use[arg] = i
    env = {}
    result = None
    for i, node in enumerate(nodes):
        if node.op == "placeholder":
            env[node] = inputs.pop(node.name)
        elif node.op == "call_function":
            args = fx.node.map_arg(node.args, lambda n: env[n])
            kwargs = fx.node.map_arg(node.kwargs, lambda n: env[n])
            if isinstance(node.target, getattr(torch._ops, "HigherOrderOperator", ())):
                # a HOP (invoke_subgraph) runs its body outside the mode; what it returns is tracked here
                from torch.utils._python_dispatch import _disable_current_modes

                with _disable_current_modes():
                    env[node] = node.target(*args, **kwargs)
                tracker.track_all(env[node])
            else:
                env[node] = node.target(*args, **kwargs)
            del args, kwargs
            steps.append((node.name, tracker.live_bytes()))
        elif node.op == "get_attr" and owner is not None:
            env[node] = _attribute(owner, node.target)
            tracker.exclude([env[node]])  # a constant of the module, not an activation
        elif node.op == "output":
            result = pytree.tree_flatten(fx.node.map_arg(node.args[0], lambda n: env[n]))[0]
        else:
            raise AssertionError("node %s: %s is not run by this harness" % (node.name, node.op))
        for arg in node.all_input_nodes:
            if last_use[arg] == i:
                del env[arg]
        if node.op != "output" and node not in last_use:
            del env[node]
    return result


def output_names(graph):
    out = [n for n in graph.nodes if n.op == "output"][0]
    return [a.name if isinstance(a, fx.Node) else None for a in pytree.tree_flatten(out.args[0])[0]]


def run_partitioned(fw_graph, bw_graph, values, fw_owner=None, bw_owner=None, num_fwd_outputs=None):
    """Runs the forward on `values` (placeholder name -> real tensor, the forward's and the backward's graph
    inputs), then the backward on the forward's saved outputs plus `values`' tangents. Returns [(node, live
    bytes)] over both, and the live bytes between them."""
    tracker = LiveStorages()
    tracker.exclude(values.values())
    steps = []
    with tracker:
        fw_inputs = {n.name: values[n.name] for n in fw_graph.nodes if n.op == "placeholder"}
        fw_out = run_module(fw_graph, fw_inputs, tracker, steps, fw_owner)
        bw_names = [n.name for n in bw_graph.nodes if n.op == "placeholder"]
        if num_fwd_outputs is None:  # torch 1.13: the backward's inputs are named after the forward's outputs
            produced = dict(zip(output_names(fw_graph), fw_out))
            bw_inputs = {name: produced[name] if name in produced else values[name] for name in bw_names}
            del produced
        else:  # torch 2 passes (saved symbols, saved tensors, tangents...) by position, as its runtime does
            saved = fw_out[num_fwd_outputs:]
            ordered = [x for x in saved if not isinstance(x, torch.Tensor)] + [
                x for x in saved if isinstance(x, torch.Tensor)]
            rest = bw_names[len(ordered):]
            bw_inputs = dict(zip(bw_names, ordered + [values[name] for name in rest]))
            del saved, ordered
        del fw_out  # forward outputs the backward does not read are the caller's, not counted from here
        between = tracker.live_bytes()
        run_module(bw_graph, bw_inputs, tracker, steps, bw_owner)
    return steps, between


def compare(ours, torch_steps, tolerance=0.01):
    """Problems (strings) between jointscope's memory_timeline JSON and torch's measured steps: a different node
    sequence, or a step whose live bytes differ by more than `tolerance` of torch's."""
    names = [n for n, _ in torch_steps]
    if ours["nodes"] != names:
        for i, (a, b) in enumerate(zip(ours["nodes"], names)):
            if a != b:
                return ["step %d: jointscope runs %s, torch runs %s (jointscope %d steps, torch %d)"
                        % (i, a, b, len(ours["nodes"]), len(names))]
        return ["jointscope has %d steps, torch %d" % (len(ours["nodes"]), len(names))]
    problems = []
    for i, ((name, measured), estimated) in enumerate(zip(torch_steps, ours["live_bytes"])):
        if abs(estimated - measured) > tolerance * measured:
            problems.append("step %d (%s): jointscope %d bytes, torch %d" % (i, name, estimated, measured))
    return problems


def real_tensor(shape, stride, dtype, seed):
    """A real tensor of the given layout: normal floats, zeros for integers and booleans (valid indices)."""
    t = torch.empty_strided(shape, stride, dtype=dtype)
    if dtype.is_floating_point or dtype.is_complex:
        gen = torch.Generator().manual_seed(seed)
        t.copy_(torch.randn(t.shape, generator=gen, dtype=dtype))
    else:
        t.zero_()
    return t


def _value(v, env):
    if isinstance(v, list):
        return [_value(x, env) for x in v]
    if not isinstance(v, dict):
        return v
    (kind, x), = v.items()
    if kind == "node":
        return env[x]
    if kind == "tuple":
        return tuple(_value(i, env) for i in x)
    if kind == "dtype":
        return getattr(torch, x)
    if kind == "device":
        return torch.device(x)
    if kind == "layout":
        return getattr(torch, x)
    if kind == "memory_format":
        return getattr(torch, x)
    if kind == "float":
        return float(x)
    raise AssertionError("argument %r: not rebuilt by this harness" % (v,))


def _target(text):
    """An op named as jointscope prints it ("torch.ops.aten.mm.default", "operator.getitem"), looked up by
    attribute (nothing is evaluated)."""
    if isinstance(text, dict):
        text = text["text"]
    if text in ("operator.getitem", "getitem", "<built-in function getitem>"):
        return operator.getitem
    parts = text.split(".")
    if parts[0] != "torch":
        raise AssertionError("target %r: not an op this harness looks up" % text)
    obj = torch
    for p in parts[1:]:
        obj = getattr(obj, p)
    return obj


def graph_from_json(doc):
    """An fx.Graph from a jointscope JSON graph document (placeholders, call_function nodes, output)."""
    graph = fx.Graph()
    env = {}
    for node in doc["graph"]["nodes"]:
        if node["op"] == "placeholder":
            env[node["name"]] = graph.placeholder(node["name"])
        elif node["op"] == "call_function":
            args = tuple(_value(a, env) for a in node.get("args", []))
            kwargs = {k: _value(v, env) for k, v in node.get("kwargs", {}).items()}
            env[node["name"]] = graph.create_node("call_function", _target(node["target"]), args, kwargs,
                                                  name=node["name"])
        elif node["op"] == "output":
            graph.output(_value(node["args"][0], env))
    return graph
