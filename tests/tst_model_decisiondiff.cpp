// DecisionDiffModel on torch 1.13's MLP. torch's min-cut saves primals_5, addmm, t_2, t_6 and recomputes
// gelu (reference.json); a decision that also saves gelu differs from it in exactly that: gelu saved only
// in it, recomputed only in torch's. The decision document built here is the one decisionJson writes and
// readDecisionDocument reads back.
#include "testutil.h"

#include "models/DecisionDiffModel.h"
#include "partition/DecisionJson.h"
#include "partition/Partitioner.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace jointscope;
using namespace jointscope::partition;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

const std::vector<std::string> kTorchSaved{"primals_5", "addmm", "t_2", "t_6"}; // reference.json

Partition mlpDecision(const std::vector<std::string>& saved) {
    const Ruleset rules = loadRuleset("torch-1.13").take();
    Expected<Partition> p =
        evaluateSaved(loadSharedGraph("graphs/torch-1.13/mlp/joint.txt"), rules, saved, BuildGraphs::No);
    if (!p)
        qFatal("%s", p.error().format().c_str());
    return p.take();
}

QStringList qlist(std::initializer_list<const char*> names) {
    QStringList out;
    for (const char* n : names)
        out << QString::fromUtf8(n);
    return out;
}

} // namespace

class TestDecisionDiffModel : public QObject {
    Q_OBJECT
private slots:
    void documentOfADecisionIsWhatItsJsonReadsBackAs() {
        const Ruleset rules = loadRuleset("torch-1.13").take();
        Expected<Partition> p = partitionJoint(loadSharedGraph("graphs/torch-1.13/mlp/joint.txt"), rules, {});
        QVERIFY2(p, p ? "" : p.error().format().c_str());
        const DecisionDocument direct = decisionDocumentOf(*p, "here");
        Expected<DecisionDocument> read = readDecisionDocument(decisionJson(*p, rules, {}).dump(1), "d.json");
        QVERIFY2(read, read ? "" : read.error().format().c_str());
        QCOMPARE(direct.saved, kTorchSaved); // the solve reproduces torch's decision, in torch's order
        QCOMPARE(direct.saved, read->saved);
        QCOMPARE(direct.savedSym, read->savedSym);
        QCOMPARE(direct.recomputed, read->recomputed);
        QCOMPARE(direct.recomputed, std::vector<std::string>{"gelu"});
        QCOMPARE(direct.nodes, read->nodes);
        QCOMPARE(direct.savedBytes, read->savedBytes);
        QCOMPARE(direct.activationBytes, read->activationBytes);
        QVERIFY(direct.activationBytes && direct.savedBytes && *direct.activationBytes < *direct.savedBytes);
        QCOMPARE(direct.decidedBy, read->decidedBy);
        QVERIFY(direct.describe("gelu").rfind("torch.ops.aten.gelu.default ", 0) == 0);
    }

    void savingGeluTooIsTheWholeDifference() {
        DecisionDiffModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QVERIFY(!model.compared());
        QVERIFY(model.summary().contains(QStringLiteral("Keep a decision")));

        std::vector<std::string> withGelu = kTorchSaved;
        withGelu.push_back("gelu");
        const DecisionDocument here = decisionDocumentOf(mlpDecision(withGelu), "Here");
        const DecisionDocument torchs = decisionDocumentOf(mlpDecision(kTorchSaved), "torch's decision");
        model.setDecisions(here, torchs);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(DecisionDiffModel::ColumnCount));
        QCOMPARE(model.nodes(DecisionChange::SavedOnlyHere), qlist({"gelu"}));
        QCOMPARE(model.nodes(DecisionChange::RecomputedOnlyInBaseline), qlist({"gelu"}));
        for (DecisionChange c : {DecisionChange::SavedOnlyInBaseline, DecisionChange::SavedSymOnlyHere,
                                 DecisionChange::SavedSymOnlyInBaseline, DecisionChange::RecomputedOnlyHere})
            QCOMPARE(model.count(c), 0);
        QCOMPARE(model.index(0, DecisionDiffModel::ChangeColumn).data().toString(),
                 QStringLiteral("saved only here"));
        QCOMPARE(
            model.index(0, DecisionDiffModel::NodeColumn).data(DecisionDiffModel::NodeNameRole).toString(),
            QStringLiteral("gelu"));
        QVERIFY(model.index(0, DecisionDiffModel::WhatColumn)
                    .data()
                    .toString()
                    .startsWith(QStringLiteral("torch.ops.aten.gelu.default")));
        const QString summary = model.summary();
        QVERIFY2(summary.contains(QStringLiteral("Here")) && summary.contains(QStringLiteral("5 saved")) &&
                     summary.contains(QStringLiteral("torch's decision")) &&
                     summary.contains(QStringLiteral("4 saved")) &&
                     summary.contains(QStringLiteral("1 saved only here · 1 recomputed only in baseline")),
                 qPrintable(summary));

        // The other way round, the sides swap.
        model.setDecisions(torchs, here);
        QCOMPARE(model.nodes(DecisionChange::SavedOnlyInBaseline), qlist({"gelu"}));
        QCOMPARE(model.nodes(DecisionChange::RecomputedOnlyHere), qlist({"gelu"}));
        QCOMPARE(model.rowCount(), 2);
    }

    void sameDecisionAndSameSetInAnotherOrder() {
        DecisionDiffModel model;
        const DecisionDocument torchs = decisionDocumentOf(mlpDecision(kTorchSaved), "torch's decision");
        model.setDecisions(torchs, torchs);
        QCOMPARE(model.rowCount(), 0);
        QVERIFY2(model.summary().contains(QStringLiteral("The same decision")), qPrintable(model.summary()));
        DecisionDocument reordered = torchs;
        std::reverse(reordered.saved.begin(), reordered.saved.end());
        model.setDecisions(torchs, reordered);
        QCOMPARE(model.rowCount(), 0);
        QVERIFY2(model.summary().contains(QStringLiteral("in another order")), qPrintable(model.summary()));
        model.clear();
        QVERIFY(!model.compared());
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_MAIN(TestDecisionDiffModel)
#include "tst_model_decisiondiff.moc"
