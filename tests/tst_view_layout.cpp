// views/layout: Graphviz dot and the layered fallback place every node and route every edge;
// cancelled layouts return nothing; LayoutRunner works off the UI thread.
#include "testutil.h"

#include "io/GraphFile.h"
#include "layout/GraphLayout.h"
#include "layout/LayoutRunner.h"

#include <QElapsedTimer>
#include <QSignalSpy>

#include <set>

using namespace jointscope;
using namespace jointscope::layout;
using namespace jointscope::test;

Q_DECLARE_METATYPE(jointscope::layout::LayoutAlgorithm)

namespace {

Graph loadGpt() {
    return loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
}

// A chain of `layers` layers of `width` nodes, each reading two nodes of the layer above.
Graph syntheticGraph(int layers, int width) {
    Graph g;
    for (int l = 0; l < layers; ++l)
        for (int i = 0; i < width; ++i) {
            Node n;
            n.name = "n" + std::to_string(l) + "_" + std::to_string(i);
            n.op = l == 0 ? NodeOp::Placeholder : NodeOp::CallFunction;
            n.target = l == 0 ? Target::name(n.name) : Target::parseFunction("torch.ops.aten.add.Tensor");
            if (l > 0) {
                const NodeId above = NodeId((l - 1) * width);
                n.args = {Value::nodeRef(above + NodeId(i)),
                          Value::nodeRef(above + NodeId((i * 7 + 3) % width))};
            }
            g.addNode(std::move(n));
        }
    g.computeUsers();
    return g;
}

// Distinct (input, user) pairs counted straight from the arguments.
std::set<std::pair<NodeId, NodeId>> expectedEdges(const Graph& g) {
    std::set<std::pair<NodeId, NodeId>> edges;
    for (NodeId id = 0; id < g.size(); ++id)
        g.node(id).forEachInput([&](NodeId in) { edges.insert({in, id}); });
    return edges;
}

void checkComplete(const Graph& g, const LayoutResult& r) {
    QCOMPARE(r.nodes.size(), g.size());
    for (const NodePlacement& p : r.nodes) {
        QVERIFY(p.width > 0 && p.height > 0);
        QVERIFY(p.x - p.width / 2 >= -1 && p.x + p.width / 2 <= r.width + 1);
        QVERIFY(p.y - p.height / 2 >= -1 && p.y + p.height / 2 <= r.height + 1);
    }
    const auto expected = expectedEdges(g);
    QCOMPARE(r.edges.size(), expected.size());
    for (const EdgeRoute& e : r.edges) {
        QVERIFY(expected.count({e.from, e.to}) == 1);
        QVERIFY(e.points.size() >= 4);
        QCOMPARE((e.points.size() - 1) % 3, size_t(0));
    }
}

int overlaps(const LayoutResult& r) {
    int count = 0;
    for (size_t i = 0; i < r.nodes.size(); ++i)
        for (size_t j = i + 1; j < r.nodes.size(); ++j) {
            const auto& a = r.nodes[i];
            const auto& b = r.nodes[j];
            if (std::abs(a.x - b.x) < (a.width + b.width) / 2 - 0.5 &&
                std::abs(a.y - b.y) < (a.height + b.height) / 2 - 0.5)
                ++count;
        }
    return count;
}

} // namespace

class TestLayout : public QObject {
    Q_OBJECT
private slots:
    // Either layout places the GPT block whole and without overlaps, every user below each of its inputs
    // (dot ranks top-down too).
    void gptBlockTopDown_data() {
        QTest::addColumn<LayoutAlgorithm>("algorithm");
        QTest::newRow("graphviz") << LayoutAlgorithm::Graphviz;
        QTest::newRow("layered") << LayoutAlgorithm::Layered;
    }
    void gptBlockTopDown() {
        QFETCH(LayoutAlgorithm, algorithm);
        if (algorithm == LayoutAlgorithm::Graphviz && !graphvizAvailable())
            QSKIP("built without Graphviz");
        const Graph g = loadGpt();
        LayoutOptions options;
        options.algorithm = algorithm;
        auto r = computeLayout(g, options);
        QVERIFY(r.has_value());
        QCOMPARE(r->algorithm, algorithm);
        checkComplete(g, *r);
        QCOMPARE(overlaps(*r), 0);
        for (const EdgeRoute& e : r->edges)
            QVERIFY(r->nodes[e.to].y > r->nodes[e.from].y);
        if (algorithm == LayoutAlgorithm::Layered) {
            // Edges start at the input's box and end at the user's.
            const EdgeRoute& e = r->edges.front();
            QCOMPARE(e.points.front().x, r->nodes[e.from].x);
            QCOMPARE(e.points.back().y, r->nodes[e.to].y - r->nodes[e.to].height / 2);
        }
    }

