// The facts of collapsed group boxes (canvas/GroupFacts) on torch 1.13's two GPT blocks with torch's own
// min-cut decision (reference.json, written by torch): saved nodes and bytes, cut edges and op times summed
// per group as counted here from the decision and the graph; and on the canvas, a collapsed layer box shows
// those facts and is coloured by its summed time.
#include "testutil.h"

#include "canvas/GraphScene.h"
#include "canvas/GroupFacts.h"
#include "canvas/GroupItem.h"
#include "graph/GraphStats.h"
#include "layout/Grouping.h"
#include "layout/LayoutRunner.h"
#include "models/NodeFormat.h"

#include <QApplication>

#include <nlohmann/json.hpp>

#include <map>
#include <set>

using namespace jointscope;
using namespace jointscope::layout;
using jointscope::test::loadSharedGraph;
using jointscope::test::readFile;
using jointscope::test::sharedPath;

namespace {

const char* kGraph = "graphs/torch-1.13/gpt_block2/joint.txt";

std::set<std::string> torchSaved() {
    const auto reference =
        nlohmann::json::parse(readFile(sharedPath("graphs/torch-1.13/gpt_block2/reference.json")));
    std::set<std::string> names;
    for (const auto& name : reference["min_cut_saved"])
        names.insert(name.get<std::string>());
    return names;
}

// torch's decision as the app draws it: saved nodes with their bytes, the rest of the backward marked so.
views::PartitionOverlay overlayOf(const Graph& graph, const std::set<std::string>& saved) {
    views::PartitionOverlay overlay;
    overlay.nodes.resize(graph.size());
    const std::vector<bool> backward = backwardMask(graph);
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& n = graph.node(id);
        if (saved.count(n.name)) {
            overlay.nodes[id].mark = views::PartitionMark::Saved;
            overlay.nodes[id].bytes = n.tensor() ? n.tensor()->bytes().value_or(0) : 0;
        } else if (backward[id]) {
            overlay.nodes[id].mark = views::PartitionMark::Backward;
        }
    }
    return overlay;
}

std::vector<NodeId> membersOf(const GroupTree& tree, int32_t group) {
    std::vector<NodeId> members;
    std::vector<int32_t> stack{group};
    while (!stack.empty()) {
        const Group& g = tree.groups[size_t(stack.back())];
        stack.pop_back();
        members.insert(members.end(), g.nodes.begin(), g.nodes.end());
        stack.insert(stack.end(), g.children.begin(), g.children.end());
    }
    return members;
}

int32_t findGroup(const GroupTree& tree, const std::string& phase, const std::string& label) {
    for (size_t g = 0; g < tree.groups.size(); ++g) {
        const Group& group = tree.groups[g];
        if (group.label == label && group.parent >= 0 && tree.groups[size_t(group.parent)].label == phase)
            return int32_t(g);
    }
    return -1;
}

// What a group's facts must be, counted member by member.
views::GroupFacts expectedFacts(const Graph& graph, const std::vector<NodeId>& members,
                                const std::set<std::string>& saved, const std::vector<double>& times) {
    const std::vector<bool> backward = backwardMask(graph);
    views::GroupFacts f;
    for (NodeId id : members) {
        const Node& n = graph.node(id);
        f.ops += n.op == NodeOp::CallFunction;
        if (times[id] >= 0)
            f.timeUs = std::max(0.0, f.timeUs) + times[id];
        if (!saved.count(n.name))
            continue;
        ++f.saved;
        f.savedBytes += n.tensor() ? n.tensor()->bytes().value_or(0) : 0;
        std::set<NodeId> readers;
        for (NodeId user : n.users)
            if (backward[user] && !saved.count(graph.node(user).name))
                readers.insert(user);
        f.cutEdges += readers.size();
    }
    return f;
}

// 1 µs per op in layer 0, 10 µs in layer 1 and elsewhere 3 µs; no time for placeholders.
std::vector<double> stepTimes(const Graph& graph, const GroupTree& tree) {
    std::vector<double> times(graph.size(), -1.0);
    for (NodeId id = 0; id < graph.size(); ++id)
        if (graph.node(id).op == NodeOp::CallFunction)
            times[id] = 3.0;
    for (const char* phase : {"forward", "backward"}) {
        for (NodeId id : membersOf(tree, findGroup(tree, phase, "layer 0")))
            times[id] = graph.node(id).op == NodeOp::CallFunction ? 1.0 : -1.0;
        for (NodeId id : membersOf(tree, findGroup(tree, phase, "layer 1")))
            times[id] = graph.node(id).op == NodeOp::CallFunction ? 10.0 : -1.0;
    }
    return times;
}

