// core/sharding without LibTorch: placements, mesh links, α-β costs, strategy sets, the CBC ILP and the CLI.
//
// Expected numbers are worked out by hand from the formulas' inputs (autoparallel's bandwidths and latencies,
// matmul algebra), never taken from the code under test.
#include "testutil.h"

#include "cost/DeviceSpec.h"
#include "sharding/Solver.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <cstdio>
#include <set>

using namespace jointscope;
using namespace jointscope::test;
using namespace jointscope::sharding;

namespace {

Graph sharedGraph(const std::string& name) {
    // A LLaMA-style block (dim 4096, hidden 11008, batch 8 x 1024, bf16), captured on `meta` with
    // jointscope_torch.export_joint under torch 1.13 (the recipe of scripts/gpu-profile --stage).
    if (name == "llama_block")
        return loadFirstGraph(sourcePath("tests/data/sharding/llama_block_meta.json"));
    return loadFirstGraph(sharedPath("graphs/torch-1.13/" + name + "/joint.txt"));
}

DeviceMesh mesh(std::vector<int64_t> shape, const char* topo = "h100") {
    return DeviceMesh::make(std::move(shape), {}, *findTopology(topo));
}

} // namespace

class TestSharding : public QObject {
    Q_OBJECT

private slots:
    void placementText_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("printed");
        QTest::newRow("short") << "S(0)R"
                               << "S(0)R";
        QTest::newRow("torch long form") << "Shard(dim=1), Replicate()"
                                         << "S(1)R";
        QTest::newRow("partial") << "P(sum)"
                                 << "P(sum)";
        QTest::newRow("partial avg") << "Partial(avg)S(2)"
                                     << "P(avg)S(2)";
        QTest::newRow("log parentheses") << "(S(0)S(1))"
                                         << "S(0)S(1)";
        QTest::newRow("bad dim") << "S(x)"
                                 << "";
        QTest::newRow("unknown letter") << "Q"
                                        << "";
        QTest::newRow("empty") << ""
                               << "";
        QTest::newRow("unclosed") << "S(0"
                                  << "";
    }
    void placementText() {
        QFETCH(QString, text);
        QFETCH(QString, printed);
        const std::optional<Placements> p = parsePlacements(text.toStdString());
        if (printed.isEmpty()) {
            QVERIFY(!p);
            return;
        }
        QVERIFY(p);
        QCOMPARE(QString::fromStdString(toString(*p)), printed);
    }

    void meshLinks() {
        // autoparallel derive_mesh_dim_topo: the last dim is innermost; 8 GPUs per H100 node, 72 per GB200.
        const DeviceMesh h = mesh({8, 8});
        QVERIFY(h.links[0].interNode);
        QVERIFY(!h.links[1].interNode);
        QCOMPARE(h.links[0].bandwidth, 50e9);
        QCOMPARE(h.links[1].bandwidth, 320e9);
        const DeviceMesh g = mesh({8, 8}, "gb200");
        QVERIFY(!g.links[0].interNode && !g.links[1].interNode);
        const DeviceMesh a = mesh({2, 2}, "a100");
        QVERIFY(!a.links[0].interNode && !a.links[1].interNode);
        QVERIFY(!findTopology("tpu"));
        QVERIFY(!parseMeshShape("8x0"));
        QVERIFY(!parseMeshShape("8y8"));
        QCOMPARE(*parseMeshShape("16x8"), (std::vector<int64_t>{16, 8}));
    }

    void collectiveCosts() {
        const DeviceMesh m = mesh({8});
        // ring: 8.4 us + 7 x 3.4 us + 1 GB x 7/8 / 320 GB/s
        QVERIFY(std::abs(collectiveUs(Collective::AllGather, 1e9, m, 0) - 2766.575) < 1e-6);
        // all-reduce: twice the steps and twice the wire bytes
        QVERIFY(std::abs(collectiveUs(Collective::AllReduce, 1e9, m, 0) - (8.4 + 14 * 3.4 + 5468.75)) < 1e-6);
    }

    void redistributions() {
        const DeviceMesh m = mesh({2, 2});
        TensorMeta t;
        t.dtype = DType::Float32;
        t.sizes = {SymInt{8, {}}, SymInt{1024, {}}};
        // S(0)R -> RR: all-gather on d0 of the 32 KiB tensor: 8.4 + 3.4 + 32768 / 2 / 320e9 s
        const Redistribution ag = redistribute(*parsePlacements("S(0)R"), *parsePlacements("RR"), t, m);
        QCOMPARE(ag.steps.size(), size_t(1));
        QCOMPARE(ag.steps[0].collective, Collective::AllGather);
        QVERIFY(std::abs(ag.us - (11.8 + 32768.0 / 2 / 320e9 * 1e6)) < 1e-9);
        const Redistribution rs = redistribute(*parsePlacements("P(sum)R"), *parsePlacements("S(0)R"), t, m);
        QCOMPARE(rs.steps.size(), size_t(1));
        QCOMPARE(rs.steps[0].collective, Collective::ReduceScatter);
        QVERIFY(redistribute(*parsePlacements("RR"), *parsePlacements("S(1)S(0)"), t, m).steps.empty());
        const Redistribution a2a = redistribute(*parsePlacements("S(0)R"), *parsePlacements("S(1)R"), t, m);
        QCOMPARE(a2a.steps.size(), size_t(1));
        QCOMPARE(a2a.steps[0].collective, Collective::AllToAll);
    }

    void addmmStrategies() {
        // addmm(bias[192], x[32, 64], w^T[64, 192]) on 2 devices: the matmul algebra allows exactly these.
        const Graph g = sharedGraph("gpt_block2");
        const ShardingProblem p = buildStrategies(g, mesh({2}));
        const NodeStrategies& ns = p.nodes[*g.find("addmm")];
        std::set<std::string> got;
        for (const Strategy& s : ns.options) {
            std::string key = toString(s.outputs[0]) + "|";
            for (const Placements& in : s.inputs)
                key += toString(in) + ",";
            got.insert(key);
        }
        const std::set<std::string> expected = {
            "R|R,R,R,",
            "S(0)|R,S(0),R,",
            "S(1)|S(0),R,S(1),",
            "P(sum)|P(sum),S(1),S(0),",
            "P(sum)|P(sum),P(sum),R,",
            "P(sum)|P(sum),R,P(sum),",
        };
        QCOMPARE(got, expected);
    }

    void unknownOpsWarn() {
        const Graph g = sharedGraph("convnet");
        const ShardingProblem p = buildStrategies(g, mesh({2}));
        bool named = false;
        for (const std::string& w : p.warnings)
            named = named || w.find("native_batch_norm") != std::string::npos;
        QVERIFY(named);
        QCOMPARE(p.nodes[*g.find("native_batch_norm")].kind, RuleKind::Unknown);
        QCOMPARE(p.nodes[*g.find("native_batch_norm")].options.size(), size_t(1));
    }

    void solutionNeverWorseThanBaselines_data() {
        QTest::addColumn<QString>("graph");
        QTest::addColumn<QString>("meshShape");
        for (const char* g : {"mlp", "gpt_block2", "convnet", "llama_block"})
            for (const char* m : {"2x2", "8x8"})
                QTest::newRow((std::string(g) + " " + m).c_str()) << QString(g) << QString(m);
    }
    void solutionNeverWorseThanBaselines() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        QFETCH(QString, graph);
        QFETCH(QString, meshShape);
        const Graph g = sharedGraph(graph.toStdString());
        const ShardingProblem p = buildStrategies(g, mesh(*parseMeshShape(meshShape.toStdString())));
        const cost::RooflineModel model(*cost::findDevice("h100"));
        Expected<Plan> plan = solvePlacement(g, p, {}, model);
        JS_VERIFY_EXPECTED(plan);
        const PlanCost replicate = evaluatePlan(g, p, replicatePlan(p), model);
        QVERIFY(replicate.commUs == 0);
        QVERIFY(plan->cost.totalUs() <= replicate.totalUs() + 1e-9);
        QVERIFY(std::abs(plan->cost.totalUs() - evaluatePlan(g, p, plan->choice, model).totalUs()) < 1e-6);
        if (graph == "llama_block") // a 4096-wide block on 4+ devices: splitting the work must pay
            QVERIFY(plan->cost.totalUs() < 0.5 * replicate.totalUs());
        if (std::vector<Pin> dp = dataParallelPins(g, p); !dp.empty()) {
            SolveOptions o;
            o.pins = dp;
            Expected<Plan> dpPlan = solvePlacement(g, p, o, model);
            JS_VERIFY_EXPECTED(dpPlan);
            QVERIFY(plan->cost.totalUs() <= dpPlan->cost.totalUs() + 1e-9);
        }
