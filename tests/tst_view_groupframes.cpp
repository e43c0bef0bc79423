// Frames of expanded groups in the collapsed canvas view hold their members and nothing else: no frame
// crosses a box outside its group or the frame of a group beside it (issue 5: the "forward" and "backward"
// frames overlapped each other and unrelated boxes). Laid out by Graphviz as the app does for small views.
#include "testutil.h"

#include "canvas/GraphScene.h"
#include "canvas/GroupItem.h"
#include "canvas/NodeItem.h"
#include "layout/Grouping.h"
#include "layout/LayoutRunner.h"

#include <QApplication>

#include <algorithm>

using namespace jointscope;
using namespace jointscope::layout;
using jointscope::test::loadSharedGraph;

Q_DECLARE_METATYPE(jointscope::layout::LayoutAlgorithm)

namespace {

// Whether `group` is `ancestor` or lies inside it.
bool within(const GroupTree& tree, int32_t group, int32_t ancestor) {
    for (int32_t g = group; g >= 0; g = tree.groups[size_t(g)].parent)
        if (g == ancestor)
            return true;
    return false;
}

struct Box {
    int32_t group = -1; // the group holding the box directly
    QString name;
    QRectF rect;
};

struct Frame {
    int32_t group = -1;
    QRectF rect;
};

QString describe(const GroupTree& tree, int32_t group) {
    return QString::fromStdString(tree.groups[size_t(group)].label);
}

} // namespace

class TestViewGroupFrames : public QObject {
    Q_OBJECT
private slots:
    void framesHoldOnlyTheirMembers_data() {
        QTest::addColumn<QString>("graph");
        QTest::addColumn<int>("depth"); // groups this deep or shallower are expanded
        QTest::addColumn<LayoutAlgorithm>("algorithm");
        const QString gpt = QStringLiteral("graphs/torch-1.13/gpt_block2/joint.txt");
        const QString convnet = QStringLiteral("graphs/torch-1.13/convnet/joint.txt");
        for (LayoutAlgorithm algorithm :
             {LayoutAlgorithm::Graphviz, LayoutAlgorithm::Layered, LayoutAlgorithm::Ladder}) {
            // Large views are laid out by the layered layout, joint graphs by the ladder; frames must hold
            // there too.
            const char* name = algorithm == LayoutAlgorithm::Graphviz  ? "dot"
                               : algorithm == LayoutAlgorithm::Layered ? "layered"
                                                                       : "ladder";
            QTest::addRow("gpt_block2 phases, %s", name) << gpt << 1 << algorithm;
            QTest::addRow("gpt_block2 nested, %s", name) << gpt << 2 << algorithm;
            QTest::addRow("convnet nested, %s", name) << convnet << 2 << algorithm;
        }
    }
    void framesHoldOnlyTheirMembers() {
        QFETCH(QString, graph);
        QFETCH(int, depth);
        QFETCH(LayoutAlgorithm, algorithm);
        const auto joint = std::make_shared<const Graph>(loadSharedGraph(graph.toStdString()));
        const auto tree = std::make_shared<const GroupTree>(buildGroupTree(*joint));
        std::vector<char> expanded(tree->groups.size(), 0);
        for (size_t g = 0; g < tree->groups.size(); ++g)
            expanded[g] = tree->groups[g].depth <= uint32_t(depth);

        LayoutRunner runner;
        std::shared_ptr<const LayoutResult> result;
        connect(&runner, &LayoutRunner::finished, this,
                [&](quint64, std::shared_ptr<const LayoutResult> r) { result = std::move(r); });
        LayoutOptions options;
        options.algorithm = algorithm;
        runner.startCollapsed(
            joint, tree, expanded, 1500, [](const Node& n) { return views::GraphScene::measureNode(n); },
            options);
        runner.waitForDone();
        QVERIFY(result && result->view);
        if (algorithm == LayoutAlgorithm::Graphviz && !graphvizAvailable())
            QSKIP("built without Graphviz");
        QCOMPARE(result->algorithm, algorithm);

        views::GraphScene scene;
        scene.setGraph(joint.get());
        scene.applyCollapsedLayout(*result);

        std::vector<Frame> frames;
        std::vector<Box> boxes;
        for (QGraphicsItem* item : scene.items()) {
            const QRectF rect = item->mapRectToScene(item->shape().boundingRect());
            if (auto* frame = qgraphicsitem_cast<views::GroupFrameItem*>(item)) {
                frames.push_back({frame->group(), rect});
            } else if (auto* node = qgraphicsitem_cast<views::NodeItem*>(item)) {
                boxes.push_back({tree->groupOf[node->nodeId()],
                                 QString::fromStdString(joint->node(node->nodeId()).name), rect});
            } else if (auto* group = qgraphicsitem_cast<views::GroupItem*>(item)) {
                // The drawn box, without the stacked shadow the bounding rect leaves room for.
                const QRectF box = item->mapRectToScene(item->boundingRect().adjusted(6, 6, -6, -6));
                boxes.push_back(
                    {tree->groups[size_t(group->group())].parent, describe(*tree, group->group()), box});
            }
        }
        // Every expanded group but the root has a frame; some frames are nested when groups two deep are
        // open.
        QCOMPARE(frames.size(), result->view->frames.size());
        QVERIFY(frames.size() >= 2);
        const bool nested = std::any_of(frames.begin(), frames.end(), [&](const Frame& f) {
            return tree->groups[size_t(f.group)].parent > 0;
        });
        QCOMPARE(nested, depth >= 2);
        QCOMPARE(boxes.size(), result->view->items.size());

        for (const Frame& f : frames) {
            for (const Box& b : boxes) {
                if (within(*tree, b.group, f.group))
                    QVERIFY2(f.rect.contains(b.rect),
                             qPrintable(QStringLiteral("frame '%1' does not hold its member %2")
                                            .arg(describe(*tree, f.group), b.name)));
                else
                    QVERIFY2(
                        !f.rect.intersects(b.rect),
                        qPrintable(QStringLiteral("frame '%1' overlaps %2 of '%3'")
                                       .arg(describe(*tree, f.group), b.name, describe(*tree, b.group))));
            }
            for (const Frame& other : frames) {
                if (within(*tree, f.group, other.group) || within(*tree, other.group, f.group))
                    continue;
                QVERIFY2(!f.rect.intersects(other.rect),
                         qPrintable(QStringLiteral("frames '%1' and '%2' overlap")
                                        .arg(describe(*tree, f.group), describe(*tree, other.group))));
            }
        }
        // Each frame is the box the layout kept for its group.
        QCOMPARE(result->clusters.size(), result->view->frames.size());
    }
};

QTEST_MAIN(TestViewGroupFrames)
#include "tst_view_groupframes.moc"
