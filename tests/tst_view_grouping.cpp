// Hierarchical collapse (views/layout/Grouping): every node in exactly one group, no group or view over
// 1500 boxes, source-line and HOP groups sized as counted independently from the files' text.
#include "layout/Grouping.h"
#include "layout/LayoutRunner.h"
#include "testutil.h"

#include <QTemporaryDir>

#include <map>
#include <regex>

using namespace jointscope;
using namespace jointscope::layout;
using jointscope::test::loadGraphAt;
using jointscope::test::readFile;
using jointscope::test::sharedPath;
using jointscope::test::sourcePath;
using jointscope::test::splitLines;

namespace {

// Generates a large graph from real torch layers with bench/gen_big_graph.py; returns its path.
std::string generate(const QTemporaryDir& dir, const QString& style, const QString& size,
                     const QString& name) {
    return jointscope::test::generateBigGraph(dir.filePath(name), style, size).path;
}

int32_t phase(const GroupTree& tree, const std::string& label) {
    for (int32_t c : tree.groups[0].children)
        if (tree.groups[size_t(c)].label == label)
            return c;
    return -1;
}

QStringList childLabels(const GroupTree& tree, int32_t group) {
    QStringList labels;
    if (group < 0)
        return labels;
    for (int32_t c : tree.groups[size_t(group)].children)
        labels << QString::fromStdString(tree.groups[size_t(c)].label);
    return labels;
}

// The structural invariants every tree must keep.
void checkTree(const Graph& graph, const GroupTree& tree) {
    std::vector<int> seen(graph.size(), 0);
    for (size_t g = 0; g < tree.groups.size(); ++g) {
        const Group& group = tree.groups[g];
        QVERIFY2(group.items() <= 1500, qPrintable(QStringLiteral("group %1 has %2 items")
                                                       .arg(QString::fromStdString(group.label))
                                                       .arg(group.items())));
        for (NodeId n : group.nodes) {
            QVERIFY(n < graph.size());
            ++seen[n];
            QCOMPARE(tree.groupOf[n], int32_t(g));
        }
        for (int32_t c : group.children)
            QCOMPARE(tree.groups[size_t(c)].parent, int32_t(g));
    }
    for (NodeId n = 0; n < graph.size(); ++n)
        QVERIFY2(seen[n] == 1, graph.node(n).name.c_str());
    QCOMPARE(tree.groups[0].total, graph.size());
}

// Collapsing keeps every edge: merged counts plus edges inside a box add up to the graph's edges.
void checkView(const Graph& graph, const CollapsedView& view) {
    QVERIFY(view.items.size() <= 1500);
    const auto edges = graphEdges(graph);
    size_t inside = 0;
    for (auto [from, to] : edges)
        inside += view.itemOfNode[from] == view.itemOfNode[to] ? 1 : 0;
    size_t merged = 0;
    for (const ViewEdge& e : view.edges)
        merged += e.count;
    QCOMPARE(merged + inside, edges.size());
}

std::string sourceLineKey(const GroupTree& tree, NodeId id) {
    for (int32_t g = tree.groupOf[id]; g > 0; g = tree.groups[size_t(g)].parent)
        if (tree.groups[size_t(g)].kind == GroupKind::SourceLine) {
            const std::string& label = tree.groups[size_t(g)].label;
            return label.substr(0, label.find("  "));
        }
    return {};
}

} // namespace

class TestViewGrouping : public QObject {
    Q_OBJECT
private slots:
    void sharedGraphs_data() {
        QTest::addColumn<QString>("path");
        for (const char* name :
             {"torch-1.13/mlp/joint.txt", "torch-1.13/convnet/joint.txt", "torch-1.13/gpt_block2/joint.txt",
              "snippets/hop_checkpoint_wrap.txt", "snippets/hop_nested_invoke_subgraph.txt",
              "torch-trace/inductor_provenance_jit_debug_handle_log.txt"})
            QTest::newRow(name) << QString::fromStdString(sharedPath(std::string("graphs/") + name));
    }
    void sharedGraphs() {
        QFETCH(QString, path);
        const Graph graph = loadGraphAt(path.toStdString());
        const auto tree = std::make_shared<const GroupTree>(buildGroupTree(graph));
        checkTree(graph, *tree);
        const CollapsedView view = collapseView(graph, tree, initialExpansion(*tree, 400));
        checkView(graph, view);
    }

