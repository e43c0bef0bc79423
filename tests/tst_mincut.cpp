// The min-cut partition engine: torch 1.13's own decisions on real graphs, and each torch 2 rule on small
// hand-built joint graphs whose expected cut is worked out by hand in the comments.
#include "testutil.h"

#include "io/FxReader.h"
#include "io/GraphFile.h"
#include "ops/Ruleset.h"
#include "ops/RulesetChoice.h"
#include "partition/FlowNetwork.h"
#include "partition/JointGraph.h"
#include "partition/Partitioner.h"

#include <nlohmann/json.hpp>

#include <limits>
#include <optional>

using namespace jointscope;
using namespace jointscope::partition;
using namespace jointscope::test;

namespace {

Graph parseJoint(const std::string& text, int64_t numFwdOutputs) {
    Expected<GraphFile> file = GraphFile::fromText(text, "test.py");
    if (!file)
        qFatal("%s", file.error().format().c_str());
    Expected<Graph> graph = file->load(0);
    if (!graph)
        qFatal("%s", graph.error().format().c_str());
    graph->numFwdOutputs = numFwdOutputs;
    return graph.take();
}

Ruleset ruleset(const char* name) {
    Expected<Ruleset> rules = loadRuleset(name);
    if (!rules)
        qFatal("%s", rules.error().format().c_str());
    return rules.take();
}

std::vector<std::string> names(const Partition& p, const std::vector<NodeId>& ids) {
    std::vector<std::string> out;
    for (NodeId id : ids)
        out.push_back(p.graph.node(id).name);
    return out;
}

Partition partitionOk(const Graph& g, const Ruleset& rules, const PartitionOptions& options = {}) {
    Expected<Partition> p = partitionJoint(g, rules, options);
    if (!p)
        qFatal("%s", p.error().format().c_str());
    return p.take();
}

std::string banOf(const Partition& p, const char* name) {
    const std::optional<NodeId> id = p.graph.find(name);
    return id && p.cut ? std::string(banReasonText(p.cut->banReason[*id])) : std::string("<no node>");
}

using Names = std::vector<std::string>;

// A forward mm -> relu, a backward threshold_backward and a weight-gradient mm through t(primals_1).
// torch 2 by hand: mm is banned (not in the allowlist); relu is banned too, as "materialized in backward":
// the output node reads it and is neither a required forward node nor fusible. relu (dist_from_bw 1,
// materialized) weighs int(256 * 1.1) = 281 < mm's int(256 * 1.21) = 309, so relu is cut. primals_1 (281) and
// the unclaimed t (281) tie; networkx's cut keeps the sink side smallest, so t is cut.
const char* kMlpJoint = R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8, 8]", primals_2: "f32[8, 8]", tangents_1: "f32[8, 8]"):
        mm: "f32[8, 8]" = torch.ops.aten.mm.default(primals_1, primals_2)
        relu: "f32[8, 8]" = torch.ops.aten.relu.default(mm)
        threshold_backward: "f32[8, 8]" = torch.ops.aten.threshold_backward.default(tangents_1, relu, 0)
        t: "f32[8, 8]" = torch.ops.aten.t.default(primals_1)
        mm_1: "f32[8, 8]" = torch.ops.aten.mm.default(t, threshold_backward)
        return (relu, None, mm_1)
)";

} // namespace

class TestMinCut : public QObject {
    Q_OBJECT

private slots:
    void rulesetsLoad() {
        const Ruleset t2 = ruleset("torch-2");
        const Ruleset t113 = ruleset("torch-1.13");
        QCOMPARE(t2.name, std::string("torch-2.15")); // "torch-2": the newest built-in torch 2 ruleset
        QVERIFY(t2.recomputable.contains("aten.gelu") && t2.views.contains("aten.t"));
        QVERIFY(!t113.recomputable.contains("aten.t")); // nvfuser's list has no views but squeeze/unsqueeze
        QVERIFY(t113.recomputable.contains("aten._softmax") && !t2.recomputable.contains("aten._softmax"));
        QVERIFY(t2.computeIntensive.contains("aten.mm") && t113.computeIntensive.contains("aten.mm"));
        QCOMPARE(int(t113.dtypeBytes[size_t(DType::BFloat16)]), 2);
        QCOMPARE(int(t113.dtypeBytes[size_t(DType::Complex64)]), 0); // 1.13's _size_of table has no complex
        Expected<Ruleset> missing = loadRuleset("/nonexistent/ruleset.json");
        QVERIFY(!missing);
        QVERIFY(missing.error().message.find("torch-2.15") != std::string::npos);
        QVERIFY(missing.error().message.find("torch-1.13") != std::string::npos);
        Expected<Ruleset> bad = parseRuleset(
            "{\"format\": \"jointscope-ruleset\", \"switches\": {\"size_model\": 3}}", "bad.json");
        QVERIFY(!bad);
        QVERIFY(bad.error().format().starts_with("bad.json:1:1"));
    }