#endif
    }

    void pinsAndConsistency() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        const Graph g = sharedGraph("gpt_block2");
        const ShardingProblem p = buildStrategies(g, mesh({2, 2}));
        const cost::RooflineModel model(*cost::findDevice("h100"));
        SolveOptions o;
        o.pins = {{"primals_3", *parsePlacements("S(0)S(0)"), "test"}};
        Expected<Plan> plan = solvePlacement(g, p, o, model);
        JS_VERIFY_EXPECTED(plan);
        const NodeId w = *g.find("primals_3");
        QCOMPARE(toString(p.nodes[w].options[plan->choice[w]].outputs[0]), std::string("S(0)S(0)"));
        // primals_3's gradient is the 4th entry after the single forward output in the return list.
        const JointRoles roles = jointRoles(g);
        bool checked = false;
        for (const auto& [param, grad] : roles.paramGrad)
            if (param == w) {
                QCOMPARE(toString(p.nodes[grad].options[plan->choice[grad]].outputs[0]),
                         std::string("S(0)S(0)"));
                checked = true;
            }
        QVERIFY(checked);
        // A placement the node cannot have is an error naming the node.
        o.pins = {{"primals_3", *parsePlacements("S(5)R"), "test"}};
        Expected<Plan> bad = solvePlacement(g, p, o, model);
        QVERIFY(!bad);
        QVERIFY(bad.error().message.find("primals_3") != std::string::npos);
