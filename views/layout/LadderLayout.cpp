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

// The ladder proper: every node on a row of its column, frames drawn around their members. Built in steps:
// the two columns laid out apart, the forward's ranks as rows, each backward node's row, forward values only
// the backward reads sunk to their readers, slots stacked within rows, then y, x, frames and routes.
class RowLadder {
public:
    RowLadder(const Graph& graph, const std::vector<NodeSize>& sizes, const LayoutOptions& options,
              const std::atomic<bool>* cancel)
        : sizes_(sizes), options_(options), cancel_(cancel), n_(graph.size()),
          sides_(options.sides.size() == graph.size() ? options.sides
                                                      : ladderSides(graph, options.recomputed)),
          edges_(graphEdges(graph)), inputs_(n_), users_(n_) {
        for (auto [from, to] : edges_) {
            inputs_[to].push_back(from);
            users_[from].push_back(to);
        }
        for (NodeId id = 0; id < n_; ++id)
            (sides_[id] == LadderSide::Forward    ? forward_
             : sides_[id] == LadderSide::Backward ? backward_
                                                  : others_)
                .push_back(id);
    }

    std::optional<LayoutResult> run() {
        std::vector<uint32_t> fLocal, bLocal;
        const auto fLaid = layOutColumn(forward_, fLocal);
        if (!fLaid)
            return std::nullopt;
        const auto bLaid = layOutColumn(backward_, bLocal);
        if (!bLaid)
            return std::nullopt;
        takeForwardRows(*fLaid, fLocal);
        assignBackwardRows();
        sinkValuesOnlyTheBackwardReads();
        if (cancelled(cancel_))
            return std::nullopt;
        stackSlots();

        LayoutResult result;
        result.algorithm = LayoutAlgorithm::Ladder;
        result.nodes.resize(n_);
        for (NodeId id = 0; id < n_; ++id)
            result.nodes[id] = {0, 0, sizes_[id].width, sizes_[id].height};
        double bottom = 0;
        const std::vector<double> slotY = slotCentres(bottom);
        placeColumns(result, slotY, *fLaid, fLocal, *bLaid, bLocal);
        frameAndShift(result, bottom);
        result.edges.reserve(edges_.size());
        for (auto [from, to] : edges_)
            result.edges.push_back(
                ladderRoute(from, to, sides_[from], sides_[to], result.nodes[from], result.nodes[to]));
        if (cancelled(cancel_))
            return std::nullopt;
        return result;
    }

private:
    // One column on its own with the layered layout: the forward's ranks are the ladder's rows, the
    // backward's x order is kept within each of its rows.
    std::optional<LayoutResult> layOutColumn(const std::vector<NodeId>& members,
                                             std::vector<uint32_t>& local) const {
        local.assign(n_, UINT32_MAX);
        for (size_t i = 0; i < members.size(); ++i)
            local[members[i]] = uint32_t(i);
        std::vector<NodeSize> memberSizes;
        for (NodeId id : members)
            memberSizes.push_back(sizes_[id]);
        LayoutOptions plain;
        plain.nodeSeparation = options_.nodeSeparation;
        plain.rankSeparation = options_.rankSeparation;
        plain.asLateAsPossible = true;
        return layeredLayout(inducedGraph(members, local, inputs_), memberSizes, plain, cancel_);
    }

    // Forward rows: the layered layout's ranks, told apart by their centre y.
    void takeForwardRows(const LayoutResult& fLaid, const std::vector<uint32_t>& fLocal) {
        std::vector<double> rankY;
        for (const NodePlacement& p : fLaid.nodes)
            rankY.push_back(p.y);
        std::sort(rankY.begin(), rankY.end());
        rankY.erase(std::unique(rankY.begin(), rankY.end()), rankY.end());
        rows_ = std::max<int>(1, int(rankY.size()));
        row_.assign(n_, -1);
        for (NodeId id : forward_)
            row_[id] =
                int(std::lower_bound(rankY.begin(), rankY.end(), fLaid.nodes[fLocal[id]].y) - rankY.begin());
    }

