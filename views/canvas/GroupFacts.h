// What a collapsed group box says about its members: ops, the activations saved from it and what it
// recomputes under the partition shown, the cut edges leaving it, and its measured time. Widget-free, so
// the numbers are tested apart from the box that draws them.
#pragma once

#include "canvas/PartitionOverlay.h"
#include "graph/Graph.h"
#include "layout/Grouping.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace jointscope::views {

struct GroupFacts {
    size_t ops = 0;          // call_function members
    size_t saved = 0;        // members the partition saves for the backward
    uint64_t savedBytes = 0; // their bytes
    size_t recomputed = 0;   // members the backward recomputes
    size_t cutEdges = 0;     // edges from a saved member into the backward or a recomputation
    double timeUs = -1;      // sum of the members' measured times; negative when none was measured
};

// Per group of `tree` (subtrees summed). `partition` and `timesUs` may be empty (no overlay, no profile);
// they are indexed by NodeId like the scene's overlays.
std::vector<GroupFacts> computeGroupFacts(const Graph& graph, const layout::GroupTree& tree,
                                          const PartitionOverlay* partition,
                                          const std::vector<double>& timesUs);

// Whether `overlay` shows a decision (some node saved or recomputed), not only pins.
bool hasDecision(const PartitionOverlay& overlay);

// "saved 1.2 MB · 3 recomputed · 5 cut · 2.1 ms": the partition's facts when `partitioned`, the time when
// measured; empty when neither.
QString groupFactsLine(const GroupFacts& facts, bool partitioned);

} // namespace jointscope::views
