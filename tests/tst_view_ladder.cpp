// views/layout/LadderLayout: forward down the left, backward up the right, saved activations as horizontal
// rungs. Expectations come from the graphs themselves (hand-counted, or torch's own saved set), never from
// the layout's rows.
#include "testutil.h"

#include "graph/GraphStats.h"
#include "layout/Grouping.h"
#include "layout/LadderLayout.h"
#include "layout/LayoutRunner.h"

#include <nlohmann/json.hpp>

#include <QElapsedTimer>
#include <QSignalSpy>

#include <numeric>
#include <set>

using namespace jointscope;
using namespace jointscope::layout;
using namespace jointscope::test;

namespace {

// relu → mul → sum, and its backward by hand: a and primals_2 are the values the backward reads.
Graph handGraph() {
    Graph g;
    auto add = [&](std::string name, NodeOp op, std::string target, std::vector<Value> args = {}) {
        return g.addNode(makeNode(std::move(name), op, std::move(target), std::move(args)));
    };
    const NodeId x = add("primals_1", NodeOp::Placeholder, "primals_1");
    const NodeId w = add("primals_2", NodeOp::Placeholder, "primals_2");
    const NodeId t = add("tangents_1", NodeOp::Placeholder, "tangents_1");
    const NodeId a = add("relu", NodeOp::CallFunction, "torch.ops.aten.relu.default", {Value::nodeRef(x)});
    const NodeId b =
        add("mul", NodeOp::CallFunction, "torch.ops.aten.mul.Tensor", {Value::nodeRef(a), Value::nodeRef(w)});
    const NodeId c = add("sum_1", NodeOp::CallFunction, "torch.ops.aten.sum.default", {Value::nodeRef(b)});
    const NodeId g1 =
        add("expand", NodeOp::CallFunction, "torch.ops.aten.expand.default", {Value::nodeRef(t)});
    const NodeId g2 = add("mul_1", NodeOp::CallFunction, "torch.ops.aten.mul.Tensor",
                          {Value::nodeRef(g1), Value::nodeRef(w)});
    const NodeId g3 =
        add("threshold_backward", NodeOp::CallFunction, "torch.ops.aten.threshold_backward.default",
            {Value::nodeRef(g2), Value::nodeRef(a)});
    const NodeId g4 = add("mul_2", NodeOp::CallFunction, "torch.ops.aten.mul.Tensor",
                          {Value::nodeRef(g1), Value::nodeRef(a)});
    Node out = makeNode("output", NodeOp::Output, "output");
    out.args = {Value::list({Value::nodeRef(c), Value::nodeRef(g3), Value::nodeRef(g4)})};
    g.addNode(std::move(out));
    g.computeUsers();
    return g;
}

// `g` collapsed with every group open, and the ladder's options for it.
struct OpenLadder {
    std::shared_ptr<const GroupTree> tree;
    CollapsedView view;
    Graph layoutGraph;
    LayoutOptions options;
    // Per frame: not a phase, no frame inside, two or more members, all of one column.
    std::vector<char> leafOneColumn;
    std::vector<int32_t> frameOfItem;

