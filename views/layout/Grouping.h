// Hierarchical collapse of large graphs: a group tree over the nodes (forward / backward, then placeholders,
// the model's layers and parts when graph/Layers finds them, HOP call, nn_module_stack path or `# File:`
// source line, then chunks of consecutive nodes as the last resort) and the collapsed view of it that the
// layout runs on. Widget-free: usable from layout threads and tests.
#pragma once

#include "graph/Graph.h"
#include "layout/GraphLayout.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace jointscope::layout {

enum class GroupKind : uint8_t {
    Root,
    Phase,
    Inputs,
    HopCall,
    Module,
    SourceFile,
    SourceLine,
    Chunk,
    Layer, // "layer 3" (its forward or its backward, by the phase above it)
    Part,  // "embedding", "head", "loss": the non-repeated parts around the layers
};

struct Group {
    GroupKind kind = GroupKind::Root;
    std::string label;
    int32_t parent = -1;
    uint32_t depth = 0;
    std::vector<int32_t> children; // child groups, ordered by their first node
    std::vector<NodeId> nodes;     // direct members, in graph order
    size_t total = 0;              // nodes in the whole subtree
    NodeId first = kNoNode;        // smallest node id in the subtree
    int32_t layer = -1;            // GroupKind::Layer: the model layer (0 … N-1)

    size_t items() const { return children.size() + nodes.size(); }
};

struct GroupTree {
    std::vector<Group> groups;    // groups[0] is the root
    std::vector<int32_t> groupOf; // node -> the innermost group holding it directly
    size_t maxItems = 1500;       // no group has more direct items than this

    // Ancestors of `group` from the root down, `group` included.
    std::vector<int32_t> path(int32_t group) const;
};

struct GroupingOptions {
    size_t maxItems = 1500; // a group with more direct items is split into chunks
    size_t chunkSize = 400; // nodes (or groups) per chunk
    bool layers = true;     // group by the layers graph/Layers finds
};

// Groups `graph`'s nodes. Every node is a direct member of exactly one group.
GroupTree buildGroupTree(const Graph& graph, const GroupingOptions& options = {});

// One visible box of the collapsed view: a node or a collapsed group.
struct ViewItem {
    int32_t group = -1;    // >= 0: a collapsed group
    NodeId node = kNoNode; // else this node
};

// Data edges between visible items, merged: `count` graph edges, `bytes` their producers' tensor bytes.
struct ViewEdge {
    uint32_t from = 0;
    uint32_t to = 0;
    uint32_t count = 0;
    NodeId producer = kNoNode; // the producer when count == 1 (hover shows its tensor)
    uint64_t bytes = 0;
};

struct CollapsedView {
    std::shared_ptr<const GroupTree> tree;
    std::vector<char> expanded;       // per group; the root is always expanded
    std::vector<ViewItem> items;      // ordered by first node
    std::vector<uint32_t> itemOfNode; // node -> the visible item standing for it
    std::vector<ViewEdge> edges;
    std::vector<int32_t> frames; // expanded groups drawn as frames (all but the root)
};

// Expanded flags for a first view of at most `budget` items: groups opened breadth first while they fit.
std::vector<char> initialExpansion(const GroupTree& tree, size_t budget);
// Expands `group` and its ancestors; collapses other expanded groups (deepest first) while the view would
// exceed `budget` items.
void expandGroup(const GroupTree& tree, std::vector<char>& expanded, int32_t group, size_t budget);
// Collapses `group` and everything inside it.
void collapseGroup(const GroupTree& tree, std::vector<char>& expanded, int32_t group);
// Number of visible items under `expanded`.
size_t visibleItems(const GroupTree& tree, const std::vector<char>& expanded);

CollapsedView collapseView(const Graph& graph, std::shared_ptr<const GroupTree> tree,
                           std::vector<char> expanded);

// A graph with one node per view item and one edge per view edge, for computeLayout.
Graph viewLayoutGraph(const CollapsedView& view);
// One cluster per frame, clusters[i] for frames[i], over the layout graph's nodes (view items): the frames'
// members are laid out together and each frame is its cluster's box.
std::vector<LayoutCluster> viewClusters(const CollapsedView& view);
// Box size of a collapsed group.
NodeSize groupBoxSize(const Group& group);

} // namespace jointscope::layout
