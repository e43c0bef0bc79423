// autoparallel's plan read back from a TORCH_TRACE log autoparallel wrote (tests/data/autoparallel/record.sh:
// its LLaMA-3 example, one 64-dim layer, fake 2x2 mesh on the CPU): the autoparallel_solution artifact and
// the optimizer log's "# placement=" lines, two encodings autoparallel writes of one plan, must agree; the
// plan lands on the joint graph's nodes; shard --compare-plan reports it. Expected values come from the
// recorded artifact itself (its summary, node entries) and from autoparallel's run record (pulp's objective).
#include "testutil.h"

#include "io/GraphFile.h"
#include "io/TraceLog.h"
#include "sharding/AutoparallelPlan.h"
#include "sharding/Workflow.h"

#include <QTest>

#include <nlohmann/json.hpp>

#include <map>

using namespace jointscope;
using namespace jointscope::sharding;
using namespace jointscope::test;

namespace {

const std::string kLog = "tests/data/autoparallel/llama3_1layer_2x2.log";
const std::string kRun = "tests/data/autoparallel/llama3_1layer_2x2.run.json";

// The artifact's own JSON, parsed by nlohmann directly (not by the reader under test).
nlohmann::json solutionArtifact() {
    const std::vector<TraceArtifact> found =
        traceArtifacts(readFile(sourcePath(kLog)), "autoparallel_solution");
    if (found.size() != 1)
        qFatal("expected one autoparallel_solution artifact");
    return nlohmann::json::parse(found[0].payload);
}

std::map<std::string, std::string> outputsByName(const AutoparallelPlan& plan) {
    std::map<std::string, std::string> out;
    for (const AutoparallelNode& n : plan.nodes)
        out[n.name] = formatPlacements(n.outputs);
    return out;
}

} // namespace

class TestAutoparallelPlan : public QObject {
    Q_OBJECT
private slots:
    void readsTheSolutionArtifact() {
        const std::string text = readFile(sourcePath(kLog));
        Expected<AutoparallelPlan> plan = readAutoparallelPlan(text, kLog);
        QVERIFY2(plan, plan ? "" : plan.error().format().c_str());
        QCOMPARE(plan->source, std::string("autoparallel_solution"));
        QCOMPARE(plan->meshShape, (std::vector<int64_t>{2, 2}));
        const nlohmann::json artifact = solutionArtifact();
        size_t placed = 0;
        for (const auto& n : artifact["nodes"])
            placed += n.contains("placement");
        QCOMPARE(plan->nodes.size(), placed);
        QCOMPARE(plan->nodes.size(), size_t(332));
        // The objective pulp reported in the same run.
        const nlohmann::json run = nlohmann::json::parse(readFile(sourcePath(kRun)));
        QVERIFY(std::abs(plan->total - run["autoparallel_objective"].get<double>()) < 1e-6);
        QCOMPARE(plan->compute, 1190.0);
        QCOMPARE(plan->transition, 24.0);
        // Per node: placement and the costs the summary adds up.
        double sum = 0;
        for (const AutoparallelNode& n : plan->nodes)
            sum += n.computeCost + n.commCost + n.transitionCost;
        QVERIFY(std::abs(sum - plan->total) < 1e-6);
        const auto outputs = outputsByName(*plan);
        QCOMPARE(outputs.at("primals_1"), std::string("S(0)S(0)"));
        QCOMPARE(outputs.at("primals_14"), std::string("S(0)R")); // the input constraint
        QCOMPARE(outputs.at("tangents_1"), std::string("S(0)S(2)"));
        const auto embedding = std::find_if(plan->nodes.begin(), plan->nodes.end(),
                                            [](const AutoparallelNode& n) { return n.name == "embedding"; });
        QVERIFY(embedding != plan->nodes.end());
        QCOMPARE(embedding->inputs.size(), size_t(2));
        QCOMPARE(toString(*embedding->inputs[0]), std::string("RR"));
        QVERIFY(std::abs(embedding->commCost - 19.193142520829014) < 1e-9);
    }