    void autoFallsBackForBigGraphs() {
        const Graph g = syntheticGraph(60, 40); // 2400 nodes
        LayoutOptions options;                  // Auto, limit 1500
        QElapsedTimer timer;
        timer.start();
        auto r = computeLayout(g, options);
        const qint64 ms = timer.elapsed();
        QVERIFY(r.has_value());
        QCOMPARE(r->algorithm, LayoutAlgorithm::Layered);
        checkComplete(g, *r);
        QCOMPARE(overlaps(*r), 0);
        qInfo("layered layout of %zu nodes / %zu edges: %lld ms", g.size(), r->edges.size(), ms);
        QVERIFY2(ms < 5000, "the fallback must stay fast");
    }

    void autoUsesLimit() {
        const Graph g = syntheticGraph(4, 5);
        LayoutOptions options;
        options.graphvizNodeLimit = 10;
        QCOMPARE(computeLayout(g, options)->algorithm, LayoutAlgorithm::Layered);
        options.graphvizNodeLimit = 1500;
        QCOMPARE(computeLayout(g, options)->algorithm,
                 graphvizAvailable() ? LayoutAlgorithm::Graphviz : LayoutAlgorithm::Layered);
    }

    void explicitSizesAreKept() {
        const Graph g = syntheticGraph(3, 3);
        LayoutOptions options;
        options.sizes.assign(g.size(), NodeSize{150, 40});
        options.sizes[4] = {260, 50};
        for (LayoutAlgorithm algorithm : {LayoutAlgorithm::Layered, LayoutAlgorithm::Graphviz}) {
            options.algorithm = algorithm;
            auto r = computeLayout(g, options);
            QVERIFY(r.has_value());
            QVERIFY(std::abs(r->nodes[4].width - 260) < 1);
            QVERIFY(std::abs(r->nodes[4].height - 50) < 1);
            QVERIFY(std::abs(r->nodes[0].width - 150) < 1);
        }
    }

    void cancelledLayoutReturnsNothing() {
        const Graph g = syntheticGraph(10, 10);
        std::atomic<bool> cancel{true};
        for (LayoutAlgorithm algorithm :
             {LayoutAlgorithm::Auto, LayoutAlgorithm::Layered, LayoutAlgorithm::Graphviz}) {
            LayoutOptions options;
            options.algorithm = algorithm;
            QVERIFY(!computeLayout(g, options, &cancel).has_value());
        }
    }

    void emptyGraph() {
        const Graph g;
        auto r = computeLayout(g);
        QVERIFY(r.has_value());
        QVERIFY(r->nodes.empty());
        QVERIFY(r->edges.empty());
    }

    void runnerDeliversOffThread() {
        auto g = std::make_shared<const Graph>(loadGpt());
        LayoutRunner runner;
        QSignalSpy finished(&runner, &LayoutRunner::finished);
        QSignalSpy cancelled(&runner, &LayoutRunner::cancelled);
        const quint64 ticket = runner.start(g, {});
        QVERIFY(runner.busy());
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.first().at(0).toULongLong(), ticket);
        auto result = finished.first().at(1).value<std::shared_ptr<const LayoutResult>>();
        QVERIFY(result);
        QCOMPARE(result->nodes.size(), g->size());
        QCOMPARE(cancelled.count(), 0);
        QVERIFY(!runner.busy());
    }

    void runnerDiscardsCancelled() {
        auto big = std::make_shared<const Graph>(syntheticGraph(60, 40));
        auto small = std::make_shared<const Graph>(syntheticGraph(3, 3));
        LayoutRunner runner;
        QSignalSpy finished(&runner, &LayoutRunner::finished);
        QSignalSpy cancelled(&runner, &LayoutRunner::cancelled);
        const quint64 first = runner.start(big, {});
        runner.cancel();
        const quint64 second = runner.start(small, {}); // serialised after the first
        runner.waitForDone();
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(cancelled.first().at(0).toULongLong(), first);
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.first().at(0).toULongLong(), second);
        QCOMPARE(finished.first().at(1).value<std::shared_ptr<const LayoutResult>>()->nodes.size(),
                 small->size());
    }
};

QTEST_GUILESS_MAIN(TestLayout)
#include "tst_view_layout.moc"
