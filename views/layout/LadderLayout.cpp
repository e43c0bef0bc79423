#include "layout/LadderLayout.h"

#include "graph/GraphStats.h"
#include "layout/Grouping.h"
#include "layout/StandInGraph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace jointscope::layout {

namespace {

constexpr double kGutter = 140; // between the columns: room for the rungs
constexpr double kFramePad = 12;
constexpr double kFrameTitle = 26;

bool cancelled(const std::atomic<bool>* cancel) {
    return cancel && cancel->load(std::memory_order_relaxed);
}

// The subgraph of `graph` on `members` (ascending ids), edges between members kept, for layeredLayout.
Graph inducedGraph(const std::vector<NodeId>& members, const std::vector<uint32_t>& local,
                   const std::vector<std::vector<NodeId>>& inputs) {
    Graph sub;
    for (NodeId id : members) {
        Node node;
        node.name = "n" + std::to_string(id);
        node.op = NodeOp::CallFunction;
        for (NodeId in : inputs[id])
            if (local[in] != UINT32_MAX)
                node.args.push_back(Value::nodeRef(local[in]));
        sub.addNode(std::move(node));
    }
    return sub;
}

// Places the boxes of one row left to right in the order of `desired` x, without overlap, the row as a whole
// where its boxes wanted to be on average.
void packRow(std::vector<NodeId>& row, const std::vector<double>& desired, const std::vector<NodeSize>& sizes,
             double separation, std::vector<NodePlacement>& out) {
    std::stable_sort(row.begin(), row.end(), [&](NodeId a, NodeId b) { return desired[a] < desired[b]; });
    double right = -1e300, drift = 0;
    for (NodeId id : row) {
        const double half = sizes[id].width / 2;
        out[id].x = std::max(desired[id], right + separation + half);
        right = out[id].x + half;
        drift += out[id].x - desired[id];
    }
    drift /= double(std::max<size_t>(1, row.size()));
    for (NodeId id : row)
        out[id].x -= drift;
}

Point mix(Point a, Point b, double t) {
    return {a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t};
}

// The route of an edge by the columns of its ends: down the forward, up the backward, across for a rung.
EdgeRoute ladderRoute(NodeId from, NodeId to, LadderSide a, LadderSide b, const NodePlacement& p,
                      const NodePlacement& q) {
    if (a == LadderSide::Forward && b == LadderSide::Backward) {
        const Point start{p.x + p.width / 2, p.y}, end{q.x - q.width / 2, q.y};
        const double bend = std::max(10.0, (end.x - start.x) * 0.45);
        return {from, to, {start, {start.x + bend, start.y}, {end.x - bend, end.y}, end}};
    }
    const bool down = q.y > p.y;
    const Point start{p.x, p.y + (down ? p.height : -p.height) / 2};
    const Point end{q.x, q.y + (down ? -q.height : q.height) / 2};
    const double bend = std::max(12.0, std::abs(end.y - start.y) * 0.45) * (down ? 1 : -1);
    if (a == b)
        return {from, to, {start, {start.x, start.y + bend}, {end.x, end.y - bend}, end}};
    // Across the columns the other way (a recomputed node feeding the forward, the output): a plain curve.
    return {from, to, {start, mix(start, end, 1.0 / 3), mix(start, end, 2.0 / 3), end}};
}

} // namespace

std::vector<LadderSide> ladderSides(const Graph& graph, const std::vector<char>& recomputed) {
    const std::vector<bool> backward = backwardMask(graph);
    std::vector<LadderSide> sides(graph.size(), LadderSide::Forward);
    for (NodeId id = 0; id < graph.size(); ++id) {
        if (graph.node(id).op == NodeOp::Output)
            sides[id] = LadderSide::Output;
        else if (backward[id] || (id < recomputed.size() && recomputed[id]))
            sides[id] = LadderSide::Backward;
    }
    return sides;
}

std::vector<LadderSide> ladderSides(const Graph& graph, const CollapsedView& view,
                                    const std::vector<char>& recomputed) {
    const std::vector<LadderSide> nodeSides = ladderSides(graph, recomputed);
    const GroupTree& tree = *view.tree;
    // Per group, backward minus forward members in its subtree.
    std::vector<int64_t> lean(tree.groups.size(), 0);
    for (NodeId id = 0; id < graph.size(); ++id) {
        const int delta = nodeSides[id] == LadderSide::Backward  ? 1
                          : nodeSides[id] == LadderSide::Forward ? -1
                                                                 : 0;
        for (int32_t g = tree.groupOf[id]; g >= 0; g = tree.groups[size_t(g)].parent)
            lean[size_t(g)] += delta;
    }
    std::vector<LadderSide> sides;
    sides.reserve(view.items.size());
    for (const ViewItem& item : view.items)
        sides.push_back(item.group >= 0
                            ? (lean[size_t(item.group)] > 0 ? LadderSide::Backward : LadderSide::Forward)
                            : nodeSides[item.node]);
    return sides;
}

