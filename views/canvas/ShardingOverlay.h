// What the canvas shows of a sharding plan: per node its output placement (a strip below the box, one colour
// segment per mesh dimension) and, on the edges that redistribute, the collectives and their cost. Built by
// the app from the engine's plan (views decide nothing); drawn by child items of the node and edge items, so
// the scene itself needs no state for it.
#pragma once

#include "graph/Graph.h"
#include "sharding/Cost.h"
#include "sharding/Placement.h"

#include <QColor>
#include <QString>

#include <optional>
#include <vector>

namespace jointscope::views {

class GraphScene;

struct NodeShardingMark {
    bool placed = false;
    sharding::Placements output;
    bool pinned = false;
    // A second plan's output placement (autoparallel's), drawn as a thin strip under the first when it
    // differs.
    std::optional<sharding::Placements> compared;
};

struct EdgeShardingMark {
    NodeId from = kNoNode;
    NodeId to = kNoNode;
    sharding::Redistribution redistribution;
};

struct ShardingOverlay {
    std::vector<NodeShardingMark> nodes; // by NodeId of the graph shown
    std::vector<EdgeShardingMark> edges; // only edges that cost something
    std::vector<std::string> meshNames;  // one per mesh dimension
};

// Replaces the sharding decorations of every item shown; null removes them. Call again after a new layout.
void applyShardingOverlay(GraphScene& scene, const ShardingOverlay* overlay);
// Shard(d) a hue per tensor dim, Replicate grey, Partial orange.
QColor placementColor(const sharding::Placement& p);
// "all-gather 12.3 µs", "all-reduce(tp) 4.1 µs + all-gather(dp) 9 µs" with mesh names when there are several.
QString transitionLabel(const sharding::Redistribution& r, const std::vector<std::string>& meshNames);

} // namespace jointscope::views
