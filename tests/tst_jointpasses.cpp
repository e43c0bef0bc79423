// inductor's joint-graph passes replayed (partition/JointPasses.h) against torch's own: for real models, the
// joint graph as AOTAutograd logs it and the graph torch 2.15's joint_graph_passes made of it
// (tests/data/joint-passes, recorded by scripts/record-joint-passes). The replay must give torch's graph
// node for node: the same names, in the same order, calling the same targets.
#include "partition/JointPasses.h"

#include "io/FxReader.h"
#include "ops/AttentionPatterns.h"
#include "ops/Ruleset.h"
#include "partition/CompileSettings.h"
#include "testutil.h"

#include <QTest>

#include <nlohmann/json.hpp>

using namespace jointscope;
using namespace jointscope::partition;

namespace {

// "name = target" per node, in graph order (placeholders and the output too).
QStringList nodeLines(const Graph& g) {
    QStringList lines;
    for (const Node& n : g.nodes())
        lines << QString::fromStdString(n.name + " = " + std::string(nodeOpName(n.op)) + " " + n.target.text);
    return lines;
}

// <model>.facts.json, where the recorder found symbols: what torch's ShapeEnv knew when the passes started
// (each symbol's hint, the equalities guarded so far), given to the graph as a log's facts are
// (addLogGraphFacts).
void addShapeFacts(Graph& joint, const std::string& path) {
    QFile file(QString::fromStdString(path));
    if (!file.open(QIODevice::ReadOnly))
        return;
    const nlohmann::json facts = nlohmann::json::parse(file.readAll().toStdString());
    CompileConfig recorded;
    for (const auto& [symbol, value] : facts.at("symbol_hints").items())
        recorded.symbolHints.emplace_back(symbol, value.get<int64_t>());
    for (const auto& guard : facts.at("symbol_equalities"))
        recorded.equalityGuards.emplace_back(0, guard.get<std::string>());
    addLogGraphFacts(joint, recorded);
}
} // namespace

class TestJointPasses : public QObject {
    Q_OBJECT

private slots:
    void replayMatchesTorch_data() {
        QTest::addColumn<QString>("model");
        // what each exercises: permute pairs (mlp); aliases, folded fulls and scalar_tensors (llama3_block,
        // gpt_block_eager_attention); topk / index_add MoE (moe_topk); dropout's rand, cross-entropy's
        // scatter into a full, clones, view pairs with -1 (tiny_lm_dropout_ce); batch norm's mutated buffers
        // (convnet_bn_train); dropout under activation checkpointing (gpt_stack_ac_dropout); symbolic sizes
        // (dynamic_gpt_seq, dynamic_size_output: mark_dynamic); selective checkpointing tags
        // (sac_llama3_every_other_mm); literal identities, one a no-op up to its dtype and one in a
        // checkpointed region (literal_noops); symbolic fulls (dynamic_mlp_batch,
        // dynamic_true_masked_attention); AOTAutograd's clone of an input the forward mutates, kept
        // (embedding_max_norm); bfloat16 random draws, drawn as float32 and converted
        // (autocast_bf16_dropout); dynamic=True with a symbol of hint 0 in a slice, so that a slice_scatter
        // is a no-op only by a guard, and a cross-entropy's scatter upon a full of symbolic shape, compared
        // on the hints (dynamic_true_lm_loss); softmax at a temperature, by a number and by a tensor,
        // multiplied and divided, rewritten by mul_softmax_pattern / div_softmax_pattern (distilled_lm,
        // contrastive_clip); index and index_add through a randperm, sliced and whole, made
        // _unsafe_index(_put), each replacement drawing a new randperm, and stable_topological_sort moving
        // what it inserted early after its inputs (dino_drop_path, randperm_shuffle)
        for (const char* m : {"mlp",
                              "llama3_block",
                              "gpt_block_eager_attention",
                              "moe_topk",
                              "tiny_lm_dropout_ce",
                              "convnet_bn_train",
                              "gpt_stack_ac_dropout",
                              "dynamic_gpt_seq",
                              "dynamic_size_output",
                              "sac_llama3_every_other_mm",
                              "literal_noops",
                              "dynamic_mlp_batch",
                              "dynamic_true_masked_attention",
                              "embedding_max_norm",
                              "autocast_bf16_dropout",
                              "dynamic_true_lm_loss",
                              "distilled_lm",
                              "contrastive_clip",
                              "dino_drop_path",
                              "randperm_shuffle",
                              "hf_vit_eager_attention",
                              "hf_vit_eager_attention_dropout",
                              "bert_eager_attention",
                              "cross_attention"})
            QTest::newRow(m) << QString(m);
    }
    void replayMatchesTorch() {
        QFETCH(QString, model);
        const std::string base = test::sourcePath("tests/data/joint-passes/" + model.toStdString());
        Graph joint = test::loadGraphAt(base + ".joint.txt");
        const Graph torchAfter = test::loadGraphAt(base + ".after_passes.txt");
        addShapeFacts(joint, base + ".facts.json");
        Expected<Ruleset> rules = loadRuleset("torch-2.15");
        QVERIFY(rules);
        const JointPassReport report = replayJointGraphPasses(joint, *rules, JointPassOptions{});
        const QStringList ours = nodeLines(joint), torch = nodeLines(torchAfter);
        if (ours != torch) {
            for (qsizetype i = 0; i < std::max(ours.size(), torch.size()); ++i) {
                const QString a = i < ours.size() ? ours[i] : "<none>",
                              b = i < torch.size() ? torch[i] : "<none>";
                if (a != b)
                    qWarning("first difference at node %lld: ours '%s', torch '%s'", (long long)i,
                             qPrintable(a), qPrintable(b));
                if (a != b)
                    break;
            }
            for (const std::string& n : report.notReplayed)
                qWarning("not replayed: %s", n.c_str());
        }
        QCOMPARE(ours.size(), torch.size());
        QCOMPARE(ours, torch);
        QVERIFY2(report.notReplayed.empty(), report.notReplayed.empty() ? "" : report.notReplayed[0].c_str());
    }

