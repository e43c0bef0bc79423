// A partition edit the engine refuses as impossible: the canvas highlights the infinite-capacity path it
// names (PartitionDocument::errorPath, views/canvas/InfinitePathItem), exactly those nodes and the edges
// between them, until a solve succeeds.
#include "testutil.h"
#include "viewtestutil.h"

#include "PartitionDocument.h"
#include "canvas/GraphScene.h"
#include "canvas/InfinitePathItem.h"
#include "canvas/NodeItem.h"
#include "partition/MinCut.h"

#include <QRegularExpression>
#include <QSignalSpy>

#include <regex>

using namespace jointscope;
using namespace jointscope::gui;
using namespace jointscope::test;

namespace {

// The nodes a refusal message names as 'name' (op), each once, in the order the chain reaches them (a step
// "'b' reads 'a'" names a node already reached second).
QStringList namedNodes(const QString& message) {
    QStringList names;
    static const QRegularExpression quoted(QStringLiteral("'([^']+)' \\("));
    for (auto it = quoted.globalMatch(message); it.hasNext();) {
        const QString name = it.next().captured(1);
        if (!names.contains(name))
            names << name;
    }
    return names;
}

// Pixels of the path's colour (blended over white or a box) in `rect` of `image`.
int pathPixels(const QImage& image, const QRect& rect) {
    const QColor c = views::InfinitePathItem::color();
    int count = 0;
    for (int y = std::max(0, rect.top()); y <= std::min(image.height() - 1, rect.bottom()); ++y)
        for (int x = std::max(0, rect.left()); x <= std::min(image.width() - 1, rect.right()); ++x) {
            const QColor p = image.pixelColor(x, y);
            count += std::abs(p.red() - c.red()) < 24 && std::abs(p.green() - c.green()) < 24 &&
                     std::abs(p.blue() - c.blue()) < 24;
        }
    return count;
}

QStringList namesOf(const Graph& graph, const std::vector<NodeId>& ids) {
    QStringList names;
    for (NodeId id : ids)
        names << QString::fromStdString(graph.node(id).name);
    return names;
}

} // namespace

class TestPartitionPath : public QObject {
    Q_OBJECT
private slots:
    void refusedEditHighlightsItsPath() {
        // gpt_block2 under torch 1.13's rules: native_layer_norm may not be recomputed and, returning a
        // tuple, cannot be saved, so the getitem reading it cannot be MUST_RECOMPUTE.
        const std::string relative = "graphs/torch-1.13/gpt_block2/joint.txt";
        const auto graph = std::make_shared<const Graph>(loadSharedGraph(relative));
        std::smatch m;
        const std::string text = readFile(sharedPath(relative));
        QVERIFY(std::regex_search(text, m, std::regex("\\n\\s+getitem_1 = (\\w+)\\[1\\]")));
        const QStringList expected{QString::fromStdString(m[1]), QStringLiteral("getitem_1")};

        PartitionDocument doc;
        QSignalSpy finished(&doc, &PartitionDocument::finished);
        QSignalSpy failed(&doc, &PartitionDocument::failed);
        doc.setGraph(graph);
        doc.solve();
        QVERIFY(finished.wait(30000));
        QVERIFY(doc.errorPath().empty());

        views::GraphScene scene;
        scene.setGraph(graph.get());
        layOutScene(scene);
        QVERIFY(!views::showInfinitePath(scene, doc.errorPath()));

        doc.setPolicy("getitem_1", partition::Policy::MustRecompute);
        QVERIFY(failed.wait(30000));
        const QString message = failed.front().front().toString();
        QCOMPARE(namedNodes(message), expected);
        QCOMPARE(namesOf(*graph, doc.errorPath()), expected);

        const views::InfinitePathItem* item = views::showInfinitePath(scene, doc.errorPath());
        QVERIFY(item);
        QCOMPARE(views::infinitePathItem(scene), item);
        QCOMPARE(namesOf(*graph, item->nodes()), expected);
        std::vector<std::pair<NodeId, NodeId>> links;
        for (qsizetype i = 0; i + 1 < expected.size(); ++i)
            links.emplace_back(*graph->find(expected[i].toStdString()),
                               *graph->find(expected[i + 1].toStdString()));
        QCOMPARE(item->edges(), links);
        // Drawn: the path's colour appears on the canvas, around the boxes it names.
        const QImage drawn = scene.renderImage(1.0);
        const QRectF sceneRect = scene.sceneRect();
        for (NodeId id : item->nodes()) {
            const QRectF box = scene.nodeItem(id)->sceneBoundingRect().translated(-sceneRect.topLeft());
            QVERIFY2(pathPixels(drawn, box.adjusted(-12, -12, 12, 12).toRect()) > 20,
                     graph->node(id).name.c_str());
        }

        // Undoing the edit solves again: the path is gone.
        doc.undoStack()->undo();
        QVERIFY(finished.wait(30000));
        QVERIFY(doc.errorPath().empty());
        QVERIFY(!views::showInfinitePath(scene, doc.errorPath()));
        QVERIFY(!views::infinitePathItem(scene));
        QCOMPARE(pathPixels(scene.renderImage(1.0), scene.renderImage(1.0).rect()), 0);
    }
};

QTEST_MAIN(TestPartitionPath)
#include "tst_gui_partitionpath.moc"
