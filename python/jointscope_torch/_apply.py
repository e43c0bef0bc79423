"""Applying a partition decision edited in jointscope back to real torch training."""

import json
import operator

import torch
import torch.fx as fx


def _torch_partitioner_module():
    try:
        from torch._functorch import partitioners  # torch >= 2.0
    except ImportError:
        from functorch._src import partitioners  # torch 1.13
    return partitioners


def _cse(graph):
    """torch's fx_graph_cse, which the min-cut partitioner runs before it decides: decision names refer to the
    graph after it."""
    try:
        from torch._functorch.compile_utils import fx_graph_cse
    except ImportError:
        from functorch._src.compile_utils import fx_graph_cse
    return fx_graph_cse(graph)


def _target_text(node):
    """The op as jointscope prints it, without the "torch.ops." prefix: "aten.addmm.default", "operator.getitem"."""
    target = node.target
    if node.op == "placeholder":
        return "placeholder"
    if target is operator.getitem:
        return "operator.getitem"
    text = str(target)
    if hasattr(target, "_schema") or hasattr(target, "overloadpacket"):
        return text
    return getattr(target, "__module__", "") + "." + getattr(target, "__name__", text)


def _is_sym_node(node):
    try:
        from torch.fx.experimental.proxy_tensor import is_sym_node
    except ImportError:  # torch 1.13 traces static shapes only
        return False
    return is_sym_node(node)


def _normalize_target(text):
    text = text or ""
    return text[len("torch.ops."):] if text.startswith("torch.ops.") else text


def _shape(node):
    meta = node.meta.get("tensor_meta")
    if meta is None and isinstance(node.meta.get("val"), torch.Tensor):
        meta = node.meta["val"]
    if meta is None or not hasattr(meta, "shape"):
        return None
    return [int(d) if isinstance(d, int) or str(d).isdigit() else str(d) for d in meta.shape]


class AppliedPartition:
    """What torch needs to train with a jointscope decision.

    partition_fn(joint_module, joint_inputs, **kwargs): a partition function for functorch 1.13's
        aot_function / aot_module (partition_fn=...) and torch 2's aot_autograd; it saves exactly the decision's
        values and builds the forward / backward graphs with torch's own _extract_fwd_bwd_modules.
    joint_pass(gm): for torch 2, tags the joint graph (node.meta["recompute"]): MUST_SAVE on saved values,
        PREFER_RECOMPUTE on recomputed ones, so torch's min-cut partitioner reproduces the decision. On torch
        1.13, which has no CheckpointPolicy, it leaves the graph unchanged; use partition_fn there.
    saved_names, decision: the decision as loaded.
    """

    def __init__(self, decision):
        self.decision = decision
        self.saved_names = list(decision.get("saved", [])) + list(decision.get("saved_sym", []))
        self.recomputed_names = list(decision.get("recomputed", []))
        self.nodes = decision.get("nodes", {})

    def _match(self, graph, names):
        """Nodes of `graph` for `names`, matched by name + target + shape. A renamed node is accepted when exactly
        one unmatched node has the recorded target and shape."""
        by_name = {n.name: n for n in graph.nodes}
        matched, unmatched = [], []
        taken = set()
        for name in names:
            want = self.nodes.get(name, {})
            node = by_name.get(name)
            if node is not None and self._agrees(node, want):
                matched.append(node)
                taken.add(node)
                continue
            candidates = [n for n in graph.nodes if n not in taken and want and self._agrees(n, want)]
            if len(candidates) == 1:
                matched.append(candidates[0])
                taken.add(candidates[0])
            else:
                unmatched.append(name)
        if unmatched:
            raise ValueError("apply_partition: decision values not found in this joint graph (by name + target + "
                             "shape): %s" % ", ".join(unmatched))
        return matched

    @staticmethod
    def _agrees(node, want):
        if not want:
            return True
        target = _normalize_target(want.get("target"))
        if target and target != "placeholder" and _target_text(node) != target:
            return False
        if target == "placeholder" and node.op != "placeholder":
            return False
        shape = want.get("shape")
        return shape is None or _shape(node) is None or _shape(node) == shape

    def partition_fn(self, joint_module, joint_inputs, **kwargs):
        partitioners = _torch_partitioner_module()
        joint_module.graph.eliminate_dead_code()
        joint_module.recompile()
        joint_module.graph = _cse(joint_module.graph)
        joint_module.recompile()
        saved = self._match(joint_module.graph, self.saved_names)
        sym = [n for n in saved if _is_sym_node(n)]
        tensors = [n for n in saved if not _is_sym_node(n)]
        if "num_fwd_outputs" in kwargs:  # torch 2.x
            return partitioners._extract_fwd_bwd_modules(joint_module, tensors, saved_sym_nodes=sym,
                                                        num_fwd_outputs=kwargs["num_fwd_outputs"])
        return partitioners._extract_fwd_bwd_modules(joint_module, tensors)

    def joint_pass(self, gm):
        try:
            from torch.utils.checkpoint import CheckpointPolicy
        except ImportError:  # torch 1.13
            return gm
        graph = gm.graph if isinstance(gm, fx.GraphModule) else gm
        for node in self._match(graph, self.saved_names):
            node.meta["recompute"] = CheckpointPolicy.MUST_SAVE
        for node in self._match(graph, self.recomputed_names):
            node.meta["recompute"] = CheckpointPolicy.PREFER_RECOMPUTE
        return gm


def apply_partition(decision):
    """decision: a decision.json path (written by `jointscope-cli partition FILE --out DIR`) or its dict."""
    if not isinstance(decision, dict):
        with open(decision) as f:
            decision = json.load(f)
    if decision.get("format") != "jointscope-decision":
        raise ValueError("apply_partition: not a jointscope decision (format %r)" % decision.get("format"))
    return AppliedPartition(decision)