    bool sameBlock(NodeId a, NodeId b) const {
        const int32_t f = frameOfItem[a];
        return f >= 0 && f == frameOfItem[b] && leafOneColumn[size_t(f)];
    }
};

OpenLadder openLadder(const Graph& g) {
    OpenLadder open;
    open.tree = std::make_shared<const GroupTree>(buildGroupTree(g));
    open.view = collapseView(g, open.tree, std::vector<char>(open.tree->groups.size(), 1));
    open.layoutGraph = viewLayoutGraph(open.view);
    open.options.algorithm = LayoutAlgorithm::Ladder;
    open.options.sides = ladderSides(g, open.view);
    open.options.clusters = viewClusters(open.view);
    const auto& clusters = open.options.clusters;
    open.frameOfItem.assign(open.view.items.size(), -1);
    open.leafOneColumn.assign(clusters.size(), 1);
    for (size_t c = 0; c < clusters.size(); ++c) {
        if (clusters[c].parent >= 0)
            open.leafOneColumn[size_t(clusters[c].parent)] = 0;
        for (NodeId id : clusters[c].nodes)
            open.frameOfItem[id] = int32_t(c);
    }
    for (size_t c = 0; c < clusters.size(); ++c) {
        const auto& members = clusters[c].nodes;
        const GroupKind kind = open.tree->groups[size_t(open.view.frames[c])].kind;
        if (members.size() < 2 || kind == GroupKind::Phase)
            open.leafOneColumn[c] = 0;
        for (NodeId id : members)
            if (open.options.sides[id] != open.options.sides[members[0]] ||
                open.options.sides[id] == LadderSide::Output)
                open.leafOneColumn[c] = 0;
    }
    return open;
}

void expectNoOverlaps(const LayoutResult& r) {
    std::vector<size_t> order(r.nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return r.nodes[a].x - r.nodes[a].width / 2 < r.nodes[b].x - r.nodes[b].width / 2;
    });
    for (size_t i = 0; i < order.size(); ++i) {
        const NodePlacement& a = r.nodes[order[i]];
        for (size_t j = i + 1; j < order.size(); ++j) {
            const NodePlacement& b = r.nodes[order[j]];
            if (b.x - b.width / 2 >= a.x + a.width / 2)
                break;
            const bool apart = std::abs(a.y - b.y) >= (a.height + b.height) / 2;
            QVERIFY2(apart, qPrintable(QString("boxes %1 and %2 overlap").arg(order[i]).arg(order[j])));
        }
    }
}

// Every forward box left of every backward box.
void expectColumnsApart(const LayoutResult& r, const std::vector<LadderSide>& sides) {
    double forwardRight = -1e300, backwardLeft = 1e300;
    for (size_t i = 0; i < sides.size(); ++i) {
        const NodePlacement& p = r.nodes[i];
        if (sides[i] == LadderSide::Forward)
            forwardRight = std::max(forwardRight, p.x + p.width / 2);
        else if (sides[i] == LadderSide::Backward)
            backwardLeft = std::min(backwardLeft, p.x - p.width / 2);
    }
    QVERIFY(forwardRight < backwardLeft);
}

void expectFramesHoldMembers(const LayoutResult& r, const std::vector<LayoutCluster>& clusters) {
    for (size_t c = 0; c < clusters.size(); ++c)
        for (NodeId id : clusters[c].nodes) {
            const NodePlacement& f = r.clusters[c];
            const NodePlacement& p = r.nodes[id];
            QVERIFY(p.x - p.width / 2 >= f.x - f.width / 2 && p.x + p.width / 2 <= f.x + f.width / 2);
            QVERIFY(p.y - p.height / 2 >= f.y - f.height / 2 && p.y + p.height / 2 <= f.y + f.height / 2);
        }
}

LayoutResult ladderOf(const Graph& g) {
    LayoutOptions options;
    options.algorithm = LayoutAlgorithm::Ladder;
    auto r = computeLayout(g, options);
    if (!r)
        qFatal("ladder layout returned nothing");
    return std::move(*r);
}

