#include "partition/CompileSettings.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

namespace jointscope::partition {
namespace {

std::string number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

// torch._functorch.config switches that map onto a ruleset switch one to one.
void applySwitch(const std::optional<bool>& logged, bool& into, const char* key, CompileSettings& s) {
    if (!logged)
        return;
    if (into != *logged)
        s.notes.push_back(std::string(key) + " = " + (*logged ? "True" : "False") +
                          " (log; the ruleset's default is " + (into ? "True" : "False") + ")");
    into = *logged;
}

// "path:line in fn" of a node's innermost "File: path:line in fn, code: ..." stack trace line; "" when none.
std::string sourceLocation(const Node& n) {
    for (auto it = n.meta.stackTrace.rbegin(); it != n.meta.stackTrace.rend(); ++it) {
        std::string_view line = *it;
        const size_t file = line.find("File: "); // after "ac_graph_id: 3 - PREFER_RECOMPUTE " in a region
        if (file == std::string_view::npos)
            continue;
        line.remove_prefix(file + 6);
        return std::string(line.substr(0, line.find(", code:")));
    }
    return {};
}

bool isScalar(const Value& v) {
    return v.kind() == ValueKind::Int || v.kind() == ValueKind::Float || v.kind() == ValueKind::Bool;
}

// The literal a one-element list [v] holds, or nullptr.
const Value* oneElementList(const Value& v) {
    if (v.kind() != ValueKind::List || v.items().size() != 1 || !isScalar(v.items()[0]))
        return nullptr;
    return &v.items()[0];
}

// Literals of a dynamo graph node that AOTAutograd turns into a one-element tensor constant: a one-element
// list in an index (x[:, [-2]], which advanced indexing makes a tensor) and torch.tensor(v) /
// torch.tensor([v]).
void literalsOf(const Node& n, std::vector<const Value*>& out) {
    const std::string& target = n.target.text;
    if ((target == "operator.getitem" || target == "operator.setitem") && n.args.size() >= 2) {
        const Value& index = n.args[1];
        if (const Value* v = oneElementList(index))
            out.push_back(v);
        if (index.kind() == ValueKind::Tuple)
            for (const Value& item : index.items())
                if (const Value* v = oneElementList(item))
                    out.push_back(v);
    } else if ((target == "torch.tensor" || target == "torch.as_tensor") && !n.args.empty()) {
        if (isScalar(n.args[0]))
            out.push_back(&n.args[0]);
        else if (const Value* v = oneElementList(n.args[0]))
            out.push_back(v);
    }
}

std::string literalText(const Value& v) {
    switch (v.kind()) {
    case ValueKind::Bool:
        return v.asBool() ? "True" : "False";
    case ValueKind::Int:
        return std::to_string(v.asInt());
    default: {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", v.asFloat());
        return buf;
    }
    }
}

void readSourceLiterals(CompileConfig& config, const GraphFile& file, size_t jointIndex) {
    const GraphList& graphs = file.graphs();
    // A joint graph without a get_attr of a tensor constant needs no dynamo graph.
    Expected<std::string> payload = file.payload(jointIndex);
    if (!payload || payload->find("= self._tensor_constant") == std::string::npos)
        return;
    const GraphEntry& joint = graphs[jointIndex];
    std::optional<size_t> dynamo;
    for (size_t i = jointIndex; i-- > 0;)
        if (graphs.kind(i) == "dynamo_output_graph" && graphs.compileId(i) == joint.compileId &&
            graphs.file(i) == joint.file) {
            dynamo = i;
            break;
        }
    if (!dynamo)
        return;
    Expected<Graph> graph = file.load(*dynamo);
    if (!graph)
        return;
    std::map<std::string, std::set<std::string>> byLocation;
    // The graph and its HOP bodies (a checkpointed layer's code is in its tag_activation_checkpoint body).
    std::vector<const Graph*> scopes{&*graph};
    for (size_t g = 0; g < scopes.size(); ++g) {
        for (const auto& body : scopes[g]->subgraphs())
            scopes.push_back(body.get());
        for (const Node& n : scopes[g]->nodes()) {
            std::vector<const Value*> literals;
            literalsOf(n, literals);
            if (literals.empty())
                continue;
            std::set<std::string>& texts = byLocation[sourceLocation(n)];
            for (const Value* v : literals)
                texts.insert(literalText(*v));
        }
    }
    for (const auto& [location, texts] : byLocation)
        if (!location.empty() && texts.size() == 1) // two different literals on one line: which is which?
            config.sourceLiterals.emplace_back(location, *texts.begin());
}

// The equality guards of the compile that filled the AOTAutograd cache: the first earlier compile of the same
// log with the same joint graph text.
void borrowCachedCompileGuards(CompileConfig& config, const GraphFile& file, size_t jointIndex) {
    const GraphList& graphs = file.graphs();
    const GraphEntry& joint = graphs[jointIndex];
    if (!config.aotCacheHit || !joint.digest)
        return;
    for (size_t i = 0; i < jointIndex; ++i) {
        if (graphs.kind(i) != joint.kind || graphs.file(i) != joint.file)
            continue;
        const GraphEntry e = graphs[i];
        if (e.digest != joint.digest)
            continue;
        const std::optional<CompileConfig> filler = file.compileConfigFor(e);
        if (!filler)
            continue;
        for (auto& guard : configAtLine(*filler, e.line).equalityGuards)
            if (std::none_of(config.equalityGuards.begin(), config.equalityGuards.end(),
                             [&](const auto& g) { return g.second == guard.second; }))
                config.equalityGuards.push_back(std::move(guard));
        return;
    }
}

// A compile the AOTAutograd cache served logs no torch._functorch.config (torch 2.11 and 2.15 log it on a
// miss only), yet the cache's key holds that config: the partition was made under the config this process
// had. That of the compile that filled the cache when the log holds it (the same joint graph text), else
// that of the last compile before it that logged one (a process sets the config once, as a script does).
void borrowCachedFunctorchConfig(CompileConfig& config, const GraphFile& file, size_t jointIndex) {
    const GraphList& graphs = file.graphs();
    const GraphEntry& joint = graphs[jointIndex];
    if (!config.aotCacheHit || config.functorch != FunctorchConfig{})
        return;
    auto loggedOne = [&](const GraphEntry& e) -> std::optional<CompileConfig> {
        if (e.kind != joint.kind || e.file != joint.file)
            return std::nullopt;
        std::optional<CompileConfig> c = file.compileConfigFor(e);
        if (!c || c->aotCacheHit || c->functorch == FunctorchConfig{})
            return std::nullopt;
        return c;
    };
    auto take = [&](size_t i, const CompileConfig& from, std::string_view why) {
        config.functorch = from.functorch;
        config.functorchFrom = "that of compile " + graphs[i].compileId + " (joint graph at line " +
                               std::to_string(graphs[i].line) + "), " + std::string(why);
    };
    for (size_t i = 0; joint.digest && i < jointIndex; ++i)
        if (graphs[i].digest == joint.digest)
            if (std::optional<CompileConfig> filler = loggedOne(graphs[i]))
                return take(i, *filler, "which filled the cache (the cache's key holds it)");
    for (size_t i = jointIndex; i-- > 0;)
        if (std::optional<CompileConfig> last = loggedOne(graphs[i]))
            return take(i, *last, "the last before it that logged one, taken as unchanged");
}

// The forward and backward graphs logged for the compile of joint graph `jointIndex`: the first of each after
// it, before the next joint graph.
std::pair<std::optional<size_t>, std::optional<size_t>> compileGraphsOf(const GraphFile& file,
                                                                        size_t jointIndex) {
    const GraphList& graphs = file.graphs();
    const GraphEntry& joint = graphs[jointIndex];
    std::optional<size_t> forward, backward;
    for (size_t i = jointIndex + 1; i < graphs.size(); ++i) {
        if (graphs.compileId(i) != joint.compileId || graphs.file(i) != joint.file)
            continue;
        const std::string_view kind = graphs.kind(i);
        if (kind == joint.kind)
            break;
        if (kind == "aot_forward_graph" && !forward)
            forward = i;
        else if (kind == "aot_backward_graph" && !backward)
            backward = i;
    }
    return {forward, backward};
}

// How many calls of aten op `op` a graph's text makes.
size_t callsOf(std::string_view text, std::string_view op) {
    const std::string call = "torch.ops.aten." + std::string(op) + ".default(";
    size_t count = 0;
    for (size_t at = text.find(call); at != std::string_view::npos; at = text.find(call, at + call.size()))
        ++count;
    return count;
}

// fuse_attention's rewrites, which jointscope does not replay, seen from the graphs' texts: an attention op
// the forward calls more often than the joint graph.
void readFusedAttention(CompileConfig& config, const GraphFile& file, size_t jointIndex) {
    const std::optional<size_t> forward = compileGraphsOf(file, jointIndex).first;
    if (!forward)
        return;
    Expected<std::string> fw = file.payload(*forward);
    Expected<std::string> joint = file.payload(jointIndex);
    if (!fw || !joint || fw->find("_scaled_dot_product_") == std::string::npos)
        return;
    for (std::string_view op :
         {"_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
          "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention"})
        if (callsOf(*fw, op) > callsOf(*joint, op))
            config.fusedAttentionOps.push_back("aten." + std::string(op));
}

// pad_mm's choices, from the forward and backward graphs logged for the compile: parsed only when their text
// holds a constant_pad_nd.
void readPaddedMatmuls(CompileConfig& config, const GraphFile& file, size_t jointIndex) {
    const auto [forward, backward] = compileGraphsOf(file, jointIndex);
    auto padded = [&](std::optional<size_t> index) {
        if (!index)
            return false;
        Expected<std::string> text = file.payload(*index);
        return text && text->find("constant_pad_nd") != std::string::npos;
    };
    if (!forward || (!padded(forward) && !padded(backward)))
        return;
    Expected<Graph> fw = file.load(*forward);
    if (!fw)
        return;
    std::optional<Graph> bw;
    if (backward)
        if (Expected<Graph> loaded = file.load(*backward))
            bw = loaded.take();
    config.paddedMatmuls = observePaddedMatmuls(*fw, bw ? &*bw : nullptr);
}

// Whether the dynamo graph logged for the compile of joint graph `jointIndex` (the last before it, after the
// previous joint graph) checkpoints a region.
void readDynamoCheckpoints(CompileConfig& config, const GraphFile& file, size_t jointIndex) {
    const GraphList& graphs = file.graphs();
    for (size_t i = jointIndex; i-- > 0 && graphs.kind(i) != graphs.kind(jointIndex);) {
        if (graphs.kind(i) != "dynamo_output_graph" || graphs.file(i) != graphs.file(jointIndex))
            continue;
        Expected<std::string> text = file.payload(i);
        config.dynamoCheckpoints = text && text->find("tag_activation_checkpoint") != std::string::npos;
        return;
    }
}

} // namespace

void addCompileFactsFromLog(CompileConfig& config, const GraphFile& file, size_t jointIndex) {
    if (jointIndex >= file.graphs().size())
        return;
    readSourceLiterals(config, file, jointIndex);
    borrowCachedCompileGuards(config, file, jointIndex);
    borrowCachedFunctorchConfig(config, file, jointIndex);
    readPaddedMatmuls(config, file, jointIndex);
    readFusedAttention(config, file, jointIndex);
    readDynamoCheckpoints(config, file, jointIndex);
}

void addLogGraphFacts(Graph& joint, const CompileConfig& config) {
    auto has = [&](std::string_view key) {
        return std::any_of(joint.attributes.begin(), joint.attributes.end(),
                           [&](const auto& a) { return a.first == key; });
    };
    if (!config.torchVersion.empty() && !has("torch_version"))
        joint.attributes.emplace_back("torch_version", config.torchVersion);
    if (config.torchVersion.empty() && !config.torchVersionAtMost.empty() && !has("torch_version"))
        joint.attributes.emplace_back("torch_version_at_most", config.torchVersionAtMost);
    if (!config.symbolHints.empty() && !has("symbol_hints")) {
        std::string hints;
        for (const auto& [symbol, value] : config.symbolHints)
            hints += (hints.empty() ? "{\"" : ", \"") + symbol + "\": " + std::to_string(value);
        joint.attributes.emplace_back("symbol_hints", hints + "}");
    }
    if (!config.floatSymbolHints.empty() && !has("float_symbol_hints")) {
        std::string hints;
        for (const auto& [symbol, value] : config.floatSymbolHints) {
            char number[32];
            std::snprintf(number, sizeof number, "%.17g", value);
            hints += (hints.empty() ? "{\"" : ", \"") + symbol + "\": " + number;
        }
        joint.attributes.emplace_back("float_symbol_hints", hints + "}");
    }
    if (!config.sourceLiterals.empty() && !has("tensor_constant_values")) {
        const std::map<std::string, std::string> literals(config.sourceLiterals.begin(),
                                                          config.sourceLiterals.end());
        std::string values;
        for (const Node& n : joint.nodes()) {
            if (!isOneElementTensorConstant(n))
                continue;
            // The constant's dtype may differ from the literal's (torch.tensor(16, dtype=torch.float)): the
            // folder casts the value to it.
            auto it = literals.find(sourceLocation(n));
            if (it != literals.end())
                values += (values.empty() ? "" : "\n") + n.target.text + " = " + it->second;
        }
        if (!values.empty())
            joint.attributes.emplace_back("tensor_constant_values", values);
    }
    if (!config.equalityGuards.empty() && !has("symbol_equalities")) {
        std::string guards;
        for (const auto& guard : config.equalityGuards)
            guards += (guards.empty() ? "" : "\n") + guard.second;
        joint.attributes.emplace_back("symbol_equalities", guards);
    }
}

// Whether any node of `g` or of the HOP bodies it holds (a checkpoint inside a nested_compile_region) carries
// a checkpoint tag.
static bool holdsCheckpointTags(const Graph& g) {
    return std::any_of(g.nodes().begin(), g.nodes().end(),
                       [](const Node& n) { return !n.meta.recompute.empty(); }) ||
           std::any_of(g.subgraphs().begin(), g.subgraphs().end(),
                       [](const std::unique_ptr<Graph>& body) { return body && holdsCheckpointTags(*body); });
}

static void noteMissingCheckpointTags(const Graph& joint, const CompileConfig* config,
                                      CompileSettings& settings) {
    if (!config || !config->dynamoCheckpoints || holdsCheckpointTags(joint))
        return;
    settings.unsupported.push_back(
        "the dynamo graph checkpoints a region (tag_activation_checkpoint) but the joint graph's text "
        "carries no checkpoint tags (torch 2.9 and older print none): partitioned as if nothing were "
        "checkpointed; "
        "jointscope_torch.export_joint records them");
}

CompileSettings settingsFromLog(const CompileConfig* config, const Graph& joint, Ruleset& rules,
                                const SettingsOverrides& overrides) {
    CompileSettings s;
    noteMissingCheckpointTags(joint, config, s);
    if (!config) {
        s.notes.push_back("the log records no configuration for this compile: torch's defaults assumed, "
                          "joint-graph passes not replayed");
    } else {
        const FunctorchConfig& f = config->functorch;
        if (!config->functorchFrom.empty())
            s.notes.push_back(
                "torch._functorch.config: the AOTAutograd cache served this compile, which logs "
                "none; " +
                config->functorchFrom);
        if (config->fromMetrics && f == FunctorchConfig{} && config->functorchFrom.empty())
            s.notes.push_back(
                "the log records no torch._functorch.config (torch 2.9 and older log none): its "
                "defaults assumed, activation_memory_budget 1 unless --memory-budget says");
        applySwitch(f.cse, rules.cse, "cse", s);
        applySwitch(f.recomputeViews, rules.recomputeViews, "recompute_views", s);
        applySwitch(f.treatParametersAsFreeToSave, rules.treatParametersAsFreeToSave,
                    "treat_parameters_as_free_to_save", s);
        applySwitch(f.banUsedFarApart, rules.banIfUsedFarApart, "ban_recompute_used_far_apart", s);
        applySwitch(f.banLongFusibleChains, rules.banIfLongFusibleChains, "ban_recompute_long_fusible_chains",
                    s);
        applySwitch(f.banMaterializedBackward, rules.banIfMaterializedBackward,
                    "ban_recompute_materialized_backward", s);
        applySwitch(f.banNotInAllowlist, rules.banIfNotInAllowlist, "ban_recompute_not_in_allowlist", s);
        applySwitch(f.banReductions, rules.banIfReduction, "ban_recompute_reductions", s);
        if (f.maxDistFromBw && rules.maxDistFromBw >= 0 && *f.maxDistFromBw != rules.maxDistFromBw) {
            s.notes.push_back("max_dist_from_bw = " + std::to_string(*f.maxDistFromBw) + " (log)");
            rules.maxDistFromBw = *f.maxDistFromBw;
        }
        // choose_saved_values_set: aggressive_recomputation drops four bans from the first cut on.
        if (f.aggressiveRecomputation.value_or(false)) {
            s.notes.push_back("aggressive_recomputation = True (log)");
            rules.banIfUsedFarApart = rules.banIfLongFusibleChains = rules.banIfMaterializedBackward =
                rules.banIfNotInAllowlist = false;
        }
        if (f.activationMemoryBudget && *f.activationMemoryBudget != 1.0) {
            s.options.memoryBudget = *f.activationMemoryBudget;
            s.notes.push_back("activation_memory_budget = " + number(*f.activationMemoryBudget) + " (log)");
        }
        if (f.budgetSolver) {
            if (auto solver = parseKnapsackSolver(*f.budgetSolver)) {
                s.options.solver = *solver;
                if (*solver != KnapsackSolver::Dp)
                    s.notes.push_back("activation_memory_budget_solver = " + *f.budgetSolver + " (log)");
            } else {
                s.unsupported.push_back("activation_memory_budget_solver '" + *f.budgetSolver +
                                        "' is a user function: the dp solver is used instead");
            }
        }
        if (f.budgetEstimator && *f.budgetEstimator != "flops" && s.options.memoryBudget)
            s.unsupported.push_back("activation_memory_budget_runtime_estimator '" + *f.budgetEstimator +
                                    "': jointscope estimates runtimes by FLOPs as torch's 'flops' does");

        const InductorJointConfig& i = config->inductor;
        // Without compilation_metrics (a compile cut off), inductor's own records say the passes ran.
        // Served by the AOTAutograd cache, the partition is that of the compile that filled it: under
        // inductor (its records say so), after its joint-graph passes.
        const bool cachedInductor = config->aotCacheHit && config->inductorRecords;
        const bool ran =
            config->fromMetrics ? config->jointGraphPassesRan || cachedInductor : config->inductorRecords;
        s.replayJointPasses = ran && i.useJointGraphPasses.value_or(true);
        if (ran && !config->fromMetrics)
            s.notes.push_back(
                "no compilation_metrics for this compile: inductor's records in the log say its "
                "joint-graph passes ran");
        if (cachedInductor && !config->jointGraphPassesRan)
            s.notes.push_back(
                "the AOTAutograd cache served this compile: its graphs are those of the inductor "
                "compile that filled the cache, whose joint-graph passes ran");
        s.passes.patternMatcher = i.patternMatcher.value_or(true);
        s.passes.constantFolding = i.jointGraphConstantFolding.value_or(true);
        s.passes.fallbackRandom = i.fallbackRandom.value_or(false);
        for (const PaddedMatmul& m : config->paddedMatmuls)
            (m.body.empty() ? s.passes.paddedMatmuls : s.bodyPaddedMatmuls).push_back(m);
        s.passes.fusedAttentionOps = config->fusedAttentionOps;
        if (s.replayJointPasses && !config->paddedMatmuls.empty())
            s.notes.push_back(
                "pad_mm padded " + std::to_string(config->paddedMatmuls.size()) +
                " matmul(s) on the GPU: whether padding pays is timed there, so torch's choice and "
                "its nodes are read off its forward and backward graphs");
        if (s.replayJointPasses) {
            s.notes.push_back("inductor's joint-graph passes ran before the partitioner (log): replayed");
            if (i.customPrePass)
                s.unsupported.push_back(
                    "joint_custom_pre_pass: a user pass ran on the joint graph; it cannot "
                    "be replayed");
            if (i.customPostPass)
                s.unsupported.push_back(
                    "joint_custom_post_pass: a user pass ran on the joint graph; it cannot "
                    "be replayed");
        }
        if (i.customPartitioner)
            s.unsupported.push_back("custom_partitioner_fn = " + *i.customPartitioner +
                                    ": torch did not run min_cut_rematerialization_partition");
    }
    if (overrides.memoryBudget) {
        if (s.options.memoryBudget.value_or(1.0) != *overrides.memoryBudget)
            s.notes.push_back("--memory-budget " + number(*overrides.memoryBudget) + " overrides the log's " +
                              number(s.options.memoryBudget.value_or(1.0)));
        s.options.memoryBudget = *overrides.memoryBudget;
    }
    if (overrides.solver) {
        if (*overrides.solver != s.options.solver)
            s.notes.push_back("--solver " + std::string(knapsackSolverName(*overrides.solver)) +
                              " overrides the log's " + std::string(knapsackSolverName(s.options.solver)));
        s.options.solver = *overrides.solver;
    }
    if (overrides.replayJointPasses && *overrides.replayJointPasses != s.replayJointPasses) {
        s.notes.push_back(std::string("--joint-passes ") + (*overrides.replayJointPasses ? "on" : "off") +
                          " overrides the log");
        s.replayJointPasses = *overrides.replayJointPasses;
    }
    return s;
}

bool isLoggedJointGraph(FileFormat format, const GraphEntry& entry) {
    return format == FileFormat::TraceLog && entry.kind == "aot_joint_graph";
}

std::optional<CompileConfig> loggedConfigFor(const GraphFile& file, size_t index) {
    if (index >= file.graphs().size())
        return std::nullopt;
    const GraphEntry& entry = file.graphs()[index];
    if (!isLoggedJointGraph(file.format(), entry))
        return std::nullopt;
    std::optional<CompileConfig> config = file.compileConfigFor(entry);
    if (config) {
        config = configAtLine(std::move(*config), entry.line);
        addCompileFactsFromLog(*config, file, index);
    }
    return config;
}

Expected<HopPartitionReport> partitionHopBodies(Graph& joint, const Ruleset& rules,
                                                const CompileSettings& settings) {
    return partitionInvokeSubgraphBodies(
        joint, [&](Graph body, const std::string& forwardBody) -> Expected<Partition> {
            if (settings.replayJointPasses) {
                JointPassOptions passes = settings.passes;
                passes.paddedMatmuls.clear();
                for (const PaddedMatmul& m : settings.bodyPaddedMatmuls)
                    if (m.body == forwardBody)
                        passes.paddedMatmuls.push_back(m);
                replayJointGraphPasses(body, rules, passes);
            }
            PartitionOptions options = settings.options;
            options.graphs = BuildGraphs::AsTorch;
            return partitionJoint(std::move(body), rules, options);
        });
}

void addHopChange(JointPassReport& passes, const HopPartitionReport& hops) {
    if (!hops.change.replaced.empty())
        passes.changes.insert(passes.changes.begin(), hops.change);
}

LoggedRun prepareLoggedRun(Graph& joint, const CompileConfig* config, Ruleset& rules,
                           const SettingsOverrides& overrides) {
    LoggedRun run;
    run.settings = settingsFromLog(config, joint, rules, overrides);
    // AOTAutograd's tensorify_python_scalars runs between the logged joint graph and the partitioner.
    const JointPassReport tensorified =
        rules.tensorifyPythonScalars ? replayTensorifyPythonScalars(joint, rules) : JointPassReport{};
    if (Expected<HopPartitionReport> hops = partitionHopBodies(joint, rules, run.settings))
        run.hops = hops.take();
    else
        run.settings.unsupported.push_back(
            hops.error().message + "; the outer graph is partitioned with its invoke_subgraph calls as "
                                   "logged");
    if (run.settings.replayJointPasses)
        run.passes = replayJointGraphPasses(joint, rules, run.settings.passes);
    prependPasses(run.passes, tensorified);
    addHopChange(run.passes, run.hops);
    return run;
}

} // namespace jointscope::partition
