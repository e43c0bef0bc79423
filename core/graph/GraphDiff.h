// The differences between two graphs of the same program: two ranks, two compiles, a recompile.
//
// Nodes are paired in three passes, each only among nodes still unpaired:
//   1. same name, target and output shape (the same node, perhaps with other arguments or dtype);
//   2. same name (the node changed its target or shape);
//   3. same op, target and shape at the same position, in graph order, among the rest: a node renamed
//      because an earlier one was added or removed (add_3 -> add_4), or an input dynamo named after another
//      source (placeholders pair by shape and position whatever their names).
// A pair whose target, shape, dtype or arguments (read through the pairing) differ is "changed"; nodes left
// unpaired are "removed" (only in A) or "added" (only in B).
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace jointscope {

enum class DiffKind : uint8_t { Added, Removed, Changed };
std::string_view diffKindName(DiffKind kind); // "added", "removed", "changed"

// One way in which a paired node differs; texts speak node names and op names.
struct NodeChange {
    std::string field; // "name", "op", "target", "shape", "dtype", "args", "kwargs", "checkpoint"
    std::string before;
    std::string after;
};

struct DiffEntry {
    DiffKind kind = DiffKind::Changed;
    NodeId a = kNoNode;              // node of graph A (kNoNode when added)
    NodeId b = kNoNode;              // node of graph B (kNoNode when removed)
    std::vector<NodeChange> changes; // Changed only

    // "changed mm_2: target aten.mm.default -> aten.bmm.default", "added relu_3 (aten.relu.default)".
    std::string describe(const Graph& graphA, const Graph& graphB) const;
};

// An edge (producer -> consumer) of one graph whose image under the pairing is not an edge of the other;
// edges that touch an added or removed node are implied by it and not listed.
struct EdgeChange {
    bool added = false;        // only in B (else only in A)
    NodeId producer = kNoNode; // in the graph the edge belongs to (B when added, else A)
    NodeId consumer = kNoNode;
};

struct GraphDiff {
    std::vector<NodeId> partnerOfA; // per node of A: its node of B, or kNoNode
    std::vector<NodeId> partnerOfB; // per node of B: its node of A, or kNoNode
    // Removed and changed nodes in A's order, added ones placed after the B node they follow.
    std::vector<DiffEntry> entries;
    std::vector<EdgeChange> edges;
    size_t added = 0;
    size_t removed = 0;
    size_t changed = 0;
    size_t renamed = 0;    // pairs made by pass 3 (also counted in `changed`)
    size_t checkpoint = 0; // pairs whose activation-checkpoint tag differs (also counted in `changed`)

    bool identical() const { return entries.empty() && edges.empty(); }
};

GraphDiff diffGraphs(const Graph& a, const Graph& b);

// The output shape of a node as a diff prints it: "[4, 16]", "([4], [])" for tuples, "" when unknown.
std::string shapeText(const Node& node);

} // namespace jointscope