bool hasTwoSides(const std::vector<LadderSide>& sides) {
    return std::find(sides.begin(), sides.end(), LadderSide::Forward) != sides.end() &&
           std::find(sides.begin(), sides.end(), LadderSide::Backward) != sides.end();
}

namespace {

// The ladder proper: every node on a row of its column, frames drawn around their members.
std::optional<LayoutResult> rowLadder(const Graph& graph, const std::vector<NodeSize>& sizes,
                                      const LayoutOptions& options, const std::atomic<bool>* cancel) {
    const size_t n = graph.size();
    const std::vector<LadderSide> sides =
        options.sides.size() == n ? options.sides : ladderSides(graph, options.recomputed);
    const auto edges = graphEdges(graph);
    std::vector<std::vector<NodeId>> inputs(n), users(n);
    for (auto [from, to] : edges) {
        inputs[to].push_back(from);
        users[from].push_back(to);
    }
    std::vector<NodeId> forward, backward, others;
    for (NodeId id = 0; id < n; ++id)
        (sides[id] == LadderSide::Forward    ? forward
         : sides[id] == LadderSide::Backward ? backward
                                             : others)
            .push_back(id);

    // Each column on its own with the layered layout: the forward's ranks are the ladder's rows, the
    // backward's x order is kept within each of its rows.
    const auto columnLayout = [&](const std::vector<NodeId>& members, std::vector<uint32_t>& local) {
        local.assign(n, UINT32_MAX);
        for (size_t i = 0; i < members.size(); ++i)
            local[members[i]] = uint32_t(i);
        std::vector<NodeSize> memberSizes;
        for (NodeId id : members)
            memberSizes.push_back(sizes[id]);
        LayoutOptions plain;
        plain.nodeSeparation = options.nodeSeparation;
        plain.rankSeparation = options.rankSeparation;
        plain.asLateAsPossible = true;
        return layeredLayout(inducedGraph(members, local, inputs), memberSizes, plain, cancel);
    };
    std::vector<uint32_t> fLocal, bLocal;
    const auto fLaid = columnLayout(forward, fLocal);
    if (!fLaid)
        return std::nullopt;
    const auto bLaid = columnLayout(backward, bLocal);
    if (!bLaid)
        return std::nullopt;

    // Forward rows: the layered layout's ranks, told apart by their centre y.
    std::vector<double> rankY;
    for (const NodePlacement& p : fLaid->nodes)
        rankY.push_back(p.y);
    std::sort(rankY.begin(), rankY.end());
    rankY.erase(std::unique(rankY.begin(), rankY.end()), rankY.end());
    const int rows = std::max<int>(1, int(rankY.size()));
    std::vector<int> row(n, -1);
    for (NodeId id : forward)
        row[id] =
            int(std::lower_bound(rankY.begin(), rankY.end(), fLaid->nodes[fLocal[id]].y) - rankY.begin());

    // A backward node's row: the deepest forward row read by it or by any backward node it feeds. Reading its
    // consumers (not its producers) keeps the rows monotone, a producer never above its consumer, and makes
    // a shallow read (positional tables, masks read by every layer) no anchor.
    std::vector<int> depth(n, -1);
    for (size_t i = backward.size(); i-- > 0;) {
        const NodeId id = backward[i];
        int deepest = -1;
        for (NodeId in : inputs[id])
            if (sides[in] == LadderSide::Forward)
                deepest = std::max(deepest, row[in]);
        for (NodeId user : users[id])
            if (user > id && sides[user] == LadderSide::Backward)
                deepest = std::max(deepest, depth[user]);
        depth[id] = deepest;
    }
    // What reads nothing of the forward, and feeds nothing that does, sits with its highest producer (or at
    // the bottom, where the backward starts).
    for (NodeId id : backward) {
        if (depth[id] >= 0)
            continue;
        int highest = rows - 1;
        for (NodeId in : inputs[id])
            if (in < id && sides[in] == LadderSide::Backward)
                highest = std::min(highest, depth[in]);
        depth[id] = highest;
    }
    // A forward value computed only for the backward (a weight's transpose) has no forward row to keep: it
    // sinks to the row of its highest reader, where its rung is flat. Readers' rows do not move: none reads
    // it deeper.
    std::vector<char> feedsBackwardOnly(n, 0);
    for (size_t i = forward.size(); i-- > 0;) {
        const NodeId id = forward[i];
        int lowest = INT32_MAX;
        bool only = true;
        for (NodeId user : users[id]) {
            if (sides[user] == LadderSide::Backward)
                lowest = std::min(lowest, depth[user]);
            else if (sides[user] == LadderSide::Forward && user > id && feedsBackwardOnly[user])
                lowest = std::min(lowest, row[user] - 1);
            else if (sides[user] == LadderSide::Forward)
                only = false;
        }
        if (only && lowest != INT32_MAX) {
            feedsBackwardOnly[id] = 1;
            row[id] = std::max(row[id], lowest);
        }
    }
    if (cancelled(cancel))
        return std::nullopt;

    // Within a row, backward nodes stack upwards in slots: slot 0 at the bottom, a node above its producers
    // of the same row.
    std::vector<int> slot(n, 0);
    std::vector<int> slots(size_t(rows), 1);
    for (NodeId id : backward) {
        for (NodeId in : inputs[id])
            if (in < id && sides[in] == LadderSide::Backward && depth[in] == depth[id])
                slot[id] = std::max(slot[id], slot[in] + 1);
        slots[size_t(depth[id])] = std::max(slots[size_t(depth[id])], slot[id] + 1);
    }
    // A forward node sits level with the lowest reader of its own row: that rung is horizontal.
    for (NodeId id : forward) {
        int best = INT32_MAX;
        for (NodeId user : users[id])
            if (sides[user] == LadderSide::Backward && depth[user] == row[id])
                best = std::min(best, slot[user]);
        slot[id] = best == INT32_MAX ? 0 : best;
    }

    // Slot heights, then y from the top: row 0's highest slot first.
    std::vector<size_t> slotBase(size_t(rows) + 1, 0);
    for (int r = 0; r < rows; ++r)
        slotBase[size_t(r) + 1] = slotBase[size_t(r)] + size_t(slots[size_t(r)]);
    const auto slotIndex = [&](int r, int s) {
        return slotBase[size_t(r)] + size_t(slots[size_t(r)] - 1 - s);
    };
    std::vector<double> slotHeight(slotBase.back(), 0);
    const auto rowOf = [&](NodeId id) { return sides[id] == LadderSide::Forward ? row[id] : depth[id]; };
    for (NodeId id = 0; id < n; ++id)
        if (sides[id] != LadderSide::Output && rowOf(id) >= 0) {
            double& h = slotHeight[slotIndex(rowOf(id), slot[id])];
            h = std::max(h, sizes[id].height);
        }
    std::vector<double> slotY(slotHeight.size());
    double y = 0;
    for (size_t s = 0; s < slotHeight.size(); ++s) {
        const double h = slotHeight[s] > 0 ? slotHeight[s] : 36;
        slotY[s] = y + h / 2;
        y += h + options.rankSeparation;
    }

    LayoutResult result;
    result.algorithm = LayoutAlgorithm::Ladder;
    result.nodes.resize(n);
    for (NodeId id = 0; id < n; ++id)
        result.nodes[id] = {0, 0, sizes[id].width, sizes[id].height};
    // x: each column's layered order within each slot, packed (sunk values joined other rows); the backward
    // right of the forward and the gutter.
    std::vector<double> desired(n, 0);
    std::vector<std::vector<NodeId>> forwardSlots(slotY.size()), backwardSlots(slotY.size());
    for (NodeId id : forward) {
        desired[id] = fLaid->nodes[fLocal[id]].x;
        result.nodes[id].y = slotY[slotIndex(row[id], slot[id])];
        forwardSlots[slotIndex(row[id], slot[id])].push_back(id);
    }
    for (NodeId id : backward) {
        desired[id] = bLaid->nodes[bLocal[id]].x;
        backwardSlots[slotIndex(depth[id], slot[id])].push_back(id);
    }
    double fRight = 0;
    for (auto* slotsOfSide : {&forwardSlots, &backwardSlots})
        for (auto& members : *slotsOfSide)
            packRow(members, desired, sizes, options.nodeSeparation, result.nodes);
    for (NodeId id : forward)
        fRight = std::max(fRight, result.nodes[id].x + sizes[id].width / 2);
    double bLeft = 1e300;
    for (NodeId id : backward) {
        bLeft = std::min(bLeft, result.nodes[id].x - sizes[id].width / 2);
        result.nodes[id].y = slotY[slotIndex(depth[id], slot[id])];
    }
    const double shift = backward.empty() ? 0 : fRight + kGutter - bLeft;
    for (NodeId id : backward)
        result.nodes[id].x += shift;
    const double bottom = std::max(0.0, y - options.rankSeparation);
    // The output (and anything else) above the backward column, where the gradients leave.
    double cursor = backward.empty() ? 0 : bLeft + shift;
    for (NodeId id : others) {
        result.nodes[id].x = cursor + sizes[id].width / 2;
        result.nodes[id].y = -sizes[id].height / 2 - options.rankSeparation;
        cursor += sizes[id].width + options.nodeSeparation;
    }

    // Frames around their members (children first), then everything moved into positive coordinates.
    const auto& clusters = options.clusters;
    result.clusters.assign(clusters.size(), NodePlacement{});
    std::vector<std::array<double, 4>> box(clusters.size(), {1e300, 1e300, -1e300, -1e300});
    const auto grow = [](std::array<double, 4>& b, double l, double t, double r, double bt) {
        b = {std::min(b[0], l), std::min(b[1], t), std::max(b[2], r), std::max(b[3], bt)};
    };
    for (size_t c = clusters.size(); c-- > 0;) {
        for (NodeId id : clusters[c].nodes)
            if (id < n) {
                const NodePlacement& p = result.nodes[id];
                grow(box[c], p.x - p.width / 2, p.y - p.height / 2, p.x + p.width / 2, p.y + p.height / 2);
            }
        if (box[c][0] > box[c][2])
            continue;
        box[c] = {box[c][0] - kFramePad, box[c][1] - kFrameTitle, box[c][2] + kFramePad,
                  box[c][3] + kFramePad};
        const int32_t parent = clusters[c].parent;
        if (parent >= 0 && size_t(parent) < c)
            grow(box[size_t(parent)], box[c][0], box[c][1], box[c][2], box[c][3]);
    }
    double minX = 0, minY = 0, maxX = 0, maxY = bottom;
    for (const NodePlacement& p : result.nodes) {
        minX = std::min(minX, p.x - p.width / 2);
        minY = std::min(minY, p.y - p.height / 2);
        maxX = std::max(maxX, p.x + p.width / 2);
        maxY = std::max(maxY, p.y + p.height / 2);
    }
    for (const auto& b : box)
        if (b[0] <= b[2]) {
            minX = std::min(minX, b[0]);
            minY = std::min(minY, b[1]);
            maxX = std::max(maxX, b[2]);
            maxY = std::max(maxY, b[3]);
        }
    for (NodePlacement& p : result.nodes) {
        p.x -= minX;
        p.y -= minY;
    }
    for (size_t c = 0; c < clusters.size(); ++c)
        if (box[c][0] <= box[c][2])
            result.clusters[c] = {(box[c][0] + box[c][2]) / 2 - minX, (box[c][1] + box[c][3]) / 2 - minY,
                                  box[c][2] - box[c][0], box[c][3] - box[c][1]};
    result.width = maxX - minX;
    result.height = maxY - minY;
    result.edges.reserve(edges.size());
    for (auto [from, to] : edges)
        result.edges.push_back(
            ladderRoute(from, to, sides[from], sides[to], result.nodes[from], result.nodes[to]));
    if (cancelled(cancel))
        return std::nullopt;
    return result;
}

constexpr double kBlockQuantum = 16;     // box sizes are rounded up to this for a frame's shape
constexpr size_t kMaxBlockMembers = 300; // dot takes seconds beyond

// A frame laid out apart: its items (direct member nodes, then the frames inside it, each a block itself)
// placed from its content's top-left.
struct Block {
    size_t cluster = 0;
    std::vector<NodeId> members;                // direct member nodes, ascending
    std::vector<size_t> children;               // blocks directly inside, by their first node
    int64_t parent = -1;                        // the block directly around it
    NodeId first = 0;                           // its smallest node, members of blocks inside included
    size_t nodes = 0;                           // its nodes, members of blocks inside included
    std::shared_ptr<const LayoutResult> inside; // item i: members[i], then children[i - members.size()]
};

// The frames that become blocks: marked so, all of one column, every frame inside a block too, and not too
// many nodes for dot. Children come before their parents.
std::vector<Block> findBlocks(const LayoutOptions& options, const std::vector<LadderSide>& sides, size_t n) {
    const auto& clusters = options.clusters;
    const size_t count = clusters.size();
    std::vector<std::vector<size_t>> childClusters(count);
    for (size_t c = 0; c < count; ++c)
        if (clusters[c].parent >= 0 && size_t(clusters[c].parent) < c)
            childClusters[size_t(clusters[c].parent)].push_back(c);
    std::vector<int64_t> blockOfCluster(count, -1);
    std::vector<LadderSide> side(count, LadderSide::Output);
    std::vector<Block> blocks;
    for (size_t c = count; c-- > 0;) { // parents have smaller indices: children are seen first
        if (!clusters[c].block)
            continue;
        Block block;
        block.cluster = c;
        for (NodeId id : clusters[c].nodes)
            if (id < n)
                block.members.push_back(id);
        std::sort(block.members.begin(), block.members.end());
        block.members.erase(std::unique(block.members.begin(), block.members.end()), block.members.end());
        bool ok = true;
        std::optional<LadderSide> column;
        auto sameColumn = [&](LadderSide s) {
            if (column && *column != s)
                ok = false;
            column = s;
        };
        for (NodeId id : block.members)
            sameColumn(sides[id]);
        block.nodes = block.members.size();
        block.first = block.members.empty() ? NodeId(n) : block.members.front();
        for (size_t child : childClusters[c]) {
            if (blockOfCluster[child] < 0) {
                ok = false;
                break;
            }
            const Block& inner = blocks[size_t(blockOfCluster[child])];
            sameColumn(side[child]);
            block.children.push_back(size_t(blockOfCluster[child]));
            block.nodes += inner.nodes;
            block.first = std::min(block.first, inner.first);
        }
        const size_t items = block.members.size() + block.children.size();
        // a lone member is no block unless a frame lies inside (its frame holds one box anyway)
        if (!ok || !column || *column == LadderSide::Output || items == 0 || block.nodes > kMaxBlockMembers ||
            (items < 2 && block.children.empty()))
            continue;
        std::sort(block.children.begin(), block.children.end(),
                  [&](size_t x, size_t y) { return blocks[x].first < blocks[y].first; });
        side[c] = *column;
        blockOfCluster[c] = int64_t(blocks.size());
        for (size_t child : block.children)
            blocks[child].parent = int64_t(blocks.size());
        blocks.push_back(std::move(block));
    }
    return blocks;
}

// Boxes without edges between them, in rows of about as many as there are rows, in order.
LayoutResult gridLayout(const std::vector<NodeSize>& sizes, const LayoutOptions& options) {
    const size_t columns = size_t(std::ceil(std::sqrt(double(sizes.size()))));
    std::vector<double> columnWidth(columns, 0), rowHeight((sizes.size() + columns - 1) / columns, 0);
    for (size_t i = 0; i < sizes.size(); ++i) {
        columnWidth[i % columns] = std::max(columnWidth[i % columns], sizes[i].width);
        rowHeight[i / columns] = std::max(rowHeight[i / columns], sizes[i].height);
    }
    std::vector<double> left(columns, 0), top(rowHeight.size(), 0);
    for (size_t c = 1; c < columns; ++c)
        left[c] = left[c - 1] + columnWidth[c - 1] + options.nodeSeparation;
    for (size_t r = 1; r < rowHeight.size(); ++r)
        top[r] = top[r - 1] + rowHeight[r - 1] + options.rankSeparation;
    LayoutResult result;
    result.algorithm = LayoutAlgorithm::Layered;
    for (size_t i = 0; i < sizes.size(); ++i)
        result.nodes.push_back({left[i % columns] + columnWidth[i % columns] / 2,
                                top[i / columns] + rowHeight[i / columns] / 2, sizes[i].width,
                                sizes[i].height});
    result.width = left.back() + columnWidth.back();
    result.height = top.back() + rowHeight.back();
    return result;
}

// Lays out one block's items (their sizes and, per item, the items it reads): dot's layout from the cache or
// fresh, else the layered layout. Sets `provisional` when dot was wanted but left for later.
std::shared_ptr<const LayoutResult> layOutBlock(const std::vector<std::vector<NodeId>>& localInputs,
                                                const std::vector<NodeSize>& itemSizes,
                                                const LayoutOptions& options, const std::atomic<bool>* cancel,
                                                bool& provisional) {
    std::vector<NodeSize> rounded;
    rounded.reserve(itemSizes.size());
    std::string shape;
    for (size_t i = 0; i < itemSizes.size(); ++i) {
        rounded.push_back({std::ceil(itemSizes[i].width / kBlockQuantum) * kBlockQuantum,
                           std::ceil(itemSizes[i].height / kBlockQuantum) * kBlockQuantum});
        shape += std::to_string(int(rounded.back().width)) + 'x' + std::to_string(int(rounded.back().height));
        for (NodeId in : localInputs[i])
            shape += ',' + std::to_string(in);
        shape += ';';
    }
    const bool edgeless = std::all_of(localInputs.begin(), localInputs.end(),
                                      [](const std::vector<NodeId>& in) { return in.empty(); });
    if (edgeless) // the inputs: a square of boxes, not one row as wide as the model
        return std::make_shared<const LayoutResult>(gridLayout(rounded, options));
    const Graph inner = standInGraph(localInputs, "n");
    LayoutOptions plain;
    plain.nodeSeparation = options.nodeSeparation;
    plain.rankSeparation = options.rankSeparation;
    const bool dot = options.frameAlgorithm == LayoutAlgorithm::Graphviz && graphvizAvailable();
    if (dot && options.frameCache)
        if (auto cached = options.frameCache->find(shape))
            return cached;
    if (dot && !options.framesFromCacheOnly) {
        if (auto laid = graphvizLayout(inner, rounded, plain, cancel)) {
            auto result = std::make_shared<const LayoutResult>(std::move(*laid));
            if (options.frameCache)
                options.frameCache->insert(shape, result);
            return result;
        }
        if (cancelled(cancel))
            return nullptr;
    }
    provisional = provisional || (dot && options.framesFromCacheOnly);
    auto laid = layeredLayout(inner, rounded, plain, cancel);
    return laid ? std::make_shared<const LayoutResult>(std::move(*laid)) : nullptr;
}

// The ladder with its one-column frames as blocks: each block laid out apart (the blocks inside it first, as
// one box each), the ladder run on a graph with one box per outermost block, then every block's items placed
// inside its box.
std::optional<LayoutResult> blockLadder(const Graph& graph, const std::vector<NodeSize>& sizes,
                                        const LayoutOptions& options, const std::vector<LadderSide>& sides,
                                        const std::atomic<bool>* cancel) {
    const size_t n = graph.size();
    std::vector<Block> blocks = findBlocks(options, sides, n);
    if (blocks.empty())
        return rowLadder(graph, sizes, options, cancel);
    const auto edges = graphEdges(graph);
    std::vector<std::vector<NodeId>> inputs(n);
    for (auto [from, to] : edges)
        inputs[to].push_back(from);

    // Each node's innermost block, and the item it is of block b (a member, or the block inside b holding
    // it).
    std::vector<int64_t> blockOf(n, -1);
    for (size_t b = 0; b < blocks.size(); ++b)
        for (NodeId id : blocks[b].members)
            blockOf[id] = int64_t(b);
    const auto itemOf = [&](NodeId id, size_t b) -> std::optional<size_t> {
        const Block& block = blocks[b];
        int64_t inner = blockOf[id];
        if (inner == int64_t(b))
            return size_t(std::lower_bound(block.members.begin(), block.members.end(), id) -
                          block.members.begin());
        while (inner >= 0 && blocks[size_t(inner)].parent != int64_t(b))
            inner = blocks[size_t(inner)].parent;
        if (inner < 0)
            return std::nullopt;
        const auto at = std::find(block.children.begin(), block.children.end(), size_t(inner));
        return block.members.size() + size_t(at - block.children.begin());
    };
    const auto boxSize = [](const LayoutResult& inside) {
        return NodeSize{inside.width + 2 * kFramePad, inside.height + kFrameTitle + kFramePad};
    };

    bool provisional = false;
    for (size_t b = 0; b < blocks.size(); ++b) { // children first
        const Block& block = blocks[b];
        const size_t items = block.members.size() + block.children.size();
        std::vector<NodeSize> itemSizes;
        itemSizes.reserve(items);
        for (NodeId id : block.members)
            itemSizes.push_back(sizes[id]);
        for (size_t child : block.children)
            itemSizes.push_back(boxSize(*blocks[child].inside));
        std::vector<std::vector<NodeId>> localInputs(items);
        const auto addInput = [&](size_t to, NodeId fromNode) {
            const std::optional<size_t> from = itemOf(fromNode, b);
            if (from && *from != to &&
                std::find(localInputs[to].begin(), localInputs[to].end(), NodeId(*from)) ==
                    localInputs[to].end())
                localInputs[to].push_back(NodeId(*from));
        };
        for (size_t i = 0; i < block.members.size(); ++i)
            for (NodeId in : inputs[block.members[i]])
                addInput(i, in);
        for (auto [from, to] : edges)
            if (const std::optional<size_t> item = itemOf(to, b); item && *item >= block.members.size())
                addInput(*item, from);
        blocks[b].inside = layOutBlock(localInputs, itemSizes, options, cancel, provisional);
        if (!blocks[b].inside)
            return std::nullopt;
    }
    const auto outermost = [&](NodeId id) {
        int64_t b = blockOf[id];
        while (b >= 0 && blocks[size_t(b)].parent >= 0)
            b = blocks[size_t(b)].parent;
        return b;
    };
    std::vector<int64_t> topOf(n, -1); // the outermost block holding each node
    for (NodeId id = 0; id < n; ++id)
        topOf[id] = outermost(id);

    // The outer graph: nodes outside blocks and one box per outermost block, in the order of their first
    // node.
    std::vector<uint32_t> outerOf(n, UINT32_MAX);
    std::vector<int64_t> outerThing; // >= 0: node; < 0: block -1 - b
    std::vector<uint32_t> outerOfBlock(blocks.size(), UINT32_MAX);
    for (NodeId id = 0; id < n; ++id) {
        const int64_t b = topOf[id];
        if (b >= 0 && outerOfBlock[size_t(b)] != UINT32_MAX) {
            outerOf[id] = outerOfBlock[size_t(b)];
            continue;
        }
        outerOf[id] = uint32_t(outerThing.size());
        if (b >= 0)
            outerOfBlock[size_t(b)] = outerOf[id];
        outerThing.push_back(b >= 0 ? -1 - b : int64_t(id));
    }
    std::vector<std::vector<NodeId>> outerInputs(outerThing.size());
    for (auto [from, to] : edges) {
        const uint32_t a = outerOf[from], z = outerOf[to];
        auto& in = outerInputs[z];
        if (a != z && std::find(in.begin(), in.end(), a) == in.end())
            in.push_back(a);
    }
    LayoutOptions outer = options;
    outer.sizes.clear();
    outer.sides.clear();
    outer.sides.reserve(outerThing.size());
    std::vector<NodeSize> outerSizes;
    outerSizes.reserve(outerThing.size());
    const auto columnOf = [&](const Block& block) {
        const Block* b = &block;
        while (b->members.empty())
            b = &blocks[b->children.front()];
        return sides[b->members.front()];
    };
    for (int64_t thing : outerThing) {
        if (thing >= 0) {
            outerSizes.push_back(sizes[size_t(thing)]);
            outer.sides.push_back(sides[size_t(thing)]);
            continue;
        }
        const Block& block = blocks[size_t(-1 - thing)];
        outerSizes.push_back(boxSize(*block.inside));
        outer.sides.push_back(columnOf(block));
    }
    // Frames that are blocks are the blocks' boxes; the others keep their members, outermost blocks as one
    // each.
    std::vector<int32_t> outerCluster(options.clusters.size(), -1);
    std::vector<char> isBlock(options.clusters.size(), 0);
    for (const Block& block : blocks)
        isBlock[block.cluster] = 1;
    outer.clusters.clear();
    for (size_t c = 0; c < options.clusters.size(); ++c) {
        if (isBlock[c])
            continue;
        const LayoutCluster& cluster = options.clusters[c];
        LayoutCluster mapped;
        mapped.title = cluster.title;
        mapped.parent =
            cluster.parent >= 0 && size_t(cluster.parent) < c ? outerCluster[size_t(cluster.parent)] : -1;
        for (NodeId id : cluster.nodes)
            if (id < n && blockOf[id] < 0)
                mapped.nodes.push_back(outerOf[id]);
        outerCluster[c] = int32_t(outer.clusters.size());
        outer.clusters.push_back(std::move(mapped));
    }
    for (size_t b = 0; b < blocks.size(); ++b)
        if (const int32_t parent = options.clusters[blocks[b].cluster].parent;
            blocks[b].parent < 0 && parent >= 0 && !isBlock[size_t(parent)] &&
            outerCluster[size_t(parent)] >= 0)
            outer.clusters[size_t(outerCluster[size_t(parent)])].nodes.push_back(outerOfBlock[b]);
    auto placed = rowLadder(standInGraph(outerInputs, "o"), outerSizes, outer, cancel);
    if (!placed)
        return std::nullopt;

    LayoutResult result;
    result.algorithm = LayoutAlgorithm::Ladder;
    result.provisional = provisional;
    result.width = placed->width;
    result.height = placed->height;
    result.nodes.resize(n);
    result.clusters.assign(options.clusters.size(), NodePlacement{});
    for (size_t c = 0; c < options.clusters.size(); ++c)
        if (outerCluster[c] >= 0)
            result.clusters[c] = placed->clusters[size_t(outerCluster[c])];
    // A block's content from its top-left; a backward block upside down: the backward column runs upwards.
    std::vector<Point> origin(blocks.size());
    std::vector<char> upwards(blocks.size(), 0);
    const auto toView = [&](size_t b, Point p) {
        const double y = upwards[b] ? blocks[b].inside->height - p.y : p.y;
        return Point{origin[b].x + p.x, origin[b].y + y};
    };
    // Boxes from the outside in: an outermost block's from the ladder, an inner one's from its parent's
    // items.
    for (size_t b = blocks.size(); b-- > 0;) {
        const Block& block = blocks[b];
        NodePlacement box;
        if (block.parent < 0) {
            box = placed->nodes[outerOfBlock[b]];
        } else {
            const Block& parent = blocks[size_t(block.parent)];
            const size_t item =
                parent.members.size() + size_t(std::find(parent.children.begin(), parent.children.end(), b) -
                                               parent.children.begin());
            const NodePlacement& p = parent.inside->nodes[item];
            const Point centre = toView(size_t(block.parent), {p.x, p.y});
            const NodeSize size = boxSize(*block.inside);
            box = {centre.x, centre.y, size.width, size.height};
        }
        result.clusters[block.cluster] = box;
        origin[b] = {box.x - box.width / 2 + kFramePad, box.y - box.height / 2 + kFrameTitle};
        upwards[b] = columnOf(block) == LadderSide::Backward;
    }
    for (NodeId id = 0; id < n; ++id) {
        const int64_t b = blockOf[id];
        if (b < 0) {
            result.nodes[id] = placed->nodes[outerOf[id]];
            continue;
        }
        const NodePlacement& p = blocks[size_t(b)].inside->nodes[*itemOf(id, size_t(b))];
        const Point centre = toView(size_t(b), {p.x, p.y});
        result.nodes[id] = {centre.x, centre.y, sizes[id].width, sizes[id].height};
    }
    // Edges between two members of one block keep the block's routes; the others are the ladder's.
    std::vector<std::vector<const EdgeRoute*>> routesFrom(n);
    for (size_t b = 0; b < blocks.size(); ++b)
        for (const EdgeRoute& route : blocks[b].inside->edges)
            if (route.from < blocks[b].members.size() && route.to < blocks[b].members.size())
                routesFrom[blocks[b].members[route.from]].push_back(&route);
    result.edges.reserve(edges.size());
    for (auto [from, to] : edges) {
        const int64_t b = blockOf[from];
        const EdgeRoute* inside = nullptr;
        if (b >= 0 && b == blockOf[to])
            for (const EdgeRoute* route : routesFrom[from])
                if (blocks[size_t(b)].members[route->to] == to)
                    inside = route;
        if (!inside) {
            result.edges.push_back(
                ladderRoute(from, to, sides[from], sides[to], result.nodes[from], result.nodes[to]));
            continue;
        }
        EdgeRoute route{from, to, inside->points};
        for (Point& point : route.points)
            point = toView(size_t(b), point);
        // dot drew to the rounded-up boxes: the ends move onto the boxes drawn.
        const auto onto = [](Point& point, const NodePlacement& box) {
            point = {std::clamp(point.x, box.x - box.width / 2, box.x + box.width / 2),
                     std::clamp(point.y, box.y - box.height / 2, box.y + box.height / 2)};
        };
        onto(route.points.front(), result.nodes[from]);
        onto(route.points.back(), result.nodes[to]);
        result.edges.push_back(std::move(route));
    }
    if (cancelled(cancel))
        return std::nullopt;
    return result;
}

} // namespace

std::shared_ptr<const LayoutResult> FrameLayoutCache::find(const std::string& shape) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = layouts_.find(shape);
    return it == layouts_.end() ? nullptr : it->second;
}

void FrameLayoutCache::insert(const std::string& shape, std::shared_ptr<const LayoutResult> layout) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (layouts_.size() >= kMaxEntries)
        layouts_.clear();
    layouts_[shape] = std::move(layout);
}

size_t FrameLayoutCache::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return layouts_.size();
}

std::optional<LayoutResult> ladderLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
                                         const LayoutOptions& options, const std::atomic<bool>* cancel) {
    if (options.clusters.empty())
        return rowLadder(graph, sizes, options, cancel);
    const std::vector<LadderSide> sides =
        options.sides.size() == graph.size() ? options.sides : ladderSides(graph, options.recomputed);
    return blockLadder(graph, sizes, options, sides, cancel);
}

} // namespace jointscope::layout