    // A torch takes the fuse_attention patterns of the newest torch not newer than it that registers other
    // ones (resources/patterns: 2.8 to 2.13; 2.14 and 2.15 register 2.13's); torch 1.13 had
    // none.
    void attentionPatternsFollowTheTorchVersion() {
        const std::pair<const char*, const char*> cases[] = {
            {"torch-2.15", "2.13.0"}, {"torch-2.14", "2.13.0"}, {"torch-2.13", "2.13.0"},
            {"torch-2.12", "2.12.0"}, {"torch-2.11", "2.11.0"}, {"torch-2.10", "2.10.0"},
            {"torch-2.9", "2.9.1"},   {"torch-2.8", "2.8.0"},   {"torch-2.16", "2.13.0"}};
        for (const auto& [ruleset, torch] : cases) {
            const AttentionPatternSet* set = builtinAttentionPatterns(ruleset);
            QVERIFY2(set, ruleset);
            QCOMPARE(set->torchVersion, std::string(torch));
            QVERIFY(!set->patterns.empty());
        }
        QVERIFY(!builtinAttentionPatterns("torch-1.13"));
        QVERIFY(!builtinAttentionPatterns("torch-2.7"));
        QVERIFY(!builtinAttentionPatterns("unversioned"));
    }

    // fuse_attention's nodes as torch made them: each kernel call's arguments (the scale 1 / inv_scale
    // included) and output metadata (the CPU kernel's [B, L, H, E] layout, its float logsumexp) equal those
    // of the node of that name in the graph torch's joint_graph_passes made.
    void fusedAttentionNodesAreTorchs() {
        const std::string base = test::sourcePath("tests/data/joint-passes/hf_vit_eager_attention");
        Graph joint = test::loadGraphAt(base + ".joint.txt");
        const Graph torchAfter = test::loadGraphAt(base + ".after_passes.txt");
        Expected<Ruleset> rules = loadRuleset("torch-2.15");
        QVERIFY(rules);
        const JointPassReport report = replayJointGraphPasses(joint, *rules, JointPassOptions{});
        auto fused = std::find_if(report.changes.begin(), report.changes.end(),
                                  [](const PassChange& p) { return p.pass == "fuse_attention"; });
        QVERIFY(fused != report.changes.end());
        std::vector<std::string> made = fused->added;
        for (const auto& [old, now] : fused->replaced)
            made.push_back(now);
        QCOMPARE(made.size(), size_t(13)); // 3 permutes, 2 kernels, 5 getitems, 3 permutes back
        auto render = [](const Graph& g, const Value& v, auto&& self) -> std::string {
            if (v.kind() == ValueKind::NodeRef)
                return "%" + g.node(v.asNode()).name;
            if (v.kind() == ValueKind::Float)
                return std::to_string(v.asFloat());
            std::string out =
                std::to_string(int(v.kind())) + ":" + std::to_string(v.asInt()) + v.text() + "[";
            for (const Value& item : v.items())
                out += self(g, item, self) + ",";
            return out + "]";
        };
        for (const std::string& name : made) {
            const std::optional<NodeId> ours = joint.find(name), theirs = torchAfter.find(name);
            QVERIFY2(ours && theirs, name.c_str());
            const Node &a = joint.node(*ours), &b = torchAfter.node(*theirs);
            QCOMPARE(a.target.text, b.target.text);
            QCOMPARE(a.args.size(), b.args.size());
            for (size_t i = 0; i < a.args.size(); ++i)
                QCOMPARE(render(joint, a.args[i], render), render(torchAfter, b.args[i], render));
            QCOMPARE(a.kwargs.size(), b.kwargs.size());
            for (size_t i = 0; i < a.kwargs.size(); ++i) {
                QCOMPARE(a.kwargs[i].first, b.kwargs[i].first);
                QCOMPARE(render(joint, a.kwargs[i].second, render),
                         render(torchAfter, b.kwargs[i].second, render));
            }
            if (a.kwargs.size() == 1 && a.kwargs[0].second.kind() == ValueKind::Float)
                QCOMPARE(a.kwargs[0].second.asFloat(), b.kwargs[0].second.asFloat()); // bit for bit
            QCOMPARE(int(a.outputKind), int(b.outputKind));
            QVERIFY2(a.outputs == b.outputs, name.c_str());
        }
    }

