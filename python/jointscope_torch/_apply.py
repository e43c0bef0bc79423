"""Applying a partition decision edited in jointscope back to real torch training."""

import inspect
import json
import operator
import warnings

import torch
import torch.fx as fx
import torch.utils._pytree as pytree


def _torch_partitioner_module():
    try:
        from torch._functorch import partitioners  # torch >= 2.0
    except ImportError:
        from functorch._src import partitioners  # torch 1.13
    return partitioners


def _cse(joint_module, partition_kwargs):
    """torch's CSE as the min-cut partitioner runs it before it decides (decision names refer to the graph after
    it): functorch 1.13 always runs fx_graph_cse; torch 2 only when torch._functorch.config.cse is on, and (torch
    versions whose fx_graph_cse takes extra_node_key) never merges a forward-only value with one the backward needs (extra_node_key)."""
    graph = joint_module.graph
    try:
        from torch._functorch import config
        from torch._functorch.compile_utils import fx_graph_cse
    except ImportError:
        from functorch._src.compile_utils import fx_graph_cse

        return fx_graph_cse(graph)
    if not getattr(config, "cse", True):
        return graph
    partitioners = _torch_partitioner_module()
    extract = getattr(partitioners, "_extract_fwd_bwd_outputs", None)
    if "extra_node_key" not in inspect.signature(fx_graph_cse).parameters or extract is None:
        return fx_graph_cse(graph)
    from ._capture import _num_fwd_outputs

    bwd_outputs = extract(joint_module, num_fwd_outputs=_num_fwd_outputs(joint_module, partition_kwargs))[1]
    backward_dependencies = set()
    stack = [n for n in bwd_outputs if n is not None and n.op != "output"]
    while stack:
        node = stack.pop()
        if node in backward_dependencies:
            continue
        backward_dependencies.add(node)
        stack.extend(node.all_input_nodes)
    return fx_graph_cse(graph, extra_node_key=lambda node: node in backward_dependencies)


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
        values and builds the forward / backward graphs with torch's own _extract_fwd_bwd_modules. A value not
        found, or a decision the backward cannot run from, is a ValueError naming the values.
    joint_pass(gm): for torch 2, tags the joint graph (node.meta["recompute"]): MUST_SAVE on saved values,
        PREFER_RECOMPUTE on recomputed ones, so torch's min-cut partitioner reproduces the decision. On torch
        1.13, which has no CheckpointPolicy, it warns and leaves the graph unchanged; use partition_fn there.
    saved_names, decision: the decision as loaded.
    """

    def __init__(self, decision):
        self.decision = decision
        self.saved_names = list(decision.get("saved", [])) + list(decision.get("saved_sym", []))
        self.recomputed_names = list(decision.get("recomputed", []))
        self.nodes = decision.get("nodes", {})

    def _match(self, graph, names):
        """Nodes of `graph` for `names`, in the order of `names`, matched by name + target + shape.

        A name that is missing, or whose node has another target or shape, falls back to the recorded target and
        shape: it is accepted when exactly one node has them that is not named in the decision and not taken by
        an earlier fallback (in the decision's order); several or none is an error that lists every such name."""
        by_name = {n.name: n for n in graph.nodes}
        matched, unmatched = [], []
        taken = {by_name[name] for name in names if name in by_name}  # a fallback never takes a named value
        for name in names:
            want = self.nodes.get(name, {})
            node = by_name.get(name)
            if node is not None and self._agrees(node, want):
                matched.append(node)
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
        # Mirrors the start and end of torch's min_cut_rematerialization_partition: DCE, CSE, then
        # _extract_fwd_bwd_modules with the decision's saved values instead of the min cut's.
        partitioners = _torch_partitioner_module()
        joint_module.graph.eliminate_dead_code()
        joint_module.recompile()
        joint_module.graph = _cse(joint_module, kwargs)
        joint_module.recompile()
        saved = self._match(joint_module.graph, self.saved_names)
        sym = [n for n in saved if _is_sym_node(n)]
        tensors = [n for n in saved if not _is_sym_node(n)]
        _check_backward_inputs(joint_module, saved, kwargs)
        return _extract(partitioners._extract_fwd_bwd_modules, joint_module, tensors, sym, kwargs)

    def joint_pass(self, gm):
        try:
            from torch.utils.checkpoint import CheckpointPolicy
        except ImportError:  # torch 1.13: no CheckpointPolicy, and its partitioner reads no tags
            warnings.warn("apply_partition: this torch has no CheckpointPolicy; joint_pass leaves the graph "
                          "unchanged (use partition_fn)")
            return gm
        graph = gm.graph if isinstance(gm, fx.GraphModule) else gm
        for node in self._match(graph, self.saved_names):
            node.meta["recompute"] = CheckpointPolicy.MUST_SAVE
        for node in self._match(graph, self.recomputed_names):
            node.meta["recompute"] = CheckpointPolicy.PREFER_RECOMPUTE
        return gm


def _extract(extract_fwd_bwd_modules, joint_module, saved_values, saved_sym_nodes, partition_kwargs):
    """Calls torch's _extract_fwd_bwd_modules with what this torch's signature takes: functorch 1.13 takes
    (joint_module, saved_values); torch 2 adds saved_sym_nodes and keyword num_fwd_outputs, later ones
    saved_opaque_nodes and static_lifetime_input_nodes."""
    params = inspect.signature(extract_fwd_bwd_modules).parameters
    if "saved_sym_nodes" not in params:  # functorch 1.13: static shapes, forward outputs from the out spec
        if saved_sym_nodes:
            raise ValueError("apply_partition: this torch cannot save symbolic values: %s"
                             % ", ".join(n.name for n in saved_sym_nodes))
        return extract_fwd_bwd_modules(joint_module, saved_values)
    options = {"saved_sym_nodes": saved_sym_nodes}
    if "num_fwd_outputs" in params:
        num_fwd_outputs = partition_kwargs.get("num_fwd_outputs")
        if num_fwd_outputs is None:
            raise ValueError("apply_partition: torch did not pass num_fwd_outputs to the partition function")
        options["num_fwd_outputs"] = num_fwd_outputs
    if "saved_opaque_nodes" in params:
        options["saved_opaque_nodes"] = []
    indices = partition_kwargs.get("static_lifetime_input_indices")
    if "static_lifetime_input_nodes" in params and indices is not None:
        placeholders = [n for n in joint_module.graph.nodes if n.op == "placeholder"]
        options["static_lifetime_input_nodes"] = [placeholders[i] for i in indices]
    return extract_fwd_bwd_modules(joint_module, saved_values, **options)


def _is_backward_input(node):
    # torch's _is_tangent / _is_bwd_seed_offset: the backward's own inputs besides the saved values
    return node.op == "placeholder" and (node.name.startswith("tangents") or "bwd_seed" in node.name
                                         or "bwd_base_offset" in node.name)


def _random_op_predicate():
    """node -> whether recomputing it would draw new random numbers: torch 2's partitioners.is_rng_op (a
    nondeterministic_seeded op, except SDPA whose dropout_p is statically 0), else the nondeterministic_seeded tag
    (torch 1.13's rule)."""
    is_rng_op = getattr(_torch_partitioner_module(), "is_rng_op", None)
    if is_rng_op is not None:
        return lambda node: node.op == "call_function" and is_rng_op(node)
    seeded = getattr(getattr(torch, "Tag", None), "nondeterministic_seeded", None)
    return lambda node: seeded is not None and seeded in getattr(node.target, "tags", ())


def _check_backward_inputs(joint_module, saved, partition_kwargs):
    """Refuses, with the names, a decision the backward cannot run from: a forward input it would need but that is
    not saved (torch's extraction would emit an invalid graph), or a random op it would have to compute again
    (drawing new numbers: torch 1.13 bans that, torch 2 replays the RNG state in functionalize_rng_ops, which a
    forced decision cannot do here)."""
    from ._capture import _num_fwd_outputs  # the same count export_joint records

    num_fwd_outputs = _num_fwd_outputs(joint_module, partition_kwargs)
    output = [n for n in joint_module.graph.nodes if n.op == "output"][0]
    # torch's _extract_fwd_bwd_outputs: the flattened outputs after the forward's are the backward's
    flat = pytree.tree_flatten(output.args)[0]
    stack = [n for n in flat[num_fwd_outputs:] if isinstance(n, fx.Node)]
    is_random = _random_op_predicate()
    available, seen, missing, random = set(saved), set(), [], []
    while stack:
        node = stack.pop()
        if node in seen or node in available or _is_backward_input(node):
            continue
        seen.add(node)
        if node.op == "placeholder":
            missing.append(node.name)
            continue
        if is_random(node):
            random.append(node.name)
        stack.extend(node.all_input_nodes)
    problems = []
    if random:
        problems.append("recomputes random ops in the backward (save their results instead): %s"
                        % ", ".join(sorted(random)))
    if missing:
        problems.append("the backward needs forward inputs it neither receives nor can recompute (save them or "
                        "values computed from them): %s" % ", ".join(sorted(missing)))
    if problems:
        raise ValueError("apply_partition: invalid decision: " + "; ".join(problems))


def apply_partition(decision):
    """decision: a decision.json path (written by `jointscope-cli partition FILE --out DIR`) or its dict."""
    if not isinstance(decision, dict):
        with open(decision) as f:
            decision = json.load(f)
    if decision.get("format") != "jointscope-decision":
        raise ValueError("apply_partition: not a jointscope decision (format %r)" % decision.get("format"))
    return AppliedPartition(decision)
