// Widget-free graph layout: Graphviz `dot` when available and the graph is small enough,
// else a fast layered layout (longest-path layering + barycentre ordering).
#pragma once

#include "graph/Graph.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace jointscope::layout {

struct CollapsedView;
class FrameLayoutCache;

struct Point {
    double x = 0;
    double y = 0;
};

// Size of a node's box in points.
struct NodeSize {
    double width = 120;
    double height = 36;
};

// Centre and size of a node's box in points, y pointing down.
struct NodePlacement {
    double x = 0;
    double y = 0;
    double width = 0;
    double height = 0;
};

// Cubic Bezier from an input to the node reading it: p0, c1, c2, p1, c1, c2, p2, ... (1 + 3n points).
struct EdgeRoute {
    NodeId from = kNoNode;
    NodeId to = kNoNode;
    std::vector<Point> points;
};

// Ladder: forward down the left, backward up the right (layout/LadderLayout.h).
enum class LayoutAlgorithm { Auto, Graphviz, Layered, Ladder };

// The ladder's column of a node.
enum class LadderSide : uint8_t { Forward, Backward, Output };

// Boxes laid out together inside one frame (Graphviz `subgraph cluster_*`), so that the frame holds its
// members and nothing else.
struct LayoutCluster {
    int32_t parent = -1;       // enclosing cluster, an earlier index; -1: none
    std::vector<NodeId> nodes; // direct members
    std::string title;         // room is kept above the members for this text
    // Ladder: the members may be laid out apart and placed as one block (a layer's nodes), not on the
    // ladder's rows (a phase: the column itself).
    bool block = false;
};

struct LayoutOptions {
    LayoutAlgorithm algorithm = LayoutAlgorithm::Auto;
    size_t graphvizNodeLimit = 1500;     // Auto uses the layered layout above this many nodes
    std::vector<NodeSize> sizes;         // per node; empty = estimated from the name / op text
    double nodeSeparation = 18;          // points between boxes of one rank
    double rankSeparation = 28;          // points between ranks
    std::vector<LayoutCluster> clusters; // parents first
    std::vector<LadderSide> sides;       // per node, for the ladder; empty = from the graph's backward mask
    std::vector<char> recomputed;        // per graph node, non-zero: on the ladder's backward side
    // LayoutRunner: when the algorithm chosen is slow (Graphviz), deliver a fast placement first, marked
    // provisional, then the refined one.
    bool preview = false;
    // Layered: every node just above its first user (the ladder's columns), not below its last input.
    bool asLateAsPossible = false;
    // Ladder: a frame with no frame inside whose members all sit in one column (a layer's forward, its
    // backward) is laid out apart and placed as one block. Graphviz: by dot, through `frameCache`; Layered:
    // by the layered layout.
    LayoutAlgorithm frameAlgorithm = LayoutAlgorithm::Layered;
    // Frame layouts by content: identical layers are laid out by dot once, and again never.
    std::shared_ptr<FrameLayoutCache> frameCache;
    // Ladder with frameAlgorithm Graphviz: take dot's layouts from the cache only; a frame not in it gets the
    // layered layout and the result is marked provisional (LayoutRunner's fast pass).
    bool framesFromCacheOnly = false;
};

struct LayoutResult {
    LayoutAlgorithm algorithm = LayoutAlgorithm::Layered; // the one that produced it
    std::vector<NodePlacement> nodes;                     // indexed by NodeId
    std::vector<EdgeRoute> edges;
    // Per LayoutOptions::clusters, its frame: centre and size. Empty when the algorithm ignored them.
    std::vector<NodePlacement> clusters;
    double width = 0;
    double height = 0;
    // Set when this lays out a collapsed view (layout/Grouping.h): nodes and edges are then its items.
    std::shared_ptr<const CollapsedView> view;
    // A fast first placement that a slower one (Graphviz) will replace once it is done.
    bool provisional = false;
};

bool graphvizAvailable();

// Box size for a node label of `text` characters over two lines, for callers without fonts.
NodeSize estimateNodeSize(const Node& node);

// One edge per (input, user) pair, in graph order, without repeats.
std::vector<std::pair<NodeId, NodeId>> graphEdges(const Graph& graph);

// The algorithm computeLayout runs for `graph`: Ladder only for a graph with both a forward and a backward,
// Graphviz when asked (or Auto within the limit) and available, else Layered.
LayoutAlgorithm chosenAlgorithm(const Graph& graph, const LayoutOptions& options);

// Lays out `graph`. Returns nullopt when `cancel` was set before it finished (the partial
// result is discarded). Not thread-safe with other Graphviz users: callers serialise
// (LayoutRunner does).
std::optional<LayoutResult> computeLayout(const Graph& graph, const LayoutOptions& options = {},
                                          const std::atomic<bool>* cancel = nullptr);

std::optional<LayoutResult> layeredLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                          const LayoutOptions& options, const std::atomic<bool>* cancel);
// The layered layout, each cluster laid out apart and placed as one box: frames never overlap.
std::optional<LayoutResult> clusteredLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                            const LayoutOptions& options, const std::atomic<bool>* cancel);
std::optional<LayoutResult> graphvizLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                           const LayoutOptions& options, const std::atomic<bool>* cancel);

} // namespace jointscope::layout
