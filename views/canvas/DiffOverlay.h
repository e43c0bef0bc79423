// What the canvas shows of a graph diff on one of its two graphs: a coloured frame around each node that
// differs (added green, removed red, changed amber: DiffModel::kindColor) and the edges that changed drawn
// in the same colours. Built by the app from core/graph/GraphDiff; drawn by child items, so the scene keeps
// no state for it.
#pragma once

#include "graph/GraphDiff.h"

#include <optional>
#include <vector>

namespace jointscope::views {

class GraphScene;

struct DiffOverlay {
    std::vector<std::optional<DiffKind>> nodes; // by NodeId of the graph shown
    std::vector<std::pair<NodeId, NodeId>> addedEdges,
        removedEdges; // producer -> consumer, in the graph shown
};

// The overlay of side A (`sideB` false) or B of `diff`.
DiffOverlay makeDiffOverlay(const GraphDiff& diff, bool sideB, size_t nodeCount);

// Replaces the diff decorations of every item shown; null removes them. Call again after a new layout.
void applyDiffOverlay(GraphScene& scene, const DiffOverlay* overlay);

} // namespace jointscope::views
