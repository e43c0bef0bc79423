// ShardingModel over sharding::reportPlan: per-node placements and costs, totals, baselines, comparison.
//
// Expected values come from outside the model: a hand-made graph whose one redistribution is costed by hand
// from autoparallel's H100 link numbers, and `jointscope-cli shard --json` on the shared graphs (a separate
// process that prints the engine's plan without the model or the report).
#include "testutil.h"

#include "cost/DeviceSpec.h"
#include "models/ShardingModel.h"
#include "sharding/PlanReport.h"

#include <nlohmann/json.hpp>

#include <QAbstractItemModelTester>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <optional>

using namespace jointscope;
using namespace jointscope::test;
using namespace jointscope::sharding;
using views::ShardingModel;

namespace {

QString cell(const ShardingModel& m, const QString& node, int column) {
    return m.nodeIndex(node, column).data().toString();
}

double value(const QModelIndex& index) {
    return index.data(ShardingModel::ValueRole).toDouble();
}

bool close(double a, double b) {
    return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

// The option of node `id` whose output and inputs print as given.
int32_t optionOf(const ShardingProblem& p, NodeId id, const std::string& out,
                 const std::vector<std::string>& in) {
    const auto& options = p.nodes[id].options;
    for (size_t o = 0; o < options.size(); ++o) {
        if (options[o].outputs.empty() || toString(options[o].outputs[0]) != out ||
            options[o].inputs.size() != in.size())
            continue;
        bool same = true;
        for (size_t k = 0; k < in.size(); ++k)
            same = same && toString(options[o].inputs[k]) == in[k];
        if (same)
            return int32_t(o);
    }
    return -1;
}

// x [8, 4] f32 @ w [4, 4] f32 on a 1-D mesh of 2.
const char* kTinyGraph =
    R"json({"format": "jointscope-graph", "version": 1, "graph": {"name": "tiny", "nodes": [
 {"name": "x", "op": "placeholder", "target": "x", "output_kind": "tensor",
  "outputs": [{"dtype": "float32", "sizes": [8, 4]}]},
 {"name": "w", "op": "placeholder", "target": "w", "output_kind": "tensor",
  "outputs": [{"dtype": "float32", "sizes": [4, 4]}]},
 {"name": "mm", "op": "call_function", "target": "torch.ops.aten.mm.default",
  "args": [{"node": "x"}, {"node": "w"}], "output_kind": "tensor",
  "outputs": [{"dtype": "float32", "sizes": [8, 4]}]},
 {"name": "output", "op": "output", "target": "output", "args": [[{"node": "mm"}]]}]}})json";

} // namespace