void compareFacts(const views::GroupFacts& actual, const views::GroupFacts& expected) {
    QCOMPARE(actual.ops, expected.ops);
    QCOMPARE(actual.saved, expected.saved);
    QCOMPARE(actual.savedBytes, expected.savedBytes);
    QCOMPARE(actual.recomputed, expected.recomputed);
    QCOMPARE(actual.cutEdges, expected.cutEdges);
    QCOMPARE(actual.timeUs, expected.timeUs);
}

} // namespace

class TestViewGroupFacts : public QObject {
    Q_OBJECT
private slots:
    // Chunking re-parents groups made before the chunks: every group's facts still count its whole subtree.
    void factsOfChunkedGroupsCountTheirSubtree() {
        const Graph graph = loadSharedGraph(kGraph);
        GroupingOptions small;
        small.maxItems = 12;
        small.chunkSize = 5;
        small.layers = false;
        const GroupTree tree = buildGroupTree(graph, small);
        size_t chunks = 0, reparented = 0;
        for (size_t g = 0; g < tree.groups.size(); ++g) {
            chunks += tree.groups[g].kind == GroupKind::Chunk;
            reparented += tree.groups[g].parent > int32_t(g);
        }
        QVERIFY(chunks > 10);
        QVERIFY(reparented > 0); // the case this is about
        const std::set<std::string> saved = torchSaved();
        const views::PartitionOverlay overlay = overlayOf(graph, saved);
        std::vector<double> times(graph.size(), -1.0);
        for (NodeId id = 0; id < graph.size(); ++id)
            times[id] = graph.node(id).op == NodeOp::CallFunction ? double(1 + id % 7) : -1.0;
        const std::vector<views::GroupFacts> facts = views::computeGroupFacts(graph, tree, &overlay, times);
        for (size_t g = 0; g < tree.groups.size(); ++g)
            compareFacts(facts[g], expectedFacts(graph, membersOf(tree, int32_t(g)), saved, times));
    }

    void factsOfLayersFollowTorchsDecision() {
        const Graph graph = loadSharedGraph(kGraph);
        const GroupTree tree = buildGroupTree(graph);
        const std::set<std::string> saved = torchSaved();
        const views::PartitionOverlay overlay = overlayOf(graph, saved);
        const std::vector<double> times = stepTimes(graph, tree);
        const std::vector<views::GroupFacts> facts = views::computeGroupFacts(graph, tree, &overlay, times);
        QCOMPARE(facts.size(), tree.groups.size());
        // The whole graph: every name torch saved, with its bytes.
        QCOMPARE(facts[0].saved, saved.size());
        compareFacts(facts[0], expectedFacts(graph, membersOf(tree, 0), saved, times));
        QVERIFY(facts[0].savedBytes > 0);
        for (const char* phase : {"forward", "backward"})
            for (const char* layer : {"layer 0", "layer 1"}) {
                const int32_t g = findGroup(tree, phase, layer);
                QVERIFY2(g >= 0, layer);
                compareFacts(facts[size_t(g)], expectedFacts(graph, membersOf(tree, g), saved, times));
            }
        // The forward layers save activations and cut edges into the backward.
        const views::GroupFacts& layer0 = facts[size_t(findGroup(tree, "forward", "layer 0"))];
        QVERIFY(layer0.saved > 0 && layer0.cutEdges >= layer0.saved);
        // Without a decision or a profile: only the ops.
        const auto plain = views::computeGroupFacts(graph, tree, nullptr, {});
        QCOMPARE(plain[0].saved, size_t(0));
        QCOMPARE(plain[0].timeUs, -1.0);
        QVERIFY(views::groupFactsLine(plain[0], false).isEmpty());
        QCOMPARE(views::groupFactsLine(layer0, true), QStringLiteral("saved %1 · 0 recomputed · %2 cut · %3")
                                                          .arg(views::formatBytes(layer0.savedBytes))
                                                          .arg(layer0.cutEdges)
                                                          .arg(views::formatMicros(layer0.timeUs)));
    }

