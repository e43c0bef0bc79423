// The canvas of a collapsed 7.4k-node joint graph: the minimap follows the view and moves it, double-click on
// a group expands it and on its frame collapses it; PNGs of each state go to the build tree (look at them).
#include "testutil.h"

#include "canvas/EdgeItem.h"
#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/GroupItem.h"
#include "canvas/Minimap.h"
#include "canvas/NodeItem.h"
#include "layout/Grouping.h"
#include "layout/LayoutRunner.h"

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QLineF>
#include <QPainter>
#include <QProcess>
#include <QSignalSpy>
#include <QStyleOptionGraphicsItem>
#include <QTemporaryDir>

#include <cmath>
#include <map>

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

// A long edge: `segments` cubics down the y axis, each bending `bend` to the side and back.
layout::EdgeRoute longRoute(int segments, double bend) {
    layout::EdgeRoute route;
    route.from = 0;
    route.to = 1;
    route.points.push_back({0, 0});
    for (int i = 0; i < segments; ++i) {
        const double y = 1000.0 * i;
        route.points.push_back({bend, y + 333.3});
        route.points.push_back({-bend, y + 666.7});
        route.points.push_back({0, y + 1000.0});
    }
    return route;
}

// The edge as the canvas paints it (clipped to the image) and its whole path stroked with the same pen,
// both looking at `area`.
std::pair<QImage, QImage> paintedBothWays(EdgeItem& edge, const QRectF& area) {
    QImage clipped(200, 200, QImage::Format_ARGB32_Premultiplied), whole = clipped;
    const QTransform toImage = QTransform::fromTranslate(-area.left(), -area.top());
    for (QImage* image : {&clipped, &whole}) {
        image->fill(Qt::white);
        QPainter painter(image);
        painter.setRenderHint(QPainter::Antialiasing);
        painter.setTransform(toImage);
        if (image == &clipped) {
            QStyleOptionGraphicsItem option;
            edge.paint(&painter, &option, nullptr);
        } else {
            painter.setPen(edge.pen());
            painter.drawPath(edge.path());
        }
    }
    return {clipped, whole};
}

// Pixels whose colour differs by more than `tolerance` in a channel.
int differingPixels(const QImage& a, const QImage& b, int tolerance) {
    int count = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const QRgb p = a.pixel(x, y), q = b.pixel(x, y);
            if (std::abs(qRed(p) - qRed(q)) > tolerance || std::abs(qGreen(p) - qGreen(q)) > tolerance ||
                std::abs(qBlue(p) - qBlue(q)) > tolerance)
                ++count;
        }
    return count;
}

int darkPixels(const QImage& image) {
    int count = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            count += qGray(image.pixel(x, y)) < 200 ? 1 : 0;
    return count;
}

} // namespace

