#include "layout/GraphLayout.h"

#include "layout/LadderLayout.h"
#include "layout/StandInGraph.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

namespace jointscope::layout {

namespace {

bool cancelled(const std::atomic<bool>* cancel) {
    return cancel && cancel->load(std::memory_order_relaxed);
}

// Vertical Bezier from the bottom of `a` to the top of `b`.
EdgeRoute verticalCurve(NodeId from, NodeId to, const NodePlacement& a, const NodePlacement& b) {
    const Point start{a.x, a.y + a.height / 2};
    const Point end{b.x, b.y - b.height / 2};
    const double bend = std::max(12.0, (end.y - start.y) * 0.45);
    return {from, to, {start, {start.x, start.y + bend}, {end.x, end.y - bend}, end}};
}

// The last step of both built-in layouts, once every node is placed: a vertical curve per edge; nothing if
// cancelled meanwhile.
std::optional<LayoutResult> withCurves(LayoutResult result,
                                       const std::vector<std::pair<NodeId, NodeId>>& edges,
                                       const std::atomic<bool>* cancel) {
    result.edges.reserve(edges.size());
    for (auto [from, to] : edges)
        result.edges.push_back(verticalCurve(from, to, result.nodes[from], result.nodes[to]));
    if (cancelled(cancel))
        return std::nullopt;
    return result;
}

} // namespace

NodeSize estimateNodeSize(const Node& node) {
    // Roughly 6.5 points per character at the canvas' 9 pt font, plus padding.
    const size_t chars = std::max(node.name.size(), node.target.op.empty() ? node.target.text.size()
                                                                           : node.target.op.size() + 6);
    const double width =
        std::clamp(16.0 + 6.5 * static_cast<double>(std::min<size_t>(chars, 40)), 64.0, 300.0);
    return {width, 36.0};
}

std::vector<std::pair<NodeId, NodeId>> graphEdges(const Graph& graph) {
    std::vector<std::pair<NodeId, NodeId>> edges;
    for (NodeId id = 0; id < graph.size(); ++id) {
        std::vector<NodeId> inputs;
        graph.node(id).forEachInput([&](NodeId input) {
            if (input < graph.size() && input != id &&
                std::find(inputs.begin(), inputs.end(), input) == inputs.end())
                inputs.push_back(input);
        });
        for (NodeId input : inputs)
            edges.emplace_back(input, id);
    }
    return edges;
}

namespace {

// Each node's rank: longest-path layering, then nodes moved down towards their users where that shortens
// edges (what reads only sources, with `asLateAsPossible` everything off the longest path, and the sources).
std::vector<int> layerNodes(const std::vector<std::vector<NodeId>>& inputs,
                            const std::vector<std::vector<NodeId>>& users, bool asLateAsPossible) {
    const size_t n = inputs.size();
    // FX graphs list inputs before users, but guard against forward references.
    std::vector<int> layer(n, 0);
    for (NodeId id = 0; id < n; ++id)
        for (NodeId in : inputs[id])
            if (in < id)
                layer[id] = std::max(layer[id], layer[in] + 1);
    // So does what reads only sources (a weight's transpose, a view of an input): hundreds of them would
    // otherwise make the second rank as wide as the first, and pull every matmul towards it.
    for (NodeId id = n; id-- > 0;) {
        if (inputs[id].empty() || users[id].empty())
            continue;
        bool fromSources = true;
        for (NodeId in : inputs[id])
            fromSources = fromSources && inputs[in].empty();
        if (!fromSources)
            continue;
        int lowest = INT32_MAX;
        for (NodeId user : users[id])
            lowest = std::min(lowest, layer[user]);
        layer[id] = std::max(layer[id], lowest - 1);
    }
    // As late as possible: what is off the longest path (masks, weight casts) sits just above its first user.
    if (asLateAsPossible)
        for (NodeId id = n; id-- > 0;) {
            int lowest = INT32_MAX;
            for (NodeId user : users[id])
                if (user > id)
                    lowest = std::min(lowest, layer[user]);
            if (lowest != INT32_MAX)
                layer[id] = std::max(layer[id], lowest - 1);
        }
    // Sources (placeholders, get_attr) sit just above their first user rather than all on top.
    for (NodeId id = 0; id < n; ++id) {
        if (!inputs[id].empty() || users[id].empty())
            continue;
        int lowest = INT32_MAX;
        for (NodeId user : users[id])
            lowest = std::min(lowest, layer[user]);
        layer[id] = std::max(0, lowest - 1);
    }
    return layer;
}

// Barycentre ordering within each rank: alternate sweeps down (by inputs) and up (by users). False when
// cancelled.
bool orderRanks(std::vector<std::vector<NodeId>>& ranks, const std::vector<std::vector<NodeId>>& inputs,
                const std::vector<std::vector<NodeId>>& users, const std::atomic<bool>* cancel) {
    const int layerCount = int(ranks.size());
    std::vector<double> order(inputs.size(), 0);
    auto renumber = [&](const std::vector<NodeId>& rank) {
        for (size_t i = 0; i < rank.size(); ++i)
            order[rank[i]] = rank.size() > 1 ? double(i) / double(rank.size() - 1) : 0.5;
    };
    for (const auto& rank : ranks)
        renumber(rank);
    for (int sweep = 0; sweep < 6; ++sweep) {
        if (cancelled(cancel))
            return false;
        const bool down = sweep % 2 == 0;
        for (int i = 0; i < layerCount; ++i) {
            auto& rank = ranks[size_t(down ? i : layerCount - 1 - i)];
            std::vector<double> key(rank.size());
            for (size_t k = 0; k < rank.size(); ++k) {
                const auto& neighbours = down ? inputs[rank[k]] : users[rank[k]];
                if (neighbours.empty()) {
                    key[k] = order[rank[k]];
                    continue;
                }
                double sum = 0;
                for (NodeId v : neighbours)
                    sum += order[v];
                key[k] = sum / double(neighbours.size());
            }
            std::vector<size_t> perm(rank.size());
            std::iota(perm.begin(), perm.end(), 0);
            std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
            std::vector<NodeId> sorted;
            sorted.reserve(rank.size());
            for (size_t k : perm)
                sorted.push_back(rank[k]);
            rank = std::move(sorted);
            renumber(rank);
        }
    }
    return true;
}

// Coordinates: each rank packed left to right, pulled towards its inputs' x, without overlaps, then shifted
// so that it is, on average, where its nodes wanted to be.
LayoutResult placeRanks(const std::vector<std::vector<NodeId>>& ranks, const std::vector<int>& layer,
                        const std::vector<std::vector<NodeId>>& inputs, const std::vector<NodeSize>& sizes,
                        const LayoutOptions& options) {
    LayoutResult result;
    result.algorithm = LayoutAlgorithm::Layered;
    result.nodes.resize(inputs.size());
    double y = 0;
    double minX = 0, maxX = 0;
    for (int i = 0; i < int(ranks.size()); ++i) {
        const auto& rank = ranks[size_t(i)];
        double rankHeight = 0;
        for (NodeId id : rank)
            rankHeight = std::max(rankHeight, sizes[id].height);
        std::vector<double> desired(rank.size());
        double cursor = 0;
        for (size_t k = 0; k < rank.size(); ++k) {
            const NodeId id = rank[k];
            double sum = 0;
            int count = 0;
            for (NodeId in : inputs[id])
                if (layer[in] < i) {
                    sum += result.nodes[in].x;
                    ++count;
                }
            desired[k] = count ? sum / count : cursor + sizes[id].width / 2;
            cursor += sizes[id].width + options.nodeSeparation;
        }
        // Left to right: at the desired x unless that overlaps the previous box.
        double right = -1e300;
        for (size_t k = 0; k < rank.size(); ++k) {
            const NodeId id = rank[k];
            const double half = sizes[id].width / 2;
            const double x = std::max(desired[k], right + options.nodeSeparation + half);
            result.nodes[id] = {x, y + rankHeight / 2, sizes[id].width, sizes[id].height};
            right = x + half;
        }
        if (!rank.empty()) {
            double drift = 0;
            for (size_t k = 0; k < rank.size(); ++k)
                drift += result.nodes[rank[k]].x - desired[k];
            drift /= double(rank.size());
            for (NodeId id : rank) {
                result.nodes[id].x -= drift;
                minX = std::min(minX, result.nodes[id].x - sizes[id].width / 2);
                maxX = std::max(maxX, result.nodes[id].x + sizes[id].width / 2);
            }
        }
        y += rankHeight + options.rankSeparation;
    }
    for (auto& p : result.nodes)
        p.x -= minX;
    result.width = maxX - minX;
    result.height = std::max(0.0, y - options.rankSeparation);
    return result;
}

} // namespace

std::optional<LayoutResult> layeredLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                          const LayoutOptions& options, const std::atomic<bool>* cancel) {
    const size_t n = graph.size();
    const auto edges = graphEdges(graph);
    std::vector<std::vector<NodeId>> inputs(n), users(n);
    for (auto [from, to] : edges) {
        inputs[to].push_back(from);
        users[from].push_back(to);
    }
    const std::vector<int> layer = layerNodes(inputs, users, options.asLateAsPossible);
    if (cancelled(cancel))
        return std::nullopt;
    const int layerCount = n ? *std::max_element(layer.begin(), layer.end()) + 1 : 0;
    std::vector<std::vector<NodeId>> ranks(static_cast<size_t>(layerCount));
    for (NodeId id = 0; id < n; ++id)
        ranks[size_t(layer[id])].push_back(id);
    if (!orderRanks(ranks, inputs, users, cancel))
        return std::nullopt;
    return withCurves(placeRanks(ranks, layer, inputs, sizes, options), edges, cancel);
}

