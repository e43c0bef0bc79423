// The Graph Diff dock in the main window, offscreen: a folder of per-rank logs (tests/data/multirank, where
// rank 1 adds tanh, *2 and a second all_reduce + wait to its second compile) opens on the first graph that
// differs across ranks; Compare lists the differences, Next / Previous Difference select and centre each in
// the graph that has it, and the canvas frames the differing nodes of the graph shown.
#include "guitestutil.h"
#include "testutil.h"

#include "CanvasFeature.h"
#include "DecisionDiffFeature.h"
#include "DiffFeature.h"
#include "MainWindow.h"
#include "PartitionDocument.h"
#include "PartitionFeature.h"
#include "canvas/GraphScene.h"
#include "canvas/NodeItem.h"
#include "io/FxWriter.h"
#include "io/GraphFile.h"
#include "models/DecisionDiffModel.h"
#include "models/DiffModel.h"
#include "partition/DecisionDiff.h"
#include "partition/Partitioner.h"

#include <QAction>
#include <QDockWidget>
#include <QFile>
#include <QGraphicsItem>
#include <QRadioButton>
#include <QSettings>
#include <QTableView>
#include <QTemporaryDir>

#include <optional>

using namespace jointscope;
using namespace jointscope::test;
using jointscope::gui::MainWindow;

namespace {

// views/canvas/DiffOverlay.cpp's DiffFrame: the frame drawn around a differing node.
constexpr int kDiffFrameType = QGraphicsItem::UserType + 50;

QString selectedName(const MainWindow& window) {
    for (QGraphicsItem* item : window.scene()->selectedItems())
        if (item->type() == views::NodeItem::Type)
            return QString::fromStdString(
                window.canvasFeature()->root()->node(static_cast<views::NodeItem*>(item)->nodeId()).name);
    return {};
}

int framedNodes(const MainWindow& window) {
    int frames = 0;
    for (QGraphicsItem* item : window.scene()->items())
        frames += item->type() == kDiffFrameType;
    return frames;
}

// The node names of `ids` in the decision's graph.
std::vector<std::string> names(const partition::Partition& p, const std::vector<NodeId>& ids) {
    std::vector<std::string> out;
    for (NodeId id : ids)
        out.push_back(p.graph.node(id).name);
    return out;
}

// The names of `from` that `other` lacks, in `from`'s order, as the list shows them.
QStringList missing(const std::vector<std::string>& from, const std::vector<std::string>& other) {
    QStringList out;
    for (const std::string& name : from)
        if (std::find(other.begin(), other.end(), name) == other.end())
            out << QString::fromStdString(name);
    return out;
}

} // namespace

class TestGuiDiff : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