    // On the canvas, with the layers collapsed: each layer box says its facts, and the heat map colours
    // it by its members' summed time (layer 1, ten times slower per op, the hottest).
    void collapsedLayerBoxShowsFactsAndHeat() {
        const auto graph = std::make_shared<const Graph>(loadSharedGraph(kGraph));
        const auto tree = std::make_shared<const GroupTree>(buildGroupTree(*graph));
        std::vector<char> expanded(tree->groups.size(), 0);
        for (size_t g = 0; g < tree->groups.size(); ++g)
            expanded[g] = tree->groups[g].depth <= 1; // the root and the phases
        LayoutRunner runner;
        std::shared_ptr<const LayoutResult> result;
        connect(&runner, &LayoutRunner::finished, this,
                [&](quint64, std::shared_ptr<const LayoutResult> r) { result = std::move(r); });
        LayoutOptions options;
        options.algorithm = LayoutAlgorithm::Layered;
        runner.startCollapsed(
            graph, tree, expanded, 1500, [](const Node& n) { return views::GraphScene::measureNode(n); },
            options);
        runner.waitForDone();
        QVERIFY(result && result->view);
        views::GraphScene scene;
        scene.setGraph(graph.get());
        scene.applyCollapsedLayout(*result);

        std::map<std::string, views::GroupItem*> boxes; // "forward/layer 0"
        for (QGraphicsItem* item : scene.items())
            if (auto* box = qgraphicsitem_cast<views::GroupItem*>(item)) {
                const Group& g = tree->groups[size_t(box->group())];
                boxes[tree->groups[size_t(g.parent)].label + "/" + g.label] = box;
            }
        for (const char* key : {"forward/layer 0", "forward/layer 1", "backward/layer 1", "backward/layer 0"})
            QVERIFY2(boxes.count(key), key);
        views::GroupItem* layer0 = boxes["forward/layer 0"];
        views::GroupItem* layer1 = boxes["forward/layer 1"];
        QVERIFY(layer0->facts().isEmpty());
        QVERIFY(!layer0->heatColor().isValid());
        const std::vector<NodeId> members = membersOf(*tree, layer0->group());
        QVERIFY(layer0->subtitle().endsWith(QStringLiteral("%1 ops").arg(
            expectedFacts(*graph, members, {}, std::vector<double>(graph->size(), -1)).ops)));

        const std::set<std::string> saved = torchSaved();
        scene.setPartitionOverlay(std::make_shared<views::PartitionOverlay>(overlayOf(*graph, saved)));
        const std::vector<double> times = stepTimes(*graph, *tree);
        scene.setHeat(times);
        const views::GroupFacts expected = expectedFacts(*graph, members, saved, times);
        QCOMPARE(layer0->facts(), views::groupFactsLine(expected, true));
        QVERIFY(layer0->facts().startsWith(QStringLiteral("saved ")));
        QVERIFY(layer0->toolTip().contains(layer0->facts()));
        // Heat by summed time: the box with the most time is the end of the scale, a faster one is not.
        views::GroupItem* hottest = nullptr;
        double most = -1;
        for (const auto& [key, box] : boxes) {
            const double t = expectedFacts(*graph, membersOf(*tree, box->group()), saved, times).timeUs;
            if (t > most)
                most = t, hottest = box;
        }
        QVERIFY(hottest == boxes["forward/layer 1"] || hottest == boxes["backward/layer 1"]);
        QVERIFY(layer0->heatColor().isValid() && layer1->heatColor().isValid());
        QCOMPARE(hottest->heatColor(), views::GraphScene::heatColor(1.0));
        QVERIFY(layer0->heatColor() != layer1->heatColor());
        QCOMPARE(scene.groupHeatScale().maxUs, most);

        // The picture: the layer box is filled with its heat colour.
        const QImage image = scene.renderImage(1.0);
        const QPointF centre = hottest->scenePos() - scene.sceneRect().topLeft();
        // Inside the box by its left edge, clear of the border's antialiasing and of the centred text.
        const QRectF drawn = hottest->boundingRect().adjusted(6, 6, -6, -6);
        const QColor pixel = image.pixelColor(int(centre.x() + drawn.left() + 5), int(centre.y()));
        QCOMPARE(pixel.rgb(), views::GraphScene::heatColor(1.0).rgb());

        // Clearing the heat gives the plain boxes back.
        scene.setHeat({});
        QVERIFY(!layer1->heatColor().isValid());
        QVERIFY(!layer0->facts().contains(QStringLiteral("µs")));
    }
};

QTEST_MAIN(TestViewGroupFacts)
#include "tst_view_groupfacts.moc"