    // The HOP call, its body's get_attr and the getitem reading its result form one group (counted from the
    // text).
    void hopGroup() {
        const std::string path = sharedPath("graphs/snippets/hop_checkpoint_wrap.txt");
        const Graph graph = loadGraphAt(path);
        const GroupTree tree = buildGroupTree(graph);
        const std::regex call("^\\s+(\\w+)\\s*=\\s*torch\\.ops\\.higher_order\\.\\w+\\((\\w+)");
        std::smatch m;
        std::string hop, body;
        for (const std::string& line : splitLines(readFile(path)))
            if (std::regex_search(line, m, call)) {
                hop = m[1];
                body = m[2];
            }
        QVERIFY(!hop.empty());
        size_t expected = 2; // the call and its body
        const std::regex getitem("^\\s+\\w+(\\s*:\\s*\"[^\"]*\")?\\s*=\\s*" + hop + "\\[");
        for (const std::string& line : splitLines(readFile(path)))
            expected += std::regex_search(line, getitem) ? 1 : 0;
        const auto hopId = graph.find(hop);
        QVERIFY(hopId);
        const Group& group = tree.groups[size_t(tree.groupOf[*hopId])];
        QCOMPARE(group.kind, GroupKind::HopCall);
        QCOMPARE(group.nodes.size(), expected);
        QCOMPARE(tree.groupOf[*graph.find(body)], tree.groupOf[*hopId]);
    }

    // 7.4k nodes without meta: forward / backward split into chunks; any one group expanded stays <= 1500
    // boxes.
    void bigJointGraph() {
        QTemporaryDir dir;
        const std::string path =
            generate(dir, QStringLiteral("113"), QStringLiteral("--layers=48"), QStringLiteral("gpt48.txt"));
        const Graph graph = loadGraphAt(path);
        QCOMPARE(graph.size(), size_t(std::stoul(readFile(path + ".nodes"))));
        const auto tree = std::make_shared<const GroupTree>(buildGroupTree(graph));
        checkTree(graph, *tree);
        auto expanded = initialExpansion(*tree, 400);
        QVERIFY(visibleItems(*tree, expanded) <= 400);
        QVERIFY(visibleItems(*tree, expanded) >= 3); // forward, backward, output at least
        for (size_t g = 1; g < tree->groups.size(); ++g) {
            expandGroup(*tree, expanded, int32_t(g), 1500);
            QVERIFY(expanded[g]);
            const CollapsedView view = collapseView(graph, tree, expanded);
            QCOMPARE(view.items.size(), visibleItems(*tree, expanded));
            QVERIFY(view.items.size() <= 1500);
        }
        const CollapsedView view = collapseView(graph, tree, expanded);
        checkView(graph, view);
        collapseGroup(*tree, expanded, 1);
        QVERIFY(!expanded[1]);
    }

    // Layers without metadata (issue 15): the forward phase holds "layer 0" … "layer 47" (48 from
    // gen_big_graph's --layers, two blocks per repeat) after its inputs, the backward the same layers last
    // first, and no group is a chunk of consecutive nodes.
    void bigJointGraphByLayers() {
        QTemporaryDir dir;
        const std::string path =
            generate(dir, QStringLiteral("113"), QStringLiteral("--layers=48"), QStringLiteral("gpt48.txt"));
        const Graph graph = loadGraphAt(path);
        const GroupTree tree = buildGroupTree(graph);
        checkTree(graph, tree);
        QStringList forward{QStringLiteral("inputs")}, backward{QStringLiteral("inputs")};
        for (int i = 0; i < 48; ++i) {
            forward << QStringLiteral("layer %1").arg(i);
            backward << QStringLiteral("layer %1").arg(47 - i);
        }
        QCOMPARE(childLabels(tree, phase(tree, "forward")), forward);
        QCOMPARE(childLabels(tree, phase(tree, "backward")), backward);
        for (const Group& g : tree.groups) {
            QVERIFY(g.kind != GroupKind::Chunk);
            if (g.kind == GroupKind::Layer)
                QCOMPARE(g.label, "layer " + std::to_string(g.layer));
        }
        // Without layers the same graph falls back to chunks.
        GroupingOptions plain;
        plain.layers = false;
        const GroupTree chunks = buildGroupTree(graph, plain);
        QVERIFY(std::any_of(chunks.groups.begin(), chunks.groups.end(),
                            [](const Group& g) { return g.kind == GroupKind::Chunk; }));
    }