namespace {

// Frames laid out from the inside out: each frame's direct nodes and inner frames (one box each) with the
// layered layout, then its box placed in its parent's level; the top level is what no frame holds.
class ClusteredLayout {
public:
    ClusteredLayout(const Graph& graph, const std::vector<NodeSize>& sizes, const LayoutOptions& options)
        : sizes_(sizes), options_(options), clusters_(options.clusters), n_(graph.size()),
          k_(int32_t(options.clusters.size())), edges_(graphEdges(graph)), owner_(n_, -1),
          first_(static_cast<size_t>(k_), kNoNode), levels_(static_cast<size_t>(k_) + 1),
          boxSize_(static_cast<size_t>(k_)) {
        for (int32_t c = 0; c < k_; ++c)
            for (NodeId id : clusters_[size_t(c)].nodes)
                if (id < n_)
                    owner_[id] = c;
        for (NodeId id = 0; id < n_; ++id)
            for (int32_t c = owner_[id]; c != -1; c = parentOf(c))
                first_[size_t(c)] = std::min(first_[size_t(c)], id);
    }

    std::optional<LayoutResult> run(const std::atomic<bool>* cancel) {
        // Innermost clusters first: a cluster is laid out as one box of its parent's level.
        for (int32_t level = k_ - 1; level >= -1; --level) {
            if (cancelled(cancel) || !layOutLevel(level, cancel))
                return std::nullopt;
        }
        // Top-down: each cluster's content sits below its title, inside its box.
        LayoutResult result;
        result.algorithm = LayoutAlgorithm::Layered;
        result.nodes.resize(n_);
        result.clusters.resize(size_t(k_));
        place(levels_[size_t(k_)], 0, 0, result);
        for (int32_t c = 0; c < k_; ++c) {
            const NodePlacement& box = result.clusters[size_t(c)];
            place(levels_[size_t(c)], box.x - box.width / 2 + kPad, box.y - box.height / 2 + kTitle, result);
        }
        result.width = levels_[size_t(k_)].width;
        result.height = levels_[size_t(k_)].height;
        return withCurves(std::move(result), edges_, cancel);
    }

private:
    static constexpr double kPad = 12;   // frame to content, sides and bottom
    static constexpr double kTitle = 26; // frame top to content: the title's band