    // A backward node's row: the deepest forward row read by it or by any backward node it feeds. Reading its
    // consumers (not its producers) keeps the rows monotone, a producer never above its consumer, and makes
    // a shallow read (positional tables, masks read by every layer) no anchor.
    void assignBackwardRows() {
        depth_.assign(n_, -1);
        for (size_t i = backward_.size(); i-- > 0;) {
            const NodeId id = backward_[i];
            int deepest = -1;
            for (NodeId in : inputs_[id])
                if (sides_[in] == LadderSide::Forward)
                    deepest = std::max(deepest, row_[in]);
            for (NodeId user : users_[id])
                if (user > id && sides_[user] == LadderSide::Backward)
                    deepest = std::max(deepest, depth_[user]);
            depth_[id] = deepest;
        }
        // What reads nothing of the forward, and feeds nothing that does, sits with its highest producer (or
        // at the bottom, where the backward starts).
        for (NodeId id : backward_) {
            if (depth_[id] >= 0)
                continue;
            int highest = rows_ - 1;
            for (NodeId in : inputs_[id])
                if (in < id && sides_[in] == LadderSide::Backward)
                    highest = std::min(highest, depth_[in]);
            depth_[id] = highest;
        }
    }

    // A forward value computed only for the backward (a weight's transpose) has no forward row to keep: it
    // sinks to the row of its highest reader, where its rung is flat. Readers' rows do not move: none reads
    // it deeper.
    void sinkValuesOnlyTheBackwardReads() {
        std::vector<char> feedsBackwardOnly(n_, 0);
        for (size_t i = forward_.size(); i-- > 0;) {
            const NodeId id = forward_[i];
            int lowest = INT32_MAX;
            bool only = true;
            for (NodeId user : users_[id]) {
                if (sides_[user] == LadderSide::Backward)
                    lowest = std::min(lowest, depth_[user]);
                else if (sides_[user] == LadderSide::Forward && user > id && feedsBackwardOnly[user])
                    lowest = std::min(lowest, row_[user] - 1);
                else if (sides_[user] == LadderSide::Forward)
                    only = false;
            }
            if (only && lowest != INT32_MAX) {
                feedsBackwardOnly[id] = 1;
                row_[id] = std::max(row_[id], lowest);
            }
        }
    }

    // Within a row, backward nodes stack upwards in slots: slot 0 at the bottom, a node above its producers
    // of the same row. A forward node sits level with the lowest reader of its own row: that rung is
    // horizontal.
    void stackSlots() {
        slot_.assign(n_, 0);
        slots_.assign(size_t(rows_), 1);
        for (NodeId id : backward_) {
            for (NodeId in : inputs_[id])
                if (in < id && sides_[in] == LadderSide::Backward && depth_[in] == depth_[id])
                    slot_[id] = std::max(slot_[id], slot_[in] + 1);
            slots_[size_t(depth_[id])] = std::max(slots_[size_t(depth_[id])], slot_[id] + 1);
        }
        for (NodeId id : forward_) {
            int best = INT32_MAX;
            for (NodeId user : users_[id])
                if (sides_[user] == LadderSide::Backward && depth_[user] == row_[id])
                    best = std::min(best, slot_[user]);
            slot_[id] = best == INT32_MAX ? 0 : best;
        }
        slotBase_.assign(size_t(rows_) + 1, 0);
        for (int r = 0; r < rows_; ++r)
            slotBase_[size_t(r) + 1] = slotBase_[size_t(r)] + size_t(slots_[size_t(r)]);
    }

    int rowOf(NodeId id) const { return sides_[id] == LadderSide::Forward ? row_[id] : depth_[id]; }
    // Slots counted from the top: row 0's highest slot first.
    size_t slotIndex(NodeId id) const {
        const int r = rowOf(id);
        return slotBase_[size_t(r)] + size_t(slots_[size_t(r)] - 1 - slot_[id]);
    }

    // Each slot's centre y, as tall as its tallest node; `bottom` is where the last one ends.
    std::vector<double> slotCentres(double& bottom) const {
        std::vector<double> slotHeight(slotBase_.back(), 0);
        for (NodeId id = 0; id < n_; ++id)
            if (sides_[id] != LadderSide::Output && rowOf(id) >= 0) {
                double& h = slotHeight[slotIndex(id)];
                h = std::max(h, sizes_[id].height);
            }
        std::vector<double> slotY(slotHeight.size());
        double y = 0;
        for (size_t s = 0; s < slotHeight.size(); ++s) {
            const double h = slotHeight[s] > 0 ? slotHeight[s] : 36;
            slotY[s] = y + h / 2;
            y += h + options_.rankSeparation;
        }
        bottom = std::max(0.0, y - options_.rankSeparation);
        return slotY;
    }

