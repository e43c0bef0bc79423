// Renders the canvas of real graphs offscreen into PNGs in the build tree and checks they show something:
// not uniform, and with the forward / backward / primal colours present.
#include "testutil.h"
#include "viewtestutil.h"

#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/NodeItem.h"
#include "io/GraphFile.h"
#include "layout/GraphLayout.h"
#include "layout/Grouping.h"
#include "layout/LadderLayout.h"

#include <QApplication>
#include <QDir>
#include <QImage>
#include <QSignalSpy>

#include <set>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

int pixelsOf(const QImage& image, QColor color) {
    int count = 0;
    const QRgb wanted = color.rgb();
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            count += (image.pixel(x, y) & 0xffffff) == (wanted & 0xffffff);
    return count;
}

QString outPath(const QString& name) {
    return QDir(QCoreApplication::applicationDirPath()).filePath(name);
}

} // namespace

class TestScreenshot : public QObject {
    Q_OBJECT
private slots:
    void gptBlockCanvas() {
        const Graph g = loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        GraphScene scene;
        scene.setGraph(&g);
        layOutScene(scene);
        QVERIFY(scene.hasLayout());
        QCOMPARE(scene.items().size(), qsizetype(g.size() + layout::graphEdges(g).size()));

        const QImage image = scene.renderImage(0.6);
        const QString path = outPath(QStringLiteral("screenshot_gpt_block2_canvas.png"));
        QVERIFY(image.save(path));
        const QImage saved(path);
        QVERIFY(!saved.isNull());
        QVERIFY(saved.width() > 200 && saved.height() > 200);
        std::set<QRgb> colours;
        for (int y = 0; y < saved.height(); y += 3)
            for (int x = 0; x < saved.width(); x += 3)
                colours.insert(saved.pixel(x, y));
        QVERIFY2(colours.size() > 20, "the picture is (nearly) uniform");
        // Box fills of each kind of node are visible.
        for (NodeRole role : {NodeRole::Forward, NodeRole::Backward, NodeRole::Primal, NodeRole::Tangent})
            QVERIFY2(pixelsOf(saved, roleColors(role).fill) > 100, qPrintable(roleName(role)));
    }

    // The ladder of gpt_block2 with every group open: each layer's forward and backward a frame laid out by
    // dot.
    void openLadderCanvas() {
        if (!layout::graphvizAvailable())
            QSKIP("built without Graphviz");
        const Graph g = loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        auto tree = std::make_shared<const layout::GroupTree>(layout::buildGroupTree(g));
        const layout::CollapsedView view =
            layout::collapseView(g, tree, std::vector<char>(tree->groups.size(), 1));
        layout::LayoutOptions options;
        options.algorithm = layout::LayoutAlgorithm::Ladder;
        options.frameAlgorithm = layout::LayoutAlgorithm::Graphviz;
        options.sides = layout::ladderSides(g, view);
        options.clusters = layout::viewClusters(view);
        auto result = layout::computeLayout(layout::viewLayoutGraph(view), options);
        QVERIFY(result);
        result->view = std::make_shared<const layout::CollapsedView>(view);
        GraphScene scene;
        scene.setGraph(&g);
        scene.applyCollapsedLayout(*result);
        const QImage image = scene.renderImage(0.5);
        QVERIFY(image.save(outPath(QStringLiteral("screenshot_gpt_block2_open_ladder.png"))));
        for (NodeRole role : {NodeRole::Forward, NodeRole::Backward})
            QVERIFY2(pixelsOf(image, roleColors(role).fill) > 100, qPrintable(roleName(role)));
    }

    void viewWidgetGrab() {
        const Graph g = loadSharedGraph("graphs/snippets/hop_nested_invoke_subgraph.txt");
        GraphScene scene;
        scene.setGraph(&g);
        layOutScene(scene);
        GraphView view;
        view.setScene(&scene);
        view.resize(800, 600);
        view.show();
        view.fitAll();
        QVERIFY(view.zoom() > 0 && view.zoom() <= 1.5);
        QSignalSpy selected(&scene, &GraphScene::nodeSelected);
        const auto invoke = g.find("invoke_subgraph");
        QVERIFY(invoke.has_value());
        scene.selectNode(*invoke);
        QCOMPARE(selected.count(), 1);
        QCOMPARE(scene.selectedNode(), *invoke);
        view.centreOnNode(*invoke);
        QVERIFY(view.zoom() >= 0.8); // labels readable
        const QImage image = view.grab().toImage();
        QVERIFY(image.save(outPath(QStringLiteral("screenshot_hop_view.png"))));
        QCOMPARE(image.size(), view.viewport()->size() * image.devicePixelRatio());
        QVERIFY(pixelsOf(image, QColor(0xdc, 0x26, 0x26)) > 20); // the selection outline
    }

    void levelOfDetailHidesLabels() {
        const Graph g = loadSharedGraph("graphs/snippets/hop_nested_invoke_subgraph.txt");
        GraphScene scene;
        scene.setGraph(&g);
        layOutScene(scene);
        // A lone box rendered near and far: text pixels (dark) only when near.
        NodeItem* item = scene.nodeItem(0);
        QVERIFY(item);
        auto dark = [](const QImage& image) {
            int count = 0;
            for (int y = 0; y < image.height(); ++y)
                for (int x = 0; x < image.width(); ++x)
                    count += qGray(image.pixel(x, y)) < 80;
            return count;
        };
        const QRectF box = item->sceneBoundingRect();
        for (double scale : {2.0, 0.3}) {
            QImage image((box.size() * scale).toSize(), QImage::Format_ARGB32);
            image.fill(Qt::white);
            QPainter painter(&image);
            scene.render(&painter, QRectF(QPointF(), QSizeF(image.size())), box);
            painter.end();
            if (scale > 1)
                QVERIFY(dark(image) > 30);
            else
                QCOMPARE(dark(image), 0);
        }
    }
};

QTEST_MAIN(TestScreenshot)
#include "tst_view_screenshot.moc"