    void optimizerLogAgreesWithTheArtifact() {
        const std::string text = readFile(sourcePath(kLog));
        const std::vector<TraceArtifact> logs = traceArtifacts(text, "autoparallel_sharding_optimizer_log");
        QCOMPARE(logs.size(), size_t(1));
        Expected<AutoparallelPlan> fromLog = readAutoparallelPlan(logs[0].payload, "optimizer.log");
        QVERIFY2(fromLog, fromLog ? "" : fromLog.error().format().c_str());
        QCOMPARE(fromLog->source, std::string("autoparallel_sharding_optimizer_log"));
        Expected<AutoparallelPlan> fromJson = readAutoparallelPlan(text, kLog);
        QVERIFY(fromJson);
        QCOMPARE(outputsByName(*fromLog), outputsByName(*fromJson));
        // The log prints its totals with two decimals.
        QVERIFY(std::abs(fromLog->total - fromJson->total) < 0.006);
        QVERIFY(std::abs(fromLog->comm - fromJson->comm) < 0.006);
        for (const AutoparallelNode& n : fromLog->nodes)
            QVERIFY(n.line >= 1);
    }

    void extractedJsonAndErrors() {
        const std::string json = solutionArtifact().dump();
        Expected<AutoparallelPlan> plan = readAutoparallelPlan(json, "solution.json");
        QVERIFY(plan);
        QCOMPARE(plan->nodes.size(), size_t(332));
        // Truncated JSON: located in the file.
        Expected<AutoparallelPlan> cut = readAutoparallelPlan(json.substr(0, 500), "cut.json");
        QVERIFY(!cut);
        QCOMPARE(cut.error().loc.file, std::string("cut.json"));
        QCOMPARE(cut.error().loc.line, 1u);
        QVERIFY(cut.error().loc.col > 1);
        // A TORCH_TRACE log without autoparallel's artifacts.
        const std::string other = readFile(sharedPath("graphs/torch-trace/cache_hit_miss.log"));
        QVERIFY(!other.empty());
        Expected<AutoparallelPlan> none = readAutoparallelPlan(other, "cache_hit_miss.log");
        QVERIFY(!none);
        QVERIFY(QString::fromStdString(none.error().message).contains("autoparallel_solution"));
        Expected<AutoparallelPlan> junk = readAutoparallelPlan("x = 1\n", "junk.txt");
        QVERIFY(!junk);
    }

    void mapsOntoTheJointGraph() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("the sharding solver needs COIN-OR CBC");
#endif
        const Graph graph = loadGraphAt(sourcePath(kLog)); // the autoparallel_joint_graph artifact
        Expected<AutoparallelPlan> plan = loadAutoparallelPlan(sourcePath(kLog));
        QVERIFY(plan);
        Expected<MeshSetup> setup = resolveMesh(*parseMeshSpec("2x2", "dp,tp", "h100"));
        QVERIFY(setup);
        Expected<ShardingSolution> solution = solveWithBaselines(
            graph, setup->mesh, SolveOptions{}, ComputeModel(cost::RooflineModel(setup->device)));
        QVERIFY(solution);
        const MappedPlan mapped = mapAutoparallelPlan(graph, *solution->problem, *plan);
        QVERIFY(mapped.unknownNames.empty()); // every node autoparallel placed is in its joint graph
        QCOMPARE(mapped.placed, plan->nodes.size());
        // Where an option of ours has autoparallel's output, it is the one taken.
        for (const AutoparallelNode& n : plan->nodes) {
            const NodeId id = *graph.find(n.name);
            if (std::find(mapped.unmatched.begin(), mapped.unmatched.end(), id) != mapped.unmatched.end())
                continue;
            QCOMPARE(toString(solution->problem->nodes[id].options[mapped.choice[id]].outputs[0]),
                     toString(n.outputs[0]));
        }
        // Another mesh shape is refused, naming both.
        Expected<MeshSetup> other = resolveMesh(*parseMeshSpec("4", "", "h100"));
        Expected<ShardingSolution> onFour = solveWithBaselines(
            graph, other->mesh, SolveOptions{}, ComputeModel(cost::RooflineModel(other->device)));
        QVERIFY(onFour);
        Expected<PlanComparison> refused = compareWithAutoparallel(graph, *onFour, *plan, "plan.log");
        QVERIFY(!refused);
        QVERIFY(QString::fromStdString(refused.error().message).contains("2x2"));
    }

    void cliComparePlanJson() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("the sharding solver needs COIN-OR CBC");
