// PartitionModel on the torch 1.13 graphs: the summary, the difference from torch's recorded decision (with
// node ids of the graph shown) and the change between two solves. Expected values come from reference.json
// (torch's own min-cut and default_partition saved lists) and from the graphs' tensor metadata, counted here.
#include "testutil.h"

#include "io/GraphFile.h"
#include "models/NodeFormat.h"
#include "models/PartitionModel.h"
#include "partition/Partitioner.h"

#include <QAbstractItemModelTester>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

using namespace jointscope;
using namespace jointscope::views;
using namespace jointscope::test;
using namespace jointscope::partition;

namespace {

Graph loadJoint(const char* model) {
    return loadSharedGraph(std::string("graphs/torch-1.13/") + model + "/joint.txt");
}

nlohmann::json reference(const char* model) {
    return nlohmann::json::parse(
        readFile(sharedPath(std::string("graphs/torch-1.13/") + model + "/reference.json")));
}

std::vector<std::string> list(const nlohmann::json& j) {
    return j.get<std::vector<std::string>>();
}

QStringList minus(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    const std::set<std::string> other(b.begin(), b.end());
    QStringList out;
    for (const std::string& s : a)
        if (!other.count(s))
            out << QString::fromStdString(s);
    return out;
}

std::shared_ptr<const Partition> solve(const Graph& g, Strategy strategy) {
    static const Ruleset rules = loadRuleset("torch-1.13").take();
    PartitionOptions o;
    o.strategy = strategy;
    o.graphs = partition::BuildGraphs::No;
    auto p = partitionJoint(Graph(g), rules, o);
    if (!p)
        qFatal("%s", p.error().format().c_str());
    return std::make_shared<const Partition>(p.take());
}

// Row of `name` under section `title`.
QModelIndex nodeRow(const PartitionModel& m, const QString& title, const QString& name) {
    const QModelIndex section = m.index(m.sectionRow(title), 0);
    for (int r = 0; r < m.rowCount(section); ++r)
        if (m.index(r, 0, section).data().toString() == name)
            return m.index(r, 0, section);
    return {};
}

} // namespace

class TestPartitionModel : public QObject {
    Q_OBJECT
private slots:
    void summaryMatchesTorch() {
        for (const char* model : test::kTorch113Models) {
            const Graph shown = loadJoint(model);
            const auto ref = reference(model);
            const std::vector<std::string> torchSaved = list(ref.at("min_cut_saved"));
            PartitionModel m;
            QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
            m.setPartition(&shown, solve(shown, Strategy::MinCut), 0, nullptr, torchSaved);
            // Torch's saved count, and the bytes of those tensors counted from the graph's metadata.
            uint64_t bytes = 0, inputBytes = 0;
            for (const std::string& name : torchSaved) {
                const auto id = shown.find(name);
                QVERIFY2(id, name.c_str());
                if (const TensorMeta* t = shown.node(*id).tensor()) {
                    bytes += t->bytes().value_or(0);
                    // torch 1.13 names inputs primals_N / tangents_N
                    if (name.rfind("primals_", 0) == 0 || name.rfind("tangents_", 0) == 0)
                        inputBytes += t->bytes().value_or(0);
                }
            }
            QCOMPARE(m.summaryValue(QStringLiteral("Saved")),
                     QStringLiteral("%1 tensors, %2").arg(torchSaved.size()).arg(views::formatBytes(bytes)));
            QCOMPARE(m.summaryValue(QStringLiteral("Saved activations")),
                     views::formatBytes(bytes - inputBytes));
            QCOMPARE(m.summaryValue(QStringLiteral("Saved inputs")), views::formatBytes(inputBytes));
            QCOMPARE(m.summaryValue(QStringLiteral("Torch's decision")), QStringLiteral("same saved set"));
            QVERIFY(m.sectionNodes(QStringLiteral("Torch saves, jointscope does not")).isEmpty());
            QVERIFY(m.sectionNodes(QStringLiteral("jointscope saves, torch does not")).isEmpty());
            QCOMPARE(m.sectionRow(QStringLiteral("Became saved")), -1); // no previous solve
            QCOMPARE(m.summaryValue(QStringLiteral("Decided by")).isEmpty(), false);
        }
    }