class TestShardingModel : public QObject {
    Q_OBJECT

private slots:
    void handCountedRedistribution() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("tiny.json"));
        {
            QFile f(path);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(kTinyGraph);
        }
        const Graph g = loadGraphAt(path.toStdString());
        const DeviceMesh mesh = DeviceMesh::make({2}, {"tp"}, *findTopology("h100"));
        const ShardingProblem p = buildStrategies(g, mesh);
        const cost::RooflineModel roofline(*cost::findDevice("h100"));
        const NodeId x = *g.find("x"), w = *g.find("w"), mm = *g.find("mm");
        Plan plan;
        plan.choice.assign(g.size(), -1);
        plan.choice[x] = optionOf(p, x, "S(0)", {});
        plan.choice[w] = optionOf(p, w, "R", {});
        plan.choice[mm] = optionOf(p, mm, "R", {"R", "R"});
        QVERIFY(plan.choice[x] >= 0 && plan.choice[w] >= 0 && plan.choice[mm] >= 0);

        auto report = std::make_shared<const PlanReport>(reportPlan(g, p, plan, roofline));
        ShardingModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setPlan(&g, report, {{"x", "you"}}, PlanCost{1, 2}, std::nullopt);
        // x is S(0) and mm reads it whole: one all-gather of 8 x 4 x 4 = 128 bytes over 2 ranks on NVLink:
        // 8.4 us + 1 step x 3.4 us + 128 x 1/2 bytes / 320 GB/s.
        const double allGather = 8.4 + 3.4 + 64.0 / 320e9 * 1e6;
        QCOMPARE(cell(m, "mm", ShardingModel::OutputColumn), QStringLiteral("R"));
        QCOMPARE(cell(m, "mm", ShardingModel::InputsColumn), QStringLiteral("(R, R)"));
        QCOMPARE(cell(m, "x", ShardingModel::OutputColumn), QStringLiteral("S(0)"));
        QCOMPARE(cell(m, "x", ShardingModel::PinnedColumn), QStringLiteral("you"));
        QCOMPARE(cell(m, "w", ShardingModel::PinnedColumn), QString());
        QVERIFY(close(value(m.nodeIndex("mm", ShardingModel::CommColumn)), allGather));
        QCOMPARE(value(m.nodeIndex("x", ShardingModel::CommColumn)), 0.0);
        QCOMPARE(value(m.nodeIndex("w", ShardingModel::CommColumn)), 0.0);
        QVERIFY(close(value(m.totalIndex("plan", ShardingModel::CommColumn)), allGather));
        QCOMPARE(value(m.totalIndex("replicate", ShardingModel::TotalColumn)), 3.0);
        QVERIFY(!m.totalIndex("data parallel").isValid());
        QCOMPARE(m.nodeIndex("mm").data(ShardingModel::NodeIdRole).toULongLong(), qulonglong(mm));
        // The output node has no placement and no row: x, w, mm.
        const int nodes = m.sectionRow(QStringLiteral("Nodes"));
        QVERIFY(nodes >= 0);
        QCOMPARE(m.rowCount(m.index(nodes, 0)), 3);
        QVERIFY(!m.nodeIndex("output").isValid());
        QCOMPARE(report->transitions.size(), size_t(1));
        QCOMPARE(report->transitions[0].producer, x);
        QCOMPARE(report->transitions[0].redistribution.steps[0].collective, Collective::AllGather);

        // mm running on x's shards needs nothing moved.
        Plan local = plan;
        local.choice[mm] = optionOf(p, mm, "S(0)", {"S(0)", "R"});
        QVERIFY(local.choice[mm] >= 0);
        m.setPlan(&g, std::make_shared<const PlanReport>(reportPlan(g, p, local, roofline)), {}, std::nullopt,
                  std::nullopt);
        QCOMPARE(value(m.totalIndex("plan", ShardingModel::CommColumn)), 0.0);

        // Compared with the first plan only mm differs.
        m.setStored(report);
        m.setDifferencesOnly(true);
        QCOMPARE(m.differenceCount(), 1);
        QCOMPARE(cell(m, "mm", ShardingModel::OutputColumn), QStringLiteral("S(0)"));
        QCOMPARE(cell(m, "mm", ShardingModel::StoredOutputColumn), QStringLiteral("R"));
        QVERIFY(!m.nodeIndex("x").isValid());
        QVERIFY(close(value(m.totalIndex("stored plan", ShardingModel::CommColumn)), allGather));
    }

    void matchesCliJson_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("pin");
        QTest::newRow("mlp, batch pinned")
            << q(sharedPath("graphs/torch-1.13/mlp/joint.txt")) << QStringLiteral("primals_5=S(0)S(0)");
        QTest::newRow("gpt_block2") << q(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt")) << QString();
        QTest::newRow("llama block") << q(sourcePath("tests/data/sharding/llama_block_meta.json"))
                                     << QString();
    }
    void matchesCliJson() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("the sharding solver needs COIN-OR CBC");
