// The Runtime panel end to end on the offscreen platform: Profile and Validate run the real jointscope-cli on
// gpt_block2, fill the tables, paint the heat map on the scene and locate nodes from table rows.
#include "testutil.h"

#include "canvas/GraphScene.h"
#include "canvas/NodeItem.h"
#include "io/GraphFile.h"
#include "layout/GraphLayout.h"
#include "models/CliJob.h"
#include "models/ProfileModel.h"
#include "models/ValidationModel.h"
#include "panels/RuntimePanel.h"

#include <QComboBox>
#include <QGraphicsView>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>

#include <optional>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;

class TestRuntimePanel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        // The child inherits it: the user's own profile DB stays untouched.
        QVERIFY(dir_.isValid());
        qputenv("JOINTSCOPE_PROFILE_DB", dir_.filePath(QStringLiteral("profiles.sqlite")).toLocal8Bit());
    }

    void profileThenValidate() {
        const QString path = QString::fromStdString(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));
        Expected<GraphFile> file = GraphFile::open(path.toStdString());
        QVERIFY(file);
        Expected<Graph> loaded = file->load(0);
        QVERIFY(loaded);
        const Graph& g = *loaded;

        GraphScene scene;
        scene.setGraph(&g);
        layout::LayoutOptions options;
        options.sizes = scene.measureNodes();
        auto result = layout::computeLayout(g, options);
        QVERIFY(result);
        scene.applyLayout(*result);
        QGraphicsView view(&scene);
        RuntimePanel panel(&scene, &view);
        panel.job()->setCliPath(test::cliPath());
        panel.setGraph(path, QString(), &g);
        panel.setReps(1);
        QSignalSpy finished(panel.job(), &CliJob::finished);
        QSignalSpy requested(&panel, &RuntimePanel::nodeRequested);

        panel.profile();
        QVERIFY(panel.job()->running());
        QVERIFY(finished.wait(300000));
        QVERIFY2(panel.job()->state() == CliJob::State::Succeeded, qPrintable(panel.job()->error()));
        QCOMPARE(panel.profileModel()->rowCount(), int(g.size()));
        QCOMPARE(scene.heat().size(), g.size());
        const std::optional<NodeId> addmm = g.find("addmm");
        QVERIFY(addmm);
        QVERIFY(scene.nodeItem(*addmm)->heatColor().isValid());

        // A click on the first (slowest) row asks for that node.
        auto* table = panel.findChild<QTableView*>(QStringLiteral("profileTable"));
        QVERIFY(table && table->model()->rowCount() == int(g.size()));
        const QModelIndex first = table->model()->index(0, 0);
        emit table->clicked(first);
        QCOMPARE(requested.size(), 1);
        QCOMPARE(QString::fromStdString(g.node(requested[0][0].toUInt()).name), first.data().toString());

        panel.validate();
        QVERIFY(finished.wait(120000));
        QVERIFY2(panel.job()->state() == CliJob::State::Succeeded, qPrintable(panel.job()->error()));
        QVERIFY(panel.validationModel()->ok());
        QCOMPARE(panel.validationModel()->rowCount(), 26); // gpt_block2's `return [...]` lists 26 values
        QVERIFY(scene.mismatches().empty());

        // Another graph: results and overlays go.
        panel.setGraph(path, QString(), nullptr);
        QCOMPARE(panel.profileModel()->rowCount(), 0);
        QCOMPARE(panel.validationModel()->rowCount(), 0);
        QVERIFY(scene.heat().empty());
        QVERIFY(!scene.nodeItem(*addmm)->heatColor().isValid());
    }

    // Issue 15: "a changed Reps value is ignored by the profile cache with no way to re-measure, and Cancel
    // throws away partial results".
    void repsRemeasureAndCancelKeepPartial() {
        const char* relative = "graphs/torch-1.13/mlp/joint.txt";
        const QString path = q(sharedPath(relative));
        const Graph g = loadSharedGraph(relative);
        GraphScene scene;
        scene.setGraph(&g);
        QGraphicsView view(&scene);
        RuntimePanel panel(&scene, &view);
        panel.job()->setCliPath(test::cliPath());
        panel.setGraph(path, QString(), &g);
        QSignalSpy finished(panel.job(), &CliJob::finished);
        auto run = [&](void (RuntimePanel::*start)()) {
            finished.clear();
            (panel.*start)();
            QVERIFY(finished.wait(300000));
            QVERIFY2(panel.job()->state() == CliJob::State::Succeeded, qPrintable(panel.job()->error()));
        };
        auto count = [&](const char* key) { return panel.job()->result().value(QLatin1String(key)).toInt(); };

        panel.setReps(1);
        run(&RuntimePanel::remeasure); // whatever the DB held: measured now
        const int signatures = count("measured");
        QVERIFY(signatures > 0);
        QCOMPARE(count("cached"), 0);
        run(&RuntimePanel::profile); // same reps: all from the DB
        QCOMPARE(count("measured"), 0);
        QCOMPARE(count("cached"), signatures);
        panel.setReps(3); // more reps than the DB's rows were timed over: measured again
        run(&RuntimePanel::profile);
        QCOMPARE(count("measured"), signatures);
        QCOMPARE(count("reps"), 3);
        panel.setReps(2); // fewer: the 3-rep medians serve
        run(&RuntimePanel::profile);
        QCOMPARE(count("cached"), signatures);
        auto* remeasure = panel.findChild<QPushButton*>(QStringLiteral("remeasureButton"));
        QVERIFY(remeasure && remeasure->isEnabled());
        finished.clear();
        remeasure->click();
        QVERIFY(!remeasure->isEnabled()); // one run at a time
        QVERIFY(finished.wait(300000));
        QCOMPARE(count("measured"), signatures);
        QCOMPARE(count("cached"), 0);

        // Cancel midway: the ops measured so far stay in the table and on the canvas, marked partial.
        panel.setReps(5000);
        finished.clear();
        panel.remeasure();
        QTRY_VERIFY_WITH_TIMEOUT(panel.job()->progressValue() >= 10, 120000); // past the placeholders
        QVERIFY(panel.job()->running());
        panel.job()->cancel();
        QVERIFY(finished.wait(60000));
        QCOMPARE(panel.job()->state(), CliJob::State::Cancelled);
        QVERIFY(panel.job()->result().value(QStringLiteral("cancelled")).toBool());
        const int kept = panel.profileModel()->totals().timed;
        QVERIFY2(kept > 0 && kept < int(g.size()), qPrintable(panel.profileModel()->summary()));
        QVERIFY(panel.profileModel()->summary().contains(QStringLiteral("partial")));
        QCOMPARE(scene.heat().size(), g.size());
    }

    // The device list is what `jointscope-cli devices` finds on this machine (CPU only here), not a fixed
    // cpu + cuda:0.
    void deviceListComesFromTheCli() {
        GraphScene scene;
        QGraphicsView view(&scene);
        RuntimePanel panel(&scene, &view);
        QCOMPARE(panel.devices(), (QStringList{QStringLiteral("cpu"), QStringLiteral("cuda:0")}));
        panel.setDevice(QStringLiteral("cpu"));

        panel.devicesJob()->setCliPath(QStringLiteral("/nonexistent/bin/jointscope-cli"));
        QSignalSpy messages(&panel, &RuntimePanel::message);
        panel.listDevices();
        QCOMPARE(messages.size(), 1); // says why, keeps the list
        QVERIFY(messages[0][0].toString().contains(QStringLiteral("/nonexistent/bin/jointscope-cli")));
        QCOMPARE(panel.devices().size(), 2);

        panel.devicesJob()->setCliPath(test::cliPath());
        QSignalSpy listed(panel.devicesJob(), &CliJob::finished);
        panel.listDevices();
        QVERIFY(listed.wait(60000));
        QCOMPARE(panel.devices(), expectedDeviceSpecs());
        auto* combo = panel.findChild<QComboBox*>(QStringLiteral("deviceCombo"));
        QVERIFY(combo);
        QCOMPARE(combo->currentText(), QStringLiteral("cpu"));
        QVERIFY(!combo->itemData(0, Qt::ToolTipRole).toString().isEmpty()); // the CPU's name
    }

private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestRuntimePanel)
#include "tst_gui_runtimepanel.moc"