    // x: each column's layered order within each slot, packed (sunk values joined other rows); the backward
    // right of the forward and the gutter; the output (and anything else) above the backward column, where
    // the gradients leave.
    void placeColumns(LayoutResult& result, const std::vector<double>& slotY, const LayoutResult& fLaid,
                      const std::vector<uint32_t>& fLocal, const LayoutResult& bLaid,
                      const std::vector<uint32_t>& bLocal) const {
        std::vector<double> desired(n_, 0);
        std::vector<std::vector<NodeId>> forwardSlots(slotY.size()), backwardSlots(slotY.size());
        for (NodeId id : forward_) {
            desired[id] = fLaid.nodes[fLocal[id]].x;
            forwardSlots[slotIndex(id)].push_back(id);
        }
        for (NodeId id : backward_) {
            desired[id] = bLaid.nodes[bLocal[id]].x;
            backwardSlots[slotIndex(id)].push_back(id);
        }
        for (auto* slotsOfSide : {&forwardSlots, &backwardSlots})
            for (auto& members : *slotsOfSide)
                packRow(members, desired, sizes_, options_.nodeSeparation, result.nodes);
        double fRight = 0, bLeft = 1e300;
        for (NodeId id : forward_) {
            fRight = std::max(fRight, result.nodes[id].x + sizes_[id].width / 2);
            result.nodes[id].y = slotY[slotIndex(id)];
        }
        for (NodeId id : backward_) {
            bLeft = std::min(bLeft, result.nodes[id].x - sizes_[id].width / 2);
            result.nodes[id].y = slotY[slotIndex(id)];
        }
        const double shift = backward_.empty() ? 0 : fRight + kGutter - bLeft;
        for (NodeId id : backward_)
            result.nodes[id].x += shift;
        double cursor = backward_.empty() ? 0 : bLeft + shift;
        for (NodeId id : others_) {
            result.nodes[id].x = cursor + sizes_[id].width / 2;
            result.nodes[id].y = -sizes_[id].height / 2 - options_.rankSeparation;
            cursor += sizes_[id].width + options_.nodeSeparation;
        }
    }

    // Frames around their members (children first), then everything moved into positive coordinates.
    void frameAndShift(LayoutResult& result, double bottom) const {
        const auto& clusters = options_.clusters;
        result.clusters.assign(clusters.size(), NodePlacement{});
        std::vector<std::array<double, 4>> box(clusters.size(), {1e300, 1e300, -1e300, -1e300});
        const auto grow = [](std::array<double, 4>& b, double l, double t, double r, double bt) {
            b = {std::min(b[0], l), std::min(b[1], t), std::max(b[2], r), std::max(b[3], bt)};
        };
        for (size_t c = clusters.size(); c-- > 0;) {
            for (NodeId id : clusters[c].nodes)
                if (id < n_) {
                    const NodePlacement& p = result.nodes[id];
                    grow(box[c], p.x - p.width / 2, p.y - p.height / 2, p.x + p.width / 2,
                         p.y + p.height / 2);
                }
            if (box[c][0] > box[c][2])
                continue;
            box[c] = {box[c][0] - kFramePad, box[c][1] - kFrameTitle, box[c][2] + kFramePad,
                      box[c][3] + kFramePad};
            const int32_t parent = clusters[c].parent;
            if (parent >= 0 && size_t(parent) < c)
                grow(box[size_t(parent)], box[c][0], box[c][1], box[c][2], box[c][3]);
        }
        std::array<double, 4> all = {0, 0, 0, bottom};
        for (const NodePlacement& p : result.nodes)
            grow(all, p.x - p.width / 2, p.y - p.height / 2, p.x + p.width / 2, p.y + p.height / 2);
        for (const auto& b : box)
            if (b[0] <= b[2])
                grow(all, b[0], b[1], b[2], b[3]);
        const double minX = all[0], minY = all[1];
        for (NodePlacement& p : result.nodes) {
            p.x -= minX;
            p.y -= minY;
        }
        for (size_t c = 0; c < clusters.size(); ++c)
            if (box[c][0] <= box[c][2])
                result.clusters[c] = {(box[c][0] + box[c][2]) / 2 - minX, (box[c][1] + box[c][3]) / 2 - minY,
                                      box[c][2] - box[c][0], box[c][3] - box[c][1]};
        result.width = all[2] - minX;
        result.height = all[3] - minY;
    }

