// The ladder layout of a joint graph: the forward runs down the left column, the backward up the right, each
// backward node level with the deepest forward row it (or anything it feeds) reads, so that a saved
// activation (a forward value read by the backward) is a short horizontal rung between the columns.
// Widget-free and fast (two layered placements and linear passes): it is the first frame of every joint
// graph.
#pragma once

#include "layout/GraphLayout.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace jointscope::layout {

struct CollapsedView;

// The layouts of frame contents (LayoutOptions::frameAlgorithm), kept by the content's shape: edges between
// members and box sizes rounded up, never names. Shared by a LayoutRunner's passes; thread-safe.
class FrameLayoutCache {
public:
    std::shared_ptr<const LayoutResult> find(const std::string& shape) const;
    void insert(const std::string& shape, std::shared_ptr<const LayoutResult> layout);
    size_t size() const;

private:
    static constexpr size_t kMaxEntries = 4096; // then it starts over: a few MB at most
    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const LayoutResult>> layouts_;
};

// Which column each node of `graph` goes to: the backward mask (tangent closure), recomputed nodes
// (`recomputed[id]` non-zero, may be empty) on the backward side, the output node apart.
std::vector<LadderSide> ladderSides(const Graph& graph, const std::vector<char>& recomputed = {});
// The same for the items of a collapsed view: a group goes where most of its nodes go.
std::vector<LadderSide> ladderSides(const Graph& graph, const CollapsedView& view,
                                    const std::vector<char>& recomputed = {});
// True when both columns have something: the ladder says more than the layered layout.
bool hasTwoSides(const std::vector<LadderSide>& sides);

// Places `graph` (a joint graph or the layout graph of a collapsed view) as a ladder. `options.sides` gives
// each node's column (empty: ladderSides(graph)); `options.clusters` frames are drawn around their members,
// and a frame of one column is laid out inside as a block (LayoutOptions::frameAlgorithm).
std::optional<LayoutResult> ladderLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                         const LayoutOptions& options, const std::atomic<bool>* cancel);

} // namespace jointscope::layout