    // torch's default_partition never weighs values: a dtype the ruleset cannot size (1.13 has no complex)
    // stops the min-cut, as in torch 1.13, but not the default partition. By hand: the backward reads
    // primals_1 and the tangent, so primals_1 is saved.
    void defaultPartitionNeedsNoDtypeSizes() {
        const Graph joint = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "c64[4, 4]", tangents_1: "c64[4, 4]"):
        mul: "c64[4, 4]" = torch.ops.aten.mul.Tensor(primals_1, primals_1)
        mul_1: "c64[4, 4]" = torch.ops.aten.mul.Tensor(tangents_1, primals_1)
        add: "c64[4, 4]" = torch.ops.aten.add.Tensor(mul_1, mul_1)
        return (mul, add)
)",
                                       1);
        const Ruleset rules = ruleset("torch-1.13");
        QVERIFY(!partitionJoint(joint, rules, {})); // min-cut: 1.13's _size_of raises on complex too
        PartitionOptions dflt;
        dflt.strategy = Strategy::Default;
        const Partition p = partitionOk(joint, rules, dflt);
        QCOMPARE(names(p, p.saved), (Names{"primals_1"}));
        const Partition p2 = partitionOk(joint, ruleset("torch-2.15"), dflt);
        QCOMPARE(names(p2, p2.saved), (Names{"primals_1"}));
    }

    // --ruleset auto (chooseRuleset): the recorded torch version, else the form of the text.
    void rulesetChoice() {
        // The shared torch 1.13 graphs: their sidecar records torch 1.13.0a0.
        const Graph joint113 = loadGraphAt(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        QCOMPARE(chooseRuleset(joint113).name, std::string("torch-1.13"));
        // The same text without its sidecar: untyped FX text is torch 1.x's.
        const std::optional<Graph> untyped =
            parseJoint(readFile(sharedPath("graphs/torch-1.13/mlp/joint.txt")), 1);
        QCOMPARE(chooseRuleset(*untyped).name, std::string("torch-1.13"));
        // A TORCH_TRACE graph (torch 2.x), and typed FX text.
        Expected<GraphFile> log =
            GraphFile::open(sharedPath("graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt"));
        QVERIFY(log);
        Expected<Graph> traced = log->load(*log->select("aot_joint_graph"));
        QVERIFY(traced);
        QCOMPARE(chooseRuleset(*traced).name, std::string("torch-2.15"));
        const std::optional<Graph> typed = parseJoint(kMlpJoint, 1);
        QCOMPARE(chooseRuleset(*typed).name, std::string("torch-2.15"));
        // A recorded version picks the ruleset covering it, and says so: torch-2.8 covers 2.8 and older,
        // torch-2.9 2.9 (mutations kept in the forward, tensorify's float64 upcast), torch-2.10 2.10
        // (default_partition by placement), torch-2.11 2.11 (tangents_closure), torch-2.12 2.12
        // (pointless_convert folds every float chain up to it), torch-2.13 2.13 (torch 2.14 brought
        // is_nonzero_dropout_sdpa and the CSE partition key), torch-2.14 2.14 (no epilogue-mutation rule
        // yet), torch-2.15 2.15 on.
        Graph versioned = *typed;
        versioned.attributes.emplace_back("torch_version", "2.6.0+cpu");
        const RulesetChoice choice = chooseRuleset(versioned);
        QCOMPARE(choice.name, std::string("torch-2.8"));
        QVERIFY(choice.reason.find("2.6.0") != std::string::npos);
        const std::pair<const char*, const char*> covering[] = {
            {"2.8.0+cu128", "torch-2.8"},   {"2.9.1+cu128", "torch-2.9"}, {"2.10.0+cu128", "torch-2.10"},
            {"2.11.0+cu130", "torch-2.11"}, {"2.12.0", "torch-2.12"},     {"2.13.0", "torch-2.13"},
            {"2.14.1", "torch-2.14"},       {"2.15.0", "torch-2.15"},     {"2.16.0", "torch-2.15"},
            {"3.0.0", "torch-2.15"},        {"1.12.1", "torch-1.13"},     {"1.13.0a0", "torch-1.13"},
            {"0.4.1", "torch-1.13"}};
        // A TORCH_TRACE log whose metrics carry no version (torch <= 2.9) bounds it from above.
        Graph bounded = *typed;
        bounded.attributes.emplace_back("torch_version_at_most", "2.9");
        QCOMPARE(chooseRuleset(bounded).name, std::string("torch-2.9"));
        QVERIFY(chooseRuleset(bounded).reason.find("torch 2.9 or older") != std::string::npos);
        bounded.attributes.back().second = "2.8";
        QCOMPARE(chooseRuleset(bounded).name, std::string("torch-2.8"));
        for (const auto& [version, name] : covering) {
            versioned.attributes.back().second = version;
            QCOMPARE(chooseRuleset(versioned).name, std::string(name));
        }
        // Named rulesets pass through; "auto" and "" choose.
        QCOMPARE(resolveRuleset("torch-1.13", *typed).name, std::string("torch-1.13"));
        QCOMPARE(resolveRuleset("auto", joint113).name, std::string("torch-1.13"));
        QCOMPARE(resolveRuleset("", *typed).name, std::string("torch-2.15"));
    }

    // torch's partitioner decisions recorded by torch 1.13 itself (reference.json) for the shared graphs.
    void torch113ReferenceGraphs_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("mlp") << "mlp";
        QTest::newRow("gpt_block2") << "gpt_block2";
        QTest::newRow("convnet") << "convnet";
    }
    void torch113ReferenceGraphs() {
        QFETCH(QString, model);
        const std::string dir = sharedPath("graphs/torch-1.13/" + model.toStdString());
        const auto reference = nlohmann::json::parse(readFile(dir + "/reference.json"));
        Expected<GraphFile> file = GraphFile::open(dir + "/joint.txt");
        QVERIFY(file);
        Expected<Graph> graph = file->load(0);
        QVERIFY(graph);
        const Ruleset rules = ruleset("torch-1.13");
        const Partition p = partitionOk(*graph, rules);
        QCOMPARE(names(p, p.saved), reference.at("min_cut_saved").get<Names>());
        QVERIFY(p.savedSym.empty());
        QVERIFY(p.merged.empty() && p.deadNodes.empty());
        QVERIFY(p.seconds < 5);

        // The extracted graphs are torch's: same nodes as the fw.txt / bw.txt torch 1.13 printed, and the
        // recomputed nodes are the calls both contain.
        const auto nodeNames = [](const Graph& g) {
            Names out;
            for (const Node& n : g.nodes())
                out.push_back(n.name);
            std::sort(out.begin(), out.end());
            return out;
        };
        const Graph torchForward = loadGraphAt(dir + "/fw.txt");
        const Graph torchBackward = loadGraphAt(dir + "/bw.txt");
        QCOMPARE(nodeNames(p.forward), nodeNames(torchForward));
        QCOMPARE(nodeNames(p.backward), nodeNames(torchBackward));
        Names both;
        for (const Node& n : torchForward.nodes())
            if (const std::optional<NodeId> b = torchBackward.find(n.name);
                n.op == NodeOp::CallFunction && b && torchBackward.node(*b).op == NodeOp::CallFunction)
                both.push_back(n.name);
        Names recomputed = names(p, p.recomputed);
        std::sort(both.begin(), both.end());
        std::sort(recomputed.begin(), recomputed.end());
        QCOMPARE(recomputed, both);

        PartitionOptions dflt;
        dflt.strategy = Strategy::Default;
        const Partition d = partitionOk(*graph, rules, dflt);
        Names got = names(d, d.saved), want = reference.at("default_partition_saved").get<Names>();
        std::sort(got.begin(), got.end());
        std::sort(want.begin(), want.end());
        QCOMPARE(got, want); // torch 1.13 keeps this list as list(set(...)): compared as a set
    }

    // A real torch 2.x TORCH_TRACE log holds the joint graph and the forward / backward graphs torch's
    // partitioner produced from it: torch 2's decision, recorded by torch.
    // A real torch 2.15 TORCH_TRACE log (tests/data/torch2, written by test_torch2_trace_check's run with
    // aot_eager_decomp_partition): two GPT blocks under torch.utils.checkpoint. The recompute tags exist only
    // as torch's node summary comments ("# ac_graph_id: 3 - PREFER_RECOMPUTE File: ..."), the parameters only
    // as the fw_metadata's static_input_indices.
    void torch215CheckpointedTraceLog() {
        Expected<GraphFile> file =
            GraphFile::open(test::sourcePath("tests/data/torch2/gpt_stack_ac_trace.log"));
        QVERIFY(file);
        Expected<Graph> joint = file->load(*file->select("aot_joint_graph"));
        Expected<Graph> torchForward = file->load(*file->select("aot_forward_graph"));
        QVERIFY(joint && torchForward);
        size_t region3 = 0, region4 = 0; // one ac_graph_id per checkpointed block
        for (const Node& n : joint->nodes()) {
            region3 += n.meta.recompute == "PREFER_RECOMPUTE" && n.meta.acGraphId == 3;
            region4 += n.meta.recompute == "PREFER_RECOMPUTE" && n.meta.acGraphId == 4;
        }
        QVERIFY(region3 > 40 && region3 == region4); // the same block twice
        // Read by hand from the log: static_input_indices=[1, 2, ..., 26] (primals_1 is the input batch).
        std::string list;
        for (int i = 1; i <= 26; ++i)
            list += (i == 1 ? "" : ", ") + std::to_string(i);
        bool found = false;
        for (const auto& [key, value] : joint->attributes)
            found = found || (key == "static_lifetime_input_indices" && value == "[" + list + "]");
        QVERIFY(found);

        Names torchSaved;
        const std::vector<const Value*> leaves = torchForward->outputLeaves();
        for (size_t i = size_t(*joint->numFwdOutputs); i < leaves.size(); ++i)
            torchSaved.push_back(torchForward->node(leaves[i]->asNode()).name);
        const Ruleset rules = ruleset(chooseRuleset(*joint).name.c_str());
        const Partition p = partitionOk(*joint, rules);
        QCOMPARE(names(p, p.saved), torchSaved);

        // Without the tags the decision is not torch's: the comments are what carried it.
        Graph untagged = *joint;
        for (NodeId id = 0; id < untagged.size(); ++id) {
            untagged.node(id).meta.recompute.clear();
            untagged.node(id).meta.acGraphId = -1;
        }
        const Partition plain = partitionOk(untagged, rules);
        QVERIFY(names(plain, plain.saved) != torchSaved);
    }

    // functionalize_rng_ops on a GPU: torch 2.11 recorded on an H200 (tests/data/torch2-cuda) returns no RNG
    // state from the forward of checkpointed blocks with dropout: on one CUDA device both graphs take the
    // generator state as inputs. On the CPU, or with the random ops spread over two GPUs, the forward returns
    // one state per recomputed random op (torch's multi_graphsafe_devices fallback).
    void rngStatesFollowGraphsafeDevices() {
        Graph g = loadGraphAt(sourcePath("tests/data/torch2-cuda/gpt_stack_ac_dropout.json"));
        const Ruleset rules = ruleset(chooseRuleset(g).name.c_str());
        QCOMPARE(rules.name, std::string("torch-2.11"));
        const Partition onGpu = partitionOk(g, rules);
        QVERIFY(onGpu.rngStates.empty()); // torch's recorded decision has no rng_states
        Names recomputedRandom;
        for (NodeId id : onGpu.recomputed) {
            const std::string& target = g.node(id).target.text;
            if (target.find("aten.native_dropout.") != std::string::npos ||
                target.find("aten._scaled_dot_product_efficient_attention.") != std::string::npos)
                recomputedRandom.push_back(g.node(id).name);
        }
        // Counted in the file: two blocks, each with two native_dropout and one SDPA (dropout_p 0, random
        // under torch 2.13's rules), all recomputed under the checkpoint.
        QCOMPARE(recomputedRandom.size(), size_t(6));

        auto moveTo = [&](Graph graph, auto&& deviceOf) {
            for (NodeId id = 0; id < graph.size(); ++id)
                for (TensorMeta& t : graph.node(id).outputs)
                    if (t.device.type == "cuda")
                        t.device = deviceOf(graph.node(id));
            return graph;
        };
        const Graph onCpu = moveTo(g, [](const Node&) { return Device{"cpu", -1}; });
        const Partition cpu = partitionOk(onCpu, rules);
        QCOMPARE(names(cpu, cpu.rngStates), recomputedRandom);
        // The second block on another GPU (its nodes carry the larger ac_graph_id).
        int64_t firstRegion = std::numeric_limits<int64_t>::max();
        for (const Node& n : g.nodes())
            if (n.meta.acGraphId >= 0)
                firstRegion = std::min(firstRegion, n.meta.acGraphId);
        const Graph twoGpus = moveTo(g, [&](const Node& n) {
            return Device{"cuda", n.meta.acGraphId > firstRegion ? 1 : 0};
        });
        const Partition split = partitionOk(twoGpus, rules);
        QCOMPARE(names(split, split.rngStates), recomputedRandom);
    }

    void torch2TraceLogDecision() {
        Expected<GraphFile> file =
            GraphFile::open(sharedPath("graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt"));
        QVERIFY(file);
        std::optional<size_t> jointIndex, forwardIndex, backwardIndex;
        for (size_t i = 0; i < file->graphs().size(); ++i) {
            const std::string& kind = file->graphs()[i].kind;
            if (kind == "aot_joint_graph")
                jointIndex = i;
            else if (kind == "aot_forward_graph")
                forwardIndex = i;
            else if (kind == "aot_backward_graph")
                backwardIndex = i;
        }
        QVERIFY(jointIndex && forwardIndex && backwardIndex);
        Expected<Graph> joint = file->load(*jointIndex);
        Expected<Graph> torchForward = file->load(*forwardIndex);
        Expected<Graph> torchBackward = file->load(*backwardIndex);
        QVERIFY(joint && torchForward && torchBackward);
        QCOMPARE(joint->numFwdOutputs.value_or(-1), int64_t(2));

        // torch's saved values: the forward's outputs after the joint's forward outputs.
        Names torchSaved;
        const Node& out = torchForward->node(*torchForward->outputNode());
        const auto& leaves = out.args[0].items();
        for (size_t i = 2; i < leaves.size(); ++i)
            torchSaved.push_back(torchForward->node(leaves[i].asNode()).name);
        QCOMPARE(torchSaved, (Names{"primals_3", "sigmoid", "le"})); // what the log says, read independently

        const Partition p = partitionOk(*joint, ruleset("torch-2"));
        QCOMPARE(names(p, p.saved), torchSaved);
        QVERIFY(p.savedSym.empty());
        // The backward reads the same values, tangents last.
        Names backwardInputs;
        for (const Node& n : torchBackward->nodes())
            if (n.op == NodeOp::Placeholder)
                backwardInputs.push_back(n.name);
        Names ours;
        for (const Node& n : p.backward.nodes())
            if (n.op == NodeOp::Placeholder)
                ours.push_back(n.name);
        QCOMPARE(ours, backwardInputs);
    }

    void flowNetworkValueAndTies() {
        // CLRS figure 26.1: maximum flow 23.
        FlowNetwork clrs(6);
        const int edges[][3] = {{0, 1, 16}, {0, 2, 13}, {2, 1, 4},  {1, 3, 12}, {3, 2, 9},
                                {2, 4, 14}, {4, 3, 7},  {3, 5, 20}, {4, 5, 4}};
        for (const auto& e : edges)
            clrs.addEdge(e[0], e[1], e[2]);
        QCOMPARE(clrs.maxFlow(0, 5), Capacity(23));

        // s -> a_in -1-> a_out -> b_in -1-> b_out -> t: two minimum cuts of value 1; the sink side is the set
        // of vertices that still reach t, so b (next to the sink) is the cut.
        FlowNetwork chain(6);
        chain.addEdge(4, 0, kInfiniteCapacity);
        chain.addEdge(0, 1, 1);
        chain.addEdge(1, 2, kInfiniteCapacity);
        chain.addEdge(2, 3, 1);
        chain.addEdge(3, 5, kInfiniteCapacity);
        QCOMPARE(chain.maxFlow(4, 5), Capacity(1));
        const std::vector<bool> sink = chain.sinkSide(5);
        QVERIFY(!sink[0] && !sink[1] && !sink[2] && sink[3] && sink[5]);

        FlowNetwork unbounded(3);
        unbounded.addEdge(0, 1, kInfiniteCapacity);
        unbounded.addEdge(1, 2, kInfiniteCapacity);
        QCOMPARE(unbounded.infinitePath(0, 2), (std::vector<uint32_t>{0, 1, 2}));
    }

    void torch2AllowlistAndTies() {
        const Graph g = parseJoint(kMlpJoint, 1);
        const Partition p = partitionOk(g, ruleset("torch-2"));
        QCOMPARE(names(p, p.saved), (Names{"relu", "t"}));
        QCOMPARE(banOf(p, "mm"), std::string(banReasonText(BanReason::NotInAllowlist)));
        QCOMPARE(banOf(p, "primals_1"), std::string(banReasonText(BanReason::Input)));
        QCOMPARE(banOf(p, "relu"), std::string(banReasonText(BanReason::MaterializedBackward)));
        const NodeId relu = *p.graph.find("relu");
        QCOMPARE(p.info.distFromBw[relu], int64_t(1));
        QCOMPARE(p.cut->weight[relu], Capacity(281));
        QCOMPARE(p.cut->weight[*p.graph.find("mm")], Capacity(309));
        QCOMPARE(p.cut->cutValue, Capacity(281 + 281));
        QCOMPARE(explainNode(p, relu).decision, std::string("saved"));
        QCOMPARE(explainNode(p, *p.graph.find("t")).decision, std::string("saved"));
        QVERIFY(explainNode(p, *p.graph.find("t")).rule.find("minimum cut") != std::string::npos);
        QCOMPARE(explainNode(p, *p.graph.find("mm")).decision, std::string("banned"));
        QCOMPARE(explainNode(p, *p.graph.find("mm_1")).decision, std::string("backward"));
        // The forward returns relu and the saved values; the backward takes them and the tangent.
        QCOMPARE(p.forward.outputNode().has_value(), true);
        QCOMPARE(p.backward.node(0).name, std::string("relu"));
        QCOMPARE(p.backward.node(1).name, std::string("t"));
        QCOMPARE(p.backward.node(2).name, std::string("tangents_1"));
    }

    void torch2RecomputeTags() {
        // MUST_RECOMPUTE on relu: relu_in is tied to the sink and gets no node edge, so the cut moves to mm.
        Graph g = parseJoint(kMlpJoint, 1);
        g.node(*g.find("relu")).meta.recompute = "CheckpointPolicy.MUST_RECOMPUTE";
        const Partition p = partitionOk(g, ruleset("torch-2"));
        QCOMPARE(names(p, p.saved), (Names{"mm", "t"}));
        QCOMPARE(names(p, p.recomputed), (Names{"relu"}));
        QCOMPARE(explainNode(p, *p.graph.find("relu")).decision, std::string("recomputed"));
        // functorch 1.13 knows no CheckpointPolicy: the tag changes nothing.
        const Partition old = partitionOk(g, ruleset("torch-1.13"));
        QCOMPARE(names(old, old.saved), (Names{"relu", "t"}));

        // MUST_SAVE bans recomputation: same cut, but for that reason.
        Graph s = parseJoint(kMlpJoint, 1);
        s.node(*s.find("relu")).meta.recompute = "MUST_SAVE";
        const Partition ps = partitionOk(s, ruleset("torch-2"));
        QCOMPARE(banOf(ps, "relu"), std::string(banReasonText(BanReason::MustSave)));

        // A policy file overrides the graph's tags by node name.
        PartitionOptions options;
        options.overrides = {{"relu", Policy::PreferRecompute}};
        const Partition po = partitionOk(parseJoint(kMlpJoint, 1), ruleset("torch-2"), options);
        QCOMPARE(names(po, po.saved), (Names{"mm", "t"}));
        options.overrides = {{"no_such_node", Policy::MustSave}};
        Expected<Partition> bad = partitionJoint(parseJoint(kMlpJoint, 1), ruleset("torch-2"), options);
        QVERIFY(!bad);
        QVERIFY(bad.error().message.find("'no_such_node'") != std::string::npos);
    }

    void cleanupRecomputeTagsAtRegionBoundary() {
        // Two checkpoint regions back to back: relu (region 1) feeds sigmoid (region 2);
        // cleanup_recompute_tags saves the boundary value relu.
        Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8, 8]", tangents_1: "f32[8, 8]"):
        relu: "f32[8, 8]" = torch.ops.aten.relu.default(primals_1)
        sigmoid: "f32[8, 8]" = torch.ops.aten.sigmoid.default(relu)
        mul: "f32[8, 8]" = torch.ops.aten.mul.Tensor(tangents_1, sigmoid)
        return (sigmoid, mul)
)",
                             1);
        g.node(*g.find("relu")).meta.recompute = "MUST_RECOMPUTE";
        g.node(*g.find("relu")).meta.acGraphId = 1;
        g.node(*g.find("sigmoid")).meta.recompute = "MUST_RECOMPUTE";
        g.node(*g.find("sigmoid")).meta.acGraphId = 2;
        const Partition p = partitionOk(g, ruleset("torch-2"));
        QCOMPARE(p.info.policy[*p.graph.find("relu")], Policy::MustSave);
        QCOMPARE(names(p, p.saved), (Names{"relu"}));
        QCOMPARE(names(p, p.recomputed), (Names{"sigmoid"}));
    }

    void contradictionIsDiagnosed() {
        // native_layer_norm returns a tuple (cannot be saved whole) and is not recomputable; its getitem is
        // forced to be recomputed: every cut is infinite.
        Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[4, 8]", primals_2: "f32[8]", primals_3: "f32[8]", tangents_1: "f32[4, 8]"):
        native_layer_norm = torch.ops.aten.native_layer_norm.default(primals_1, [8], primals_2, primals_3, 1e-05)
        getitem: "f32[4, 8]" = native_layer_norm[0]
        mul: "f32[4, 8]" = torch.ops.aten.mul.Tensor(tangents_1, getitem)
        return (getitem, mul, None, None)
)",
                             1);
        g.node(*g.find("getitem")).meta.recompute = "MUST_RECOMPUTE";
        Expected<Partition> p = partitionJoint(g, ruleset("torch-2"), {});
        QVERIFY(!p);
        const std::string& m = p.error().message;
        QVERIFY2(m.find("'native_layer_norm'") != std::string::npos, m.c_str());
        QVERIFY2(m.find("op not in the recomputable allowlist") != std::string::npos, m.c_str());
        QVERIFY2(m.find("not a single tensor") != std::string::npos, m.c_str());
        QVERIFY2(m.find("'getitem'") != std::string::npos && m.find("MUST_RECOMPUTE") != std::string::npos,
                 m.c_str());
    }

    void reductionBan() {
        // sum over 64x64 floats: 4 bytes * 4 < 16384 bytes of input, so saving it beats recomputing it. sum_1
        // feeds only fusible users (add, mul), so no earlier rule bans it. primals_1 (placeholder, 18022) is
        // cut rather than the unclaimed cos (non-materialized: 2 * 18022).
        const Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[64, 64]", tangents_1: "f32[64, 64]"):
        sin: "f32[64, 64]" = torch.ops.aten.sin.default(primals_1)
        sum_1: "f32[]" = torch.ops.aten.sum.default(sin)
        add: "f32[64, 64]" = torch.ops.aten.add.Tensor(sin, sum_1)
        mul: "f32[64, 64]" = torch.ops.aten.mul.Tensor(tangents_1, sum_1)
        cos: "f32[64, 64]" = torch.ops.aten.cos.default(primals_1)
        mul_1: "f32[64, 64]" = torch.ops.aten.mul.Tensor(mul, cos)
        return (add, mul_1)
)",
                                   1);
        const Partition p = partitionOk(g, ruleset("torch-2"));
        QCOMPARE(banOf(p, "sum_1"), std::string(banReasonText(BanReason::Reduction)));
        QCOMPARE(names(p, p.saved), (Names{"primals_1", "sum_1"}));
    }

    // fx_graph_cse keys nodes by Python's hash of their arguments, and hash(-1) == hash(-2): unsqueeze(x, -1)
    // after unsqueeze(x, -2) finds the -2 node's token under its hash and is kept, and so is its later twin.
    // Torch 2.15 kept both causal-mask chains of tiny_lm_dropout_ce this way (the log zoo, live). dim 1 twins
    // merge.
    void cseKeepsPythonHashCollisions() {
        const Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[4]", tangents_1: "f32[4, 4]"):
        unsqueeze: "f32[1, 4]" = torch.ops.aten.unsqueeze.default(primals_1, -2)
        unsqueeze_1: "f32[4, 1]" = torch.ops.aten.unsqueeze.default(primals_1, -1)
        unsqueeze_2: "f32[4, 1]" = torch.ops.aten.unsqueeze.default(primals_1, -1)
        unsqueeze_3: "f32[4, 1]" = torch.ops.aten.unsqueeze.default(primals_1, 1)
        unsqueeze_4: "f32[4, 1]" = torch.ops.aten.unsqueeze.default(primals_1, 1)
        add: "f32[4, 4]" = torch.ops.aten.add.Tensor(unsqueeze, unsqueeze_1)
        add_1: "f32[4, 4]" = torch.ops.aten.add.Tensor(add, unsqueeze_2)
        add_2: "f32[4, 4]" = torch.ops.aten.add.Tensor(add_1, unsqueeze_3)
        add_3: "f32[4, 4]" = torch.ops.aten.add.Tensor(add_2, unsqueeze_4)
        mul: "f32[4, 4]" = torch.ops.aten.mul.Tensor(tangents_1, add_3)
        return (add_3, mul)
)",
                                   1);
        const PreparedJoint prepared = prepareJoint(g, ruleset("torch-2.15"));
        QCOMPARE(prepared.merged.size(), size_t(1));
        QCOMPARE(prepared.merged[0].first, std::string("unsqueeze_4"));
        QCOMPARE(prepared.merged[0].second, std::string("unsqueeze_3"));
        QVERIFY(prepared.graph.find("unsqueeze_1") && prepared.graph.find("unsqueeze_2"));
    }

    // fx_graph_cse hashes each argument with its type (torch 2.x): add(x, 1.0) and add(x, 1) stay two nodes,
    // as do mul(x, True) and mul(x, 1). torch 2.14 on also keys a float by its bit pattern
    // (_normalize_cse_arg): -0.0 and 0.0 stay apart, and nan merges with nan; before, 0.0 == -0.0 merged them
    // and nan never merged. Expected values: torch's fx_graph_cse on this graph, run under torch 2.8, 2.11,
    // 2.13 and 2.15. (HF GPT-2's gelu: torch 2.15's backward kept add_26 = tanh_1 + 1 apart from the
    // forward's add_20 = tanh_1 + 1.0.)
    void cseKeysFloatsByTheirBits() {
        const Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[4]", tangents_1: "f32[4]"):
        add: "f32[4]" = torch.ops.aten.add.Tensor(primals_1, 1.0)
        add_1: "f32[4]" = torch.ops.aten.add.Tensor(primals_1, 1)
        mul: "f32[4]" = torch.ops.aten.mul.Tensor(primals_1, 0.0)
        mul_1: "f32[4]" = torch.ops.aten.mul.Tensor(primals_1, -0.0)
        mul_2: "f32[4]" = torch.ops.aten.mul.Tensor(primals_1, nan)
        mul_3: "f32[4]" = torch.ops.aten.mul.Tensor(primals_1, nan)
        mul_5: "f32[4]" = torch.ops.aten.mul.Tensor(primals_1, True)
        mul_6: "f32[4]" = torch.ops.aten.mul.Tensor(primals_1, 1)
        cat: "f32[32]" = torch.ops.aten.cat.default([add, add_1, mul, mul_1, mul_2, mul_3, mul_5, mul_6])
        sum_1: "f32[]" = torch.ops.aten.sum.default(cat)
        mul_4: "f32[4]" = torch.ops.aten.mul.Tensor(tangents_1, sum_1)
        return (sum_1, mul_4)
)",
                                   1);
        const PreparedJoint byBits = prepareJoint(g, ruleset("torch-2.15"));
        QCOMPARE(byBits.merged, (std::vector<std::pair<std::string, std::string>>{{"mul_3", "mul_2"}}));
        const PreparedJoint byValue = prepareJoint(g, ruleset("torch-2.13"));
        QCOMPARE(byValue.merged, (std::vector<std::pair<std::string, std::string>>{{"mul_1", "mul"}}));
        Ruleset untyped = ruleset("torch-2.13"); // torch 1.13's hash((args, kwargs)): Python equality
        untyped.cseHashKeysTypes = false;
        QCOMPARE(prepareJoint(g, untyped).merged,
                 (std::vector<std::pair<std::string, std::string>>{
                     {"add_1", "add"}, {"mul_1", "mul"}, {"mul_6", "mul_5"}}));
    }

    void cseMergesButNotRandomOps() {
        const Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8]", tangents_1: "f32[8]"):
        relu: "f32[8]" = torch.ops.aten.relu.default(primals_1)
        relu_1: "f32[8]" = torch.ops.aten.relu.default(primals_1)
        add: "f32[8]" = torch.ops.aten.add.Tensor(relu, relu_1)
        rand_like: "f32[8]" = torch.ops.aten.rand_like.default(primals_1)
        rand_like_1: "f32[8]" = torch.ops.aten.rand_like.default(primals_1)
        mul: "f32[8]" = torch.ops.aten.mul.Tensor(rand_like, rand_like_1)
        add_1: "f32[8]" = torch.ops.aten.add.Tensor(add, mul)
        unused: "f32[8]" = torch.ops.aten.neg.default(primals_1)
        mul_1: "f32[8]" = torch.ops.aten.mul.Tensor(tangents_1, add_1)
        return (add_1, mul_1)
)",
                                   1);
        const PreparedJoint prepared = prepareJoint(g, ruleset("torch-2"));
        QCOMPARE(prepared.merged.size(), size_t(1));
        QCOMPARE(prepared.merged[0].first, std::string("relu_1"));
        QCOMPARE(prepared.merged[0].second, std::string("relu"));
        QCOMPARE(prepared.deadNodes, (Names{"unused"}));
        QVERIFY(prepared.graph.find("rand_like_1"));
        const Node& add = prepared.graph.node(*prepared.graph.find("add"));
        QCOMPARE(add.args[0], add.args[1]); // both read relu now
    }

    void recomputeViewsMakesViewsUnsaveable() {
        // With recompute_views, t weighs inf and is never saved: the weight primals_1 (281) is cut instead.
        Ruleset rules = ruleset("torch-2");
        rules.recomputeViews = true;
        const Partition p = partitionOk(parseJoint(kMlpJoint, 1), rules);
        QCOMPARE(p.cut->weight[*p.graph.find("t")], kInfiniteCapacity);
        QCOMPARE(names(p, p.saved), (Names{"primals_1", "relu"}));
        // t was never part of the forward (nothing there reads it): the backward computes it from primals_1.
        QVERIFY(p.backward.find("t") && !p.forward.find("t"));
    }

    void mustBeInBackwardStaysInBackward() {
        // sin is tagged must_be_in_backward: it joins the backward (with its users), the forward may not
        // compute it, so its input primals_1 is what gets saved.
        Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8]", tangents_1: "f32[8]"):
        cos: "f32[8]" = torch.ops.aten.cos.default(primals_1)
        sin: "f32[8]" = torch.ops.aten.sin.default(primals_1)
        mul: "f32[8]" = torch.ops.aten.mul.Tensor(tangents_1, sin)
        return (cos, mul)
)",
                             1);
        g.node(*g.find("sin")).meta.partitionerTag = "must_be_in_backward";
        const Partition p = partitionOk(g, ruleset("torch-2"));
        QCOMPARE(names(p, p.saved), (Names{"primals_1"}));
        QVERIFY(!p.forward.find("sin") && p.backward.find("sin"));
        QCOMPARE(explainNode(p, *p.graph.find("sin")).decision, std::string("must-be-in-backward"));
    }

    void staticParametersAreFreeToSave() {
        Graph g = parseJoint(kMlpJoint, 1);
        g.node(*g.find("primals_1")).meta.descriptor = "ParamAOTInput(target='weight')";
        const Partition p = partitionOk(g, ruleset("torch-2"));
        // primals_1 now weighs 0: cheaper than t, so the weight itself is saved.
        QCOMPARE(p.cut->weight[*p.graph.find("primals_1")], Capacity(0));
        QCOMPARE(names(p, p.saved), (Names{"primals_1", "relu"}));
    }

    void memoryBudgetZeroSavesOnlyInputs() {
        const Graph g = parseJoint(kMlpJoint, 1);
        PartitionOptions options;
        options.memoryBudget = 0.0;
        const Partition p = partitionOk(g, ruleset("torch-2"), options);
        QCOMPARE(p.escalation, Escalation::InputsOnly);
        QCOMPARE(names(p, p.saved), (Names{"primals_1", "primals_2"}));
        QVERIFY(std::find(p.recomputed.begin(), p.recomputed.end(), *p.graph.find("mm")) !=
                p.recomputed.end());
        options.memoryBudget = 1.5;
        QVERIFY(!partitionJoint(g, ruleset("torch-2"), options));
        // Without an explicit budget, a node's meta["memory_budget"] (a float) sets it, as in torch.
        Graph tagged = g;
        tagged.node(*tagged.find("mm")).meta.extra.emplace_back("memory_budget", "0.0");
        QCOMPARE(partitionOk(tagged, ruleset("torch-2")).escalation, Escalation::InputsOnly);
    }

    void longFusibleChainIsCut() {
        // 110 chained relus: from relu_0 (forward order 1) the fusible chain runs past order 1 + 100, so the
        // node at order 102, relu_101, is banned; the chain's later nodes are already visited.
        std::string text = "class GraphModule(torch.nn.Module):\n"
                           "    def forward(self, primals_1: \"f32[8]\", tangents_1: \"f32[8]\"):\n";
        std::string previous = "primals_1";
        for (int i = 0; i < 110; ++i) {
            const std::string name = "relu_" + std::to_string(i);
            text += "        " + name + ": \"f32[8]\" = torch.ops.aten.relu.default(" + previous + ")\n";
            previous = name;
        }
        text += "        mul: \"f32[8]\" = torch.ops.aten.mul.Tensor(tangents_1, relu_109)\n";
        text += "        return (relu_109, mul)\n";
        const Partition p = partitionOk(parseJoint(text, 1), ruleset("torch-2"));
        QCOMPARE(banOf(p, "relu_101"), std::string(banReasonText(BanReason::LongFusibleChain)));
        QCOMPARE(banOf(p, "relu_100"), std::string());
        QCOMPARE(banOf(p, "relu_102"), std::string());
        // functorch 1.13 has no such heuristic.
        const Partition old = partitionOk(parseJoint(text, 1), ruleset("torch-1.13"));
        QCOMPARE(banOf(old, "relu_101"), std::string());
    }

    void usedFarApartIsBanned() {
        // x feeds sin (fusible) and, after the unfusible mm, add (fusible): add lies beyond the first
        // unfusible use of x (forward order 4 < 5), so it is banned. add is neither a forward output nor read
        // by a non-fusible backward node, so no earlier rule bans it.
        const Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8, 8]", primals_2: "f32[8, 8]", tangents_1: "f32[8, 8]"):
        x: "f32[8, 8]" = torch.ops.aten.relu.default(primals_1)
        sin: "f32[8, 8]" = torch.ops.aten.sin.default(x)
        mm: "f32[8, 8]" = torch.ops.aten.mm.default(sin, primals_2)
        add: "f32[8, 8]" = torch.ops.aten.add.Tensor(mm, x)
        cos: "f32[8, 8]" = torch.ops.aten.cos.default(add)
        mul: "f32[8, 8]" = torch.ops.aten.mul.Tensor(tangents_1, add)
        return (cos, mul, None, None)
)",
                                   1);
        const Partition p = partitionOk(g, ruleset("torch-2"));
        QCOMPARE(banOf(p, "add"), std::string(banReasonText(BanReason::UsedFarApart)));
        QCOMPARE(banOf(p, "sin"), std::string());
        QCOMPARE(banOf(p, "mm"), std::string(banReasonText(BanReason::NotInAllowlist)));
    }

    void collectivesAreForceSaved() {
        const Graph g = parseJoint(R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8]", tangents_1: "f32[8]"):
        relu: "f32[8]" = torch.ops.aten.relu.default(primals_1)
        all_reduce: "f32[8]" = torch.ops._c10d_functional.all_reduce.default(relu, "sum", "0")
        wait_tensor: "f32[8]" = torch.ops._c10d_functional.wait_tensor.default(all_reduce)
        sin: "f32[8]" = torch.ops.aten.sin.default(wait_tensor)
        mul: "f32[8]" = torch.ops.aten.mul.Tensor(tangents_1, wait_tensor)
        return (sin, mul)
)",
                                   1);
        const Partition p = partitionOk(g, ruleset("torch-2"));
        const NodeId wait = *p.graph.find("wait_tensor");
        QCOMPARE(p.info.policy[wait], Policy::MustSave);
        QVERIFY(p.info.policyNote[wait].find("collective") != std::string::npos);
        QCOMPARE(banOf(p, "wait_tensor"), std::string(banReasonText(BanReason::MustSave)));
        QCOMPARE(names(p, p.saved), (Names{"wait_tensor"}));
    }

    void symbolicValuesAreSavedApart() {
        // The backward needs only primals_1's size: the SymInt (weight 1) is saved, not the tensor.
        const Graph g = parseJoint(R"PY(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[s0, 4]", tangents_1: "f32[s0, 4]"):
        sym_size_int: "Sym(s0)" = torch.ops.aten.sym_size.int(primals_1, 0)
        relu: "f32[s0, 4]" = torch.ops.aten.relu.default(primals_1)
        view: "f32[s0, 4]" = torch.ops.aten.view.default(tangents_1, [sym_size_int, 4])
        threshold_backward: "f32[s0, 4]" = torch.ops.aten.threshold_backward.default(view, relu, 0)
        return (relu, threshold_backward)
)PY",
                                   1);
        const Partition p = partitionOk(g, ruleset("torch-2"));
        QCOMPARE(names(p, p.saved), (Names{"relu"}));
        QCOMPARE(names(p, p.savedSym), (Names{"sym_size_int"}));
        QCOMPARE(p.info.bytes[*p.graph.find("relu")],
                 uint64_t(4096 * 4)); // symbolic numel: torch's 4096 fallback
        // The forward returns relu, then the saved tensor, then the symbolic value.
        const Node& out = p.forward.node(*p.forward.outputNode());
        QCOMPARE(out.args[0].items().size(), size_t(3));
        QCOMPARE(p.forward.node(out.args[0].items()[2].asNode()).name, std::string("sym_size_int"));
    }

    void symbolBindingsAreSavedFirst() {
        // The backward reads only the derived size mul = 2*s0 (cut: it ties with primals_1 at weight 1, and
        // the cut nearest the sink wins). torch's _extract_fwd_bwd_modules then saves the binding of s0 too,
        // first.
        const Graph g = parseJoint(R"PY(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "Sym(s0)", primals_2: "f32[s0, 4]", tangents_1: "f32[2*s0, 2]"):
        mul: "Sym(2*s0)" = primals_1 * 2
        relu: "f32[s0, 4]" = torch.ops.aten.relu.default(primals_2)
        view: "f32[2*s0, 2]" = torch.ops.aten.view.default(relu, [mul, 2])
        view_1: "f32[2*s0, 2]" = torch.ops.aten.view.default(tangents_1, [mul, 2])
        return (view, None, view_1)
)PY",
                                   1);
        const Partition p = partitionOk(g, ruleset("torch-2"));
        QCOMPARE(names(p, p.savedSym), (Names{"primals_1", "mul"}));
        QVERIFY(p.saved.empty());
    }

    void memoryBudgetEscalatesAndSaves() {
        // gpt_block2 (real torch 1.13 graph) under torch 2's rules: every budget below 1 saves no more than
        // the runtime-optimized cut, and each solver gives a valid partition (the backward is computable).
        Expected<GraphFile> file = GraphFile::open(sharedPath("graphs/torch-1.13/gpt_block2/joint.txt"));
        QVERIFY(file);
        Expected<Graph> graph = file->load(0);
        QVERIFY(graph);
        const Ruleset rules = ruleset("torch-2");
        const Partition full = partitionOk(*graph, rules);
        for (KnapsackSolver solver : {KnapsackSolver::Greedy, KnapsackSolver::Dp, KnapsackSolver::Ilp}) {
            for (double budget : {0.1, 0.5, 0.9}) {
                PartitionOptions options;
                options.memoryBudget = budget;
                options.solver = solver;
                Expected<Partition> p = partitionJoint(*graph, rules, options);
                if (!p && solver == KnapsackSolver::Ilp && p.error().message.find("CBC") != std::string::npos)
                    continue; // built without CBC
                QVERIFY2(p, p ? "" : p.error().format().c_str());
                QVERIFY(p->savedBytes <= full.savedBytes);
                QVERIFY(p->escalation != Escalation::RuntimeOptimized);
            }
        }
        PartitionOptions lowest;
        lowest.memoryBudget = 0.0;
        QVERIFY(partitionOk(*graph, rules, lowest).savedBytes < full.savedBytes);
    }

    void missingForwardOutputCountIsReported() {
        Graph g = parseJoint(kMlpJoint, 1);
        g.numFwdOutputs.reset();
        Expected<Partition> p = partitionJoint(g, ruleset("torch-2"), {});
        QVERIFY(!p);
        QVERIFY(p.error().message.find("forward outputs") != std::string::npos);
    }
};

QTEST_APPLESS_MAIN(TestMinCut)
#include "tst_mincut.moc"
