// Runtime overlays on the canvas: a real profile of gpt_block2 (jointscope-cli) becomes a heat map,
// validation mismatches become markers; both survive a relayout and go with the graph. Writes
// runtime_heat.png into the build tree (look at it).
#include "testutil.h"
#include "viewtestutil.h"

#include "canvas/GraphScene.h"
#include "canvas/HeatLegend.h"
#include "canvas/HeatScale.h"
#include "canvas/NodeItem.h"
#include "layout/GraphLayout.h"
#include "models/CliJob.h"
#include "models/ProfileModel.h"
#include "panels/RuntimePanel.h"

#include <QDir>
#include <QFile>
#include <QGraphicsView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cmath>
#include <map>
#include <optional>

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

    // Op times span decades: equal time ratios get equal steps of the colour scale.
    void heatScaleIsLogarithmic() {
        const HeatScale scale = HeatScale::of({-1.0, 0.0, 40.0, 4.0, 400.0, std::nan("")});
        QCOMPARE(scale.minUs, 4.0); // not run (-1), below resolution (0) and garbage stretch nothing
        QCOMPARE(scale.maxUs, 400.0);
        QCOMPARE(scale.fraction(4.0), 0.0);
        QCOMPARE(scale.fraction(400.0), 1.0);
        QVERIFY(std::abs(scale.fraction(40.0) - 0.5) < 1e-12); // linear would say 0.09
        QCOMPARE(scale.fraction(0.0), 0.0);
        QCOMPARE(scale.fraction(1.0), 0.0);    // below the fastest: clamped
        QCOMPARE(scale.fraction(9000.0), 1.0); // above the slowest: clamped

        const HeatScale decades{1.0, 1000.0};
        QVERIFY(std::abs(decades.fraction(10.0) - 1.0 / 3) < 1e-12);
        QVERIFY(std::abs(decades.fraction(100.0) - 2.0 / 3) < 1e-12);
        QVERIFY(std::abs(decades.fraction(std::sqrt(1000.0)) - 0.5) < 1e-12);
        QCOMPARE(decades.ticks(), (std::vector<double>{1, 10, 100, 1000}));
        // Less than two powers of ten inside: 1-2-5 steps.
        QCOMPARE((HeatScale{3.0, 40.0}.ticks()), (std::vector<double>{5, 10, 20}));
        // Every op as slow as the slowest; no op timed at all.
        QCOMPARE((HeatScale{7.0, 7.0}.fraction(7.0)), 1.0);
        QVERIFY(!HeatScale::of({-1.0, 0.0}).valid());
        QVERIFY(HeatScale::of({-1.0, 0.0}).ticks().empty());
    }

    void legendLabelsTheTicks() {
        QWidget canvas;
        canvas.resize(800, 600);
        HeatLegend legend(&canvas);
        legend.setScale(HeatScale{1.0, 10000.0}, 12345.0, QStringLiteral("AMD EPYC"));
        // Both ends as measured, the powers of ten between them.
        QCOMPARE(legend.tickLabels(),
                 (QStringList{QStringLiteral("1.00 µs"), QStringLiteral("10 µs"), QStringLiteral("100 µs"),
                              QStringLiteral("1 ms"), QStringLiteral("10.0 ms")}));
        legend.setScale(HeatScale{2.5, 2.5}, 2.5, QStringLiteral("cpu"));
        QCOMPARE(legend.tickLabels(), QStringList{QStringLiteral("2.50 µs")});
        QImage image(legend.size(), QImage::Format_ARGB32);
        legend.render(&image); // paints without a profile device or ticks between the ends
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
        // Every timed node sits on the log scale between the fastest and the slowest op.
        double fastestUs = 0;
        for (double t : times)
            if (t > 0 && (fastestUs == 0 || t < fastestUs))
                fastestUs = t;
        const double slowestUs = times[slowest];
        QVERIFY(fastestUs > 0 && slowestUs > fastestUs);
        for (NodeId id = 0; id < g.size(); ++id)
            if (times[id] > 0)
                QCOMPARE(
                    scene.nodeItem(id)->heatColor(),
                    GraphScene::heatColor(std::log(times[id] / fastestUs) / std::log(slowestUs / fastestUs)));
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

    // The legend stays up while a HOP body (or a body inside it) of the profiled graph is open, also when
    // the profile finishes there; back on the profiled graph its heat map is shown. The snippet is a Dynamo
    // graph the runtime cannot run, so a stand-in CLI prints a profile of its root nodes.
    void legendFollowsHopBodies() {
        const std::string path = sharedPath("graphs/snippets/hop_nested_invoke_subgraph.txt");
        const Graph g = loadSharedGraph("graphs/snippets/hop_nested_invoke_subgraph.txt");
        const std::optional<NodeId> call = g.find("subgraph_0");
        QVERIFY(call && g.node(*call).subgraph >= 0);
        const Graph* body = g.subgraph(g.node(*call).subgraph);
        const std::optional<NodeId> inner = body->find("wrap_body_0");
        QVERIFY(inner && body->node(*inner).subgraph >= 0);
        const Graph* nested = body->subgraph(body->node(*inner).subgraph);
        const Graph other = loadSharedGraph("graphs/torch-1.13/mlp/joint.txt");

        QJsonArray nodes;
        const std::map<std::string, double> timesUs = {{"invoke_subgraph", 480.0}, {"detach", 1.2}};
        for (NodeId id = 0; id < g.size(); ++id) {
            QJsonObject n{{"name", q(g.node(id).name)}};
            if (auto it = timesUs.find(g.node(id).name); it != timesUs.end())
                n["time_us"] = it->second;
            else
                n["skipped"] = QStringLiteral("not timed");
            nodes.append(n);
        }
        QTemporaryDir dir;
        QFile json(dir.filePath(QStringLiteral("profile.json")));
        QVERIFY(json.open(QIODevice::WriteOnly));
        json.write(QJsonDocument(QJsonObject{{"device", "AMD EPYC"}, {"nodes", nodes}}).toJson());
        json.close();
        QFile script(dir.filePath(QStringLiteral("jointscope-cli")));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(QStringLiteral("#!/bin/sh\ncat '%1'\n").arg(json.fileName()).toUtf8());
        script.close();
        script.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);

        GraphScene scene;
        QGraphicsView view(&scene);
        view.resize(900, 700);
        view.show();
        RuntimePanel panel(&scene, &view);
        panel.job()->setCliPath(script.fileName());
        auto* legend = view.findChild<HeatLegend*>();
        QVERIFY(legend);
        auto show = [&](const Graph* graph) { // what MainWindow does when it opens a graph or a body
            scene.setGraph(graph);
            panel.sceneGraphChanged();
            layOutScene(scene);
        };
        panel.setGraph(q(path), QString(), &g);
        show(&g);
        show(body);

        QSignalSpy finished(panel.job(), &CliJob::finished);
        panel.profile();
        QVERIFY(finished.wait(30000));
        QVERIFY2(panel.job()->state() == CliJob::State::Succeeded, qPrintable(panel.job()->error()));
        QVERIFY(legend->isVisible());
        QVERIFY(legend->note().contains(QStringLiteral("HOP body")));
        QCOMPARE(legend->tickLabels().first(), QStringLiteral("1.20 µs"));
        QCOMPARE(legend->tickLabels().last(), QStringLiteral("480 µs"));
        for (NodeId id = 0; id < body->size(); ++id) // the body's nodes were not timed: no heat on them
            QVERIFY(!scene.nodeItem(id)->heatColor().isValid());

        show(nested);
        QVERIFY(legend->isVisible());
        QVERIFY(!legend->note().isEmpty());

        show(&g);
        QVERIFY(legend->isVisible());
        QVERIFY(legend->note().isEmpty());
        QCOMPARE(scene.nodeItem(*g.find("invoke_subgraph"))->heatColor(), GraphScene::heatColor(1.0));
        QCOMPARE(scene.nodeItem(*g.find("detach"))->heatColor(), GraphScene::heatColor(0.0));

        show(&other); // not a body of the profiled graph
        QVERIFY(!legend->isVisible());
        show(nested);
        QVERIFY(legend->isVisible());
    }
};

QTEST_MAIN(TestRuntimeOverlay)
#include "tst_view_runtime.moc"
