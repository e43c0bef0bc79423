// `check` on a TORCH_TRACE log torch 2.15 wrote under inductor
// (tests/data/torch2/dyn_gpt_inductor_budget05_trace.log, trimmed to the records `check` reads): a GPT block
// whose batch was marked dynamic (4), compiled with backend="inductor" and
// torch._functorch.config.activation_memory_budget = 0.5. What the capture set is the expected configuration;
// the forward torch logged is the expected decision.
#include "io/CompileConfig.h"
#include "io/GraphFile.h"
#include "partition/CompileSettings.h"
#include "partition/LogCheck.h"
#include "testutil.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <optional>

using namespace jointscope;
using namespace jointscope::partition;

namespace {

const std::string kLog = "tests/data/torch2/dyn_gpt_inductor_budget05_trace.log";
// nested_compile_region (jointscope_torch.models: three calls of one region body), backend="aot_eager", torch
// 2.15, chromium events dropped.
const std::string kNestedLog = "tests/data/torch2/nested_compile_region_aot_eager_trace.log";
// A 2-layer ViT (conv patches, two nn.TransformerEncoderLayer, norm_first, GELU), torch 2.15,
// backend="aot_eager", activation_memory_budget 0.3 with activation_memory_budget_solver "ilp"; guard,
// chromium and describe records dropped.
const std::string kIlpTieLog = "tests/data/torch2/vit_ilp_budget03_aot_eager_trace.log";
// jointscope_torch.models ac_dropout_custom_fn under inductor, torch 2.15: nn.Dropout inside
// torch.utils.checkpoint, drawn through inductor_seeds after inductor's replace_random; chromium, guard,
// describe, cache, post-grad and output-code records dropped (check's JSON is the full log's).
const std::string kRngSeedsLog = "tests/data/torch2/ac_dropout_inductor_trace.log";
// jointscope_torch.models dynamic_true_masked_attention, torch.compile(dynamic=True), inductor, budget 0.5,
// torch 2.15: guards specialize x's model dim and the mask's head dim (inputs primals_3: Sym(32) and
// primals_5: Sym(4)); the same records dropped as above, and the symbolic_shape_specialization ones.
const std::string kSpecializedLog = "tests/data/torch2/dynamic_true_masked_attention_inductor_trace.log";
// transformers' T5ForConditionalGeneration (2 layers, d_model 64) trained one step under inductor, torch 2.15
// (transformers 5.24): its relative-position buckets add a literal 0 to integer tensors (add(x, 0)). Side
// effects, pre- and post-grad and dynamo graphs dropped as well as the records above.
const std::string kLiteralNoOpLog = "tests/data/torch2/hf_t5_inductor_trace.log";
// jointscope_torch.models embedding_max_norm, then mlp, backend="aot_eager", activation_memory_budget 0,
// torch 2.15; the same records dropped as above.
const std::string kEpilogueLog = "tests/data/torch2/embedding_max_norm_budget0_aot_eager_trace.log";
// jointscope_torch.models dynamic_true_float_attributes, torch.compile(dynamic=True), aot_eager, budget 0.5,
// torch 2.15: eps and scale, Python floats, are lifted as inputs read as SymFloats; the same records dropped.
const std::string kFloatInputsLog = "tests/data/torch2/dynamic_true_float_attributes_aot_eager_trace.log";
// transformers' GPT2LMHeadModel (2 layers, n_embd 64) trained one step with torch.compile(dynamic=True) under
// inductor, torch 2.15 (transformers 5.24): the frame after the graph break, the LM head and cross-entropy
// (5/0) and the LM head alone (5/0_1). logits_to_keep is a symbol (s55, hint 0): the slice of the hidden
// states starts at -s55 and the sizes read s11 + s55, which only a guard, Eq(64*s11, 64*s11 + 64*s55), makes
// equal to s11. Only frame 5's records kept, guards recorded after each joint graph and the records above
// dropped (check's JSON is the full log's for both compiles).
const std::string kGuardedSizesLog = "tests/data/torch2/gpt2_lm_loss_dynamic_inductor_trace.log";
// The same run's GPT-2 body (compile 4/0_1): NewGELUActivation's math.sqrt(2.0 / math.pi) reads math.pi as a
// float symbol, so the tanh's scale is the expression OpaqueUnaryFn_sqrt(FloatTrueDiv(2.0, zf36)). Only that
// compile's records kept, without guards and with one of its post-grad graphs (check's JSON is the full
// log's).
const std::string kFloatExpressionLog = "tests/data/torch2/gpt2_gelu_dynamic_inductor_trace.log";
// jointscope_torch.models dynamic_true_drop_path, then dynamic_true_unet_upsample,
// torch.compile(dynamic=True), aot_eager, torch 2.15: drop-path's 1 - p reads the float p as the infix
// expression "1.0 - zf7", the upsample's scale is FloatTrueDiv(ToFloat(s53), 2.0*ToFloat(s53)) of an integer
// size; describe, chromium, C++ guard, specialization and runtime-wrapper records dropped.
// jointscope_torch.models hf_vit_eager_attention under inductor, torch 2.15: fuse_attention rewrote the eager
// attention into _scaled_dot_product_flash_attention_for_cpu; the first compile's records, pre- and post-grad
// graphs, output code and the records above dropped.
const std::string kOneHotAssertsLog = "tests/data/torch2/arcface_one_hot_aot_eager_trace.log";
const std::string kFusedAttentionLog = "tests/data/torch2/hf_vit_eager_attention_inductor_trace.log";
// The same model with attention dropout 0.1 (the run's second compile, the same records dropped):
// fuse_attention's replacement with dropout calls no attention op (bmm_default, ... in torch's graphs).
const std::string kFusedDropoutAttentionLog =
    "tests/data/torch2/hf_vit_eager_attention_dropout_inductor_trace.log";
// A VQ-VAE bottleneck compiled with dynamic=True: mse_loss's backward (inductor's decomposition) scales by
// 2.0 / ToFloat(16*s27*s77), a product of two size symbols.
const std::string kProductOfSizesLog = "tests/data/torch2/vq_bottleneck_dynamic_inductor_trace.log";
// ConformerConv (BatchNorm1d in training) compiled with dynamic=True: the running variance's n / (n - 1)
// correction divides two ints, IntTrueDiv(32*s27*s77, 32), a SymFloat.
const std::string kIntTrueDivLog = "tests/data/torch2/conformer_conv_dynamic_inductor_trace.log";
// jointscope_torch.models dynamic_true_dino_drop_path, inductor, torch 2.15 and torch 2.11 (CPU): the kept
// rows k = max(int(b * 0.5), 1) are Max(1, TruncToInt(0.5*ToFloat(s77))), and index_add's alpha b / k an
// IntTrueDiv. Records check never reads dropped (device_log_zoo.py trim), with describe, specialization and
// cache-miss records and the guards' stacks.
const std::string kDynamicDinoLog = "tests/data/torch2/dino_drop_path_dynamic_inductor_trace.log";
const std::string kDynamicDino211Log = "tests/data/torch2.11-cpu/dino_drop_path_dynamic_inductor_trace.log";
// A MobileNetV3 block (hardswish, squeeze-excite, a ReLU6 clamped by float tensors' .item()) compiled with
// dynamic=True, inductor, torch 2.11 (CPU); trimmed as above.
const std::string kClampItems211Log = "tests/data/torch2.11-cpu/mobilenet_v3_dynamic_inductor_trace.log";
const std::string kInfixFloatExpressionLog =
    "tests/data/torch2/dynamic_true_drop_path_unet_aot_eager_trace.log";

// transformers' FalconForCausalLM (new decoder architecture, 2 layers, hidden 64, 2 KV heads) trained one
// step under inductor, torch 2.15 (transformers 5.24): its _split_heads takes key = qkv[:, :, :, [-2]] and
// value = qkv[:, :, :, [-1]], list indices that AOTAutograd makes one-element tensor constants (get_attr, no
// value in the joint graph's text). Only that model's compile kept, without the records check does not read.
const std::string kListIndexLog = "tests/data/torch2/hf_falcon_list_index_inductor_trace.log";
// transformers' LlamaForCausalLM with gradient_checkpointing_enable(use_reentrant=False), inductor,
// torch 2.15: the loss frame after the graph break (5/0), served by the AOTAutograd cache an earlier model of
// the same run filled (aotautograd_cache_hit; no joint_graph_pass_time_us in its compilation_metrics). Only
// that frame's records kept.
const std::string kCacheHitLog = "tests/data/torch2/hf_cached_loss_frame_inductor_trace.log";
// transformers' Phi3ForCausalLM then StableLmForCausalLM, gradient checkpointing,
// torch.compile(dynamic=True), inductor, torch 2.15: their loss frames after the graph break (5/0), the
// second served by the AOTAutograd cache the first filled. logits_to_keep is a symbol (as in GPT-2's log
// above): only the guard the first compile took makes the slice_scatter a no-op, and the second, tracing
// nothing, logs none. Frame 5's first two compiles kept, with one post-grad graph each.
const std::string kCachedDynamicLog = "tests/data/torch2/hf_cached_dynamic_loss_inductor_trace.log";
// transformers' BartForConditionalGeneration (1 encoder and 1 decoder layer) with
// gradient_checkpointing_enable(use_reentrant=False), inductor, torch 2.15: the decoder frame (6/0), whose
// checkpointed layers come between the embedding's layer norm and its backward ("# Backward of forward node:"
// summaries without a checkpoint tag). Only that frame's records kept.
const std::string kCheckpointedLog = "tests/data/torch2/hf_bart_checkpointed_inductor_trace.log";

// Every compile's configuration in the log, as check reads it.
std::vector<CompileConfig> configsOf(const GraphFile& file) {
    return file.graphs().empty() ? std::vector<CompileConfig>() : file.compileConfigsOf(file.graphs()[0]);
}

// check on every compile of a real log, as `jointscope-cli check LOG` runs it; empty when the log does not
// open.
std::vector<CompileCheck> checkLog(const std::string& log, const CheckRequest& request = {}) {
    Expected<GraphFile> file = GraphFile::open(test::sourcePath(log));
    std::vector<CompileCheck> checks;
    if (file)
        for (const CompileGraphs& compile : groupCompiles(*file))
            checks.push_back(checkCompile(*file, compile, configsOf(*file), request));
    return checks;
}

// Whether jointscope's forward and backward graphs hold exactly the nodes of torch's.
bool holdsTorchsNodes(const CompileCheck& c) {
    return c.forward && c.forward->onlyOurs.empty() && c.forward->onlyTorch.empty() && c.backward &&
           c.backward->onlyOurs.empty() && c.backward->onlyTorch.empty();
}

// A compile's graphs as torch logged them.
struct LoggedGraphs {
    Graph joint, forward, backward;
};
std::optional<LoggedGraphs> loggedGraphs(const std::string& log) {
    Expected<GraphFile> file = GraphFile::open(test::sourcePath(log));
    if (!file)
        return std::nullopt;
    Expected<Graph> joint = file->load(*file->select("aot_joint_graph"));
    Expected<Graph> forward = file->load(*file->select("aot_forward_graph"));
    Expected<Graph> backward = file->load(*file->select("aot_backward_graph"));
    if (!joint || !forward || !backward)
        return std::nullopt;
    return LoggedGraphs{joint.take(), forward.take(), backward.take()};
}

// Why the log's one compile is not torch's, replayed in full: "" when it is (one compile, torch's decision,
// every pass replayed, torch's forward and backward nodes).
std::string unlikeTorchs(const std::vector<CompileCheck>& checks) {
    if (checks.size() != 1)
        return std::to_string(checks.size()) + " compiles";
    const CompileCheck& c = checks[0];
    if (c.status != CheckStatus::Identical)
        return "status " + std::string(checkStatusName(c.status));
    if (!c.passes.notReplayed.empty())
        return "not replayed: " + c.passes.notReplayed[0];
    return holdsTorchsNodes(c) ? "" : "the graphs differ from torch's in nodes";
}

// The change pass `pass` made in compile `c`, or null when it made none.
const PassChange* passChange(const CompileCheck& c, std::string_view pass) {
    const auto it = std::find_if(c.passes.changes.begin(), c.passes.changes.end(),
                                 [&](const PassChange& p) { return p.pass == pass; });
    return it == c.passes.changes.end() ? nullptr : &*it;
}
} // namespace