private slots:
    void initTestCase() { test::isolateUserDirs(dir_, QStringLiteral("tst_gui_diff")); }

    void stepsThroughRankDifferences() {
        MainWindow window(false);
        window.show();
        const std::string folderPath = sourcePath("tests/data/multirank");
        QVERIFY(window.openFile(QString::fromStdString(folderPath)));
        QTRY_VERIFY_WITH_TIMEOUT(!window.loading() && window.scene()->hasLayout() && !window.layoutBusy(),
                                 60000);
        gui::DiffFeature* diff = window.feature<gui::DiffFeature>();
        QTRY_VERIFY_WITH_TIMEOUT(
            diff->divergenceText().contains(QStringLiteral("1 compiles schedule different collectives")),
            60000);

        // Preset: the dynamo graph of compile 1/0, rank 0 against rank 1.
        auto folder = GraphFile::open(folderPath);
        QVERIFY(folder);
        const auto [a, b] = diff->picked();
        const GraphEntry& entryA = folder->graphs()[size_t(a)];
        const GraphEntry& entryB = folder->graphs()[size_t(b)];
        QCOMPARE(entryA.compileId, std::string("1/0"));
        QCOMPARE(entryA.kind, std::string("dynamo_output_graph"));
        QCOMPARE(entryA.rank, 0);
        QCOMPARE(entryB.kind, entryA.kind);
        QCOMPARE(entryB.compileId, entryA.compileId);
        QCOMPARE(entryB.rank, 1);

        // Compare with the inference graphs instead: 4 nodes only rank 1 has (tanh, mul, all_reduce_1,
        // wait_tensor_1), no node only rank 0 has.
        diff->pick(*folder->select("rank0:aot_inference_graph@1/0"),
                   *folder->select("rank1:aot_inference_graph@1/0"));
        bool compared = false;
        diff->compare([&](bool ok) { compared = ok; });
        QTRY_VERIFY_WITH_TIMEOUT(compared, 60000);
        const GraphDiff* result = diff->model()->diff();
        QVERIFY(result);
        QCOMPARE(result->added, size_t(4));
        QCOMPARE(result->removed, size_t(0));
        QCOMPARE(diff->shownSide(), std::optional<bool>(false));
        // Graph A shown: its changed nodes framed (the added ones are not in it).
        QCOMPARE(window.canvasFeature()->root()->size(), size_t(13));
        QCOMPARE(framedNodes(window), int(result->changed));

        // Next: the first difference is added tanh, in graph B (17 nodes), selected.
        bool centred = false;
        diff->actions().next->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(diff->shownSide(), std::optional<bool>(true), 60000);
        QTRY_COMPARE_WITH_TIMEOUT(selectedName(window), QStringLiteral("tanh"), 60000);
        QCOMPARE(diff->currentRow(), 0);
        QCOMPARE(window.canvasFeature()->root()->size(), size_t(17));
        QCOMPARE(framedNodes(window), int(result->added + result->changed));

        // Every further step selects the row's node in the graph the canvas then shows.
        for (int row = 1; row < diff->model()->rowCount(); ++row) {
            centred = false;
            diff->step(1, [&] { centred = true; });
            QTRY_VERIFY_WITH_TIMEOUT(centred, 60000);
            QCOMPARE(diff->currentRow(), row);
            const QModelIndex index = diff->model()->index(row, 0);
            const bool sideB = *diff->shownSide();
            const QVariant id = index.data(sideB ? views::DiffModel::NodeBRole : views::DiffModel::NodeARole);
            QVERIFY(id.isValid());
            QCOMPARE(selectedName(window),
                     QString::fromStdString(window.canvasFeature()->root()->node(NodeId(id.toUInt())).name));
        }
        // Previous from the first row wraps to the last: an edge only rank 0's graph has, shown in A.
        diff->goTo(0);
        centred = false;
        diff->step(-1, [&] { centred = true; });
        QTRY_VERIFY_WITH_TIMEOUT(centred, 60000);
        QCOMPARE(diff->currentRow(), diff->model()->rowCount() - 1);
        QCOMPARE(diff->model()->index(diff->currentRow(), 0).data(views::DiffModel::KindRole).toString(),
                 QStringLiteral("edge removed"));
        QCOMPARE(diff->shownSide(), std::optional<bool>(false));
        QCOMPARE(window.canvasFeature()->root()->size(), size_t(13));
    }

    // Graph B from another file: a checkpointed joint graph (torch 2.15, gpt_stack_ac) against the same
    // graph written without its tags; the differences are the tags, one per tagged node, and showing B puts
    // the other file's graph on the canvas.
    void graphBFromAnotherFile() {
        const std::string logPath = sourcePath("tests/data/torch2/gpt_stack_ac_trace.log");
        auto log = GraphFile::open(logPath);
        QVERIFY(log);
        const size_t jointEntry = *log->select("aot_joint_graph");
        const Graph tagged = log->load(jointEntry).take();
        const size_t tags =
            size_t(std::count_if(tagged.nodes().begin(), tagged.nodes().end(), [](const Node& n) {
                return !n.meta.recompute.empty() || n.meta.acGraphId >= 0;
            }));
        const QString plainPath = dir_.filePath(QStringLiteral("plain.txt"));
        {
            QFile out(plainPath);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QByteArray::fromStdString(writeFxText(tagged)));
        }

        MainWindow window(false);
        window.show();
        QVERIFY(window.openFile(plainPath));
        QTRY_VERIFY_WITH_TIMEOUT(!window.loading() && window.scene()->hasLayout() && !window.layoutBusy(),
                                 60000);
        gui::DiffFeature* diff = window.feature<gui::DiffFeature>();
        QVERIFY(!diff->setFileB(dir_.filePath(QStringLiteral("missing.log"))));
        QVERIFY(diff->setFileB(QString::fromStdString(logPath)));
        QCOMPARE(diff->fileBName(), QStringLiteral("gpt_stack_ac_trace.log"));
        QCOMPARE(size_t(diff->picked().second), jointEntry); // preset: the joint graph, as A
        bool compared = false;
        diff->compare([&](bool ok) { compared = ok; });
        QTRY_VERIFY_WITH_TIMEOUT(compared, 60000);
        QVERIFY2(diff->summaryText().contains(
                     QStringLiteral("%1 changed (0 renamed, %1 checkpoint tags)").arg(tags)),
                 qPrintable(diff->summaryText()));
        QVERIFY(diff->summaryText().startsWith(QStringLiteral("0 added, 0 removed")));

        // A is shown with the tagged nodes framed; Show B puts the log's graph on the canvas, framed too.
        QTRY_VERIFY_WITH_TIMEOUT(framedNodes(window) == int(tags) && !window.layoutBusy(), 60000);
        QRadioButton* showB = nullptr;
        for (QRadioButton* button : diff->dock()->findChildren<QRadioButton*>())
            if (button->text() == QStringLiteral("Show B"))
                showB = button;
        QVERIFY(showB);
        showB->click();
        QTRY_VERIFY_WITH_TIMEOUT(diff->shownSide().value_or(false) && !window.layoutBusy(), 60000);
        const Graph* shownB = window.canvasFeature()->root();
        QVERIFY(shownB && shownB->size() == tagged.size());
        QVERIFY(std::any_of(shownB->nodes().begin(), shownB->nodes().end(),
                            [](const Node& n) { return !n.meta.recompute.empty(); }));
        QTRY_VERIFY_WITH_TIMEOUT(framedNodes(window) == int(tags), 60000);
    }

    // The Decision Diff dock on torch 1.13's MLP: the decision shown equals torch's own (reference.json);
    // kept at budget 1 and solved again at budget 0 (only the inputs saved), the list holds what moved —
    // the set differences of the two results, taken here; a decision file is a baseline too, a broken one is
    // refused with its place; a row selects its node; another graph drops the baselines.
    void decisionDiffFollowsTheBudget() {
        MainWindow window(false);
        window.show();
        QVERIFY(window.openFile(q(sharedPath("graphs/torch-1.13/mlp/joint.txt"))));
        gui::PartitionDocument* doc = window.feature<gui::PartitionFeature>()->document();
        QTRY_VERIFY_WITH_TIMEOUT(!window.loading() && window.scene()->hasLayout() && !window.layoutBusy() &&
                                     doc->result() && !doc->busy(),
                                 60000);
        gui::DecisionDiffFeature* feature = window.feature<gui::DecisionDiffFeature>();
        QVERIFY(feature);
        views::DecisionDiffModel* model = feature->model();
        QCOMPARE(feature->baselines(), QStringList{QStringLiteral("torch's decision")});
        QCOMPARE(feature->baseline(), 0);
        QCOMPARE(model->rowCount(), 0);
        QVERIFY2(feature->summaryText().contains(QStringLiteral("The same decision")),
                 qPrintable(feature->summaryText()));

        const auto before = doc->result();
        QVERIFY(feature->keepDecision());
        QCOMPARE(feature->baselines().size(), 2);
        QVERIFY(feature->baselines()[1].startsWith(QStringLiteral("kept 1: budget 1.00")));
        QCOMPARE(feature->baseline(), 1);
        QCOMPARE(model->rowCount(), 0);

        doc->setBudget(0.0);
        QTRY_VERIFY_WITH_TIMEOUT(!doc->busy() && doc->result() && doc->result()->options.memoryBudget == 0.0,
                                 60000);
        const auto after = doc->result();
        const std::vector<std::string> savedBefore = names(*before->partition, before->partition->saved);
        const std::vector<std::string> savedAfter = names(*after->partition, after->partition->saved);
        const std::vector<std::string> recBefore = names(*before->partition, before->partition->recomputed);
        const std::vector<std::string> recAfter = names(*after->partition, after->partition->recomputed);
        QVERIFY(!missing(savedBefore, savedAfter).isEmpty()); // budget 0 saves less
        QTRY_COMPARE(model->nodes(views::DecisionChange::SavedOnlyInBaseline),
                     missing(savedBefore, savedAfter));
        QCOMPARE(model->nodes(views::DecisionChange::SavedOnlyHere), missing(savedAfter, savedBefore));
        QCOMPARE(model->nodes(views::DecisionChange::RecomputedOnlyHere), missing(recAfter, recBefore));
        QCOMPARE(model->nodes(views::DecisionChange::RecomputedOnlyInBaseline), missing(recBefore, recAfter));
        QVERIFY2(feature->summaryText().contains(QStringLiteral("budget 0.00")) &&
                     feature->summaryText().contains(QStringLiteral("kept 1 (budget 1.00")),
                 qPrintable(feature->summaryText()));

        // A row selects its node on the canvas.
        auto* table = feature->dock()->findChild<QTableView*>();
        QVERIFY(table);
        table->setCurrentIndex(model->index(0, 1));
        QCOMPARE(selectedName(window), model->index(0, 1).data().toString());
        if (const QString shots = qEnvironmentVariable("JOINTSCOPE_TEST_SHOTS"); !shots.isEmpty()) {
            feature->dock()->raise();
            QTest::qWait(100);
            window.grab().save(shots + QStringLiteral("/decision-diff.png"));
        }

        // Back to torch's decision: budget 0 against it.
        feature->setBaseline(0);
        QVERIFY(model->rowCount() > 0);

        // A decision file as baseline: the budget-0 decision itself, then the same decision.
        const QString file = dir_.filePath(QStringLiteral("budget0.json"));
        {
            QFile out(file);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QByteArray::fromStdString(doc->decisionJson()));
        }
        QVERIFY(feature->openDecision(file));
        QCOMPARE(feature->baselines().last(), QStringLiteral("budget0.json"));
        QCOMPARE(feature->baseline(), 2);
        QCOMPARE(model->rowCount(), 0);
        QVERIFY(feature->summaryText().contains(QStringLiteral("The same decision")));

        const QString broken = dir_.filePath(QStringLiteral("broken.json"));
        {
            QFile out(broken);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write("{\"format\": \"jointscope-decision\", \"saved\": [1, 2");
        }
        QVERIFY(!feature->openDecision(broken));
        QCOMPARE(feature->baselines().size(), 3);

        // Another graph: the MLP's decisions name none of its nodes.
        QVERIFY(window.openFile(q(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"))));
        QTRY_VERIFY_WITH_TIMEOUT(!window.loading() && doc->result() && !doc->busy() &&
                                     doc->result()->partition->graph.nodes().size() !=
                                         before->partition->graph.nodes().size(),
                                 60000);
        QTRY_COMPARE(feature->baselines(), QStringList{QStringLiteral("torch's decision")});
    }
};

QTEST_MAIN(TestGuiDiff)
#include "tst_gui_diff.moc"
