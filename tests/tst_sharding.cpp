// core/sharding without LibTorch: placements, mesh links, α-β costs, strategy sets, the CBC ILP and the CLI.
//
// Expected numbers are worked out by hand from the formulas' inputs (autoparallel's bandwidths and latencies,
// matmul algebra), never taken from the code under test.
#include "pairmodel_testutil.h"
#include "testutil.h"

#include "cost/DeviceSpec.h"
#include "cost/OpSignature.h"
#include "cost/ProfileDb.h"
#include "sharding/PairModel.h"
#include "sharding/Solver.h"
#include "sharding/Workflow.h"
#include "support/Format.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <set>

using namespace jointscope;
using namespace jointscope::test;
using namespace jointscope::sharding;

namespace {

Graph sharedGraph(const std::string& name) {
    // A LLaMA-style block (dim 4096, hidden 11008, batch 8 x 1024, bf16), captured on `meta` with
    // jointscope_torch.export_joint under torch 1.13 (the recipe of scripts/gpu-profile --stage).
    if (name == "llama_block")
        return loadGraphAt(sourcePath("tests/data/sharding/llama_block_meta.json"));
    return loadGraphAt(sharedPath("graphs/torch-1.13/" + name + "/joint.txt"));
}

// The float32 [8, 1024] tensor (32 KiB) of the hand-worked redistributions.
TensorMeta smallTensor() {
    TensorMeta t;
    t.dtype = DType::Float32;
    t.sizes = {SymInt{8, {}}, SymInt{1024, {}}};
    return t;
}

DeviceMesh mesh(std::vector<int64_t> shape, const char* topo = "h100") {
    return DeviceMesh::make(std::move(shape), {}, *findTopology(topo));
}

// Measured profiles standing in for a GPU run: the nodes `measured` names ran `scale` times their roofline
// time.
class ScaledProfiles final : public cost::CostModel {
public:
    ScaledProfiles(cost::RooflineModel roofline, double scale, std::set<NodeId> measured)
        : roofline_(std::move(roofline)), scale_(scale), measured_(std::move(measured)) {}
    cost::NodeCost cost(const Graph& graph, NodeId id) const override {
        cost::NodeCost c = roofline_.cost(graph, id);
        if (!c.work.free && measured_.count(id)) {
            c.timeUs *= scale_;
            c.source = cost::CostSource::Profiled;
        }
        return c;
    }
    std::string_view name() const override { return "scaled"; }

private:
    cost::RooflineModel roofline_;
    double scale_;
    std::set<NodeId> measured_;
};

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

    // The one mesh parser the CLI's --mesh / --mesh-names / --topology and the GUI's fields share.
    // A baseline that cannot apply says why, and so does a plan that shards nothing. The mlp's data input
    // primals_5 is [4, 16] (joint.meta.json): 8 devices cannot split its batch, 2x2 can.
    void dataParallelSaysWhyNot() {
#ifdef JOINTSCOPE_HAVE_CBC
        const Graph g = sharedGraph("mlp");
        const cost::RooflineModel model(*cost::findDevice("h100"));
        Expected<ShardingSolution> eight = solveWithBaselines(g, mesh({8}), {}, model);
        JS_VERIFY_EXPECTED(eight);
        QVERIFY(!eight->dataParallel);
        QVERIFY2(eight->dataParallelWhyNot.find("data input 'primals_5' has batch 4, which the 8 devices") !=
                     std::string::npos,
                 eight->dataParallelWhyNot.c_str());
        Expected<ShardingSolution> four = solveWithBaselines(g, mesh({2, 2}), {}, model);
        JS_VERIFY_EXPECTED(four);
        QVERIFY(four->dataParallel);
        QVERIFY(four->dataParallelWhyNot.empty());
        // The mlp is too small to shard on 2x2 (4 x 16 activations): the plan stays replicated and says what
        // data parallel would have cost, compute and collectives apart.
        QCOMPARE(four->plan.cost.commUs, 0.0);
        QCOMPARE(four->plan.cost.totalUs(), four->replicate.totalUs());
        QVERIFY(four->dataParallel->totalUs() > four->replicate.totalUs());
        QVERIFY(four->dataParallel->commUs > 0);
        const std::string why = four->replicatedWhy;
        QVERIFY2(why.rfind("every node stays replicated: data parallel would take compute from ", 0) == 0,
                 why.c_str());
        QVERIFY2(why.find(formatMicros(four->dataParallel->commUs) + " of collectives") != std::string::npos,
                 why.c_str());
        // On 8 devices there is no data-parallel plan to compare with (dataParallelWhyNot says why).
        QVERIFY2(eight->replicatedWhy.find("no data-parallel plan to compare with") != std::string::npos,
                 eight->replicatedWhy.c_str());
#endif
    }