    void differenceFromTorchLocatesNodes() {
        const Graph shown = loadJoint("gpt_block2");
        std::vector<std::string> torchSaved = list(reference("gpt_block2").at("min_cut_saved"));
        // A torch decision that differs: drop its first saved value, add a primal it does not save.
        const std::string dropped = torchSaved.front();
        torchSaved.erase(torchSaved.begin());
        std::string added;
        for (const Node& n : shown.nodes())
            if (n.op == NodeOp::Placeholder && n.name.rfind("primals_", 0) == 0 &&
                std::find(torchSaved.begin(), torchSaved.end(), n.name) == torchSaved.end() &&
                n.name != dropped) {
                added = n.name;
                break;
            }
        QVERIFY(!added.empty());
        torchSaved.push_back(added);
        PartitionModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setPartition(&shown, solve(shown, Strategy::MinCut), 0, nullptr, torchSaved);
        QCOMPARE(m.sectionNodes(QStringLiteral("Torch saves, jointscope does not")),
                 QStringList{QString::fromStdString(added)});
        QCOMPARE(m.sectionNodes(QStringLiteral("jointscope saves, torch does not")),
                 QStringList{QString::fromStdString(dropped)});
        QCOMPARE(m.summaryValue(QStringLiteral("Torch's decision")), QStringLiteral("differs in 2 nodes"));
        const QModelIndex row =
            nodeRow(m, QStringLiteral("Torch saves, jointscope does not"), QString::fromStdString(added));
        QVERIFY(row.isValid());
        QCOMPARE(row.data(PartitionModel::NodeIdRole).toUInt(), uint(*shown.find(added)));
        QCOMPARE(row.data(PartitionModel::NodeNameRole).toString(), QString::fromStdString(added));
        // Summary rows name no node.
        QVERIFY(!m.index(0, 0, m.index(0, 0)).data(PartitionModel::NodeIdRole).isValid());
    }

    void editDiffBetweenSolves() {
        // default_partition -> min-cut: the change is torch's two recorded saved lists' difference.
        for (const char* model : test::kTorch113Models) {
            const Graph shown = loadJoint(model);
            const auto ref = reference(model);
            PartitionModel m;
            QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
            m.setPartition(&shown, solve(shown, Strategy::MinCut), 0, solve(shown, Strategy::Default),
                           std::nullopt);
            const auto minCut = list(ref.at("min_cut_saved"));
            const auto dflt = list(ref.at("default_partition_saved"));
            QStringList becameSaved = m.sectionNodes(QStringLiteral("Became saved"));
            QStringList noLonger = m.sectionNodes(QStringLiteral("No longer saved"));
            QStringList expectedSaved = minus(minCut, dflt), expectedNoLonger = minus(dflt, minCut);
            for (QStringList* l : {&becameSaved, &noLonger, &expectedSaved, &expectedNoLonger})
                l->sort();
            QCOMPARE(becameSaved, expectedSaved);
            QCOMPARE(noLonger, expectedNoLonger);
            QVERIFY(m.sectionRow(QStringLiteral("Torch saves, jointscope does not")) <
                    0); // no torch decision given
        }
        // mlp: the two torch decisions differ, so the diff above was not vacuous.
        const auto ref = reference("mlp");
        QVERIFY(!minus(list(ref.at("min_cut_saved")), list(ref.at("default_partition_saved"))).isEmpty() ||
                !minus(list(ref.at("default_partition_saved")), list(ref.at("min_cut_saved"))).isEmpty());
    }

    void clearEmpties() {
        const Graph shown = loadJoint("mlp");
        PartitionModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setPartition(&shown, solve(shown, Strategy::MinCut), 0, nullptr, std::nullopt);
        QVERIFY(m.rowCount() > 0);
        m.clear();
        QCOMPARE(m.rowCount(), 0);
    }

    // A logged compile: the log's settings and each joint-graph pass with the nodes it removed / replaced.
    void loggedRunSections() {
        const Graph g = loadJoint("mlp");
        PartitionModel m;
        partition::LoggedRun run;
        run.settings.replayJointPasses = true;
        run.settings.notes = {"activation_memory_budget 0.5 (log)"};
        run.settings.unsupported = {"joint_custom_post_pass: a user pass"};
        run.passes.changes.push_back({"remove_noop_ops", {"t"}, {}, {}});
        run.passes.changes.push_back({"constant_fold_uniform_value", {}, {{"gelu", "full_default"}}, {}});
        m.setLoggedRun(run);
        m.setPartition(&g, solve(g, Strategy::MinCut), 0, nullptr, std::nullopt);
        QVERIFY(m.sectionRow(QStringLiteral("Log settings")) >= 0);
        const int passes = m.sectionRow(QStringLiteral("Joint-graph passes"));
        QVERIFY(passes >= 0);
        const QModelIndex section = m.index(passes, PartitionModel::ValueColumn);
        QCOMPARE(section.data().toString(), QStringLiteral("2 passes changed 2 nodes"));
        const QModelIndex first = m.index(0, PartitionModel::KeyColumn, m.index(passes, 0));
        QCOMPARE(first.data().toString(), QStringLiteral("remove_noop_ops"));
        const QModelIndex removed = m.index(0, PartitionModel::KeyColumn, first);
        QCOMPARE(removed.data().toString(), QStringLiteral("t"));
        QCOMPARE(removed.data(PartitionModel::NodeIdRole).toUInt(), *g.find("t")); // selectable on the canvas
        const QModelIndex second = m.index(1, PartitionModel::KeyColumn, m.index(passes, 0));
        const QModelIndex replaced = m.index(0, PartitionModel::ValueColumn, second);
        QCOMPARE(replaced.data().toString(), QStringLiteral("replaced by full_default"));
    }
};

QTEST_MAIN(TestPartitionModel)
#include "tst_model_partition.moc"