#endif
    }

    void parameterMemory() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        const Graph g = sharedGraph("mlp");
        const ShardingProblem p = buildStrategies(g, mesh({2, 2}));
        const cost::RooflineModel model(*cost::findDevice("h100"));
        SolveOptions o;
        o.paramMemoryHigh = 0.5;
        Expected<Plan> plan = solvePlacement(g, p, o, model);
        JS_VERIFY_EXPECTED(plan);
        double local = 0, full = 0;
        for (const auto& [param, grad] : jointRoles(g).paramGrad) {
            const TensorMeta* t = g.node(param).tensor();
            const double bytes = static_cast<double>(cost::numel(*t)) * 4;
            full += bytes;
            const Placements& pl = p.nodes[param].options[plan->choice[param]].outputs[0];
            double frac = 1;
            for (const Placement& x : pl)
                frac /= x.isShard() ? 2 : 1;
            local += bytes * frac;
        }
        QVERIFY(full > 0);
        QVERIFY(local <= 0.5 * full + 1e-9);
#endif
    }

    void localMapPlacementsArePins() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        // A local_map region as autoparallel's local_map_hop records it (seed 002): its meta mandates the
        // placements of its inputs and its output.
        const char* text =
            R"json({"format": "jointscope-graph", "version": 1, "graph": {"name": "g", "nodes": [
 {"name": "primals_1", "op": "placeholder", "target": "primals_1", "output_kind": "tensor",
  "outputs": [{"dtype": "float32", "sizes": [64, 64]}]},
 {"name": "primals_2", "op": "placeholder", "target": "primals_2", "output_kind": "tensor",
  "outputs": [{"dtype": "float32", "sizes": [64, 64]}]},
 {"name": "call_local_map", "op": "call_function", "target": "torch.ops.aten.mm.default",
  "args": [{"node": "primals_2"}, {"node": "primals_1"}], "output_kind": "tensor",
  "outputs": [{"dtype": "float32", "sizes": [64, 64]}],
  "meta": {"extra": {"custom": {"dtensor_local_map_kwargs": {
    "in_placements": [["Shard(0)", "Replicate()"], ["Replicate()", "Shard(1)"]],
    "out_placements": [["Shard(0)", "Shard(1)"]]}}}}},
 {"name": "relu", "op": "call_function", "target": "torch.ops.aten.relu.default",
  "args": [{"node": "call_local_map"}], "output_kind": "tensor", "outputs": [{"dtype": "float32", "sizes": [64, 64]}]},
 {"name": "output", "op": "output", "target": "output", "args": [[{"node": "relu"}]]}]}})json";
        QTemporaryDir dir;
        const std::string path = dir.filePath("local_map.json").toStdString();
        {
            std::FILE* f = std::fopen(path.c_str(), "wb");
            QVERIFY(f);
            std::fputs(text, f);
            std::fclose(f);
        }
        const Graph g = loadFirstGraph(path);
        const NodeId lm = *g.find("call_local_map");
        QVERIFY(localMapPlacements(g.node(lm)));
        QCOMPARE(localMapPins(g).size(), size_t(1));
        const ShardingProblem p = buildStrategies(g, mesh({2, 2}));
        const cost::RooflineModel model(*cost::findDevice("h100"));
        Expected<Plan> plan = solvePlacement(g, p, {}, model);
        JS_VERIFY_EXPECTED(plan);
        const Strategy& s = p.nodes[lm].options[plan->choice[lm]];
        QCOMPARE(toString(s.outputs[0]), std::string("S(0)S(1)"));
        QCOMPARE(toString(s.inputs[0]), std::string("S(0)R"));
        QCOMPARE(toString(s.inputs[1]), std::string("RS(1)"));
        // A user pin that contradicts the region's placement cannot be met.
        SolveOptions o;
        o.pins = {{"call_local_map", *parsePlacements("RR"), "test"}};
        QVERIFY(!solvePlacement(g, p, o, model));