    struct Level {
        std::vector<int64_t> elements;    // a node, or n + a cluster
        std::vector<NodePlacement> local; // centres from the level's top-left
        double width = 0, height = 0;
    };

    int32_t parentOf(int32_t c) const {
        const int32_t p = clusters_[size_t(c)].parent;
        return p >= 0 && p < c ? p : -1;
    }

    // The element of level `level` (-1: the top) standing for node `id`: the node itself, n + the cluster
    // holding it, or -1 when the node lies outside that level.
    int64_t lift(NodeId id, int32_t level) const {
        if (owner_[id] == level)
            return int64_t(id);
        for (int32_t c = owner_[id]; c != -1; c = parentOf(c))
            if (parentOf(c) == level)
                return int64_t(n_) + c;
        return -1;
    }

    // One level's elements in the order of their first node, laid out with the edges between them.
    bool layOutLevel(int32_t level, const std::atomic<bool>* cancel) {
        Level& out = levels_[size_t(level < 0 ? k_ : level)];
        for (NodeId id = 0; id < n_; ++id)
            if (owner_[id] == level)
                out.elements.push_back(int64_t(id));
        for (int32_t c = 0; c < k_; ++c)
            if (parentOf(c) == level)
                out.elements.push_back(int64_t(n_) + c);
        const auto firstOf = [&](int64_t e) {
            return e < int64_t(n_) ? NodeId(e) : first_[size_t(e - int64_t(n_))];
        };
        std::stable_sort(out.elements.begin(), out.elements.end(),
                         [&](int64_t a, int64_t b) { return firstOf(a) < firstOf(b); });
        std::unordered_map<int64_t, NodeId> index;
        for (size_t i = 0; i < out.elements.size(); ++i)
            index.emplace(out.elements[i], NodeId(i));
        std::vector<std::vector<NodeId>> inputs(out.elements.size());
        for (auto [from, to] : edges_) {
            const int64_t a = lift(from, level), b = lift(to, level);
            if (a < 0 || b < 0 || a == b)
                continue;
            auto& in = inputs[index.at(b)];
            if (std::find(in.begin(), in.end(), index.at(a)) == in.end())
                in.push_back(index.at(a));
        }
        std::vector<NodeSize> levelSizes;
        for (int64_t e : out.elements)
            levelSizes.push_back(e < int64_t(n_) ? sizes_[size_t(e)] : boxSize_[size_t(e - int64_t(n_))]);
        auto laid = layeredLayout(standInGraph(inputs, "e"), levelSizes, options_, cancel);
        if (!laid)
            return false;
        out.local = std::move(laid->nodes);
        out.width = laid->width;
        out.height = laid->height;
        if (level >= 0)
            boxSize_[size_t(level)] = {out.width + 2 * kPad, out.height + kTitle + kPad};
        return true;
    }