#endif
        const QString log = q(sourcePath(kLog));
        const Run r = runCli({"shard", log, "--mesh", "2x2", "--compare-plan", log, "--json"});
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        const nlohmann::json& c = j["compare"];
        const nlohmann::json run = nlohmann::json::parse(readFile(sourcePath(kRun)));
        QVERIFY(std::abs(c["autoparallel_objective"]["total"].get<double>() -
                         run["autoparallel_objective"].get<double>()) < 1e-6);
        QCOMPARE(c["nodes_placed"].get<size_t>(), size_t(332));
        QCOMPARE(c["jointscope_plan_cost"]["total_cost"].get<double>(), j["total_cost"].get<double>());
        QVERIFY(c["jointscope_cost_of_autoparallel_plan"]["total_cost"].get<double>() > 0);
        // The differing nodes, counted from the two plans as printed: our placements vs the artifact's.
        std::map<std::string, std::string> theirs;
        const nlohmann::json artifact = solutionArtifact();
        for (const auto& n : artifact["nodes"])
            if (n.contains("placement"))
                theirs[n["name"].get<std::string>()] = n["placement"].get<std::string>();
        size_t differ = 0;
        for (auto it = j["placements"].begin(); it != j["placements"].end(); ++it) {
            const auto t = theirs.find(it.key());
            const nlohmann::json& out = it.value()["output"];
            const std::string ours = out.is_string() ? out.get<std::string>() : out[0].get<std::string>();
            std::string first = t == theirs.end() ? ours : t->second;
            if (!first.empty() && first.front() == '(')
                first = first.substr(1, first.find(',') - 1);
            differ += first != ours;
        }
        QCOMPARE(c["differing"].size(), differ);
        for (const auto& d : c["differing"])
            QCOMPARE(d["autoparallel"].get<std::string>(), theirs.at(d["node"].get<std::string>()));

        // Under autoparallel's compute model (--cost-model autoparallel) every node of its plan has an option
        // of ours (einsum, dtype_cast, complex views have rules) and our compute of its plan is its own
        // compute.
        const Run same = runCli({"shard", log, "--mesh", "2x2", "--param-memory", "0:0.25", "--pin",
                                 "primals_14=S(0)R", "--pin", "tangents_1=S(0)S(2)", "--cost-model",
                                 "autoparallel", "--compare-plan", log, "--json"});
        QCOMPARE(same.exitCode, 0);
        const nlohmann::json s = nlohmann::json::parse(same.out)["compare"];
        QCOMPARE(s["unmatched"].size(), size_t(0));
        QCOMPARE(s["inputs_differ"].size(), size_t(0));
        QVERIFY(std::abs(s["jointscope_cost_of_autoparallel_plan"]["compute_cost"].get<double>() -
                         artifact["summary"]["compute"].get<double>()) < 1e-6);
        // Known gap (docs/benchmarks.md): our α-β ring collectives are not autoparallel's NCCL model, so comm
        // is not compared here.

        const Run wrongMesh = runCli({"shard", log, "--mesh", "4", "--compare-plan", log});
        QVERIFY(wrongMesh.exitCode != 0);
        QVERIFY(wrongMesh.err.find("autoparallel solved for mesh 2x2") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestAutoparallelPlan)
#include "tst_autoparallelplan.moc"