    // torch folds what reads only a one-element tensor constant into a full of its value (transformers' BERT
    // returns two such lift_fresh_copy values: torch's graph holds full_default nodes in their place). The
    // graph text shows no value: the full reads the constant's, and the replay says that CSE may merge two;
    // with the values the log shows (tensor_constant_values), the fulls hold them.
    // DeBERTa-v2's torch.sqrt(torch.tensor(query_layer.size(-1), dtype=torch.float) * scale_factor): an int
    // literal in the dynamo graph for a float constant, then pointwise ops the folder evaluates (sqrt here);
    // torch folds the chain into full([], 4.0), and a second one like it is merged by CSE.
    // scatter_upon_const_tensor's replacement ends in .to(dtype): two int literals make an int64 where, which
    // a float full converts back (torch 2.15's graph of a HF model's one-hot scatter into full([32, 1], 0)
    // shows where_self then convert_element_type_default to float32).
    void scatterUponConstTensorConvertsToTheFullsDtype() {
        const std::string text =
            "class GraphModule(torch.nn.Module):\n"
            "    def forward(self, primals_1: \"i64[32, 1][1, 1]cpu\"):\n"
            "        full: \"f32[32, 1][1, 1]cpu\" = torch.ops.aten.full.default([32, 1], 0, dtype = "
            "torch.float32, layout = torch.strided, device = device(type='cpu'), pin_memory = False)\n"
            "        scatter: \"f32[32, 1][1, 1]cpu\" = torch.ops.aten.scatter.value(full, 1, primals_1, 1)\n"
            "        return (scatter,)\n";
        Expected<Graph> joint = readFxText(text);
        QVERIFY(joint);
        Expected<Ruleset> rules = loadRuleset("torch-2.15");
        QVERIFY(rules);
        const JointPassReport report = replayJointGraphPasses(*joint, *rules, JointPassOptions{});
        QVERIFY2(report.notReplayed.empty(), report.notReplayed.empty() ? "" : report.notReplayed[0].c_str());
        QVERIFY(!joint->find("scatter"));
        const std::optional<NodeId> where = joint->find("where_self"),
                                    convert = joint->find("convert_element_type_default");
        QVERIFY(where && convert);
        QCOMPARE(joint->node(*where).tensor()->dtype, DType::Int64);
        QCOMPARE(joint->node(*convert).args[0].asNode(), *where);
        QCOMPARE(joint->node(*convert).tensor()->dtype, DType::Float32);
        QCOMPARE(joint->outputLeaves()[0]->asNode(), *convert);
    }