class TestLogCheck : public QObject {
    Q_OBJECT

private slots:
    void configIsReadFromTheLog() {
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kLog));
        QVERIFY(file);
        const std::vector<CompileConfig> configs = configsOf(*file);
        QCOMPARE(configs.size(), size_t(1));
        const CompileConfig& c = configs[0];
        QCOMPARE(c.compileId, std::string("0/0"));
        QVERIFY(c.fromMetrics);
        QCOMPARE(c.torchVersion, std::string("2.15.0+cu132"));
        QVERIFY(c.jointGraphPassesRan); // inductor's partition_fn ran them
        QCOMPARE(c.functorch.activationMemoryBudget.value_or(-1), 0.5);
        QCOMPARE(c.functorch.budgetSolver.value_or(""), std::string("dp"));
        QCOMPARE(c.functorch.budgetEstimator.value_or(""), std::string("flops"));
        QCOMPARE(c.inductor.patternMatcher.value_or(false), true);
        QVERIFY(!c.inductor.customPostPass);
        // the dynamic batch: one backed symbol, created from the example's batch of 4
        QCOMPARE(c.symbolHints.size(), size_t(1));
        QCOMPARE(c.symbolHints[0].second, int64_t(4));
    }

    // No flags: torch's decision, which needs the budget, the joint passes and the symbol's hint from the
    // log.
    void checkReproducesTorchWithNoFlags() {
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kLog));
        QVERIFY(file);
        const std::vector<CompileGraphs> compiles = groupCompiles(*file);
        QCOMPARE(compiles.size(), size_t(1));
        const CompileCheck c = checkCompile(*file, compiles[0], configsOf(*file), CheckRequest{});
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        QCOMPARE(c.ours, c.torch);
        QCOMPARE(c.torch.size(), size_t(18));
        QVERIFY(c.settings.replayJointPasses);
        QVERIFY(c.passes.changed());
        QVERIFY(c.passes.notReplayed.empty());
        QCOMPARE(c.settings.options.memoryBudget.value_or(-1), 0.5);
    }

    // torch's ilp knapsack for this compile has several optima of equal runtime (under inductor, the instance
    // torch passed to ilp_knapsack had seven: tst_knapsack enumerates it); scipy's milp returned one, CBC
    // another. The compile differs, and check says that torch's saved values are the min-cut of another
    // equally good choice: the difference is the tie alone.
    void ilpTieIsNamed() {
        const std::vector<CompileCheck> checks = checkLog(kIlpTieLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QCOMPARE(c.settings.options.memoryBudget.value_or(-1), 0.3);
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("differs"));
        QVERIFY(c.ours != c.torch);
        QCOMPARE(c.torch.size(), size_t(30)); // torch's forward returns 30 saved tensors
        QCOMPARE(c.escalation, std::string("knapsack over banned nodes"));
        QVERIFY(c.knapsackTie);
        const auto noted = [&](const std::string& words) {
            return std::any_of(c.notes.begin(), c.notes.end(),
                               [&](const std::string& n) { return n.find(words) != std::string::npos; });
        };
        QVERIFY(noted("optimum is not unique"));
        QVERIFY(noted("differ by that tie alone"));
        // With the dp solver (torch's default) there is no tie to name.
        CheckRequest dp;
        dp.overrides.solver = KnapsackSolver::Dp;
        const std::vector<CompileCheck> withDp = checkLog(kIlpTieLog, dp);
        QCOMPARE(withDp.size(), size_t(1));
        const CompileCheck& d = withDp[0];
        QVERIFY(!d.knapsackTie);
        QVERIFY(std::none_of(d.notes.begin(), d.notes.end(),
                             [](const std::string& n) { return n.find("tie") != std::string::npos; }));
    }

    // inductor's replace_random puts prims.inductor_seeds where the checkpointed dropout's aten.rand was; it
    // is nondeterministic_seeded, so torch's functionalize_rng_ops runs it with a saved RNG state
    // (run_and_save_rng_state in the forward, run_with_rng_state in the backward). Ours must too, and name
    // the state as torch's is named: the seeds op takes no node input.
    void inductorSeedsGetTheirRngState() {
        const std::vector<CompileCheck> checks = checkLog(kRngSeedsLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QVERIFY(c.settings.replayJointPasses);
        const std::vector<std::string> seeds{"rng_state(prims.inductor_seeds)"};
        QCOMPARE(c.torchRng, seeds); // read off torch's forward graph
        QCOMPARE(c.oursRng, seeds);
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
    }

    // A symbol a guard specialized still binds: torch saves its placeholder for the backward when a saved
    // value's unreplaced sizes or strides hold it (_free_symbols_without_replacements). x (primals_4, strides
    // [32*s27, 32, 1], unreplaced s53*s27) and the mask (primals_6, stride 4*s27**2) are saved, so their
    // specialized symbols' placeholders primals_3 and primals_5 are too; stride 32 alone would bring none.
    void specializedSymbolsOfSavedInputsAreSaved() {
        const std::vector<CompileCheck> checks = checkLog(kSpecializedLog);
        const auto checked = std::find_if(checks.begin(), checks.end(), [](const CompileCheck& c) {
            return c.status != CheckStatus::Skipped;
        });
        QVERIFY(checked != checks.end());
        const CompileCheck& c = *checked;
        const std::vector<std::string> sym{"primals_1", "primals_2", "primals_3", "primals_5", "mul_12"};
        QCOMPARE(c.torchSym, sym); // read off torch's forward outputs
        QCOMPARE(c.oursSym, sym);
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
    }

    // remove_no_ops (run by constant_fold_uniform_value) drops x + 0, x - 0, x * 1 and x / 1 whose 0 or 1 is
    // a literal as well as a folded constant: torch's forward and backward no longer hold T5's add(where_4,
    // 0), and its saved list holds where_4 itself.
    void literalNoOpsAreRemoved() {
        const std::vector<CompileCheck> checks = checkLog(kLiteralNoOpLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        std::vector<std::string> removed;
        for (const PassChange& change : c.passes.changes)
            if (change.pass == "constant_fold_uniform_value")
                removed.insert(removed.end(), change.removed.begin(), change.removed.end());
        for (const char* name : {"add_1", "add_2", "add_16", "add_18"})
            QVERIFY2(std::find(removed.begin(), removed.end(), name) != removed.end(), name);
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "where_4") != c.torch.end());
        QCOMPARE(c.ours, c.torch);
        QVERIFY(c.forward && c.forward->onlyOurs.empty() && c.forward->onlyTorch.empty());
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
    }

    // nn.Embedding(max_norm=...) renormalizes its weight in place: an input that requires grad and whose
    // mutation the runtime epilogue applies after the forward (aot_runtime_epilogue_input_mutation). torch
    // may not save it (get_node_weight: infinite), so at budget 0 it does not just save the inputs: it saves
    // the renormalized weight instead. The mlp compiled next, with no such input, saves its inputs.
    void epilogueMutatedInputIsNotSaved() {
        const std::vector<CompileCheck> checks = checkLog(kEpilogueLog);
        QCOMPARE(checks.size(), size_t(2));
        const CompileCheck& embedding = checks[0];
        QCOMPARE(embedding.settings.options.memoryBudget.value_or(-1), 0.0);
        QCOMPARE(embedding.torch, (std::vector<std::string>{"primals_2", "primals_3", "embedding_renorm"}));
        QCOMPARE(embedding.ours, embedding.torch);
        QCOMPARE(std::string(checkStatusName(embedding.status)), std::string("identical"));
        // The partition says why the weight is not saved.
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kEpilogueLog));
        QVERIFY(file);
        Expected<Graph> joint = file->load(*groupCompiles(*file)[0].joint);
        QVERIFY(joint);
        Expected<Ruleset> rules = loadRuleset("torch-2.15");
        QVERIFY(rules);
        PartitionOptions zero;
        zero.memoryBudget = 0.0;
        Expected<Partition> p = partitionJoint(*joint, *rules, zero);
        QVERIFY(p);
        const NodeExplanation weight = explainNode(*p, *p->graph.find("primals_1"));
        QCOMPARE(weight.decision, std::string("input"));
        QVERIFY2(weight.rule.find("input mutation replayed after forward") != std::string::npos,
                 weight.rule.c_str());
        const CompileCheck& mlp = checks[1];
        QVERIFY(std::all_of(mlp.torch.begin(), mlp.torch.end(),
                            [](const std::string& name) { return name.rfind("primals_", 0) == 0; }));
        QCOMPARE(std::string(checkStatusName(mlp.status)), std::string("identical"));
    }

    // AOTAutograd runs tensorify_python_scalars after logging the joint graph and before partitioning it: the
    // float inputs read as SymFloats (_local_scalar_dense) become float64 tensors, and the ops reading them
    // their Tensor overloads (mul_tensor, add_tensor). torch saves one of the converted tensors; so do we.
    void floatInputsAreTensorified() {
        const std::vector<CompileCheck> checks = checkLog(kFloatInputsLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "convert_element_type_default_3") != c.torch.end());
        QCOMPARE(c.ours, c.torch);
        QCOMPARE(c.oursSym, c.torchSym);
        const PassChange* tensorify = passChange(c, "tensorify_python_scalars");
        QVERIFY(tensorify);
        QCOMPARE(tensorify->replaced,
                 (std::vector<std::pair<std::string, std::string>>{
                     {"add", "add_tensor"}, {"mul_2", "mul_tensor"}, {"mul_3", "mul_tensor_1"}}));
        QVERIFY(c.forward && c.forward->onlyOurs.empty() && c.forward->onlyTorch.empty());
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
    }

    // Dynamic shapes in the joint-graph passes, as torch's ShapeEnv decides them: the slice_scatter of the
    // slice's gradient is a no-op (same_meta holds by the guarded equality, `start == 0` by the hint), the
    // cross-entropy's scatter upon a full of symbolic shape becomes a where (its sizes compared on the
    // hints), and that full, whose shape reads a sym_size of a tensor the folder does not know, is not folded
    // (torch keeps sym_size_int_6; folding it made us save `mul`).
    void guardedSizesDecideThePasses() {
        const std::vector<CompileCheck> checks = checkLog(kGuardedSizesLog);
        QCOMPARE(checks.size(), size_t(2));
        for (const CompileCheck& c : checks) {
            QCOMPARE(c.ours, c.torch);
            QCOMPARE(c.oursSym, c.torchSym);
            QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
            const PassChange* noops = passChange(c, "remove_noop_ops");
            QVERIFY(noops);
            QVERIFY(std::find(noops->removed.begin(), noops->removed.end(), "slice_scatter") !=
                    noops->removed.end());
        }
        const CompileCheck& head = checks[0];
        QCOMPARE(head.torchSym, (std::vector<std::string>{"primals_2", "primals_3", "primals_1", "primals_7",
                                                          "primals_6", "sym_size_int_2"}));
        const PassChange* scatter = passChange(head, "scatter_upon_const_tensor");
        QVERIFY(scatter);
        QCOMPARE(scatter->replaced,
                 (std::vector<std::pair<std::string, std::string>>{{"scatter", "where_self"}}));
        QVERIFY(head.backward && head.backward->onlyOurs.empty() && head.backward->onlyTorch.empty());
    }

    // tensorify_python_scalars interprets a float expression of symbols as float64 tensor ops (hash-consed:
    // the four GELUs share one sqrt), converted to the compute dtype at each reader.
    void floatExpressionsAreTensorified() {
        const std::vector<CompileCheck> checks = checkLog(kFloatExpressionLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QVERIFY(c.passes.notReplayed.empty());
        QCOMPARE(c.ours, c.torch);
        QCOMPARE(c.oursSym, c.torchSym);
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "mul_tensor_3") != c.torch.end());
        const PassChange* tensorify = passChange(c, "tensorify_python_scalars");
        QVERIFY(tensorify);
        for (const char* made : {"scalar_tensor_default", "true_divide_tensor", "sqrt_default"})
            QCOMPARE(std::count(tensorify->added.begin(), tensorify->added.end(), made), std::ptrdiff_t(1));
        QVERIFY(holdsTorchsNodes(c));
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
    }

    // sympy's own form of an infix expression: 1.0 - zf7 is Add(1.0, Mul(-1, zf7)), each number a new
    // scalar_tensor (the -1 an int64 one), and an integer size symbol is scalar_tensor(its placeholder) made
    // float64 (ToFloat). Before, both were reported as not replayed and drop-path's decision differed (it
    // saved the symbol 1.0 - zf7 where torch saves that value's float32 tensor,
    // convert_element_type_default_1). The names are those of torch's forward graph.
    void infixFloatExpressionsAreTensorified() {
        const std::vector<CompileCheck> checks = checkLog(kInfixFloatExpressionLog);
        std::vector<const CompileCheck*> decided;
        for (const CompileCheck& c : checks)
            if (c.status != CheckStatus::Skipped)
                decided.push_back(&c);
        QCOMPARE(decided.size(), size_t(2));
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kInfixFloatExpressionLog));
        QVERIFY(file);
        std::vector<Graph> torchForwards;
        for (const GraphEntry& entry : file->graphs())
            if (entry.kind == "aot_forward_graph") {
                Expected<Graph> g = file->load(entry.index);
                QVERIFY(g);
                torchForwards.push_back(std::move(*g));
            }
        QCOMPARE(torchForwards.size(), size_t(2));
        const std::vector<std::vector<std::string>> made = {
            {"scalar_tensor_default", "scalar_tensor_default_1", "mul_tensor", "add_tensor"},
            {"scalar_tensor_default", "convert_element_type_default", "mul_tensor", "true_divide_tensor"}};
        for (size_t i = 0; i < decided.size(); ++i) {
            const CompileCheck& c = *decided[i];
            QVERIFY2(c.passes.notReplayed.empty(),
                     c.passes.notReplayed.empty() ? "" : c.passes.notReplayed[0].c_str());
            QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
            QCOMPARE(c.ours, c.torch);
            QCOMPARE(c.oursSym, c.torchSym);
            const PassChange* tensorify = passChange(c, "tensorify_python_scalars");
            QVERIFY(tensorify);
            for (const std::string& name : made[i]) {
                QVERIFY2(std::count(tensorify->added.begin(), tensorify->added.end(), name) == 1,
                         name.c_str());
                QVERIFY2(torchForwards[i].find(name), name.c_str());
            }
            QVERIFY(holdsTorchsNodes(c));
        }
    }

    // sympy keeps a product's symbols sorted by name (Mul(16, s27, s77)), and _sympy_interp multiplies them
    // in that order: scalar_tensor of each size's node, then one float64 product per factor. Before, the text
    // "16*s27*s77" was not read, mse_loss's two gradients kept reading the SymFloat and the decision differed
    // (we saved mul_45 and mul_47 where torch saves mul_tensor_2 and mul_tensor_3). The names are torch's.
    void productsOfSizesAreTensorified() {
        const std::vector<CompileCheck> checks = checkLog(kProductOfSizesLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QVERIFY2(c.passes.notReplayed.empty(),
                 c.passes.notReplayed.empty() ? "" : c.passes.notReplayed[0].c_str());
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        QCOMPARE(c.ours, c.torch);
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "mul_tensor_3") != c.torch.end());
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kProductOfSizesLog));
        QVERIFY(file);
        const std::optional<size_t> forwardIndex = file->select("aot_forward_graph");
        QVERIFY(forwardIndex);
        Expected<Graph> torchForward = file->load(*forwardIndex);
        QVERIFY(torchForward);
        const PassChange* tensorify = passChange(c, "tensorify_python_scalars");
        QVERIFY(tensorify);
        for (const char* made : {"scalar_tensor_default_2", "scalar_tensor_default_3", "mul_tensor",
                                 "mul_tensor_1", "true_divide_tensor"}) {
            QVERIFY2(std::count(tensorify->added.begin(), tensorify->added.end(), made) == 1, made);
            QVERIFY2(torchForward->find(made), made);
        }
        QVERIFY(holdsTorchsNodes(c));
    }

    // randperm_index_add_pattern re-traced on symbolic sizes (register_replacement's check_fn) passes in only
    // the size symbols it cannot tell apart statically from one another, here s77: the slice end y.size(0) =
    // Max(1, TruncToInt(0.5*ToFloat(s77))) is traced as sym_size.int(y, 0), which the graph's sym_max is not,
    // so torch 2.15 leaves the index_add (its forward keeps index_put) and replaces the plain index (whose
    // slice end is a scalar_workaround, any), reading x.shape[0] anew (sym_size_int_10). The kept rows' sizes
    // are evaluated (saving the slice, not the randperm), and tensorify leaves b / k alone as torch does.
    void symbolicRandpermSlicesMatchAsTorchRetraces() {
        const std::vector<CompileCheck> checks = checkLog(kDynamicDinoLog);
        QCOMPARE(checks.size(), size_t(2)); // the first attempt restarted: no forward graph
        const CompileCheck& c = checks[1];
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        QVERIFY2(c.passes.notReplayed.empty(),
                 c.passes.notReplayed.empty() ? "" : c.passes.notReplayed[0].c_str());
        QCOMPARE(c.ours, c.torch);
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "slice_tensor_1") != c.torch.end());
        QVERIFY(passChange(c, "randperm_index_pattern"));
        QVERIFY(!passChange(c, "randperm_index_add_pattern"));
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kDynamicDinoLog));
        QVERIFY(file);
        Expected<Graph> torchForward = file->load(*file->select("aot_forward_graph"));
        QVERIFY(torchForward);
        QVERIFY(torchForward->find("index_put"));
        QVERIFY(torchForward->find("_unsafe_index_tensor_1"));
        // torch 2.11 replaces neither; its graphs are jointscope's node for node
        const std::vector<CompileCheck> old = checkLog(kDynamicDino211Log);
        QCOMPARE(old.size(), size_t(2));
        QCOMPARE(std::string(checkStatusName(old[1].status)), std::string("identical"));
        QCOMPARE(old[1].ruleset, std::string("torch-2.11"));
        QVERIFY(holdsTorchsNodes(old[1]));
    }

    // tensorify_python_scalars' SUPPORTED_OPS grew: clamp_min / clamp_max read a SymFloat from torch 2.15 on,
    // pow from 2.13. Under torch 2.11 a ReLU6 clamped by two float .item()s keeps its clamp_min.default and
    // clamp_max.default, as its forward shows, and tensorify's last sweep specializes the two floats to their
    // values (0.0 and 6.0 in torch's forward): the _local_scalar_dense nodes go.
    void tensorifyOpsAreTheVersions() {
        const std::vector<CompileCheck> checks = checkLog(kClampItems211Log);
        QCOMPARE(checks.size(), size_t(2));
        const CompileCheck& c = checks[1];
        QCOMPARE(c.ruleset, std::string("torch-2.11"));
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        QCOMPARE(c.ours, c.torch);
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "clamp_max") != c.torch.end());
        if (const PassChange* tensorify = passChange(c, "tensorify_python_scalars"))
            for (const auto& [from, to] : tensorify->replaced)
                QVERIFY2(from.rfind("clamp", 0) != 0, from.c_str());
        Expected<Ruleset> rules211 = loadRuleset("torch-2.11"), rules215 = loadRuleset("torch-2.15"),
                          rules213 = loadRuleset("torch-2.13");
        QVERIFY(rules211 && rules215 && rules213);
        QVERIFY(!rules211->tensorifyOps.count("torch.ops.aten.clamp_min.default"));
        QCOMPARE(rules215->tensorifyOps.at("torch.ops.aten.clamp_min.default"),
                 std::string("torch.ops.aten.clamp_min.Tensor"));
        QVERIFY(!rules211->tensorifyOps.count("torch.ops.aten.pow.Tensor_Tensor"));
        QVERIFY(rules213->tensorifyOps.count("torch.ops.aten.pow.Tensor_Tensor"));
        QCOMPARE(rules211->tensorifyOps.at("torch.ops.aten.gt.Scalar"),
                 std::string("torch.ops.aten.gt.Tensor"));
        QVERIFY(holdsTorchsNodes(c));
        const PassChange* swept = passChange(c, "tensorify_python_scalars");
        QVERIFY(swept);
        for (const char* specialized : {"_local_scalar_dense", "_local_scalar_dense_1"})
            QVERIFY2(std::count(swept->removed.begin(), swept->removed.end(), specialized) == 1, specialized);
    }

    // An int divided by an int is a SymFloat (IntTrueDiv), which the min-cut weighs 4 where a SymInt weighs
    // 1: torch saves the product mul_25 (an int) and recomputes mul_25 / 32 in the backward. Read as a
    // SymInt, truediv_2 was saved instead. tensorify leaves the ops reading it alone, as torch does (its
    // TensorReferenceAnalysis raises NotImplementedError for int_truediv): nothing to report.
    void intTrueDivIsAFloat() {
        const std::vector<CompileCheck> checks = checkLog(kIntTrueDivLog);
        const CompileCheck* decided = nullptr;
        for (const CompileCheck& c : checks)
            if (c.status != CheckStatus::Skipped)
                decided = &c;
        QVERIFY(decided);
        const CompileCheck& c = *decided;
        QVERIFY2(c.passes.notReplayed.empty(),
                 c.passes.notReplayed.empty() ? "" : c.passes.notReplayed[0].c_str());
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        QCOMPARE(c.oursSym, c.torchSym);
        QVERIFY(std::find(c.torchSym.begin(), c.torchSym.end(), "mul_25") != c.torchSym.end());
        QVERIFY(holdsTorchsNodes(c));
    }

    // inductor's fuse_attention rewrote transformers' eager ViT attention into the CPU's fused kernel,
    // forward and backward: replayed, the decision is torch's (it saves the kernel's output and logsumexp,
    // getitem and getitem_1), and the kernels jointscope made are the calls torch's forward and backward
    // graphs hold.
    void fusedAttentionIsReplayed() {
        const std::vector<CompileCheck> checks = checkLog(kFusedAttentionLog);
        QVERIFY2(unlikeTorchs(checks).empty(), unlikeTorchs(checks).c_str());
        const CompileCheck& c = checks[0];
        const PassChange* fused = passChange(c, "fuse_attention");
        QVERIFY(fused);
        const std::optional<LoggedGraphs> g = loggedGraphs(kFusedAttentionLog);
        QVERIFY(g);
        for (const auto& [name, graph] :
             {std::pair{"_scaled_dot_product_flash_attention_for_cpu_default", &g->forward},
              std::pair{"_scaled_dot_product_flash_attention_for_cpu_backward_default", &g->backward}}) {
            QVERIFY2(std::count(fused->added.begin(), fused->added.end(), name) == 1, name);
            QVERIFY2(graph->find(name) && !g->joint.find(name), name);
        }
        // the matched attention is gone from torch's graphs: the softmax's exp and the first bmm
        for (const char* name : {"exp", "bmm"}) {
            QVERIFY2(std::count(fused->removed.begin(), fused->removed.end(), name) == 1, name);
            QVERIFY2(g->joint.find(name) && !g->forward.find(name) && !g->backward.find(name), name);
        }
    }

    // F.one_hot asserts on its labels (_assert_async nodes in the joint graph). The labels are saved, so the
    // asserts could run in the backward, but min-cut rebuilds the backward from its first node that reads a
    // tangent (reordering_to_mimic_autograd_engine): torch's backward holds none, its forward both.
    void assertsStayOutOfTheBackward() {
        const std::vector<CompileCheck> checks = checkLog(kOneHotAssertsLog);
        QVERIFY2(unlikeTorchs(checks).empty(), unlikeTorchs(checks).c_str());
        const CompileCheck& c = checks[0];
        const std::optional<LoggedGraphs> g = loggedGraphs(kOneHotAssertsLog);
        QVERIFY(g);
        for (const char* name : {"_assert_async", "_assert_async_1"})
            QVERIFY2(g->joint.find(name) && g->forward.find(name) && !g->backward.find(name), name);
        QVERIFY(std::count(c.torch.begin(), c.torch.end(), "primals_3") ==
                1); // the labels, read by the asserts
    }

    // With attention dropout, fuse_attention's replacement is sdpa's math form (no fused CPU kernel takes
    // dropout), traced for the inputs' sizes: replayed from the recorded formulas, the decision and the node
    // sets are torch's; the math form's first bmm, named as a pattern replacement names it, is a node of
    // torch's forward graph and not of the joint graph torch logged, and the attention's output view_14 is
    // gone.
    void mathAttentionIsReplayed() {
        const std::vector<CompileCheck> checks = checkLog(kFusedDropoutAttentionLog);
        QVERIFY2(unlikeTorchs(checks).empty(), unlikeTorchs(checks).c_str());
        const CompileCheck& c = checks[0];
        const PassChange* fused = passChange(c, "fuse_attention");
        QVERIFY(fused);
        QVERIFY(std::count(fused->added.begin(), fused->added.end(), "bmm_default") == 1);
        QVERIFY(std::any_of(fused->replaced.begin(), fused->replaced.end(),
                            [](const auto& r) { return r.first == "view_14"; }));
        const std::optional<LoggedGraphs> g = loggedGraphs(kFusedDropoutAttentionLog);
        QVERIFY(g);
        QVERIFY(g->joint.find("view_14") && !g->forward.find("view_14"));
        QVERIFY(g->forward.find("bmm_default") && !g->joint.find("bmm_default"));
    }

    // Where no pass says why torch's graphs differ in nodes, check names the nodes a pass jointscope does not
    // replay made: those named after their op's overload. The same log checked with a ruleset that names no
    // torch version (so no fuse_attention patterns): its bmm_default is in torch's forward graph and not in
    // the joint graph torch logged.
    void unreplayedPassNodesAreNamed() {
        QFile builtin(QString::fromStdString(test::sourcePath("resources/rulesets/torch-2.15.json")));
        QVERIFY(builtin.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(builtin.readAll());
        QVERIFY(text.contains("\"name\": \"torch-2.15\""));
        text.replace("\"name\": \"torch-2.15\"", "\"name\": \"unversioned\"");
        QTemporaryDir dir;
        QFile unversioned(dir.filePath("unversioned.json"));
        QVERIFY(unversioned.open(QIODevice::WriteOnly) && unversioned.write(text.toUtf8()) > 0);
        unversioned.close();
        CheckRequest request;
        request.ruleset = unversioned.fileName().toStdString();
        const std::vector<CompileCheck> checks = checkLog(kFusedDropoutAttentionLog, request);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("differs"));
        QCOMPARE(c.passes.notReplayed.size(), size_t(1));
        const std::string& said = c.passes.notReplayed[0];
        QVERIFY2(said.starts_with("a joint-graph pass torch ran made nodes no replayed pass makes"),
                 said.c_str());
        QVERIFY2(said.find("bmm_default") != std::string::npos, said.c_str());
    }

    // constant_fold_uniform_value folds the copies of one-element tensor constants into fulls of their value,
    // which the joint graph does not print: the literal comes from the dynamo graph's line of the program
    // (qkv[:, :, :, [-2]]). The value decides CSE: torch merges the second layer's full([1], -2) into the
    // first's, and not the -1 ones (hash(-1) == hash(-2) in Python).
    void tensorConstantValuesComeFromTheDynamoGraph() {
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kListIndexLog));
        QVERIFY2(file, file ? "" : file.error().format().c_str());
        const std::vector<CompileGraphs> compiles = groupCompiles(*file);
        QCOMPARE(compiles.size(), size_t(1));
        const std::optional<CompileConfig> config = loggedConfigFor(*file, *compiles[0].joint);
        QVERIFY(config);
        const std::string split = "/tmp/hf/transformers/models/falcon/modeling_falcon.py:";
        QCOMPARE(config->sourceLiterals,
                 (std::vector<std::pair<std::string, std::string>>{{split + "258 in _split_heads", "-2"},
                                                                   {split + "259 in _split_heads", "-1"}}));
        const std::vector<CompileCheck> checks = checkLog(kListIndexLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QVERIFY(c.passes.notReplayed.empty());
        QCOMPARE(c.ours, c.torch);
        for (const char* saved : {"full_default", "full_default_1", "full_default_5"})
            QVERIFY(std::find(c.torch.begin(), c.torch.end(), saved) != c.torch.end());
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "full_default_4") == c.torch.end());
        QVERIFY(holdsTorchsNodes(c));
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
    }

    // A compile the AOTAutograd cache served logs the cached compile's graphs, partitioned after inductor's
    // joint-graph passes, though none ran this time: they are replayed.
    void aotCacheHitReplaysThePasses() {
        const std::vector<CompileCheck> checks = checkLog(kCacheHitLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QVERIFY(c.settings.replayJointPasses);
        QVERIFY(std::any_of(c.settings.notes.begin(), c.settings.notes.end(),
                            [](const std::string& n) { return n.find("AOTAutograd cache") != n.npos; }));
        QCOMPARE(c.ours, c.torch);
        QVERIFY(c.backward && c.backward->onlyOurs.empty() && c.backward->onlyTorch.empty());
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
    }

    // A guard evaluated under suppress_guards is logged as guard_added_fast too ("eval [guard suppressed]" in
    // its stack) but never joins the ShapeEnv's guards: lines 11 and 19 of the log are such, each followed
    // by the same guard taken for good (lines 12 and 20).
    void suppressedGuardsAreNotGuards() {
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kCachedDynamicLog));
        QVERIFY(file);
        const std::vector<CompileGraphs> compiles = groupCompiles(*file);
        QVERIFY(!compiles.empty());
        const std::optional<CompileConfig> config = loggedConfigFor(*file, *compiles[0].joint);
        QVERIFY(config);
        std::vector<uint32_t> lines;
        for (const auto& [line, expr] : config->equalityGuards)
            lines.push_back(line);
        for (uint32_t suppressed : {11u, 19u})
            QVERIFY(std::find(lines.begin(), lines.end(), suppressed) == lines.end());
        for (uint32_t taken : {12u, 20u})
            QVERIFY(std::find(lines.begin(), lines.end(), taken) != lines.end());
    }

    // Served by the AOTAutograd cache under dynamic shapes, a compile takes the equality guards of the
    // compile that filled the cache (the same joint graph text earlier in the log): its own records hold
    // none.
    void aotCacheHitTakesTheFillersGuards() {
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kCachedDynamicLog));
        QVERIFY(file);
        const std::vector<CompileGraphs> compiles = groupCompiles(*file);
        QCOMPARE(compiles.size(), size_t(2));
        const GraphEntry& filler = file->graphs()[*compiles[0].joint];
        const GraphEntry& served = file->graphs()[*compiles[1].joint];
        QCOMPARE(served.digest, filler.digest);
        // The guard AOTAutograd's tracing took, which the served compile logs only after its joint graph.
        const std::string aotGuard = "Eq(64*s11, 64*s11 + 64*s55)";
        auto holds = [&](const CompileConfig& c) {
            return std::any_of(c.equalityGuards.begin(), c.equalityGuards.end(),
                               [&](const auto& g) { return g.second == aotGuard; });
        };
        const std::optional<CompileConfig> ownRecords = file->compileConfigFor(served);
        QVERIFY(ownRecords && !holds(configAtLine(*ownRecords, served.line)));
        const std::optional<CompileConfig> first = loggedConfigFor(*file, *compiles[0].joint);
        const std::optional<CompileConfig> borrowed = loggedConfigFor(*file, *compiles[1].joint);
        QVERIFY(first && holds(*first) && !first->aotCacheHit);
        QVERIFY(borrowed && holds(*borrowed) && borrowed->aotCacheHit);
        for (const CompileCheck& c : checkLog(kCachedDynamicLog)) {
            QCOMPARE(c.ours, c.torch);
            QCOMPARE(c.oursSym, c.torchSym);
            const PassChange* noops = passChange(c, "remove_noop_ops");
            QVERIFY(noops);
            QVERIFY(std::find(noops->removed.begin(), noops->removed.end(), "slice_scatter") !=
                    noops->removed.end());
            QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        }
    }

    // A backward node's summary ("# Backward of forward node: File: ...") shows no checkpoint tag: the layer
    // norm's gradient after the checkpointed layers is untagged, and torch saves rsqrt / 64 (div_3), not
    // rsqrt.
    void backwardSummariesEndCheckpointTags() {
        const std::vector<CompileCheck> checks = checkLog(kCheckpointedLog);
        QCOMPARE(checks.size(), size_t(1));
        const CompileCheck& c = checks[0];
        QCOMPARE(c.ours, c.torch);
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "div_3") != c.torch.end());
        QVERIFY(std::find(c.torch.begin(), c.torch.end(), "rsqrt") == c.torch.end());
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
    }

    // torch 2.13 decides three things otherwise than 2.15, each a ruleset switch read off torch by
    // scripts/gen-ruleset: its fuse_seed_creation_pass does not pass the checkpoint tags on to inductor_seeds
    // (saved, no RNG state), it binds no specialized symbol of a saved input, and with no recomputable banned
    // node left the knapsack saves the inputs and the MUST_SAVE nodes. Real torch 2.13 logs of the zoo
    // (ac_dropout_custom_fn and dynamic_true_masked_attention under inductor, sac_must_recompute under
    // aot_eager at budget 0.5), each compile's records only, chromium / guard / describe / cache /
    // output-code records and all but one post-grad graph dropped: identical under their own ruleset, and
    // each differs under torch 2.15's in the way its switch says.
    void torch213DecidesAsItsRuleset_data() {
        QTest::addColumn<QString>("log");
        QTest::addColumn<QString>("differenceUnder215");
        QTest::newRow("inductor_seeds untagged")
            << "tests/data/torch2.13-cpu/ac_dropout_custom_fn_inductor_trace.log"
            << "rng";
        QTest::newRow("specialized symbols") << "tests/data/torch2.13-cpu/"
                                                "dynamic_true_masked_attention_inductor_budget05_trace.log"
                                             << "sym";
        QTest::newRow("empty knapsack")
            << "tests/data/torch2.13-cpu/sac_must_recompute_aot_eager_budget05_trace.log"
            << "saved";
    }
    void torch213DecidesAsItsRuleset() {
        QFETCH(QString, log);
        QFETCH(QString, differenceUnder215);
        const std::vector<CompileCheck> checks = checkLog(log.toStdString());
        QVERIFY(!checks.empty());
        const CompileCheck& c = checks.back();
        QCOMPARE(c.ruleset, std::string("torch-2.13"));
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        CheckRequest as215;
        as215.ruleset = "torch-2.15";
        const CompileCheck d = checkLog(log.toStdString(), as215).back();
        QCOMPARE(std::string(checkStatusName(d.status)), std::string("differs"));
        if (differenceUnder215 == "rng") {
            QCOMPARE(d.oursRng, std::vector<std::string>{"rng_state(prims.inductor_seeds)"});
            QVERIFY(d.torchRng.empty());
        } else if (differenceUnder215 == "sym") {
            QVERIFY(d.oursSym.size() > d.torchSym.size());
            QCOMPARE(c.oursSym, c.torchSym);
        } else {
            QVERIFY(d.ours != d.torch);
            QVERIFY(std::find(d.torch.begin(), d.torch.end(), "addmm_7") != d.torch.end()); // MUST_SAVE
        }
    }

    // torch 2.14 decides as 2.15 except for the epilogue-mutation rule, which it lacks: at budget 0 it saves
    // the weight embedding(max_norm=...) renormalizes in place (primals_1; 2.14's backward then fails, as the
    // log's run did). A real 2.14 log (jointscope_torch.models embedding_max_norm then mlp, aot_eager, budget
    // 0, frame 0's records without chromium / guard / describe ones): its ruleset is torch-2.14, chosen from
    // the version the log records, and under torch-2.15 the first compile differs by that rule.
    void torch214DecidesAsItsRuleset() {
        const std::string log = "tests/data/torch2.14-cpu/embedding_max_norm_budget0_aot_eager_trace.log";
        const std::vector<CompileCheck> checks = checkLog(log);
        QCOMPARE(checks.size(), size_t(2));
        for (const CompileCheck& c : checks) {
            QCOMPARE(c.ruleset, std::string("torch-2.14"));
            QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        }
        QVERIFY(std::find(checks[0].torch.begin(), checks[0].torch.end(), "primals_1") !=
                checks[0].torch.end());
        CheckRequest as215;
        as215.ruleset = "torch-2.15";
        const CompileCheck d = checkLog(log, as215)[0];
        QCOMPARE(std::string(checkStatusName(d.status)), std::string("differs"));
        QVERIFY(std::find(d.ours.begin(), d.ours.end(), "primals_1") == d.ours.end());
    }

    // torch 2.10 (the oldest release jointscope has a ruleset of) prints its checkpoint tags behind a second
    // "# ". Read as untagged, both checkpointed blocks' dropouts were saved where torch recomputes them with
    // the RNG state its forward returns (run_and_save_rng_state / run_with_rng_state). A real 2.10 log
    // (jointscope_torch.models ac_dropout_custom_fn then gpt_stack_ac_dropout, aot_eager, without chromium /
    // guard / describe records): its ruleset is torch-2.10, chosen from the version it records.
    void torch210DecidesAsItsRuleset() {
        const std::vector<CompileCheck> checks =
            checkLog("tests/data/torch2.10-cpu/checkpointed_dropout_aot_eager_trace.log");
        QCOMPARE(checks.size(), size_t(2));
        for (const CompileCheck& c : checks) {
            QCOMPARE(c.ruleset, std::string("torch-2.10"));
            QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
            QVERIFY(holdsTorchsNodes(c));
        }
        QCOMPARE(checks[1].torchRng.size(), size_t(6));
        QCOMPARE(checks[1].oursRng, checks[1].torchRng);
    }

    // torch 2.9's logs record no torch version (compilation_metrics carry pytorch_version from 2.10 on) and
    // its joint graphs print no checkpoint tags. A real 2.9 log (mlp, then ac_dropout_custom_fn, aot_eager at
    // budget 0.5, without chromium / guard / describe records): the ruleset is the newest one 2.9 can be,
    // torch-2.9, and saying why; the MLP's decision is torch's; the checkpointed compile is not, and the
    // check says why instead of leaving a bare "differs".
    void torch29LogsSayWhatTheyLack() {
        const std::vector<CompileCheck> checks =
            checkLog("tests/data/torch2.9-cpu/mlp_checkpointed_dropout_budget05_aot_eager_trace.log");
        QCOMPARE(checks.size(), size_t(2));
        for (const CompileCheck& c : checks) {
            QCOMPARE(c.ruleset, std::string("torch-2.9"));
            QVERIFY2(c.rulesetChoice.find("no pytorch_version") != std::string::npos,
                     c.rulesetChoice.c_str());
            QVERIFY(std::find(c.settings.notes.begin(), c.settings.notes.end(),
                              "activation_memory_budget = 0.5 (log)") != c.settings.notes.end());
        }
        QCOMPARE(std::string(checkStatusName(checks[0].status)), std::string("identical"));
        QVERIFY(checks[0].settings.unsupported.empty());
        const std::vector<std::string>& lacking = checks[1].settings.unsupported;
        QCOMPARE(lacking.size(), size_t(1));
        QVERIFY2(lacking[0].find("carries no checkpoint tags") != std::string::npos, lacking[0].c_str());
    }

    // torch 2.8 prints no output descriptors: the forward's outputs are the joint's outputs less one gradient
    // per primal. Its compilation_metrics have no recompile_user_contexts (2.9 on) either, so the ruleset is
    // torch-2.8, whose tensorify takes a float64 .item() as it is (2.9 on convert it to float64 again). A
    // real 2.8 log (mlp, then dynamic_true_float_attributes, aot_eager): both decisions torch's, node for
    // node; under torch-2.9 the float attributes' compile makes one convert more than torch.
    void torch28DecidesAsItsRuleset() {
        const std::string log = "tests/data/torch2.8-cpu/mlp_float_attributes_aot_eager_trace.log";
        const std::vector<CompileCheck> checks = checkLog(log);
        QCOMPARE(checks.size(), size_t(2));
        for (const CompileCheck& c : checks) {
            QCOMPARE(c.ruleset, std::string("torch-2.8"));
            QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
            QVERIFY(holdsTorchsNodes(c));
        }
        CheckRequest as29;
        as29.ruleset = "torch-2.9";
        QVERIFY(!holdsTorchsNodes(checkLog(log, as29)[1]));
    }

    // A checkpoint inside a nested_compile_region: its tags are in the region's body graph, not in the outer
    // joint graph's nodes. The missing-tags note must look there (it did not, and the CI log zoo's
    // nested_region_ac_dropout got a false "not followed").
    void checkpointTagsInsideRegionsCount() {
        const std::vector<CompileCheck> checks =
            checkLog("tests/data/torch2/nested_region_ac_dropout_aot_eager_trace.log");
        QCOMPARE(checks.size(), size_t(1));
        QVERIFY2(checks[0].settings.unsupported.empty(),
                 checks[0].settings.unsupported.empty() ? "" : checks[0].settings.unsupported[0].c_str());
        QCOMPARE(std::string(checkStatusName(checks[0].status)), std::string("identical"));
    }

    // Each of the three is needed: without it the decision is not torch's.
    void eachLogFactMatters_data() {
        QTest::addColumn<bool>("passes");
        QTest::addColumn<bool>("budget");
        QTest::newRow("joint passes not replayed") << false << true;
        QTest::newRow("budget overridden to 1") << true << false;
    }
    void eachLogFactMatters() {
        QFETCH(bool, passes);
        QFETCH(bool, budget);
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kLog));
        QVERIFY(file);
        CheckRequest request;
        if (!passes)
            request.overrides.replayJointPasses = false;
        if (!budget)
            request.overrides.memoryBudget = 1.0;
        const CompileCheck c = checkCompile(*file, groupCompiles(*file)[0], configsOf(*file), request);
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("differs"));
        // and the override is said
        bool said = false;
        for (const std::string& note : c.settings.notes)
            said = said || note.find("overrides") != std::string::npos;
        QVERIFY(said);
    }

    void symbolHintsMatter() {
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kLog));
        QVERIFY(file);
        std::vector<CompileConfig> configs = configsOf(*file);
        configs[0].symbolHints.clear();
        const CompileCheck c = checkCompile(*file, groupCompiles(*file)[0], configs, CheckRequest{});
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("differs"));
    }

    // torch partitions the invoke_subgraph body first (run_joint_graph_passes_on_hops): the forward calls run
    // partitioned_fw_subgraph_0_0, whose extra outputs are the body's saved values, and the outer graph saves
    // the getitems of those. Torch's log: 5 saved in the body, 3 calls, 15 saved outside.
    void nestedCompileRegionBodiesFirst() {
        Expected<GraphFile> file = GraphFile::open(test::sourcePath(kNestedLog));
        QVERIFY(file);
        const std::vector<CompileGraphs> compiles = groupCompiles(*file);
        QCOMPARE(compiles.size(), size_t(1));
        const CompileCheck c = checkCompile(*file, compiles[0], configsOf(*file), CheckRequest{});
        QVERIFY2(c.status != CheckStatus::Error, c.message.c_str());
        QCOMPARE(c.bodies.size(), size_t(1));
        QCOMPARE(c.bodies[0].body, std::string("partitioned_fw_subgraph_0_0"));
        QCOMPARE(c.bodies[0].torch.size(), size_t(5));
        QCOMPARE(c.bodies[0].ours, c.bodies[0].torch);
        QCOMPARE(c.torch.size(), size_t(15));
        QCOMPARE(c.ours, c.torch);
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("identical"));
        QVERIFY(c.settings.unsupported.empty());
        QVERIFY(c.forward && c.forward->onlyOurs.empty() && c.forward->onlyTorch.empty());
    }

    // A log edited so that a backward call's first argument is no body: an error at that call's line, no
    // crash.
    void invokeSubgraphWithoutBodyIsAnError() {
        std::string text = test::readFile(test::sourcePath(kNestedLog));
        const std::string from = "invoke_subgraph(repeated_subgraph1, 'bw_subgraph_0_0', getitem_1,";
        const size_t at = text.find(from);
        QVERIFY(at != std::string::npos);
        text.replace(at, from.size(), "invoke_subgraph(primals_1, 'bw_subgraph_0_0', getitem_1,");
        Expected<GraphFile> file = GraphFile::fromText(text, "edited.log");
        QVERIFY(file);
        const std::vector<CompileGraphs> compiles = groupCompiles(*file);
        QCOMPARE(compiles.size(), size_t(1));
        const CompileCheck c = checkCompile(*file, compiles[0], {}, CheckRequest{});
        QCOMPARE(std::string(checkStatusName(c.status)), std::string("error"));
        QVERIFY2(c.message.find("invoke_subgraph_3") != std::string::npos &&
                     c.message.find("not a body") != std::string::npos,
                 c.message.c_str());
    }
};

QTEST_GUILESS_MAIN(TestLogCheck)
#include "tst_logcheck.moc"
