// The joint graph as torch's min-cut partitioner sees it: dead code eliminated, then common subexpressions
// merged.
#pragma once

#include "graph/Graph.h"
#include "ops/Ruleset.h"

#include <string>
#include <utility>
#include <vector>

namespace jointscope::partition {

struct PreparedJoint {
    Graph graph;
    std::vector<std::string> deadNodes;                      // removed by dead-code elimination
    std::vector<std::pair<std::string, std::string>> merged; // (removed, kept) by CSE
};

// Node.is_impure(): side-effectful calls survive dead-code elimination. Since torch 2.1 an op whose schema
// mutates an argument counts too (`mutatingOpsAreImpure`; a ruleset's dce_keeps_mutating_ops).
bool isImpure(const Node& node, bool mutatingOpsAreImpure);

// optimization_hint(): every symbolic size and stride of the graph's tensors gets its value under the graph's
// symbol hints (SymInt::value), when all its symbols have one; the rest keep value 0 (torch's fallback).
void applySymbolHints(Graph& graph);

// get_node_storage(node), seen through the ruleset's aliasing ops and views: the node whose storage `id` shares.
NodeId storageRoot(const Graph& graph, NodeId id, const Ruleset& rules);

// The primals AOTAutograd marks aot_runtime_epilogue_input_mutation: inputs that require grad and whose
// mutation the graph returns for the runtime epilogue to apply (InputMutationAOTOutput among the output
// descriptors, beside a GradAOTOutput of the same input). Indexed by NodeId; all false without descriptors.
std::vector<bool> epilogueMutatedInputs(const Graph& graph);

// Mirrors torch: joint_module.graph.eliminate_dead_code(), then fx_graph_cse (compile_utils.py) when the
// ruleset enables CSE. Node names are kept, as node_copy keeps them.
PreparedJoint prepareJoint(Graph joint, const Ruleset& rules);

} // namespace jointscope::partition