#else
        QFETCH(QString, file);
        QFETCH(QString, pin);
        QStringList args = {QStringLiteral("shard"), file, QStringLiteral("--mesh"), QStringLiteral("2x2"),
                            QStringLiteral("--json")};
        if (!pin.isEmpty())
            args << QStringLiteral("--pin") << pin;
        const Run run = runCli(args);
        QCOMPARE(run.exitCode, 0);
        const auto json = nlohmann::json::parse(run.out);

        const Graph g = loadGraphAt(file.toStdString());
        const ShardingProblem p = buildStrategies(g, DeviceMesh::make({2, 2}, {}, *findTopology("h100")));
        const cost::RooflineModel roofline(*cost::findDevice("h100"));
        // The CLI's plan, option by option (equal-cost optima make a second solve free to pick another).
        Plan plan;
        plan.choice.assign(g.size(), -1);
        plan.optimal = json["optimal"].get<bool>();
        for (const auto& [name, entry] : json["placements"].items()) {
            const std::optional<NodeId> id = g.find(name);
            QVERIFY(id);
            const auto& o = entry["output"];
            std::vector<std::string> in;
            for (const auto& i : entry["inputs"])
                in.push_back(i.get<std::string>());
            plan.choice[*id] =
                optionOf(p, *id, o.is_string() ? o.get<std::string>() : o[0].get<std::string>(), in);
            QVERIFY2(plan.choice[*id] >= 0, name.c_str());
        }
        auto report = std::make_shared<const PlanReport>(reportPlan(g, p, plan, roofline));
        const auto& base = json["baselines"];
        auto costOf = [](const nlohmann::json& j) {
            return PlanCost{j["compute_cost"].get<double>(), j["comm_cost"].get<double>()};
        };
        ShardingModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setPlan(&g, report, {}, costOf(base["replicate"]),
                  base["data_parallel"].is_null() ? std::nullopt
                                                  : std::optional(costOf(base["data_parallel"])));

        // Every node the CLI places, with its output and input placements, and nothing else.
        int placed = 0;
        int sharded = 0; // nodes with any non-replicated placement: the difference from the replicate plan
        for (const auto& [name, entry] : json["placements"].items()) {
            ++placed;
            const QString n = q(name);
            const std::string out =
                entry["output"].is_string() ? entry["output"].get<std::string>() : std::string();
            if (!out.empty())
                QCOMPARE(cell(m, n, ShardingModel::OutputColumn), q(out));
            QStringList in;
            bool anySharded = out.find_first_not_of('R') != std::string::npos;
            for (const auto& i : entry["inputs"]) {
                in << q(i.get<std::string>());
                anySharded = anySharded || i.get<std::string>().find_first_not_of('R') != std::string::npos;
            }
            if (!entry["output"].is_string())
                for (const auto& o : entry["output"])
                    anySharded =
                        anySharded || o.get<std::string>().find_first_not_of('R') != std::string::npos;
            sharded += anySharded;
            QCOMPARE(cell(m, n, ShardingModel::InputsColumn),
                     in.isEmpty()
                         ? QStringLiteral("—")
                         : QStringLiteral("(") + in.join(QStringLiteral(", ")) + QStringLiteral(")"));
        }
        const int nodes = m.sectionRow(QStringLiteral("Nodes"));
        QCOMPARE(m.rowCount(m.index(nodes, 0)), placed);
        // Per-node costs add up to the CLI's totals (evaluatePlan's).
        QVERIFY(close(value(m.totalIndex("plan", ShardingModel::ComputeColumn)),
                      json["compute_cost"].get<double>()));
        QVERIFY(
            close(value(m.totalIndex("plan", ShardingModel::CommColumn)), json["comm_cost"].get<double>()));
        QVERIFY(
            close(value(m.totalIndex("plan", ShardingModel::TotalColumn)), json["total_cost"].get<double>()));
        double compute = 0, comm = 0;
        const QModelIndex section = m.index(nodes, 0);
        for (int r = 0; r < m.rowCount(section); ++r) {
            compute += value(m.index(r, ShardingModel::ComputeColumn, section));
            comm += value(m.index(r, ShardingModel::CommColumn, section));
        }
        QVERIFY(std::abs(compute - json["compute_cost"].get<double>()) < 1e-6 * std::max(1.0, compute));
        QVERIFY(std::abs(comm - json["comm_cost"].get<double>()) < 1e-6 * std::max(1.0, comm));
        QVERIFY(close(value(m.totalIndex("replicate")), base["replicate"]["total_cost"].get<double>()));

        // Against the replicate plan, exactly the nodes with a sharded or partial placement differ.
        const std::vector<int32_t> rep = replicatePlan(p);
        Plan replicated;
        replicated.choice = rep;
        m.setStored(std::make_shared<const PlanReport>(reportPlan(g, p, replicated, roofline)));
        QCOMPARE(m.differenceCount(), sharded);
        m.setDifferencesOnly(true);
        QCOMPARE(m.rowCount(m.index(m.sectionRow(QStringLiteral("Differences")), 0)), sharded);
        if (file.contains(QLatin1String("llama")) || !pin.isEmpty())
            QVERIFY(sharded > 0); // these plans do shard: the comparison is not vacuous
#endif
    }

    void emptyAndCleared() {
        ShardingModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(m.rowCount(), 0);
        m.setPlan(nullptr, nullptr, {}, std::nullopt, std::nullopt);
        QCOMPARE(m.rowCount(), 0);
        QVERIFY(!m.nodeIndex("x").isValid());
        m.clear();
        QCOMPARE(m.sectionRow(QStringLiteral("Totals")), -1);
    }
};

QTEST_MAIN(TestShardingModel)
#include "tst_model_sharding.moc"
