// ShardingDocument on a real joint graph: background solves, undoable placement pins that re-solve, undo /
// redo restoring the earlier plans, an impossible pin refused with the engine's message while the last good
// plan stays, newer solves superseding older ones, cancel.
#include "testutil.h"

#include "ShardingDocument.h"

#include <QSignalSpy>
#include <QTest>
#include <QUndoStack>

using namespace jointscope;
using namespace jointscope::gui;
using namespace jointscope::sharding;
using namespace jointscope::test;

namespace {

std::shared_ptr<const Graph> mlp() {
    return std::make_shared<const Graph>(loadSharedGraph("graphs/torch-1.13/mlp/joint.txt"));
}

// Waits for the next finished / failed of `doc`; true when it finished.
bool settle(ShardingDocument& doc) {
    QSignalSpy finished(&doc, &ShardingDocument::finished);
    QSignalSpy failed(&doc, &ShardingDocument::failed);
    for (int i = 0; i < 600 && finished.isEmpty() && failed.isEmpty(); ++i)
        QTest::qWait(100);
    return !finished.isEmpty();
}

// The mlp joint graph on a 2x2 (dp, tp) mesh of `topology`.
std::shared_ptr<const Graph> setUpMlp(ShardingDocument& doc, const char* topology = "h100") {
    auto g = mlp();
    doc.setGraph(g);
    doc.setMesh(*ShardingDocument::parseMesh(QStringLiteral("2x2"), QStringLiteral("dp,tp"),
                                             QString::fromLatin1(topology)));
    return g;
}

std::string outputOf(const ShardingResult& r, const Graph& g, const char* node) {
    const NodeReport& n = r.report.nodes[*g.find(node)];
    return n.placed ? toString(n.outputs[0]) : std::string();
}

} // namespace

