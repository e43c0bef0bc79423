#include "layout/LadderLayout.h"

#include "graph/GraphStats.h"
#include "layout/Grouping.h"

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

std::optional<LayoutResult> ladderLayout(const Graph& graph, const std::vector<NodeSize>& sizes,
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

} // namespace jointscope::layout