// The ladder's promises, checked against the backward mask and the graph's own edges.
void checkLadder(const Graph& g, const LayoutResult& r) {
    QCOMPARE(r.algorithm, LayoutAlgorithm::Ladder);
    QCOMPARE(r.nodes.size(), g.size());
    const std::vector<bool> backward = backwardMask(g);
    double forwardRight = -1e300, backwardLeft = 1e300;
    for (NodeId id = 0; id < g.size(); ++id) {
        if (g.node(id).op == NodeOp::Output)
            continue;
        const NodePlacement& p = r.nodes[id];
        if (backward[id])
            backwardLeft = std::min(backwardLeft, p.x - p.width / 2);
        else
            forwardRight = std::max(forwardRight, p.x + p.width / 2);
    }
    QVERIFY2(forwardRight < backwardLeft, "a forward box reaches into the backward column");
    for (NodeId id = 0; id < g.size(); ++id)
        g.node(id).forEachInput([&](NodeId in) {
            if (g.node(id).op == NodeOp::Output)
                return;
            if (!backward[in] && !backward[id])
                QVERIFY2(r.nodes[id].y > r.nodes[in].y,
                         qPrintable(q(g.node(in).name + " -> " + g.node(id).name + ": forward goes down")));
            if (backward[in] && backward[id])
                QVERIFY2(r.nodes[id].y < r.nodes[in].y,
                         qPrintable(q(g.node(in).name + " -> " + g.node(id).name + ": backward goes up")));
        });
}

// For each saved value, the smallest vertical distance to a backward node reading it: its rung's slope.
std::vector<double> rungDrops(const Graph& g, const LayoutResult& r, const std::set<std::string>& saved) {
    const std::vector<bool> backward = backwardMask(g);
    std::vector<double> drops;
    for (NodeId id = 0; id < g.size(); ++id) {
        if (!saved.count(g.node(id).name))
            continue;
        double best = 1e300;
        for (NodeId user : g.node(id).users)
            if (backward[user])
                best = std::min(best, std::abs(r.nodes[user].y - r.nodes[id].y));
        drops.push_back(best);
        if (qEnvironmentVariableIsSet("LADDER_DEBUG") && best >= 1.0) {
            std::string readers;
            for (NodeId user : g.node(id).users)
                if (backward[user])
                    readers += " " + g.node(user).name + "@" + std::to_string(int(r.nodes[user].y));
            qInfo("%s @%d:%s", g.node(id).name.c_str(), int(r.nodes[id].y), readers.c_str());
        }
    }
    return drops;
}

} // namespace

class TestLadder : public QObject {
    Q_OBJECT
private slots:
    void handGraphGeometry() {
        const Graph g = handGraph();
        const LayoutResult r = ladderOf(g);
        checkLadder(g, r);
        // Counted by hand: the backward reads relu and primals_2, each rung level with a reader.
        const auto drops = rungDrops(g, r, {"relu", "primals_2"});
        QCOMPARE(drops.size(), size_t(2));
        for (double drop : drops)
            QVERIFY2(drop < 1.0, qPrintable(QString::number(drop)));
        // Every edge has a route from its producer's box to its user's box.
        QCOMPARE(r.edges.size(), graphEdges(g).size());
        for (const EdgeRoute& e : r.edges)
            QCOMPARE(e.points.size(), size_t(4));
        // The rung relu -> mul_2 runs left to right, flat.
        const NodeId relu = *g.find("relu"), mul2 = *g.find("mul_2");
        for (const EdgeRoute& e : r.edges)
            if (e.from == relu && e.to == mul2) {
                QVERIFY(e.points.back().x > e.points.front().x);
                QVERIFY(std::abs(e.points.back().y - e.points.front().y) < 1.0);
            }
    }