    // torch 1.13's two GPT blocks: two layers each way.
    void gptBlocksByLayers() {
        const Graph graph = jointscope::test::loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        const GroupTree tree = buildGroupTree(graph);
        checkTree(graph, tree);
        QCOMPARE(
            childLabels(tree, phase(tree, "forward")),
            QStringList({QStringLiteral("inputs"), QStringLiteral("layer 0"), QStringLiteral("layer 1")}));
        QCOMPARE(
            childLabels(tree, phase(tree, "backward")),
            QStringList({QStringLiteral("inputs"), QStringLiteral("layer 1"), QStringLiteral("layer 0")}));
    }

    // `# File:` comments of a torch 2 graph: each source line's group holds the nodes printed under it.
    void sourceLineGroups() {
        QTemporaryDir dir;
        const std::string path =
            generate(dir, QStringLiteral("2x"), QStringLiteral("--nodes=20000"), QStringLiteral("fx2x.txt"));
        const Graph graph = loadGraphAt(path);
        const auto tree = std::make_shared<const GroupTree>(buildGroupTree(graph));
        checkTree(graph, *tree);

        // Independent count: statements after a "# File: dir/x.py:N in ..." comment, until a blank line or
        // another comment, belong to x.py:N.
        std::map<std::string, size_t> expected;
        const std::regex file("#\\s*File:\\s*(\\S*?)([^/\\s]+\\.py):(\\d+) in ");
        const std::regex stmt("^\\s+\\w+\\s*(:\\s*\"[^\"]*\")?\\s*=\\s*\\S");
        std::string key;
        std::smatch m;
        for (const std::string& line : splitLines(readFile(path))) {
            const size_t first = line.find_first_not_of(" \t");
            if (first == std::string::npos) {
                key.clear();
            } else if (line[first] == '#') {
                key = std::regex_search(line, m, file) ? m[2].str() + ":" + m[3].str() : std::string();
            } else if (!key.empty() && std::regex_search(line, stmt)) {
                ++expected[key];
            }
        }
        QVERIFY(expected.size() >= 5);
        std::map<std::string, size_t> actual;
        for (NodeId n = 0; n < graph.size(); ++n)
            if (std::string k = sourceLineKey(*tree, n); !k.empty())
                ++actual[k];
        QCOMPARE(actual, expected);

        const CollapsedView view = collapseView(graph, tree, initialExpansion(*tree, 400));
        checkView(graph, view);
    }

    // The runner builds the tree and the collapsed layout off the UI thread.
    void runnerLaysOutCollapsedView() {
        const auto graph =
            std::make_shared<const Graph>(loadGraphAt(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt")));
        LayoutRunner runner;
        std::shared_ptr<const LayoutResult> result;
        connect(&runner, &LayoutRunner::finished, this,
                [&](quint64, std::shared_ptr<const LayoutResult> r) { result = r; });
        runner.startCollapsed(graph, nullptr, {}, 40, nullptr, [] {
            LayoutOptions o;
            o.algorithm = LayoutAlgorithm::Layered;
            return o;
        }());
        runner.waitForDone();
        QVERIFY(result && result->view);
        QCOMPARE(result->nodes.size(), result->view->items.size());
        QVERIFY(result->view->items.size() <= 40);
        QCOMPARE(result->view->itemOfNode.size(), graph->size());
    }
};

QTEST_GUILESS_MAIN(TestViewGrouping)
#include "tst_view_grouping.moc"
