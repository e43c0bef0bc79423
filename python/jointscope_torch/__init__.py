"""jointscope_torch: capture PyTorch AOTAutograd joint graphs for the jointscope inspector.

    from jointscope_torch import export_joint
    capture = export_joint(model, (x,), "model.json")
    # then: jointscope model.json   /   jointscope-cli info model.json --json

export_joint(model_or_fn, example_args, path, name=None, **options) -> JointCapture
    Captures the joint forward+backward graph AOTAutograd hands to its partition function and writes it to `path`
    as jointscope JSON version 1 (docs/formats.md). Two ways in (option via=):
      "compile" (default on torch >= 2): torch.compile(model_or_fn, backend=aot_autograd(partition_fn=hook)) --
        the path torch.compile users take. dynamo lifts parameters (torch passes their indices as
        static_lifetime_input_indices), lowers torch.utils.checkpoint (non-reentrant) and selective-checkpoint
        policies to recompute / ac_graph_id tags, supports dynamic shapes (dynamic={arg index: dims} ->
        torch._dynamo.mark_dynamic: SymInt placeholders) and nested_compile_region (invoke_subgraph; its bodies
        are partitioned with torch's min-cut, as inductor does, before the outer graph reaches the hook).
        torch._dynamo.reset() runs before and after. The hook returns torch's min-cut partition and the forward
        runs once with pass-through compilers, so every graph is reached; graph_breaks="error" (default,
        fullgraph=True) makes a graph break a RuntimeError naming dynamo's reason, graph_breaks="all" captures
        every graph (graph i > 0 goes to <root>.<i><ext>). The graph is taken before inductor's joint-graph passes
        (the hook replaces inductor's partition_fn); no decompositions unless given (as aot_eager).
      "aot" (torch 1.13's only way; also on torch 2): aot_module for an nn.Module (parameters and buffers become
        the first primals), aot_function for other callables. Tracing stops inside the hook, so nothing runs:
        meta-device models and inputs allocate nothing. On torch 2 this path does not see torch.utils.checkpoint
        (plain checkpoint leaves no tags; selective checkpointing leaves recompute tags without ac_graph_id, on
        which torch's partitioners fail: the failure is recorded in .errors with that explanation).
    Each node carries op, target ("torch.ops.aten.mm.default", "operator.getitem",
    "torch.ops.higher_order.<hop>"), args/kwargs as the typed value tree, output tensor metadata (dtype,
    sizes, strides, device; one entry per element for tuple outputs; SymInt outputs as expressions),
    stack_trace, nn_module_stack, recompute / ac_graph_id / partitioner_tag / descriptor when present. The graph
    has num_fwd_outputs and attributes torch_version, kind="aot_joint_graph", capture (the torch entry point), via,
    compile_id (compile), static_lifetime_input_indices (JSON list, torch 2: the primals torch treats as
    parameters -- dynamo marks them PlainAOTInput, not ParamAOTInput), partitioner_config (JSON: memory budget,
    solver, cse, ...), dynamic, graph_index, hop_partitions (JSON decisions on invoke_subgraph bodies).

    Decisions: torch's own partitioners run in the hook exactly as torch calls its partition function (same joint
    module and inputs, same kwargs: num_fwd_outputs, static_lifetime_input_indices; the torch._functorch.config in
    effect). "torch_min_cut" (min_cut_rematerialization_partition, run on the module torch handed over: the one
    torch.compile continues with) and "torch_default_partition" (default_partition, on a copy taken before),
    each a DECISION with:
      saved        the forward's outputs after its first num_fwd_outputs (torch's order), tensors only; values
                   that are not nodes are dropped after that slice, never before
      saved_sym    the symbolic ones (SymInt / SymFloat / SymBool), in torch's order
      rng_states   the joint graph's random ops whose RNG state torch's forward also returns
                   (functionalize_rng_ops, for random ops recomputed under activation checkpointing), in order
      memory_budget, solver   (min-cut, torch 2) the activation_memory_budget in effect (config, or a node /
                   region annotation) and activation_memory_budget_solver
      forward_outputs         every value torch's forward returns, by name (null / text for non-nodes)
      forward_nodes, backward_nodes   the call_function node names of torch's forward / backward graphs, in
                   their order (placeholders and outputs excluded: the saved lists give those); torch keeps joint names
      forward_created, backward_created   nodes torch created after deciding (RNG functionalization:
                   run_and_save_rng_state / run_with_rng_state and their getitems) -> the joint node they stand for
                   (null when none): map them to compare node sets with a partition of the joint graph
      seconds      torch's partitioner time; origin
    options: via, dynamic, graph_breaks, memory_budget, solver, functorch_config (other torch._functorch.config
    entries), decompositions, min_cut / default_partition (bool, default True), attributes (extra graph
    attributes), devices (bool, default True: on torch 1.13, which records no devices, recover them by fake-tensor
    propagation).

capture_joint(model_or_fn, example_args, ...) -> JointCapture
    The capture alone, without writing (same options but attributes / devices): .joint_module (a copy of the
    fx.GraphModule torch handed to the partitioner, taken before any partitioner ran), .num_fwd_outputs,
    .joint_inputs, .partition_kwargs, .decisions, .errors (partitioner failures), .api, .via, .compile_id,
    .settings, .graphs (every graph, compile order), .hop_partitions. default_via() says which way is the default.

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
input), oracle_models() (the six models the torch 1.13 partition oracle test exports) and the torch 2 zoo:
torch2_zoo_builders() / torch2_zoo(only=None) -> name -> (model, args, options) (options: via, memory_budget,
solver, dynamic, graph_breaks, about), 32 cases: MLP, GPT block with SDPA, LLaMA-3 block (GQA, RoPE, RMSNorm,
SwiGLU), MoE (top-k router, index_add), conv + batch norm in train mode, LM with dropout + cross-entropy, full
activation checkpointing, selective checkpointing (CheckpointPolicy), memory budgets 0.1 / 0.5 / 0.8 with the
greedy / ilp / dp knapsack solvers, dynamic shapes, nested_compile_region, a graph break, functional collectives on
a fake process group. Definitions import on torch 1.13; torch-2-only APIs are reached only when a case is built.

log_partitioner_input(enable=True) / with partitioner_input_logged(): / JOINTSCOPE_LOG_PARTITIONER_INPUT=1
    Under inductor, makes TORCH_TRACE log the exact joint graph the min-cut partitioner receives (after inductor's
    joint-graph passes) as the artifact "jointscope_partitioner_input"; jointscope-cli check / partition prefer
    it to replaying the passes. Wraps config.custom_partitioner_fn (torch >= 2.6) around torch's own
    min_cut_rematerialization_partition, called with inductor's arguments: the decision is torch's.

python -m jointscope_torch.zoo --out DIR [--only NAME ...] [--list]: exports the torch 2 zoo (DIR/NAME.json with
torch's decisions, DIR/index.json), one line per case; a failing case is reported, the others still run.
"""

from ._apply import AppliedPartition, apply_partition
from ._capture import JointCapture, capture_joint, default_via, export_joint
from . import _partitioner_input
from ._partitioner_input import log_partitioner_input, partitioner_input_logged
from ._serialize import graph_to_json, write_document

__all__ = ["AppliedPartition", "apply_partition", "JointCapture", "capture_joint", "default_via", "export_joint",
           "graph_to_json", "log_partitioner_input", "partitioner_input_logged", "write_document"]

_partitioner_input._enable_from_environment()