    void gptBlockRungsAgainstTorchSavedSet() {
        const Graph g = loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        const LayoutResult r = ladderOf(g);
        checkLadder(g, r);
        const auto reference =
            nlohmann::json::parse(readFile(sharedPath("graphs/torch-1.13/gpt_block2/reference.json")));
        std::set<std::string> saved;
        for (const auto& name : reference.at("min_cut_saved"))
            saved.insert(name.get<std::string>());
        QCOMPARE(saved.size(), size_t(48));
        // A reader level with two rows is not possible: a saved value whose every reader also reads one of
        // its forward descendants (layer norm's input beside its mean) is exempt, counted from the graph's
        // edges.
        const std::vector<bool> backward = backwardMask(g);
        std::set<std::string> level;
        for (const std::string& name : saved) {
            const NodeId s = *g.find(name);
            std::vector<char> below(g.size(), 0);
            for (NodeId id = s + 1; id < g.size(); ++id)
                if (!backward[id])
                    g.node(id).forEachInput([&](NodeId in) { below[id] |= in == s || below[in]; });
            bool exempt = true;
            for (NodeId user : g.node(s).users) {
                if (!backward[user])
                    continue;
                bool readsDeeper = false;
                g.node(user).forEachInput([&](NodeId in) { readsDeeper |= !backward[in] && below[in]; });
                exempt &= readsDeeper;
            }
            if (!exempt)
                level.insert(name);
        }
        const auto drops = rungDrops(g, r, level);
        QCOMPARE(drops.size(), level.size());
        size_t flat = 0;
        for (double drop : drops)
            flat += drop < 1.0 ? 1 : 0;
        qInfo("%zu of %zu saved values have a horizontal rung (%zu exempt)", flat, drops.size(),
              saved.size() - level.size());
        QVERIFY(level.size() >= saved.size() / 2);
        QVERIFY2(flat == drops.size(), qPrintable(QString("%1 of %2 flat").arg(flat).arg(drops.size())));
    }

    void recomputedSitsOnTheBackwardSide() {
        const Graph g = handGraph();
        std::vector<char> recomputed(g.size(), 0);
        const NodeId relu = *g.find("relu");
        recomputed[relu] = 1;
        LayoutOptions options;
        options.algorithm = LayoutAlgorithm::Ladder;
        options.sides = ladderSides(g, recomputed);
        const auto r = computeLayout(g, options);
        QVERIFY(r);
        const NodeId mul2 = *g.find("mul_2"), x = *g.find("primals_1");
        // relu is now right of every forward node, in the backward column.
        QVERIFY(r->nodes[relu].x - r->nodes[relu].width / 2 > r->nodes[x].x + r->nodes[x].width / 2);
        QVERIFY(r->nodes[relu].x - r->nodes[relu].width / 2 >=
                r->nodes[mul2].x - r->nodes[mul2].width / 2 - 1e3);
        QCOMPARE(options.sides[relu], LadderSide::Backward);
    }

    void collapsedViewUsesGroupSides() {
        const Graph g = loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        auto tree = std::make_shared<const GroupTree>(buildGroupTree(g));
        const CollapsedView view = collapseView(g, tree, initialExpansion(*tree, 400));
        const std::vector<LadderSide> sides = ladderSides(g, view);
        QVERIFY(hasTwoSides(sides));
        LayoutOptions options;
        options.algorithm = LayoutAlgorithm::Ladder;
        options.sides = sides;
        options.clusters = viewClusters(view);
        const Graph layoutGraph = viewLayoutGraph(view);
        const auto r = computeLayout(layoutGraph, options);
        QVERIFY(r);
        QCOMPARE(r->nodes.size(), view.items.size());
        QCOMPARE(r->clusters.size(), view.frames.size());
        expectColumnsApart(*r, sides);
        expectFramesHoldMembers(*r, options.clusters);
    }

