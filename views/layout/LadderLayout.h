// The ladder layout of a joint graph: the forward runs down the left column, the backward up the right, each
// backward node level with the deepest forward row it (or anything it feeds) reads, so that a saved
// activation (a forward value read by the backward) is a short horizontal rung between the columns.
// Widget-free and fast (two layered placements and linear passes): it is the first frame of every joint
// graph.
#pragma once

#include "layout/GraphLayout.h"

#include <atomic>
#include <optional>
#include <vector>

namespace jointscope::layout {

struct CollapsedView;

// Which column each node of `graph` goes to: the backward mask (tangent closure), recomputed nodes
// (`recomputed[id]` non-zero, may be empty) on the backward side, the output node apart.
std::vector<LadderSide> ladderSides(const Graph& graph, const std::vector<char>& recomputed = {});
// The same for the items of a collapsed view: a group goes where most of its nodes go.
std::vector<LadderSide> ladderSides(const Graph& graph, const CollapsedView& view,
                                    const std::vector<char>& recomputed = {});
// True when both columns have something: the ladder says more than the layered layout.
bool hasTwoSides(const std::vector<LadderSide>& sides);

// Places `graph` (a joint graph or the layout graph of a collapsed view) as a ladder. `options.sides` gives
// each node's column (empty: ladderSides(graph)); `options.clusters` frames are drawn around their members.
std::optional<LayoutResult> ladderLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                         const LayoutOptions& options, const std::atomic<bool>* cancel);

} // namespace jointscope::layout