    void place(const Level& level, double left, double top, LayoutResult& result) const {
        for (size_t i = 0; i < level.elements.size(); ++i) {
            const int64_t e = level.elements[i];
            NodePlacement p = level.local[i];
            p.x += left;
            p.y += top;
            if (e < int64_t(n_))
                result.nodes[size_t(e)] = p;
            else
                result.clusters[size_t(e - int64_t(n_))] = p;
        }
    }

    const std::vector<NodeSize>& sizes_;
    const LayoutOptions& options_;
    const std::vector<LayoutCluster>& clusters_;
    size_t n_;
    int32_t k_;
    std::vector<std::pair<NodeId, NodeId>> edges_;
    std::vector<int32_t> owner_; // innermost cluster holding a node directly; -1: none
    std::vector<NodeId> first_;  // smallest node in each cluster's subtree: element order
    std::vector<Level> levels_;  // levels_[c] for cluster c, levels_[k] for the top
    std::vector<NodeSize> boxSize_;
};

} // namespace

std::optional<LayoutResult> clusteredLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                            const LayoutOptions& options, const std::atomic<bool>* cancel) {
    return ClusteredLayout(graph, sizes, options).run(cancel);
}

LayoutAlgorithm chosenAlgorithm(const Graph& graph, const LayoutOptions& options) {
    if (options.algorithm == LayoutAlgorithm::Ladder &&
        hasTwoSides(options.sides.size() == graph.size() ? options.sides
                                                         : ladderSides(graph, options.recomputed)))
        return LayoutAlgorithm::Ladder;
    const bool graphviz =
        options.algorithm == LayoutAlgorithm::Graphviz ||
        (options.algorithm != LayoutAlgorithm::Layered && graph.size() <= options.graphvizNodeLimit);
    return graphviz && graphvizAvailable() ? LayoutAlgorithm::Graphviz : LayoutAlgorithm::Layered;
}

std::optional<LayoutResult> computeLayout(const Graph& graph, const LayoutOptions& options,
                                          const std::atomic<bool>* cancel) {
    std::vector<NodeSize> sizes = options.sizes;
    if (sizes.size() != graph.size()) {
        sizes.clear();
        sizes.reserve(graph.size());
        for (const Node& node : graph.nodes())
            sizes.push_back(estimateNodeSize(node));
    }
    if (cancelled(cancel))
        return std::nullopt;
    const LayoutAlgorithm algorithm = chosenAlgorithm(graph, options);
    if (algorithm == LayoutAlgorithm::Ladder) {
        LayoutOptions ladder = options;
        if (ladder.sides.size() != graph.size())
            ladder.sides = ladderSides(graph, options.recomputed);
        return ladderLayout(graph, sizes, ladder, cancel);
    }
    if (algorithm == LayoutAlgorithm::Graphviz) {
        auto result = graphvizLayout(graph, sizes, options, cancel);
        if (result || cancelled(cancel))
            return result;
    }
    if (!options.clusters.empty())
        return clusteredLayout(graph, sizes, options, cancel);
    return layeredLayout(graph, sizes, options, cancel);
}

} // namespace jointscope::layout
