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
        double forwardRight = -1e300, backwardLeft = 1e300;
        for (size_t i = 0; i < sides.size(); ++i) {
            const NodePlacement& p = r->nodes[i];
            if (sides[i] == LadderSide::Forward)
                forwardRight = std::max(forwardRight, p.x + p.width / 2);
            else if (sides[i] == LadderSide::Backward)
                backwardLeft = std::min(backwardLeft, p.x - p.width / 2);
        }
        QVERIFY(forwardRight < backwardLeft);
        // A frame holds every one of its members.
        for (size_t c = 0; c < options.clusters.size(); ++c)
            for (NodeId id : options.clusters[c].nodes) {
                const NodePlacement& f = r->clusters[c];
                const NodePlacement& p = r->nodes[id];
                QVERIFY(p.x - p.width / 2 >= f.x - f.width / 2 && p.x + p.width / 2 <= f.x + f.width / 2);
                QVERIFY(p.y - p.height / 2 >= f.y - f.height / 2 && p.y + p.height / 2 <= f.y + f.height / 2);
            }
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