class TestShardingDocument : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("the sharding solver needs COIN-OR CBC");
#endif
    }

    void meshFields() {
        const auto s = ShardingDocument::parseMesh(QStringLiteral("2x4"), QStringLiteral("dp, tp"),
                                                   QStringLiteral("a100"));
        QVERIFY(s);
        auto refusal = [](const QString& shape, const QString& names, const QString& topology) {
            const Expected<MeshSettings> m = ShardingDocument::parseMesh(shape, names, topology);
            return m ? QString() : QString::fromStdString(m.error().message);
        };
        QCOMPARE(s->shape, (std::vector<int64_t>{2, 4}));
        QCOMPARE(s->names, (std::vector<std::string>{"dp", "tp"}));
        QCOMPARE(s->topology, std::string("a100"));
        QVERIFY(refusal(QStringLiteral("2x"), {}, QStringLiteral("h100")).contains(QLatin1String("2x")));
        QVERIFY(refusal(QStringLiteral("2x2"), QStringLiteral("dp"), QStringLiteral("h100"))
                    .contains(QLatin1String("one name per mesh dimension")));
        QVERIFY(refusal(QStringLiteral("2"), {}, QStringLiteral("tpu")).contains(QLatin1String("tpu")));
    }

    void pinUndoRedo() {
        QUndoStack undo;
        ShardingDocument doc(&undo);
        const auto g = setUpMlp(doc);
        doc.solve();
        QVERIFY(doc.busy());
        QVERIFY(settle(doc));
        const auto first = doc.result();
        QVERIFY(first);
        QVERIFY(first->replicate.totalUs() > 0);
        // jointscope-cli shard mlp --mesh 2x2: the tiny MLP stays replicated (launch overhead dominates), so
        // the plan costs what the replicate baseline does.
        QCOMPARE(outputOf(*first, *g, "primals_5"), std::string("RR"));
        QVERIFY(std::abs(first->report.total.totalUs() - first->replicate.totalUs()) < 1e-6);

        // The data input sharded over both mesh dims: a different, dearer plan.
        const NodeId input = *g->find("primals_5");
        const std::vector<Placements> choices = doc.pinChoices(input);
        const Placements batch = *parsePlacements("S(0)S(0)");
        QVERIFY(std::find(choices.begin(), choices.end(), batch) != choices.end());
        doc.pin("primals_5", batch);
        QCOMPARE(undo.count(), 1);
        QVERIFY(settle(doc));
        const auto pinned = doc.result();
        QCOMPARE(outputOf(*pinned, *g, "primals_5"), std::string("S(0)S(0)"));
        QCOMPARE(pinned->pinnedBy.at("primals_5"), std::string("you"));
        QVERIFY(pinned->plan.choice != first->plan.choice);
        QVERIFY(pinned->report.total.totalUs() > first->report.total.totalUs());
        QVERIFY(!pinned->report.transitions.empty());
        QCOMPARE(doc.previous(), first);
        // Its gradient-free twin tangents_1 is not pinned by the user.
        QVERIFY(!pinned->pinnedBy.count("tangents_1"));

        undo.undo();
        QVERIFY(doc.pins().empty());
        QVERIFY(settle(doc));
        QCOMPARE(doc.result()->plan.choice, first->plan.choice);
        QVERIFY(std::abs(doc.result()->report.total.totalUs() - first->report.total.totalUs()) < 1e-9);

        undo.redo();
        QCOMPARE(toString(doc.pins().at("primals_5")), std::string("S(0)S(0)"));
        QVERIFY(settle(doc));
        QCOMPARE(doc.result()->plan.choice, pinned->plan.choice);

        // A placement the node cannot have: the engine's message names the node; the last plan stays.
        const auto good = doc.result();
        QSignalSpy failed(&doc, &ShardingDocument::failed);
        doc.pin("addmm", *parsePlacements("S(7)R"));
        QVERIFY(!settle(doc));
        QCOMPARE(failed.count(), 1);
        QVERIFY2(failed.at(0).at(0).toString().contains(QLatin1String("addmm")),
                 qPrintable(failed.at(0).at(0).toString()));
        QCOMPARE(doc.result(), good);
        QVERIFY(doc.lastError().contains(QLatin1String("addmm")));
        // Undoing the bad pin solves again and succeeds.
        undo.undo();
        QVERIFY(settle(doc));
        QCOMPARE(doc.result()->plan.choice, pinned->plan.choice);

        // Clearing a pin is an edit of its own.
        doc.clearPin("primals_5");
        QCOMPARE(undo.count(), 2); // pin, clear: the undone bad pin was dropped from the redo end
        QCOMPARE(undo.text(1), QStringLiteral("clear placement pin of primals_5"));
        QVERIFY(settle(doc));
        QCOMPARE(doc.result()->plan.choice, first->plan.choice);

        // Store for comparison, then a new mesh: the stored plan is kept.
        doc.storeCurrent();
        QCOMPARE(doc.stored(), doc.result());
    }

    // A session keeps the mesh and the pins; a second document restored from it solves to the same plan
    // without touching its undo stack. Bad entries are refused naming the part.
    void sessionRoundTrip() {
        QUndoStack undo;
        ShardingDocument doc(&undo);
        const auto g = setUpMlp(doc, "a100");
        doc.pin("primals_5", *parsePlacements("S(0)S(0)"));
        QVERIFY(settle(doc));
        const SessionSharding saved = doc.sessionSharding();
        QCOMPARE(saved.pins.at("primals_5"), std::string("S(0)S(0)"));
        QCOMPARE(saved.topology, std::string("a100"));
        QCOMPARE(saved.shape, (std::vector<int64_t>{2, 2}));
        QVERIFY(saved.solved);

        const Expected<ShardingSession> session = ShardingDocument::parseSession(saved);
        QVERIFY2(session, session ? "" : session.error().message.c_str());
        QCOMPARE(session->mesh.shape, (std::vector<int64_t>{2, 2}));
        QCOMPARE(session->mesh.names, (std::vector<std::string>{"dp", "tp"}));
        QVERIFY(session->solved);
        QUndoStack otherUndo;
        ShardingDocument other(&otherUndo);
        other.setGraph(g);
        other.restore(*session);
        QCOMPARE(otherUndo.count(), 0);
        QVERIFY(settle(other));
        QCOMPARE(other.mesh(), doc.mesh());
        QCOMPARE(outputOf(*other.result(), *g, "primals_5"), std::string("S(0)S(0)"));
        QCOMPARE(other.result()->plan.choice, doc.result()->plan.choice);

        SessionSharding bad = saved;
        bad.pins = {{"addmm", "S(0)"}}; // one placement on a 2-dim mesh
        auto refusal = [](const SessionSharding& s) {
            const Expected<ShardingSession> parsed = ShardingDocument::parseSession(s);
            return parsed ? QString() : QString::fromStdString(parsed.error().message);
        };
        QString error = refusal(bad);
        QVERIFY2(error.contains(QLatin1String("addmm")) && error.contains(QLatin1String("S(0)")),
                 qPrintable(error));
        bad = saved;
        bad.topology = "tpu";
        error = refusal(bad);
        QVERIFY2(error.contains(QLatin1String("tpu")), qPrintable(error));
    }

    void newerSolveSupersedes() {
        QUndoStack undo;
        ShardingDocument doc(&undo);
        doc.setGraph(mlp());
        QSignalSpy finished(&doc, &ShardingDocument::finished);
        doc.solve();
        doc.setMesh(*ShardingDocument::parseMesh(QStringLiteral("4"), {}, QStringLiteral("a100")));
        doc.solve();
        doc.waitForIdle();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QTest::qWait(200);
        QCOMPARE(finished.count(), 1); // the first solve's result was dropped
        QCOMPARE(doc.result()->mesh.shape, (std::vector<int64_t>{4}));
        QCOMPARE(doc.result()->mesh.topology, std::string("a100"));
    }

    void cancelDropsTheResult() {
        QUndoStack undo;
        ShardingDocument doc(&undo);
        doc.setGraph(mlp());
        QSignalSpy finished(&doc, &ShardingDocument::finished);
        QSignalSpy cancelled(&doc, &ShardingDocument::cancelled);
        doc.solve();
        doc.cancel();
        QCOMPARE(cancelled.count(), 1);
        QVERIFY(!doc.busy());
        doc.waitForIdle();
        QTest::qWait(200);
        QCOMPARE(finished.count(), 0);
        QVERIFY(!doc.result());
    }

    void noGraphNoSolve() {
        QUndoStack undo;
        ShardingDocument doc(&undo);
        QSignalSpy started(&doc, &ShardingDocument::started);
        doc.solve();
        QCOMPARE(started.count(), 0);
        QVERIFY(doc.pinChoices(0).empty());
    }
};

QTEST_MAIN(TestShardingDocument)
#include "tst_gui_shardingdocument.moc"