    const std::vector<NodeSize>& sizes_;
    const LayoutOptions& options_;
    const std::atomic<bool>* cancel_;
    size_t n_;
    std::vector<LadderSide> sides_;
    std::vector<std::pair<NodeId, NodeId>> edges_;
    std::vector<std::vector<NodeId>> inputs_, users_;
    std::vector<NodeId> forward_, backward_, others_;
    int rows_ = 1;
    std::vector<int> row_;   // a forward node's row
    std::vector<int> depth_; // a backward node's row
    std::vector<int> slot_;  // within its row, from the bottom
    std::vector<int> slots_; // per row
    std::vector<size_t> slotBase_;
};

std::optional<LayoutResult> rowLadder(const Graph& graph, const std::vector<NodeSize>& sizes,
                                      const LayoutOptions& options, const std::atomic<bool>* cancel) {
    return RowLadder(graph, sizes, options, cancel).run();
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
class BlockLadder {
public:
    BlockLadder(const Graph& graph, const std::vector<NodeSize>& sizes, const LayoutOptions& options,
                const std::vector<LadderSide>& sides, std::vector<Block> blocks,
                const std::atomic<bool>* cancel)
        : sizes_(sizes), options_(options), sides_(sides), cancel_(cancel), n_(graph.size()),
          edges_(graphEdges(graph)), inputs_(n_), blocks_(std::move(blocks)), blockOf_(n_, -1) {
        for (auto [from, to] : edges_)
            inputs_[to].push_back(from);
        for (size_t b = 0; b < blocks_.size(); ++b)
            for (NodeId id : blocks_[b].members)
                blockOf_[id] = int64_t(b);
    }

    std::optional<LayoutResult> run() {
        bool provisional = false;
        for (size_t b = 0; b < blocks_.size(); ++b) { // children first
            blocks_[b].inside = layOutBlock(localInputsOf(b), itemSizesOf(b), options_, cancel_, provisional);
            if (!blocks_[b].inside)
                return std::nullopt;
        }
        const Graph outerGraph = standInGraph(outerInputs(), "o");
        const LayoutOptions outer = outerOptions();
        auto placed = rowLadder(outerGraph, outer.sizes, outer, cancel_);
        if (!placed)
            return std::nullopt;

        LayoutResult result;
        result.algorithm = LayoutAlgorithm::Ladder;
        result.provisional = provisional;
        result.width = placed->width;
        result.height = placed->height;
        result.nodes.resize(n_);
        result.clusters.assign(options_.clusters.size(), NodePlacement{});
        for (size_t c = 0; c < options_.clusters.size(); ++c)
            if (outerCluster_[c] >= 0)
                result.clusters[c] = placed->clusters[size_t(outerCluster_[c])];
        placeBlocks(*placed, result);
        for (NodeId id = 0; id < n_; ++id) {
            const int64_t b = blockOf_[id];
            if (b < 0) {
                result.nodes[id] = placed->nodes[outerOf_[id]];
                continue;
            }
            const NodePlacement& p = blocks_[size_t(b)].inside->nodes[*itemOf(id, size_t(b))];
            const Point centre = toView(size_t(b), {p.x, p.y});
            result.nodes[id] = {centre.x, centre.y, sizes_[id].width, sizes_[id].height};
        }
        routeEdges(result);
        if (cancelled(cancel_))
            return std::nullopt;
        return result;
    }

private:
    static NodeSize boxSize(const LayoutResult& inside) {
        return NodeSize{inside.width + 2 * kFramePad, inside.height + kFrameTitle + kFramePad};
    }

    // The item node `id` is of block b: a member, or the block inside b holding it.
    std::optional<size_t> itemOf(NodeId id, size_t b) const {
        const Block& block = blocks_[b];
        int64_t inner = blockOf_[id];
        if (inner == int64_t(b))
            return size_t(std::lower_bound(block.members.begin(), block.members.end(), id) -
                          block.members.begin());
        while (inner >= 0 && blocks_[size_t(inner)].parent != int64_t(b))
            inner = blocks_[size_t(inner)].parent;
        if (inner < 0)
            return std::nullopt;
        const auto at = std::find(block.children.begin(), block.children.end(), size_t(inner));
        return block.members.size() + size_t(at - block.children.begin());
    }

    // A block's column: that of its first member, or of the first block inside.
    LadderSide columnOf(const Block& block) const {
        const Block* b = &block;
        while (b->members.empty())
            b = &blocks_[b->children.front()];
        return sides_[b->members.front()];
    }

    // Block b's items: its member nodes, then the boxes of the blocks inside (laid out already).
    std::vector<NodeSize> itemSizesOf(size_t b) const {
        const Block& block = blocks_[b];
        std::vector<NodeSize> itemSizes;
        itemSizes.reserve(block.members.size() + block.children.size());
        for (NodeId id : block.members)
            itemSizes.push_back(sizes_[id]);
        for (size_t child : block.children)
            itemSizes.push_back(boxSize(*blocks_[child].inside));
        return itemSizes;
    }

    // Per item of block b, the items it reads.
    std::vector<std::vector<NodeId>> localInputsOf(size_t b) const {
        const Block& block = blocks_[b];
        std::vector<std::vector<NodeId>> localInputs(block.members.size() + block.children.size());
        const auto addInput = [&](size_t to, NodeId fromNode) {
            const std::optional<size_t> from = itemOf(fromNode, b);
            if (from && *from != to &&
                std::find(localInputs[to].begin(), localInputs[to].end(), NodeId(*from)) ==
                    localInputs[to].end())
                localInputs[to].push_back(NodeId(*from));
        };
        for (size_t i = 0; i < block.members.size(); ++i)
            for (NodeId in : inputs_[block.members[i]])
                addInput(i, in);
        for (auto [from, to] : edges_)
            if (const std::optional<size_t> item = itemOf(to, b); item && *item >= block.members.size())
                addInput(*item, from);
        return localInputs;
    }

    // The outer graph: nodes outside blocks and one box per outermost block, in the order of their first
    // node. Fills outerOf_ (per node) and outerThing_ (per outer node: >= 0 a node, < 0 block -1 - b).
    std::vector<std::vector<NodeId>> outerInputs() {
        outerOf_.assign(n_, UINT32_MAX);
        outerOfBlock_.assign(blocks_.size(), UINT32_MAX);
        for (NodeId id = 0; id < n_; ++id) {
            int64_t b = blockOf_[id];
            while (b >= 0 && blocks_[size_t(b)].parent >= 0)
                b = blocks_[size_t(b)].parent;
            if (b >= 0 && outerOfBlock_[size_t(b)] != UINT32_MAX) {
                outerOf_[id] = outerOfBlock_[size_t(b)];
                continue;
            }
            outerOf_[id] = uint32_t(outerThing_.size());
            if (b >= 0)
                outerOfBlock_[size_t(b)] = outerOf_[id];
            outerThing_.push_back(b >= 0 ? -1 - b : int64_t(id));
        }
        std::vector<std::vector<NodeId>> inputs(outerThing_.size());
        for (auto [from, to] : edges_) {
            const uint32_t a = outerOf_[from], z = outerOf_[to];
            auto& in = inputs[z];
            if (a != z && std::find(in.begin(), in.end(), a) == in.end())
                in.push_back(a);
        }
        return inputs;
    }

    // The ladder's options for the outer graph: sizes and sides per outer node; frames that are blocks are
    // the blocks' boxes, the others keep their members, outermost blocks as one each. Called after outerInputs().
    LayoutOptions outerOptions() {
        LayoutOptions outer = options_;
        outer.sizes.clear();
        outer.sides.clear();
        outer.sides.reserve(outerThing_.size());
        outer.sizes.reserve(outerThing_.size());
        for (int64_t thing : outerThing_) {
            if (thing >= 0) {
                outer.sizes.push_back(sizes_[size_t(thing)]);
                outer.sides.push_back(sides_[size_t(thing)]);
                continue;
            }
            const Block& block = blocks_[size_t(-1 - thing)];
            outer.sizes.push_back(boxSize(*block.inside));
            outer.sides.push_back(columnOf(block));
        }
        outerCluster_.assign(options_.clusters.size(), -1);
        std::vector<char> isBlock(options_.clusters.size(), 0);
        for (const Block& block : blocks_)
            isBlock[block.cluster] = 1;
        outer.clusters.clear();
        for (size_t c = 0; c < options_.clusters.size(); ++c) {
            if (isBlock[c])
                continue;
            const LayoutCluster& cluster = options_.clusters[c];
            LayoutCluster mapped;
            mapped.title = cluster.title;
            mapped.parent = cluster.parent >= 0 && size_t(cluster.parent) < c
                                ? outerCluster_[size_t(cluster.parent)]
                                : -1;
            for (NodeId id : cluster.nodes)
                if (id < n_ && blockOf_[id] < 0)
                    mapped.nodes.push_back(outerOf_[id]);
            outerCluster_[c] = int32_t(outer.clusters.size());
            outer.clusters.push_back(std::move(mapped));
        }
        for (size_t b = 0; b < blocks_.size(); ++b)
            if (const int32_t parent = options_.clusters[blocks_[b].cluster].parent;
                blocks_[b].parent < 0 && parent >= 0 && !isBlock[size_t(parent)] &&
                outerCluster_[size_t(parent)] >= 0)
                outer.clusters[size_t(outerCluster_[size_t(parent)])].nodes.push_back(outerOfBlock_[b]);
        return outer;
    }

    // A point of block b's layout in the view: from the block's top-left; a backward block upside down, the
    // backward column runs upwards.
    Point toView(size_t b, Point p) const {
        const double y = upwards_[b] ? blocks_[b].inside->height - p.y : p.y;
        return Point{origin_[b].x + p.x, origin_[b].y + y};
    }

    // Boxes from the outside in: an outermost block's from the ladder, an inner one's from its parent's
    // items.
    void placeBlocks(const LayoutResult& placed, LayoutResult& result) {
        origin_.assign(blocks_.size(), Point{});
        upwards_.assign(blocks_.size(), 0);
        for (size_t b = blocks_.size(); b-- > 0;) {
            const Block& block = blocks_[b];
            NodePlacement box;
            if (block.parent < 0) {
                box = placed.nodes[outerOfBlock_[b]];
            } else {
                const Block& parent = blocks_[size_t(block.parent)];
                const size_t item = parent.members.size() +
                                    size_t(std::find(parent.children.begin(), parent.children.end(), b) -
                                           parent.children.begin());
                const NodePlacement& p = parent.inside->nodes[item];
                const Point centre = toView(size_t(block.parent), {p.x, p.y});
                const NodeSize size = boxSize(*block.inside);
                box = {centre.x, centre.y, size.width, size.height};
            }
            result.clusters[block.cluster] = box;
            origin_[b] = {box.x - box.width / 2 + kFramePad, box.y - box.height / 2 + kFrameTitle};
            upwards_[b] = columnOf(block) == LadderSide::Backward;
        }
    }

    // Edges between two members of one block keep the block's routes; the others are the ladder's.
    void routeEdges(LayoutResult& result) const {
        std::vector<std::vector<const EdgeRoute*>> routesFrom(n_);
        for (size_t b = 0; b < blocks_.size(); ++b)
            for (const EdgeRoute& route : blocks_[b].inside->edges)
                if (route.from < blocks_[b].members.size() && route.to < blocks_[b].members.size())
                    routesFrom[blocks_[b].members[route.from]].push_back(&route);
        result.edges.reserve(edges_.size());
        for (auto [from, to] : edges_) {
            const int64_t b = blockOf_[from];
            const EdgeRoute* inside = nullptr;
            if (b >= 0 && b == blockOf_[to])
                for (const EdgeRoute* route : routesFrom[from])
                    if (blocks_[size_t(b)].members[route->to] == to)
                        inside = route;
            if (!inside) {
                result.edges.push_back(
                    ladderRoute(from, to, sides_[from], sides_[to], result.nodes[from], result.nodes[to]));
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
    }

    const std::vector<NodeSize>& sizes_;
    const LayoutOptions& options_;
    const std::vector<LadderSide>& sides_;
    const std::atomic<bool>* cancel_;
    size_t n_;
    std::vector<std::pair<NodeId, NodeId>> edges_;
    std::vector<std::vector<NodeId>> inputs_;
    std::vector<Block> blocks_;
    std::vector<int64_t> blockOf_; // each node's innermost block
    std::vector<uint32_t> outerOf_, outerOfBlock_;
    std::vector<int64_t> outerThing_;
    std::vector<int32_t> outerCluster_; // per frame: its frame in the outer graph, -1 for blocks
    std::vector<Point> origin_;
    std::vector<char> upwards_;
};

std::optional<LayoutResult> blockLadder(const Graph& graph, const std::vector<NodeSize>& sizes,
                                        const LayoutOptions& options, const std::vector<LadderSide>& sides,
                                        const std::atomic<bool>* cancel) {
    std::vector<Block> blocks = findBlocks(options, sides, graph.size());
    if (blocks.empty())
        return rowLadder(graph, sizes, options, cancel);
    return BlockLadder(graph, sizes, options, sides, std::move(blocks), cancel).run();
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