    void previewComesBeforeRefinement() {
        if (!graphvizAvailable())
            QSKIP("built without Graphviz: nothing to refine");
        auto g = std::make_shared<const Graph>(loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt"));
        LayoutRunner runner;
        QSignalSpy finished(&runner, &LayoutRunner::finished);
        LayoutOptions options;
        options.preview = true;
        QElapsedTimer clock;
        clock.start();
        const quint64 ticket = runner.start(g, options);
        QVERIFY(finished.wait(30000));
        const qint64 firstMs = clock.elapsed();
        auto first = finished.at(0).at(1).value<std::shared_ptr<const LayoutResult>>();
        QVERIFY(first->provisional);
        QCOMPARE(first->algorithm, LayoutAlgorithm::Layered);
        QCOMPARE(first->nodes.size(), g->size());
        QVERIFY(runner.refining());
        runner.waitForDone();
        QCOMPARE(finished.count(), 2);
        QCOMPARE(finished.at(1).at(0).toULongLong(), ticket);
        auto refined = finished.at(1).at(1).value<std::shared_ptr<const LayoutResult>>();
        QVERIFY(!refined->provisional);
        QCOMPARE(refined->algorithm, LayoutAlgorithm::Graphviz);
        qInfo("first frame after %lld ms, refined after %lld ms", firstMs, clock.elapsed());
    }

    void supersededRefinementIsCancelled() {
        if (!graphvizAvailable())
            QSKIP("built without Graphviz: nothing to refine");
        auto g = std::make_shared<const Graph>(loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt"));
        auto small = std::make_shared<const Graph>(handGraph());
        LayoutRunner runner;
        QSignalSpy finished(&runner, &LayoutRunner::finished);
        QSignalSpy cancelled(&runner, &LayoutRunner::cancelled);
        LayoutOptions options;
        options.preview = true;
        const quint64 older = runner.start(g, options);
        QVERIFY(finished.wait(30000));
        QVERIFY(runner.refining());
        options.algorithm = LayoutAlgorithm::Ladder;
        const quint64 newer = runner.start(small, options);
        // The older request's refinement reports cancelled at once and never delivers.
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(cancelled.at(0).at(0).toULongLong(), older);
        runner.waitForDone();
        int olderResults = 0, newerResults = 0;
        for (const auto& args : finished)
            (args.at(0).toULongLong() == older ? olderResults : newerResults) += 1;
        QCOMPARE(olderResults, 1); // the provisional one only
        QCOMPARE(newerResults, 1); // the ladder is final at once
        auto last = finished.last().at(1).value<std::shared_ptr<const LayoutResult>>();
        QCOMPARE(finished.last().at(0).toULongLong(), newer);
        QCOMPARE(last->algorithm, LayoutAlgorithm::Ladder);
        QVERIFY(!last->provisional);
    }

    // Open layers are blocks laid out by dot (issue 15): both GPT blocks of gpt_block2 are the same layer, so
    // their frames hold the same picture, and dot ran once per side and shape.
    void openLayersAreBlocksLaidOutOnce() {
        if (!graphvizAvailable())
            QSKIP("built without Graphviz: frames are laid out by the layered layout");
        const Graph g = loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        const OpenLadder open = openLadder(g);
        auto cache = std::make_shared<FrameLayoutCache>();
        LayoutOptions options = open.options;
        options.frameAlgorithm = LayoutAlgorithm::Graphviz;
        options.frameCache = cache;
        const auto r = computeLayout(open.layoutGraph, options);
        QVERIFY(r);
        QVERIFY(!r->provisional);
        QCOMPARE(r->algorithm, LayoutAlgorithm::Ladder);
        QCOMPARE(r->nodes.size(), open.view.items.size());
        // Four layer frames (two layers, each way), all direct members boxes of one column.
        std::vector<size_t> forwardLayers, backwardLayers;
        for (size_t c = 0; c < open.view.frames.size(); ++c) {
            const Group& group = open.tree->groups[size_t(open.view.frames[c])];
            if (group.kind == GroupKind::Layer)
                (open.tree->groups[size_t(group.parent)].label == "forward" ? forwardLayers : backwardLayers)
                    .push_back(c);
        }
        QCOMPARE(forwardLayers.size(), size_t(2));
        QCOMPARE(backwardLayers.size(), size_t(2));
        // The same layer, the same picture: every member at the same place relative to its frame.
        for (const auto& pair : {forwardLayers, backwardLayers}) {
            const auto& a = options.clusters[pair[0]].nodes;
            const auto& b = options.clusters[pair[1]].nodes;
            QCOMPARE(a.size(), b.size());
            const NodePlacement &fa = r->clusters[pair[0]], &fb = r->clusters[pair[1]];
            QCOMPARE(fa.width, fb.width);
            QCOMPARE(fa.height, fb.height);
            for (size_t i = 0; i < a.size(); ++i) {
                QCOMPARE(r->nodes[a[i]].x - fa.x, r->nodes[b[i]].x - fb.x);
                QCOMPARE(r->nodes[a[i]].y - fa.y, r->nodes[b[i]].y - fb.y);
            }
        }
        // Dot ran once for the two forward layers and once for the two backward ones (plus other frames).
        size_t blockFrames = 0;
        for (size_t c = 0; c < options.clusters.size(); ++c)
            blockFrames += open.leafOneColumn[c];
        QVERIFY2(cache->size() <= blockFrames - 2,
                 qPrintable(QString("%1 layouts for %2 frames").arg(cache->size()).arg(blockFrames)));
        // No two boxes overlap, the columns stay apart, and every frame holds its members.
        expectNoOverlaps(*r);
        expectFramesHoldMembers(*r, options.clusters);
        expectColumnsApart(*r, options.sides);
        // Every edge starts on its producer's box and ends on its user's.
        size_t inside = 0;
        for (const EdgeRoute& e : r->edges) {
            QVERIFY(e.points.size() >= 4);
            for (const auto& [end, p] : {std::pair{e.points.front(), r->nodes[e.from]},
                                         std::pair{e.points.back(), r->nodes[e.to]}}) {
                QVERIFY(std::abs(end.x - p.x) <= p.width / 2 + 0.5);
                QVERIFY(std::abs(end.y - p.y) <= p.height / 2 + 0.5);
                // On its border, not inside.
                QVERIFY(std::abs(end.x - p.x) >= p.width / 2 - 0.5 ||
                        std::abs(end.y - p.y) >= p.height / 2 - 0.5);
            }
            inside += open.sameBlock(e.from, e.to);
        }
        QVERIFY(inside > 0);
    }

    // A phase showing closed layer boxes is the ladder's column: its boxes stay on the rows (no block, no
    // dot).
    void closedLayersKeepTheRows() {
        const Graph g = loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        auto tree = std::make_shared<const GroupTree>(buildGroupTree(g));
        std::vector<char> phases(tree->groups.size(), 0);
        for (size_t i = 0; i < tree->groups.size(); ++i)
            phases[i] = tree->groups[i].kind == GroupKind::Root || tree->groups[i].kind == GroupKind::Phase;
        const CollapsedView view = collapseView(g, tree, phases);
        LayoutOptions options;
        options.algorithm = LayoutAlgorithm::Ladder;
        options.sides = ladderSides(g, view);
        options.clusters = viewClusters(view);
        QCOMPARE(options.clusters.size(), size_t(2));
        for (const LayoutCluster& cluster : options.clusters)
            QVERIFY2(!cluster.block, cluster.title.c_str());
        const Graph layoutGraph = viewLayoutGraph(view);
        const auto rows = computeLayout(layoutGraph, options);
        options.frameAlgorithm = LayoutAlgorithm::Graphviz;
        options.frameCache = std::make_shared<FrameLayoutCache>();
        const auto again = computeLayout(layoutGraph, options);
        QVERIFY(rows && again);
        QCOMPARE(options.frameCache->size(), size_t(0));
        for (size_t i = 0; i < rows->nodes.size(); ++i) {
            QCOMPARE(again->nodes[i].x, rows->nodes[i].x);
            QCOMPARE(again->nodes[i].y, rows->nodes[i].y);
        }
        // Each forward layer box has a backward box level with it: the ladder's rows, not a block's.
        size_t level = 0;
        for (uint32_t a = 0; a < view.items.size(); ++a)
            for (uint32_t b = 0; b < view.items.size(); ++b)
                level += view.items[a].group >= 0 && view.items[b].group >= 0 &&
                         options.sides[a] == LadderSide::Forward &&
                         options.sides[b] == LadderSide::Backward &&
                         tree->groups[size_t(view.items[a].group)].kind == GroupKind::Layer &&
                         tree->groups[size_t(view.items[a].group)].label ==
                             tree->groups[size_t(view.items[b].group)].label &&
                         rows->nodes[a].y == rows->nodes[b].y;
        QCOMPARE(level, size_t(2));
    }

    // The runner's first frame of an open ladder comes without dot; dot refines it once, and a second request
    // for the same view is final at once, from the cache.
    void openLadderRefinedThenCached() {
        if (!graphvizAvailable())
            QSKIP("built without Graphviz: nothing to refine");
        auto g = std::make_shared<const Graph>(loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt"));
        auto tree = std::make_shared<const GroupTree>(buildGroupTree(*g));
        LayoutRunner runner;
        QSignalSpy finished(&runner, &LayoutRunner::finished);
        LayoutOptions options;
        options.algorithm = LayoutAlgorithm::Ladder;
        options.frameAlgorithm = LayoutAlgorithm::Graphviz;
        options.preview = true;
        const std::vector<char> all(tree->groups.size(), 1);
        runner.startCollapsed(g, tree, all, 400, {}, options);
        runner.waitForDone();
        QCOMPARE(finished.count(), 2);
        QVERIFY(finished.at(0).at(1).value<std::shared_ptr<const LayoutResult>>()->provisional);
        QVERIFY(!finished.at(1).at(1).value<std::shared_ptr<const LayoutResult>>()->provisional);
        const size_t cached = runner.frameCache().size();
        QVERIFY(cached > 0);
        runner.startCollapsed(g, tree, all, 400, {}, options);
        runner.waitForDone();
        QCOMPARE(finished.count(), 3);
        QVERIFY(!finished.at(2).at(1).value<std::shared_ptr<const LayoutResult>>()->provisional);
        QCOMPARE(runner.frameCache().size(), cached);
    }

    // A receiver of the first frame that asks for another layout (the GUI revealing a node in a closed group)
    // gets no refinement of the old request and no cancelled() under the new ticket.
    void requestFromFirstFrameIsNotCancelledByTheOld() {
        if (!graphvizAvailable())
            QSKIP("built without Graphviz: nothing to refine");
        auto g = std::make_shared<const Graph>(loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt"));
        LayoutRunner runner;
        QSignalSpy finished(&runner, &LayoutRunner::finished);
        QSignalSpy cancelled(&runner, &LayoutRunner::cancelled);
        LayoutOptions options;
        options.preview = true;
        quint64 newer = 0;
        const quint64 older = runner.start(g, options);
        connect(&runner, &LayoutRunner::finished, &runner, [&](quint64 ticket) {
            if (ticket == older)
                newer = runner.start(g, options);
        });
        runner.waitForDone();
        QVERIFY(newer != 0);
        for (const auto& args : cancelled)
            QVERIFY2(args.at(0).toULongLong() != newer, "the new request reported cancelled");
        int olderResults = 0, newerResults = 0;
        for (const auto& args : finished)
            (args.at(0).toULongLong() == older ? olderResults : newerResults) += 1;
        QCOMPARE(olderResults, 1); // its first frame only: never refined
        QCOMPARE(newerResults, 2); // its first frame and its refinement
        QVERIFY(!finished.last().at(1).value<std::shared_ptr<const LayoutResult>>()->provisional);
    }

    void cancelledLadderReturnsNothing() {
        const Graph g = handGraph();
        std::atomic<bool> flag{true};
        LayoutOptions options;
        options.algorithm = LayoutAlgorithm::Ladder;
        QVERIFY(!computeLayout(g, options, &flag));
    }
};

QTEST_GUILESS_MAIN(TestLadder)
#include "tst_view_ladder.moc"