class TestViewCanvas : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        QProcess python;
        python.start(QStringLiteral("python3"),
                     {QString::fromStdString(sourcePath("bench/gen_big_graph.py")),
                      QStringLiteral("--shared"),
                      QString::fromStdString(test::testPath("JOINTSCOPE_SHARED_DIR")),
                      QStringLiteral("--style"), QStringLiteral("113"), QStringLiteral("--layers=48"),
                      QStringLiteral("--out"), dir_.filePath(QStringLiteral("g.txt"))});
        QVERIFY(python.waitForFinished(300000) && python.exitCode() == 0);
        graph_ =
            std::make_shared<const Graph>(loadGraphAt(dir_.filePath(QStringLiteral("g.txt")).toStdString()));
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

    // Only the stretches of a long edge near the visible area are stroked; they are the curve there.
    // A Graphviz refinement of the fast layered placement moves the items already on the canvas: the same
    // NodeItem and EdgeItem objects end up where, and as large as, a fresh applyLayout of the refinement puts
    // them; the cut and the selection stay. A result with other edges is refused and changes nothing.
    void refinementMovesTheItems() {
        const Graph graph = loadGraphAt(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));
        GraphScene scene;
        scene.setGraph(&graph);
        layout::LayoutOptions options;
        options.sizes = scene.measureNodes();
        options.algorithm = layout::LayoutAlgorithm::Layered;
        const auto fast = layout::computeLayout(graph, options);
        options.algorithm = layout::LayoutAlgorithm::Graphviz;
        const auto refined = layout::computeLayout(graph, options);
        QVERIFY(fast && refined);
        QCOMPARE(refined->algorithm, layout::LayoutAlgorithm::Graphviz);
        scene.applyLayout(*fast);
        const NodeId picked = 5;
        NodeItem* node = scene.nodeItem(picked);
        EdgeItem* edge = firstItem<EdgeItem>(scene);
        QVERIFY(node && edge);
        edge->setCut(true);
        scene.selectNode(picked);
        const QPointF before = node->pos();

        QVERIFY(scene.moveToLayout(*refined));
        QCOMPARE(scene.nodeItem(picked), node); // the same item, moved (and sized as dot rounded it)
        QCOMPARE(node->pos(), QPointF(refined->nodes[picked].x, refined->nodes[picked].y));
        QVERIFY(node->pos() != before);
        QCOMPARE(scene.selectedNode(), picked);
        QVERIFY(edge->isCut());

        GraphScene fresh; // where a fresh build of the refinement puts everything
        fresh.setGraph(&graph);
        fresh.applyLayout(*refined);
        QCOMPARE(scene.sceneRect(), fresh.sceneRect());
        for (NodeId id = 0; id < graph.size(); ++id) {
            QCOMPARE(scene.nodeItem(id)->pos(), fresh.nodeItem(id)->pos());
            QCOMPARE(scene.nodeItem(id)->boundingRect(), fresh.nodeItem(id)->boundingRect());
        }
        std::map<std::pair<NodeId, NodeId>, QPainterPath> freshPaths;
        for (QGraphicsItem* item : fresh.items())
            if (item->type() == EdgeItem::Type) {
                auto* e = static_cast<EdgeItem*>(item);
                freshPaths[{e->from(), e->to()}] = e->path();
            }
        size_t edges = 0;
        for (QGraphicsItem* item : scene.items())
            if (item->type() == EdgeItem::Type) {
                auto* e = static_cast<EdgeItem*>(item);
                QCOMPARE(e->path(), freshPaths.at({e->from(), e->to()}));
                QCOMPARE(e->boundingRect(), [&] {
                    for (QGraphicsItem* f : fresh.items())
                        if (f->type() == EdgeItem::Type && static_cast<EdgeItem*>(f)->from() == e->from() &&
                            static_cast<EdgeItem*>(f)->to() == e->to())
                            return f->boundingRect();
                    return QRectF();
                }());
                ++edges;
            }
        QCOMPARE(edges, freshPaths.size());

        layout::LayoutResult fewerEdges = *refined;
        fewerEdges.edges.pop_back();
        QVERIFY(!scene.moveToLayout(fewerEdges));
        layout::LayoutResult otherEdge = *refined;
        std::swap(otherEdge.edges[0].from, otherEdge.edges[0].to);
        otherEdge.nodes[0].x += 100;
        QVERIFY(!scene.moveToLayout(otherEdge));
        QCOMPARE(scene.nodeItem(0)->pos(), fresh.nodeItem(0)->pos()); // nothing moved
    }

    void edgeRunsKeepTheVisibleCurve() {
        EdgeItem edge(longRoute(20, 300));
        const QRectF rect(-150, 9400, 300, 200);
        const auto runs = EdgeItem::visibleRuns(edge.path(), rect);
        QVERIFY(runs && !runs->empty());
        QPainterPath shown;
        for (const EdgeItem::Run& run : *runs)
            shown.addPath(run.path);
        QVERIFY(shown.controlPointRect().height() < 1000); // not the 20,000 units of the whole edge
        // Every point of the edge inside the rectangle is on a run.
        int inside = 0;
        for (int i = 0; i <= 20000; ++i) {
            const QPointF p = edge.path().pointAtPercent(i / 20000.0);
            if (!rect.contains(p))
                continue;
            ++inside;
            double nearest = 1e9;
            for (int j = 0; j <= 4000; ++j) {
                const QPointF q = shown.pointAtPercent(j / 4000.0);
                nearest = std::min(nearest, std::hypot(p.x() - q.x(), p.y() - q.y()));
            }
            QVERIFY2(
                nearest < 1.0,
                qPrintable(QStringLiteral("(%1, %2) is %3 off the runs").arg(p.x()).arg(p.y()).arg(nearest)));
        }
        QVERIFY(inside > 5);
        // A curve inside the rectangle is one run, itself.
        const auto all = EdgeItem::visibleRuns(edge.path(), QRectF(-1000, -1000, 2000, 30000));
        QVERIFY(all && all->size() == 1);
        QCOMPARE(all->front().path.elementCount(), edge.path().elementCount());
        QCOMPARE(all->front().start, 0.0);
        // A straight edge (a hull without width) is kept; its run starts where it enters, a length along it.
        EdgeItem straight(longRoute(10, 0));
        const auto line = EdgeItem::visibleRuns(straight.path(), QRectF(-10, 4500, 20, 100));
        QVERIFY(line && line->size() == 1);
        const QPointF entry = line->front().path.elementAt(0);
        QVERIFY(entry.y() <= 4500 && entry.y() > 4000);
        QVERIFY(std::abs(line->front().start - entry.y()) < 1e-6);
        // Nothing near: no run.
        const auto none = EdgeItem::visibleRuns(edge.path(), QRectF(5000, 5000, 10, 10));
        QVERIFY(none && none->empty());
    }

    // What the canvas paints of a long edge is what stroking the whole of it paints, solid or dashed.
    void longEdgePaintsAsWhole() {
        EdgeItem edge(longRoute(20, 300));
        const QRectF area(-100, 9900, 200, 200);
        auto [clipped, whole] = paintedBothWays(edge, area);
        QVERIFY(darkPixels(whole) > 100);
        QVERIFY2(differingPixels(clipped, whole, 48) <= 4,
                 qPrintable(QString::number(differingPixels(clipped, whole, 48))));
        // The cut pen is dashed: the pattern keeps its phase where the stroked stretch starts.
        EdgeItem cut(longRoute(10, 0));
        cut.setCut(true);
        auto [clippedCut, wholeCut] = paintedBothWays(cut, QRectF(-100, 4470, 200, 200));
        QVERIFY(darkPixels(wholeCut) > 100);
        QVERIFY2(differingPixels(clippedCut, wholeCut, 48) <= 4,
                 qPrintable(QString::number(differingPixels(clippedCut, wholeCut, 48))));
    }

private:
    QTemporaryDir dir_;
    std::shared_ptr<const Graph> graph_;
};

QTEST_MAIN(TestViewCanvas)
#include "tst_view_canvas.moc"