    void meshSpecs() {
        const Expected<MeshSpec> spec = parseMeshSpec(" 2x4 ", "dp, tp", "a100");
        JS_VERIFY_EXPECTED(spec);
        QCOMPARE(spec->shape, (std::vector<int64_t>{2, 4}));
        QCOMPARE(spec->names, (std::vector<std::string>{"dp", "tp"}));
        QCOMPARE(spec->topology, std::string("a100"));
        const Expected<MeshSetup> setup = resolveMesh(*spec);
        JS_VERIFY_EXPECTED(setup);
        QCOMPARE(setup->mesh.str(), std::string("2x4 (dp, tp) a100"));
        QCOMPARE(setup->mesh.links.size(), size_t(2));

        const Expected<MeshSpec> unnamed = parseMeshSpec("8", "  ", "H100");
        JS_VERIFY_EXPECTED(unnamed);
        QVERIFY(unnamed->names.empty());
        QCOMPARE(resolveMesh(*unnamed)->mesh.str(), std::string("8 (d0) h100"));

        struct Bad {
            const char *shape, *names, *topology, *quoted;
        };
        for (const Bad& b : {Bad{"8y8", "", "h100", "'8y8'"}, Bad{"2x0", "", "h100", "'2x0'"},
                             Bad{"2x2x2x2x2", "", "h100", "'2x2x2x2x2'"}, Bad{"", "", "h100", "''"},
                             Bad{"2x2", "dp", "h100", "'dp'"}, Bad{"2", "", "tpu", "'tpu'"}}) {
            const Expected<MeshSpec> refused = parseMeshSpec(b.shape, b.names, b.topology);
            QVERIFY2(!refused, b.shape);
            QVERIFY2(refused.error().message.find(b.quoted) != std::string::npos,
                     refused.error().message.c_str());
        }
        // Sessions hand over sizes already split: the same checks.
        QVERIFY(!makeMeshSpec({2, -2}, {}, "h100"));
        QVERIFY(!makeMeshSpec({}, {}, "h100"));
        QVERIFY(!makeMeshSpec({2, 2}, {"dp", "tp", "pp"}, "h100"));
        QVERIFY(makeMeshSpec({2, 2}, {"dp", "tp"}, "gb200"));
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
        const TensorMeta t = smallTensor();
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

    // Tensor dim 0 sharded by mesh dims 0 then 1 is split by the first, then within each piece by the
    // second: only the inner shard may be added or gathered. RS(0) -> S(0)R must gather on d1 first
    // (16 KiB local, 32 KiB gathered): 8.4 + 3.4 + 32768 / 2 / 320e9 s. Slicing d0 first and gathering the
    // 8 KiB pieces on d1 (11.8256 us) would leave a strided shard, not S(0)R.
    void redistributionKeepsShardOrder() {
        const DeviceMesh m = mesh({2, 2});
        const TensorMeta t = smallTensor();
        const Redistribution r = redistribute(*parsePlacements("RS(0)"), *parsePlacements("S(0)R"), t, m);
        QCOMPARE(r.steps.size(), size_t(1));
        QCOMPARE(r.steps[0].collective, Collective::AllGather);
        QCOMPARE(r.steps[0].meshDim, size_t(1));
        QCOMPARE(r.steps[0].bytes, 32768.0);
        QVERIFY(std::abs(r.us - (11.8 + 32768.0 / 2 / 320e9 * 1e6)) < 1e-9);
    }

    // Redistribution is a cheapest path over one-collective steps, so its costs form a metric: no layout
    // is cheaper to reach through a third one. The memoized search agrees with the single one.
    void redistributionCostsAreAMetric() {
        const DeviceMesh m = mesh({2, 4});
        TensorMeta t;
        t.dtype = DType::BFloat16;
        t.sizes = {SymInt{16, {}}, SymInt{64, {}}, SymInt{4096, {}}};
        std::vector<Placements> layouts;
        const std::vector<Placement> each = {Placement::replicate(), Placement::shard(0), Placement::shard(1),
                                             Placement::shard(2), Placement::partial()};
        for (const Placement& a : each)
            for (const Placement& b : each)
                layouts.push_back({a, b});
        RedistributionCache cache(m);
        std::vector<std::vector<double>> us;
        for (const Placements& from : layouts) {
            us.emplace_back();
            for (const Placements& to : layouts)
                us.back().push_back(cache.us(from, to, t));
        }
        for (size_t a = 0; a < layouts.size(); ++a)
            for (size_t c = 0; c < layouts.size(); ++c) {
                QVERIFY(std::abs(us[a][c] - redistribute(layouts[a], layouts[c], t, m).us) < 1e-9);
                for (size_t b = 0; b < layouts.size(); ++b)
                    QVERIFY2(us[a][c] <= us[a][b] + us[b][c] + 1e-9,
                             qPrintable(QString::fromStdString(toString(layouts[a]) + " -> " +
                                                               toString(layouts[c]) + " via " +
                                                               toString(layouts[b]))));
            }
        QCOMPARE(us[0][layouts.size() - 1], 0.0); // RR -> P(sum)P(sum): local
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

    // Dead-end elimination and chain elimination keep the ILP's optimum: on random pairwise models the plan
    // solved through them costs what enumerating every assignment finds.
    void reductionsKeepTheOptimum() {
#ifndef JOINTSCOPE_HAVE_CBC
        QSKIP("built without CBC");
#else
        int reducedModels = 0, eliminatedModels = 0, infeasibleModels = 0;
        forEachRandomModel(20261123, 300, [&](int trial, const PairModel& original, double best) {
            PairModel reduced = original;
            const size_t before = reduced.aliveOptions();
            eliminateDominated(reduced);
            eliminatedModels += eliminateChains(reduced) > 0;
            eliminateDominated(reduced);
            reducedModels += reduced.aliveOptions() < before;
            PairLp lp;
            const std::vector<std::vector<int>> x = addToLp(reduced, lp);
            const PairLp::Result solved = lp.solve(10, false);
            if (best == PairModel::kForbidden) {
                QVERIFY2(!solved.feasible, qPrintable(QString("trial %1").arg(trial)));
                ++infeasibleModels;
                return;
            }
            QVERIFY2(solved.feasible && solved.optimal, qPrintable(QString("trial %1").arg(trial)));
            const double got = assignmentCost(original, reduced.choices(x, solved.binary));
            QVERIFY2(
                std::fabs(got - best) < 1e-7,
                qPrintable(QString("trial %1: %2 against the optimum %3").arg(trial).arg(got).arg(best)));
        });
        // The trials exercise every path.
        QVERIFY2(reducedModels > 30, qPrintable(QString::number(reducedModels)));
        QVERIFY2(eliminatedModels > 100, qPrintable(QString::number(eliminatedModels)));
        QVERIFY2(infeasibleModels > 0, qPrintable(QString::number(infeasibleModels)));
#endif
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
        if (Expected<std::vector<Pin>> dp = dataParallelPins(g, p)) {
            SolveOptions o;
            o.pins = *dp;
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
        const Graph g = loadGraphAt(path);
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
        for (const std::string& w : p.warnings)
            QVERIFY2(w.find("in_grad_placements") == std::string::npos, w.c_str());

        // in_grad_placements given: not applied (autoparallel asserts it is None), and said so.
        std::string withGrad = text;
        const std::string out = "\"out_placements\"";
        withGrad.insert(withGrad.find(out),
                        R"js("in_grad_placements": [["Shard(0)", "Replicate()"], null], )js");
        {
            std::FILE* f = std::fopen(path.c_str(), "wb");
            QVERIFY(f);
            std::fputs(withGrad.c_str(), f);
            std::fclose(f);
        }
        const Graph g2 = loadGraphAt(path);
        QVERIFY(localMapPlacements(g2.node(*g2.find("call_local_map")))->inGradGiven);
        const ShardingProblem p2 = buildStrategies(g2, mesh({2, 2}));
        QVERIFY(std::any_of(p2.warnings.begin(), p2.warnings.end(), [](const std::string& w) {
            return w.find("call_local_map: local_map in_grad_placements") != std::string::npos;
        }));
#endif
    }

    // A profile that says mm runs 1.5x slower than its roofline makes every mm strategy 1.5x slower on its
    // shards, and leaves every other node alone.
    void profiledComputeScalesEachNode() {
        const Graph g = sharedGraph("llama_block");
        const DeviceMesh m = mesh({2, 2});
        const ShardingProblem p = buildStrategies(g, m);
        const cost::RooflineModel roofline(*cost::findDevice("h100"));
        std::set<NodeId> mms;
        for (NodeId id = 0; id < g.size(); ++id)
            if (g.node(id).target.text == "torch.ops.aten.mm.default")
                mms.insert(id);
        QVERIFY(mms.size() > 10);
        const ComputeModel plain(roofline);
        ComputeModel calibrated(roofline);
        calibrated.calibrate(g, ScaledProfiles(roofline, 1.5, mms));
        QCOMPARE(calibrated.calibratedNodes(), mms.size());
        size_t checked = 0;
        for (NodeId id = 0; id < g.size(); ++id)
            for (const Strategy& s : p.nodes[id].options) {
                const double before = computeUs(g, id, p.nodes[id], s, m, plain);
                const double after = computeUs(g, id, p.nodes[id], s, m, calibrated);
                QVERIFY(std::abs(after - (mms.count(id) ? 1.5 : 1.0) * before) <= 1e-9 * before);
                checked += mms.count(id) && before > 0;
            }
        QVERIFY(checked > mms.size());
    }

    // `shard --cost-model profiled` reads a real profile database: the replicated plan runs every node on
    // its full shapes, so its compute moves by exactly measured − roofline of the one profiled node.
    void cliProfiledComputeModel() {
#ifdef JOINTSCOPE_HAVE_CBC
        const std::string file = sharedPath("graphs/torch-1.13/mlp/joint.txt");
        const Graph g = loadGraphAt(file);
        const std::optional<NodeId> addmm = g.find("addmm");
        QVERIFY(addmm);
        const cost::DeviceSpec h100 = *cost::findDevice("h100");
        const double roofline = cost::RooflineModel(h100).cost(g, *addmm).timeUs;
        QTemporaryDir dir;
        const std::string dbPath = dir.filePath("profiles.sqlite").toStdString();
        {
            auto db = cost::ProfileDb::open(dbPath);
            QVERIFY(db);
            cost::OpStats stats;
            stats.medianUs = stats.minUs = stats.maxUs = stats.meanUs = 250.0;
            stats.reps = 5;
            stats.measuredAt = "2026-11-23T12:00:00Z";
            QVERIFY((*db)->store({h100.cudaName, "1.13.1", cost::opSignature(g, *addmm)}, stats));
        }
        auto shard = [&](QStringList extra) {
            QStringList args = {"shard", q(file), "--mesh", "2", "--json"};
            args += extra;
            const Run r = runCli(args);
            if (r.exitCode != 0)
                qWarning("%s", r.err.c_str());
            return r.exitCode == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
        };
        const nlohmann::json plain = shard({});
        const nlohmann::json profiled = shard({"--cost-model", "profiled", "--db", q(dbPath)});
        QVERIFY(!plain.is_null() && !profiled.is_null());
        QCOMPARE(profiled["compute_model"]["calibrated_nodes"].get<int>(), 1);
        QCOMPARE(profiled["compute_model"]["torch_version"].get<std::string>(), std::string("1.13.1"));
        const double delta = profiled["baselines"]["replicate"]["compute_cost"].get<double>() -
                             plain["baselines"]["replicate"]["compute_cost"].get<double>();
        QVERIFY2(std::abs(delta - (250.0 - roofline)) < 1e-6,
                 qPrintable(QString("%1 against %2").arg(delta).arg(250.0 - roofline)));
        const Run missing = runCli({"shard", q(file), "--mesh", "2", "--cost-model", "profiled", "--db",
                                    q(dir.filePath("none.sqlite").toStdString())});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY(missing.err.find("none.sqlite") != std::string::npos);
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