    void literalOfAnotherDtypeAndUnaryOpsFold() {
        const std::string text =
            "class GraphModule(torch.nn.Module):\n"
            "    def forward(self, primals_1: \"f32[4][1]cpu\", primals_2: \"b8[4][1]cpu\"):\n"
            "        # File: /m.py:116 in scaled_size_sqrt, code: return torch.sqrt(torch.tensor(q.size(-1), "
            "dtype=torch.float) * scale_factor)\n"
            "        _tensor_constant0: \"f32[][]cpu\" = self._tensor_constant0\n"
            "        lift_fresh_copy: \"f32[][]cpu\" = "
            "torch.ops.aten.lift_fresh_copy.default(_tensor_constant0)\n"
            "        mul: \"f32[][]cpu\" = torch.ops.aten.mul.Tensor(lift_fresh_copy, 1)\n"
            "        sqrt: \"f32[][]cpu\" = torch.ops.aten.sqrt.default(mul)\n"
            "        div: \"f32[4][1]cpu\" = torch.ops.aten.div.Tensor(primals_1, sqrt)\n"
            "        return (div,)\n";
        Expected<Graph> joint = readFxText(text);
        QVERIFY(joint);
        CompileConfig config;
        config.sourceLiterals = {{"/m.py:116 in scaled_size_sqrt", "16"}};
        addLogGraphFacts(*joint, config);
        const auto values = std::find_if(joint->attributes.begin(), joint->attributes.end(),
                                         [](const auto& a) { return a.first == "tensor_constant_values"; });
        QVERIFY(values != joint->attributes.end());
        QCOMPARE(values->second, std::string("_tensor_constant0 = 16"));
        Expected<Ruleset> rules = loadRuleset("torch-2.15");
        QVERIFY(rules);
        const JointPassReport report = replayJointGraphPasses(*joint, *rules, JointPassOptions{});
        QVERIFY2(report.notReplayed.empty(), report.notReplayed.empty() ? "" : report.notReplayed[0].c_str());
        QVERIFY(!joint->find("sqrt") && joint->find("full_default"));
        const Node& full = joint->node(*joint->find("full_default"));
        QCOMPARE(full.args[1].asFloat(), 4.0);
        QCOMPARE(joint->node(*joint->find("div")).args[1].asNode(), *joint->find("full_default"));
    }

    void tensorConstantsAreFolded() {
        const std::string text = "class GraphModule(torch.nn.Module):\n"
                                 "    def forward(self, primals_1: \"f32[4][1]cpu\"):\n"
                                 "        _tensor_constant0: \"i64[][]cpu\" = self._tensor_constant0\n"
                                 "        lift_fresh_copy: \"i64[][]cpu\" = "
                                 "torch.ops.aten.lift_fresh_copy.default(_tensor_constant0)\n"
                                 "        _tensor_constant1: \"f32[1][1]cpu\" = self._tensor_constant1\n"
                                 "        lift_fresh_copy_1: \"f32[1][1]cpu\" = "
                                 "torch.ops.aten.lift_fresh_copy.default(_tensor_constant1)\n"
                                 "        sin: \"f32[4][1]cpu\" = torch.ops.aten.sin.default(primals_1)\n"
                                 "        return (sin, lift_fresh_copy, lift_fresh_copy_1)\n";
        Expected<Ruleset> rules = loadRuleset("torch-2.15");
        QVERIFY(rules);
        auto fill = [](const Graph& g, const char* name) { return g.node(*g.find(name)).args[1]; };
        Expected<Graph> unseen = readFxText(text);
        QVERIFY(unseen);
        JointPassReport report = replayJointGraphPasses(*unseen, *rules, JointPassOptions{});
        QVERIFY(!unseen->find("lift_fresh_copy") && !unseen->find("lift_fresh_copy_1"));
        QCOMPARE(fill(*unseen, "full_default").kind(), ValueKind::Opaque);
        QCOMPARE(fill(*unseen, "full_default").text(), std::string("_tensor_constant0.item()"));
        QCOMPARE(fill(*unseen, "full_default_1").text(), std::string("_tensor_constant1.item()"));
        QCOMPARE(report.notReplayed.size(), size_t(1));
        QVERIFY2(report.notReplayed[0].find("full_default, full_default_1") != std::string::npos,
                 report.notReplayed[0].c_str());

        Expected<Graph> shown = readFxText(text);
        QVERIFY(shown);
        shown->attributes.emplace_back("tensor_constant_values",
                                       "_tensor_constant0 = -2\n_tensor_constant1 = 0.5");
        report = replayJointGraphPasses(*shown, *rules, JointPassOptions{});
        QVERIFY(report.notReplayed.empty());
        QCOMPARE(fill(*shown, "full_default").asInt(), int64_t(-2));
        QCOMPARE(fill(*shown, "full_default_1").asFloat(), 0.5);
    }

    // A graph no pass applies to stays as it was, and says so.
    void untouchedGraphIsUnchanged() {
        Graph joint = test::loadGraphAt(test::sourcePath("tests/data/joint-passes/mlp.after_passes.txt"));
        const Graph before = joint;
        Expected<Ruleset> rules = loadRuleset("torch-2.15");
        QVERIFY(rules);
        const JointPassReport report = replayJointGraphPasses(joint, *rules, JointPassOptions{});
        QVERIFY(!report.changed());
        QCOMPARE(nodeLines(joint), nodeLines(before));
    }
};

QTEST_GUILESS_MAIN(TestJointPasses)
#include "tst_jointpasses.moc"
