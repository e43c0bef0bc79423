"""jointscope_torch: capture PyTorch AOTAutograd joint graphs for the jointscope inspector.

    from jointscope_torch import export_joint
    capture = export_joint(model, (x,), "model.json")
    # then: jointscope model.json   /   jointscope-cli info model.json --json

export_joint(model_or_fn, example_args, path, name=None, **options) -> JointCapture
    Traces model_or_fn(*example_args) with AOTAutograd (aot_module for an nn.Module, whose parameters and
    buffers become the first primals as in torch; aot_function for any other callable), captures the joint
    forward+backward graph in a partition-function hook, and writes it to `path` as jointscope JSON version 1
    (docs/formats.md). Each node carries op, target ("torch.ops.aten.mm.default", "operator.getitem",
    "torch.ops.higher_order.<hop>"), args/kwargs as the typed value tree, output tensor metadata (dtype,
    sizes, strides, device; one entry per element for tuple outputs; SymInt outputs as expressions),
    stack_trace, nn_module_stack, recompute / ac_graph_id / partitioner_tag when present. The graph has
    num_fwd_outputs, attributes torch_version / kind="aot_joint_graph" / capture, and two decisions taken by
    torch on that same graph (each partitioner runs on a deep copy): "torch_min_cut"
    (min_cut_rematerialization_partition) and "torch_default_partition" (default_partition), each with the
    saved values in torch's order (the forward graph's outputs after the first num_fwd_outputs; symbolic
    scalars go to "saved_sym") and the seconds torch took.

    The hook stops tracing once the graph is captured, so no compiled forward or backward ever runs:
    models and inputs on the `meta` device work and allocate nothing (production shapes are fine).
    Works with torch 1.13 (functorch.compile) and torch 2.x (torch._functorch.aot_autograd), chosen by
    feature detection.

    options: decompositions (dict for AOTAutograd), min_cut / default_partition (bool, default True),
    attributes (extra graph attributes), devices (bool, default True: on torch 1.13, which records no
    devices, recover them by fake-tensor propagation).

capture_joint(model_or_fn, example_args, ...) -> JointCapture
    The capture alone, without writing: .joint_module (fx.GraphModule as torch handed it to the
    partitioner), .num_fwd_outputs, .joint_inputs, .decisions, .errors (partitioner failures), .api.

graph_to_json / write_document: the serializer for any fx.GraphModule.

apply_partition(decision) -> AppliedPartition
    decision.json (from `jointscope-cli partition FILE --out DIR`) or its dict. .partition_fn is a partition
    function for functorch 1.13's aot_function / aot_module and torch 2's aot_autograd that saves exactly the
    decision's values (nodes matched by name + target + shape, falling back to a unique target + shape when a
    name is missing) and refuses, naming the values, a decision the backward cannot run from (an unsaved forward
    input it needs, a random op it would redraw); .joint_pass(gm) tags a torch 2 joint graph with
    CheckpointPolicy (MUST_SAVE / PREFER_RECOMPUTE) instead (on torch 1.13 it warns and changes nothing).
    .saved_names, .decision. See docs/user-guide.md, "Applying an edited partition in torch".

jointscope_torch.models: small reference models taking `device` (MLP, GPTBlock, ConvNet, LlamaStack, GPTStack,
TinyLM with embedding + dropout + cross-entropy), gpt_stack(layers=48) (the ~7.6k-node benchmark model with its
input) and oracle_models() (the six models the partition oracle test exports).
"""

from ._apply import AppliedPartition, apply_partition
from ._capture import JointCapture, capture_joint, export_joint
from ._serialize import graph_to_json, write_document

__all__ = ["AppliedPartition", "apply_partition", "JointCapture", "capture_joint", "export_joint", "graph_to_json", "write_document"]
