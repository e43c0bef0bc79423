// inductor's joint-graph passes, replayed: the graph torch's partition_fn hands to
// min_cut_rematerialization_partition is not the aot_joint_graph a TORCH_TRACE log records. inductor's
// partition_fn first runs _recursive_joint_graph_passes (torch/_inductor/fx_passes/joint_graph.py:
// joint_graph_passes), which removes no-op ops, folds uniform constants into `full` nodes, drops pointless
// view / permute pairs and replaces random ops with inductor's seeded ones. This stage does the same, in
// torch's order, and says what each pass changed and which it could not replay.
#pragma once

#include "graph/Graph.h"
#include "io/CompileConfig.h"
#include "ops/Ruleset.h"

#include <string>
#include <utility>
#include <vector>

namespace jointscope::partition {

// The matmuls torch's graphs show padded: a product of the replacement reading a constant_pad_nd of an
// operand (that pad may have been saved: looked up in either graph), with the slices that read it.
std::vector<PaddedMatmul> observePaddedMatmuls(const Graph& forward, const Graph* backward);

// The torch._inductor.config switches joint_graph_passes reads.
struct JointPassOptions {
    bool patternMatcher = true;  // pattern_matcher
    bool constantFolding = true; // joint_graph_constant_folding
    bool fallbackRandom = false; // fallback_random: random ops stay aten ops
    // pad_mm's decisions, read off torch's graphs (a CPU compile pads nothing: can_pad wants a GPU).
    std::vector<PaddedMatmul> paddedMatmuls;
    // fuse_attention's rewrites, seen in torch's forward graph (CompileConfig::fusedAttentionOps): not
    // replayed, reported.
    std::vector<std::string> fusedAttentionOps;
};

// What one pass changed, in node names.
struct PassChange {
    std::string pass; // torch's name: "remove_noop_ops", "constant_fold_uniform_value", "pad_mm", ...
    std::vector<std::string> removed;                          // erased; their readers read another node
    std::vector<std::pair<std::string, std::string>> replaced; // (old, new node torch made in its place)
    std::vector<std::string> added;                            // new nodes that replace no single node
};

struct JointPassReport {
    std::vector<PassChange> changes; // the passes that changed something, in the order torch runs them
    // Passes torch would have applied here that this replay does not: "pass: node (op): why".
    std::vector<std::string> notReplayed;
    bool changed() const { return !changes.empty(); }
};

// Rewrites `joint` as joint_graph_passes does. Node names follow torch.fx's namespace (a new node is named
// after its target, "full_default", "inductor_random_default_1"), so names in torch's forward / backward
// match. The graph's HOP bodies are left alone (torch runs the passes on them when it partitions them).
JointPassReport replayJointGraphPasses(Graph& joint, const Ruleset& rules, const JointPassOptions& options);

// A get_attr of a one-element tensor: what constant_fold_uniform_value takes for uniform ("single-elem
// attrs"), whose value the graph text does not show (tensor_constant_values gives it).
bool isOneElementTensorConstant(const Node& n);

// Rewrites `joint` as tensorify_python_scalars does, which AOTAutograd runs on every backend's joint graph
// after logging it and before partitioning it (torch >= 2.6: Ruleset::tensorifyPythonScalars): float inputs
// read as Python scalars (a SymFloat from _local_scalar_dense) become float64 tensors the tensor ops read.
JointPassReport replayTensorifyPythonScalars(Graph& joint, const Ruleset& rules);

// `earlier`'s changes before `report`'s, and its passes not replayed with them: passes that ran first.
void prependPasses(JointPassReport& report, const JointPassReport& earlier);

} // namespace jointscope::partition
