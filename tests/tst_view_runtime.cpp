// Runtime overlays on the canvas: a real profile of gpt_block2 (jointscope-cli) becomes a heat map,
// validation mismatches become markers; both survive a relayout and go with the graph. Writes
// runtime_heat.png into the build tree (look at it).
#include "testutil.h"
#include "viewtestutil.h"

#include "canvas/GraphScene.h"
#include "canvas/NodeItem.h"
#include "layout/GraphLayout.h"
#include "models/ProfileModel.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

class TestRuntimeOverlay : public QObject {
    Q_OBJECT
private slots:
    void heatColoursRunFromPaleToDark() {
        const QColor cold = GraphScene::heatColor(0.0);
        const QColor mid = GraphScene::heatColor(0.5);
        const QColor hot = GraphScene::heatColor(1.0);
        QVERIFY(cold.lightnessF() > mid.lightnessF());
        QVERIFY(mid.lightnessF() > hot.lightnessF());
        QCOMPARE(GraphScene::heatColor(2.0), hot); // clamped
        QCOMPARE(GraphScene::heatColor(-1.0), cold);
    }

    void profileHeatMapAndMismatchMarkers() {
        const Graph g = loadSharedGraph("graphs/torch-1.13/gpt_block2/joint.txt");
        const Run profile =
            runCli({"profile", QString::fromStdString(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt")),
                    "--json", "--reps", "2", "--no-db"});
        QCOMPARE(profile.exitCode, 0);
        ProfileModel model;
        QVERIFY(
            model.setResult(QJsonDocument::fromJson(QByteArray::fromStdString(profile.out)).object(), &g));

        GraphScene scene;
        scene.setGraph(&g);
        layOutScene(scene);
        const std::vector<double> times = model.nodeTimes(g.size());
        scene.setHeat(times);
        const NodeId slowest = NodeId(std::max_element(times.begin(), times.end()) - times.begin());
        const std::optional<NodeId> view = g.find("view"); // aten.view: skipped, not run
        const std::optional<NodeId> mm = g.find("addmm");
        QVERIFY(view && mm);
        QVERIFY(times[*view] < 0);
        QCOMPARE(scene.nodeItem(slowest)->heatColor(), GraphScene::heatColor(1.0));
        QVERIFY(scene.nodeItem(*view)->heatColor().isValid());
        QVERIFY(scene.nodeItem(*view)->heatColor().saturation() < 30); // grey: not run
        QVERIFY(scene.nodeItem(*mm)->heatColor().saturation() > 60);

        const std::optional<NodeId> out = g.find("add_3"); // the block's forward output
        QVERIFY(out);
        scene.setMismatches({*out});
        QVERIFY(scene.nodeItem(*out)->mismatch());
        QVERIFY(!scene.nodeItem(*mm)->mismatch());

        // A relayout of the same graph keeps both overlays.
        layOutScene(scene);
        QCOMPARE(scene.nodeItem(slowest)->heatColor(), GraphScene::heatColor(1.0));
        QVERIFY(scene.nodeItem(*out)->mismatch());

        const QImage image = scene.renderImage(0.5);
        const QString path =
            QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("runtime_heat.png"));
        QVERIFY(image.save(path));

        // Another graph (a HOP body opened) shows none of them; back on the profiled graph they return.
        const Graph other = loadSharedGraph("graphs/torch-1.13/mlp/joint.txt");
        scene.setGraph(&other);
        layOutScene(scene);
        for (NodeId id = 0; id < other.size(); ++id) {
            QVERIFY(!scene.nodeItem(id)->heatColor().isValid());
            QVERIFY(!scene.nodeItem(id)->mismatch());
        }
        scene.setGraph(&g);
        layOutScene(scene);
        QCOMPARE(scene.nodeItem(slowest)->heatColor(), GraphScene::heatColor(1.0));
        QVERIFY(scene.nodeItem(*out)->mismatch());

        // Clearing drops them.
        scene.setHeat({});
        scene.setMismatches({});
        QVERIFY(!scene.nodeItem(slowest)->heatColor().isValid());
        QVERIFY(!scene.nodeItem(*out)->mismatch());
    }
};

QTEST_MAIN(TestRuntimeOverlay)
#include "tst_view_runtime.moc"
