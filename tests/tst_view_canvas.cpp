// The canvas of a collapsed 7.4k-node joint graph: the minimap follows the view and moves it, double-click on
// a group expands it and on its frame collapses it; PNGs of each state go to the build tree (look at them).
#include "testutil.h"

#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/GroupItem.h"
#include "canvas/Minimap.h"
#include "canvas/NodeItem.h"
#include "layout/Grouping.h"
#include "layout/LayoutRunner.h"

#include <QApplication>
#include <QDir>
#include <QSignalSpy>
#include <QTemporaryDir>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

QString outPath(const QString& name) {
    return QDir(QCoreApplication::applicationDirPath()).filePath(name);
}

std::shared_ptr<const layout::LayoutResult> layOut(const std::shared_ptr<const Graph>& graph,
                                                   std::shared_ptr<const layout::GroupTree> tree,
                                                   std::vector<char> expanded) {
    layout::LayoutRunner runner;
    std::shared_ptr<const layout::LayoutResult> result;
    QObject::connect(&runner, &layout::LayoutRunner::finished,
                     [&](quint64, std::shared_ptr<const layout::LayoutResult> r) { result = std::move(r); });
    runner.startCollapsed(graph, std::move(tree), std::move(expanded), 400,
                          [](const Node& n) { return GraphScene::measureNode(n); }, {});
    runner.waitForDone();
    return result;
}

template <typename T> T* firstItem(GraphScene& scene) {
    for (QGraphicsItem* item : scene.items())
        if (item->type() == T::Type)
            return static_cast<T*>(item);
    return nullptr;
}

} // namespace

class TestViewCanvas : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QProcess python;
        python.start(QStringLiteral("python3"),
                     {QString::fromStdString(sourcePath("bench/gen_big_graph.py")),
                      QStringLiteral("--shared"), QString(JOINTSCOPE_SHARED_DIR), QStringLiteral("--style"),
                      QStringLiteral("113"), QStringLiteral("--layers=48"), QStringLiteral("--out"),
                      dir_.filePath(QStringLiteral("g.txt"))});
        QVERIFY(python.waitForFinished(300000) && python.exitCode() == 0);
        graph_ = std::make_shared<const Graph>(
            loadFirstGraph(dir_.filePath(QStringLiteral("g.txt")).toStdString()));
        QVERIFY(graph_->size() > 7000);
    }

    void collapsedCanvas() {
        auto result = layOut(graph_, nullptr, {});
        QVERIFY(result && result->view);
        GraphScene scene;
        scene.setGraph(graph_.get());
        scene.applyCollapsedLayout(*result);
        GraphView view;
        view.resize(1100, 800);
        view.setScene(&scene);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        view.showStart();
        Minimap* map = view.minimap();
        map->refresh();
        QVERIFY(map->isVisible());
        QVERIFY(!map->mapRect().isEmpty());
        QVERIFY(view.grab().save(outPath(QStringLiteral("canvas_collapsed.png"))));

        // Zoomed in, the viewport is a small part of the map; a click on the map centres the view there.
        view.setZoom(3.0);
        view.centerOn(scene.sceneRect().topLeft());
        const QRectF before = map->viewportOnMap();
        QVERIFY(before.width() * before.height() < 0.5 * map->mapRect().width() * map->mapRect().height());
        const QPointF target = map->mapRect().center();
        map->centreViewAt(target);
        QVERIFY(QLineF(map->viewportOnMap().center(), target).length() < 12);
        QVERIFY(view.grab().save(outPath(QStringLiteral("canvas_minimap.png"))));

        // Double-click on a group box asks to expand it; the re-layout shows its members in a frame.
        GroupItem* group = firstItem<GroupItem>(scene);
        QVERIFY(group);
        const int id = group->group();
        QSignalSpy activated(&scene, &GraphScene::groupActivated);
        view.centerOn(group);
        QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, view.mapFromScene(group->scenePos()));
        QCOMPARE(activated.size(), 1);
        QCOMPARE(activated.front().at(0).toInt(), id);
        QCOMPARE(activated.front().at(1).toBool(), true);

        auto expanded = result->view->expanded;
        layout::expandGroup(*result->view->tree, expanded, id, 1500);
        auto second = layOut(graph_, result->view->tree, expanded);
        QVERIFY(second && second->view);
        scene.applyCollapsedLayout(*second);
        const layout::Group& g = second->view->tree->groups[size_t(id)];
        for (NodeId n : g.nodes)
            QVERIFY(scene.nodeItem(n));
        GroupFrameItem* frame = nullptr;
        for (QGraphicsItem* item : scene.items())
            if (item->type() == GroupFrameItem::Type && static_cast<GroupFrameItem*>(item)->group() == id)
                frame = static_cast<GroupFrameItem*>(item);
        QVERIFY(frame);
        view.setZoom(0.6);
        view.centreOnNode(g.first);
        map->refresh();
        QVERIFY(view.grab().save(outPath(QStringLiteral("canvas_expanded.png"))));

        // Double-click on the frame's rim (no node there) asks to collapse it.
        activated.clear();
        // The layout does not cluster, so other boxes may overlap the frame: find a free spot inside its rim.
        const QRectF rim = frame->boundingRect().adjusted(12, 12, -12, -12);
        QPointF corner;
        for (double t = 0; t < 1 && corner.isNull(); t += 0.01)
            for (QPointF p : {QPointF(rim.left() + t * rim.width(), rim.top()),
                              QPointF(rim.left(), rim.top() + t * rim.height()),
                              QPointF(rim.right(), rim.top() + t * rim.height()),
                              QPointF(rim.left() + t * rim.width(), rim.bottom())}) {
                QGraphicsItem* top = nullptr;
                for (QGraphicsItem* item : scene.items(p))
                    if (item->type() == NodeItem::Type || item->type() == GroupItem::Type ||
                        item->type() == GroupFrameItem::Type) {
                        top = item;
                        break;
                    }
                if (top == frame) {
                    corner = p;
                    break;
                }
            }
        QVERIFY(!corner.isNull());
        view.centerOn(corner);
        QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, view.mapFromScene(corner));
        QCOMPARE(activated.size(), 1);
        QCOMPARE(activated.front().at(0).toInt(), id);
        QCOMPARE(activated.front().at(1).toBool(), false);
    }

private:
    QTemporaryDir dir_;
    std::shared_ptr<const Graph> graph_;
};

QTEST_MAIN(TestViewCanvas)
#include "tst_view_canvas.moc"
