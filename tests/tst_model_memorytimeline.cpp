// MemoryTimelineModel on torch 1.13's MLP: 23 steps (7 forward: torch's fw.txt has 7 calls; 16 backward:
// bw.txt), peak 9,792 B at sum_2 (the bytes torch measured running fw.txt / bw.txt,
// tests/python/test_memory_timeline.py), gelu recomputed in the backward; torch's curve beside it, shown only
// where the same node runs.
#include "testutil.h"

#include "models/MemoryTimelineModel.h"
#include "models/NodeFormat.h"
#include "partition/Partitioner.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace jointscope;
using namespace jointscope::partition;
using namespace jointscope::views;
using namespace jointscope::test;

namespace {

MemoryCurve mlpCurve(const std::vector<std::string>* saved = nullptr) {
    Graph joint = loadSharedGraph("graphs/torch-1.13/mlp/joint.txt");
    const Ruleset rules = loadRuleset("torch-1.13").take();
    Expected<Partition> p = saved ? evaluateSaved(std::move(joint), rules, *saved, BuildGraphs::No)
                                  : partitionJoint(std::move(joint), rules, {});
    if (!p)
        qFatal("%s", p.error().format().c_str());
    Expected<MemoryTimeline> t = memoryTimeline(*p, rules);
    if (!t)
        qFatal("%s", t.error().format().c_str());
    return MemoryCurve::from(p->graph, *t);
}

} // namespace

class TestMemoryTimelineModel : public QObject {
    Q_OBJECT
private slots:
    void mlpSteps() {
        MemoryTimelineModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setCurves(mlpCurve(), std::nullopt);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.rowCount(), 23);
        QCOMPARE(model.columnCount(), int(MemoryTimelineModel::ColumnCount));
        QCOMPARE(model.ours().forwardSteps, 7);
        QCOMPARE(model.ours().peakBytes, uint64_t(9792));
        const int peak = model.ours().peakStep;
        QCOMPARE(model.index(peak, MemoryTimelineModel::NodeColumn)
                     .data(MemoryTimelineModel::NodeNameRole)
                     .toString(),
                 QString("sum_2"));
        QCOMPARE(model.index(peak, 0).data(MemoryTimelineModel::PeakRole).toBool(), true);
        QCOMPARE(model.index(peak, MemoryTimelineModel::LiveColumn).data().toString(),
                 views::formatBytes(9792));
        QVERIFY(model.index(peak, 0).data(Qt::FontRole).value<QFont>().bold());
        QCOMPARE(model.index(0, 0).data(MemoryTimelineModel::PeakRole).toBool(), false);
        // gelu: computed in the forward, recomputed in the backward (step 7, the backward's first node
        // in 1.13)
        QCOMPARE(model.rowOfNode("gelu"), 2);
        QCOMPARE(model.index(7, MemoryTimelineModel::NodeColumn)
                     .data(MemoryTimelineModel::NodeNameRole)
                     .toString(),
                 QString("gelu"));
        QCOMPARE(model.index(7, MemoryTimelineModel::PhaseColumn).data().toString(),
                 QString("backward (recompute)"));
        QCOMPARE(model.index(2, MemoryTimelineModel::PhaseColumn).data().toString(), QString("forward"));
        QCOMPARE(model.index(3, MemoryTimelineModel::TorchColumn).data().toString(),
                 QString("—")); // none known
        QCOMPARE(model.rowOfNode("nothing"), -1);
    }

    // Torch's column: its bytes where its step runs the same node. Saving gelu too removes the recompute, so
    // from the backward on the steps no longer line up.
    void torchsColumn() {
        MemoryTimelineModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const std::vector<std::string> withGelu{"primals_5", "addmm", "t_2", "t_6", "gelu"};
        model.setCurves(mlpCurve(&withGelu), mlpCurve());
        QCOMPARE(model.rowCount(), 22); // no recompute step
        QCOMPARE(model.torchs()->size(), 23);
        QCOMPARE(model.index(0, MemoryTimelineModel::TorchColumn).data().toString(),
                 views::formatBytes(model.torchs()->liveBytes[0]));
        QCOMPARE(model.index(7, MemoryTimelineModel::TorchColumn).data().toString(), QString("—"));
        QCOMPARE(model.headerData(MemoryTimelineModel::TorchColumn, Qt::Horizontal).toString(),
                 QString("Torch's decision"));
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.ours().peakStep, -1);
    }

    // The chart's points: all steps when few; else at most maxPoints, every local extreme within a bucket's
    // reach kept, the spike and the trough planted in a saw-tooth exact.
    void chartStepsKeepExtremes() {
        QCOMPARE(chartSteps({5, 1, 9}, 10), (std::vector<int>{0, 1, 2}));
        const size_t n = 100003, maxPoints = 4000;
        std::vector<uint64_t> live(n);
        for (size_t i = 0; i < n; ++i)
            live[i] = 1000 + (i * 7919) % 1013;
        live[54321] = 1u << 30;
        live[77777] = 0;
        const std::vector<int> steps = chartSteps(live, maxPoints);
        QVERIFY(steps.size() <= maxPoints);
        QVERIFY(steps.size() > maxPoints / 2);
        QCOMPARE(steps.front(), 0);
        QCOMPARE(steps.back(), int(n - 1));
        QVERIFY(std::is_sorted(steps.begin(), steps.end()));
        QVERIFY(std::adjacent_find(steps.begin(), steps.end()) == steps.end());
        QVERIFY(std::binary_search(steps.begin(), steps.end(), 54321));
        QVERIFY(std::binary_search(steps.begin(), steps.end(), 77777));
        // Every step has, within one bucket of it, a kept step at least as high and one at least as low.
        const size_t reach = n / (maxPoints / 4) + 1;
        for (size_t i = 0; i < n; ++i) {
            auto it = std::lower_bound(steps.begin(), steps.end(), int(i > reach ? i - reach : 0));
            bool higher = false, lower = false;
            for (; it != steps.end() && size_t(*it) <= i + reach; ++it) {
                higher = higher || live[size_t(*it)] >= live[i];
                lower = lower || live[size_t(*it)] <= live[i];
            }
            QVERIFY2(higher && lower, qPrintable(QString("step %1").arg(i)));
        }
    }
};

QTEST_MAIN(TestMemoryTimelineModel)
#include "tst_model_memorytimeline.moc"