#endif
    }

    void cliJson() {
        const Run r = runCli({"shard", q(sharedPath("graphs/torch-1.13/mlp/joint.txt")), "--mesh", "2x2",
                              "--mesh-names", "dp,tp", "--json"});
#ifndef JOINTSCOPE_HAVE_CBC
        QCOMPARE(r.exitCode, 1);
        QVERIFY(r.err.find("CBC") != std::string::npos);
#else
        QCOMPARE(r.exitCode, 0);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        for (const char* key :
             {"placements", "total_cost", "comm_cost", "compute_cost", "baselines", "seconds", "warnings"})
            QVERIFY2(j.contains(key), key);
        QCOMPARE(j["mesh"]["names"][1].get<std::string>(), std::string("tp"));
        QVERIFY(j["total_cost"].get<double>() <=
                j["baselines"]["replicate"]["total_cost"].get<double>() + 1e-9);
        QVERIFY(j["placements"].contains("addmm"));
        const Run bad = runCli({"shard", q(sharedPath("graphs/torch-1.13/mlp/joint.txt")), "--mesh", "2x2",
                                "--pin", "nosuchnode=RR"});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY(bad.err.find("nosuchnode") != std::string::npos);
#endif
    }
};

QTEST_GUILESS_MAIN(TestSharding)
#include "tst_sharding.moc"
