// Counts shown by `jointscope-cli info` and the GUI status bar.
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <vector>

namespace jointscope {

struct GraphStats {
    uint64_t nodes = 0; // len(graph.nodes) of the top-level graph
    uint64_t placeholders = 0;
    uint64_t getAttrs = 0;
    uint64_t callFunctions = 0;
    uint64_t primals = 0;
    uint64_t tangents = 0;
    uint64_t forward = 0;     // call_function nodes that do not depend on a tangent
    uint64_t backward = 0;    // call_function nodes in the tangents' users-closure (or tagged is_backward)
    uint64_t tensorBytes = 0; // sum of node output sizes (numel * itemsize) where known
    uint64_t subgraphs = 0;   // nested HOP bodies, any depth
    uint64_t uniqueSubgraphs = 0; // of those, distinct by content (the same body printed under several names)
};

// Marks nodes that transitively read a tangent (torch's tangent closure), or carry partitioner_tag
// is_backward.
std::vector<bool> backwardMask(const Graph& graph);
GraphStats computeStats(const Graph& graph);
// The same with `backward` = backwardMask(graph) already at hand.
GraphStats computeStats(const Graph& graph, const std::vector<bool>& backward);

} // namespace jointscope
