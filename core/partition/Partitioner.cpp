#include "partition/Partitioner.h"

#include "partition/DefaultPartition.h"
#include "partition/Extract.h"
#include "partition/JointGraph.h"
#include "partition/RngFunctionalization.h"
#include "support/EnumNames.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace jointscope::partition {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

Expected<std::vector<Policy>> initialTags(const Graph& graph, const Ruleset& rules,
                                          const PartitionOptions& options,
                                          const std::vector<std::pair<std::string, std::string>>& merged,
                                          std::vector<std::string>& warnings) {
    std::vector<Policy> tags(graph.size(), Policy::None);
    if (rules.honorRecomputeTags)
        for (NodeId id = 0; id < graph.size(); ++id) {
            const std::string& text = graph.node(id).meta.recompute;
            if (text.empty())
                continue;
            if (const std::optional<Policy> p = parsePolicy(text))
                tags[id] = *p;
            else
                warnings.push_back("node '" + graph.node(id).name + "': unknown recompute tag '" + text +
                                   "' ignored");
        }
    if (!options.overrides.empty() && !rules.honorRecomputeTags)
        warnings.push_back(
            "ruleset " + rules.name +
            " has no CheckpointPolicy tags; the policy file is applied with torch 2's tag semantics");
    std::unordered_map<std::string_view, std::string_view> keptFor; // CSE: removed -> kept
    if (!options.overrides.empty())
        for (const auto& [removed, kept] : merged)
            keptFor.emplace(removed, kept);
    std::vector<std::string_view> unknown;
    for (const auto& [name, policy] : options.overrides) {
        std::optional<NodeId> id = graph.find(name);
        if (!id)
            if (auto it = keptFor.find(name); it != keptFor.end()) {
                id = graph.find(it->second);
                warnings.push_back("policy for '" + name + "' applies to '" + std::string(it->second) +
                                   "' (CSE merged them)");
            }
        if (!id) {
            unknown.push_back(name);
            continue;
        }
        tags[*id] = policy;
    }
    if (!unknown.empty()) {
        // A few names say which; thousands would bury the message.
        constexpr size_t kNamed = 8;
        std::string list;
        for (size_t i = 0; i < std::min(unknown.size(), kNamed); ++i)
            list += (list.empty() ? "'" : ", '") + std::string(unknown[i]) + "'";
        if (unknown.size() > kNamed)
            list += " and " + std::to_string(unknown.size() - kNamed) + " more";
        return makeError({}, "the policy names " + std::to_string(unknown.size()) +
                                 " node(s) not in graph '" + graph.name + "': " + list);
    }
    return tags;
}

// choose_saved_values_set, with every stage computed once and kept (the Pareto sweep re-asks many budgets).
class SavedValuesChooser {
public:
    SavedValuesChooser(const Graph& graph, const NodeInfo& info, const Ruleset& rules,
                       const PartitionOptions& options)
        : graph_(graph), info_(info), rules_(rules), options_(options) {}

    struct Choice {
        std::vector<NodeId> saved; // before the sym split, in graph order
        Escalation escalation = Escalation::RuntimeOptimized;
        const MinCutResult* cut = nullptr;
        double expectedRuntime = 0;
        bool otherOptimum = false; // the knapsack's choice is one of several equally good (KnapsackResult)
        // ilp: what the other equally good knapsack choices save (up to kOtherOptima of them)
        std::vector<std::vector<NodeId>> otherOptima;
    };
    static constexpr size_t kOtherOptima = 16;
    Expected<Choice> choose(double budget);
    double memoryRatio(const std::vector<NodeId>& saved) const {
        return (activationGB(saved) - minAct_) / (maxAct_ - minAct_);
    }
    double runtimeOf(NodeId id) const { return estimator().estimate(graph_, id); }

private:
    double activationGB(const std::vector<NodeId>& nodes) const {
        uint64_t bytes = 0;
        for (NodeId id : nodes)
            bytes += info_.bytes[id];
        return double(bytes) / 1e9;
    }
    const cost::RuntimeEstimator& estimator() const {
        return options_.estimator ? *options_.estimator : flops_;
    }
    Expected<const MinCutResult*> stage(int index, const MinCutOptions& opts);
    Expected<bool> prepareKnapsack(const MinCutOptions& aggressive);
    Expected<const MinCutResult*> cutRecomputing(const std::vector<int>& recomputed,
                                                 const MinCutOptions& aggressive);

    const Graph& graph_;
    const NodeInfo& info_;
    const Ruleset& rules_;
    const PartitionOptions& options_;
    cost::FlopEstimator flops_;
    std::optional<MinCutResult> stages_[3];
    double minAct_ = 0, maxAct_ = 0;
    bool knapsackReady_ = false;
    std::vector<NodeId> candidates_, mustSave_;
    std::vector<double> memories_, runtimes_;
    std::map<std::vector<int>, MinCutResult> byRecomputed_;
};

Expected<const MinCutResult*> SavedValuesChooser::stage(int index, const MinCutOptions& opts) {
    if (!stages_[index]) {
        Expected<MinCutResult> cut = solveMinCut(graph_, info_, rules_, opts);
        if (!cut)
            return cut.error();
        stages_[index] = cut.take();
    }
    return &*stages_[index];
}

Expected<bool> SavedValuesChooser::prepareKnapsack(const MinCutOptions& aggressive) {
    if (knapsackReady_)
        return true;
    Expected<const MinCutResult*> cut = stage(2, aggressive);
    if (!cut)
        return cut.error();
    // get_node_storage: the storage a single-tensor node's value uses; none for a tuple, a symbolic value or
    // None. torch's input_storages set holds that "none" too when an input is symbolic (a dynamic batch), and
    // then every storage-less banned node, a multi-output SDPA say, counts as an input's and stays saved.
    auto storageOf = [&](NodeId id) -> std::optional<NodeId> {
        if (graph_.node(id).outputKind != OutputKind::Tensor)
            return std::nullopt;
        return storageRoot(graph_, id, rules_);
    };
    std::unordered_set<NodeId> inputStorages;
    bool someInputHasNoStorage = false;
    for (NodeId id : info_.inputs) {
        if (std::optional<NodeId> storage = storageOf(id))
            inputStorages.insert(*storage);
        else
            someInputHasNoStorage = true;
    }
    auto sharesInputStorage = [&](NodeId id) {
        const std::optional<NodeId> storage = storageOf(id);
        return storage ? inputStorages.count(*storage) != 0 : someInputHasNoStorage;
    };
    std::vector<NodeId> recomputable;
    for (NodeId id : (*cut)->banned) {
        // Only nodes the backward actually needs, and not views of an input.
        if (info_.distFromBw[id] >= 1000000000 || sharesInputStorage(id))
            continue;
        (info_.policy[id] == Policy::MustSave ? mustSave_ : recomputable).push_back(id);
    }
    // sorted(recomputable_banned_nodes, key=_size_of, reverse=True): stable, so ties keep the order in which
    // solve_min_cut banned them.
    std::stable_sort(recomputable.begin(), recomputable.end(),
                     [&](NodeId a, NodeId b) { return info_.bytes[a] > info_.bytes[b]; });
    candidates_ = std::move(recomputable);
    for (NodeId id : candidates_) {
        memories_.push_back((double(info_.bytes[id]) / 1e9) / (maxAct_ - minAct_));
        runtimes_.push_back(runtimeOf(id));
    }
    knapsackReady_ = true;
    return true;
}

Expected<SavedValuesChooser::Choice> SavedValuesChooser::choose(double budget) {
    if (budget < 0 || budget > 1)
        return makeError({}, "the memory budget must lie in [0, 1]; got " + std::to_string(budget));
    const MinCutOptions base = MinCutOptions::fromRuleset(rules_);
    Choice choice;
    const bool inputsSaveable = std::none_of(info_.inputs.begin(), info_.inputs.end(),
                                             [&](NodeId id) { return info_.epilogueMutated[id]; });
    if (budget == 0 && inputsSaveable) {
        choice.saved = info_.inputs;
        choice.escalation = Escalation::InputsOnly;
        return choice;
    }
    Expected<const MinCutResult*> runtimeOptimized = stage(0, base);
    if (!runtimeOptimized)
        return runtimeOptimized.error();
    choice.saved = (*runtimeOptimized)->saved;
    choice.cut = *runtimeOptimized;
    if (budget == 1)
        return choice;
    minAct_ = activationGB(info_.inputs);
    maxAct_ = activationGB((*runtimeOptimized)->saved);
    if (maxAct_ <= minAct_)
        return choice;

    MinCutOptions moreAggressive = base;
    moreAggressive.banIfUsedFarApart = false;
    moreAggressive.banIfLongFusibleChains = false;
    moreAggressive.banIfMaterializedBackward = false;
    Expected<const MinCutResult*> more = stage(1, moreAggressive);
    if (!more)
        return more.error();
    if (memoryRatio((*more)->saved) < budget)
        return Choice{(*more)->saved, Escalation::MoreAggressive, *more, 0, false, {}};

    MinCutOptions aggressive = moreAggressive;
    aggressive.banIfNotInAllowlist = false;
    Expected<const MinCutResult*> aggr = stage(2, aggressive);
    if (!aggr)
        return aggr.error();
    if (memoryRatio((*aggr)->saved) < budget)
        return Choice{(*aggr)->saved, Escalation::Aggressive, *aggr, 0, false, {}};

    if (Expected<bool> ready = prepareKnapsack(aggressive); !ready)
        return ready.error();
    if (candidates_.empty()) {
        // Nothing for the knapsack to trade: the cut it would make with nothing unbanned; torch 2.13 saved
        // the inputs and the MUST_SAVE nodes instead.
        if (!rules_.emptyKnapsackSavesInputs)
            return Choice{(*aggr)->saved, Escalation::Aggressive, *aggr, 0, false, {}};
        std::vector<NodeId> saved = info_.inputs;
        saved.insert(saved.end(), mustSave_.begin(), mustSave_.end());
        return Choice{std::move(saved), Escalation::InputsOnly, nullptr, 0, false, {}};
    }
    Expected<KnapsackResult> knap =
        solveKnapsack(options_.solver, memories_, runtimes_, std::max(budget, 0.0));
    if (!knap)
        return knap.error();
    Expected<const MinCutResult*> cut = cutRecomputing(knap->recomputed, aggressive);
    if (!cut)
        return cut.error();
    Choice knapsackChoice{(*cut)->saved,         Escalation::Knapsack, *cut,
                          knap->expectedRuntime, knap->otherOptimum,   {}};
    if (knap->otherOptimum && options_.knapsackOtherOptima)
        for (const std::vector<int>& other :
             ilpOtherOptima(memories_, runtimes_, std::max(budget, 0.0), *knap, kOtherOptima)) {
            Expected<const MinCutResult*> otherCut = cutRecomputing(other, aggressive);
            if (!otherCut)
                return otherCut.error();
            knapsackChoice.otherOptima.push_back((*otherCut)->saved);
        }
    return knapsackChoice;
}

// The min-cut with the knapsack's recomputed candidates allowed to be recomputed (kept per set: the Pareto
// sweep asks for the same sets again).
Expected<const MinCutResult*> SavedValuesChooser::cutRecomputing(const std::vector<int>& knapsackRecomputed,
                                                                 const MinCutOptions& aggressive) {
    std::vector<int> recomputed;
    for (int idx : knapsackRecomputed)
        if (idx >= 0 && size_t(idx) < candidates_.size())
            recomputed.push_back(idx);
    std::sort(recomputed.begin(), recomputed.end());
    auto found = byRecomputed_.find(recomputed);
    if (found == byRecomputed_.end()) {
        std::vector<bool> dontBan(graph_.size(), false);
        for (int idx : recomputed)
            dontBan[candidates_[size_t(idx)]] = true;
        Expected<MinCutResult> cut = solveMinCut(graph_, info_, rules_, aggressive, dontBan);
        if (!cut)
            return cut.error();
        found = byRecomputed_.emplace(recomputed, cut.take()).first;
    }
    return &found->second;
}

// is_rng_op: a nondeterministic_seeded op; one with a dropout_p argument only when it is not statically 0.
bool isRngOp(const Node& node, const Ruleset& rules) {
    if (node.op != NodeOp::CallFunction)
        return false;
    const std::string key = opKey(node.target);
    if (!rules.rng.contains(key))
        return false;
    const auto dropout = rules.rngDropoutArg.find(key);
    if (dropout == rules.rngDropoutArg.end())
        return true;
    const auto [index, fallback] = dropout->second;
    const Value* p = size_t(index) < node.args.size() ? &node.args[size_t(index)] : nullptr;
    for (const auto& [name, value] : node.kwargs)
        if (name == "dropout_p")
            p = &value;
    if (!p)
        return fallback != 0.0;
    if (p->kind() == ValueKind::Float)
        return p->asFloat() != 0.0;
    if (p->kind() == ValueKind::Int)
        return p->asInt() != 0;
    return true; // symbolic: not statically zero
}

// functionalize_rng_ops' get_device: the first tensor output on a graphsafe device type, else none (the CPU).
std::optional<Device> graphsafeDevice(const Node& node, const Ruleset& rules) {
    for (const TensorMeta& t : node.outputs)
        if (std::find(rules.graphsafeRngDevices.begin(), rules.graphsafeRngDevices.end(), t.device.type) !=
            rules.graphsafeRngDevices.end())
            return t.device;
    return std::nullopt;
}

// functionalize_rng_ops: which recomputed random ops the forward returns an RNG state for. On one graphsafe
// device (CUDA) both graphs take the generator state as inputs instead; ops spanning several fall back to
// saved states, as do CPU ops.
std::vector<NodeId> rngStatesSaved(const Graph& g, const std::vector<NodeId>& recomputedRng,
                                   const Ruleset& rules) {
    std::vector<Device> devices;
    std::vector<NodeId> saved;
    for (NodeId id : recomputedRng) {
        const std::optional<Device> d = graphsafeDevice(g.node(id), rules);
        if (!d)
            saved.push_back(id);
        else if (std::find(devices.begin(), devices.end(), *d) == devices.end())
            devices.push_back(*d);
    }
    return devices.size() > 1 ? recomputedRng : saved;
}

// Fills saved / savedSym / recomputed (and the graphs, when asked) from a saved list, as
// _extract_fwd_bwd_modules; then the random ops functionalize_rng_ops gives an RNG state (recomputed, must
// recompute, present in both graphs), in graph order.
// `byDefaultPartition`: default_partition rebuilds the backward as the autograd engine runs it only for a graph
// with recompute tags; min-cut always does.
Expected<bool> finishPartition(Partition& p, std::vector<NodeId> saved, BuildGraphs graphs,
                               const Ruleset* rules = nullptr, bool byDefaultPartition = false) {
    const bool mimicAutograd =
        rules && rules->backwardMimicsAutograd &&
        (!byDefaultPartition || std::any_of(p.info.policy.begin(), p.info.policy.end(), mustRecompute));
    std::vector<NodeId> savedSym;
    std::vector<NodeId> savedTensors;
    for (NodeId id : saved)
        (isSymNode(p.graph.node(id)) ? savedSym : savedTensors).push_back(id);
    Expected<FwdBwdGraphs> parts = extractForwardBackward(
        p.graph, std::move(savedTensors), std::move(savedSym), *p.graph.numFwdOutputs,
        ExtractOptions{graphs != BuildGraphs::No, !rules || rules->bindsSpecializedSymbols,
                       rules && rules->mutationsStayInForward, mimicAutograd});
    if (!parts)
        return parts.error();
    p.saved = parts->saved;
    p.savedSym = parts->savedSym;
    p.forward = std::move(parts->forward);
    p.backward = std::move(parts->backward);
    p.recomputed.clear();
    p.rngStates.clear();
    p.rngReplayed.clear();
    std::vector<NodeId> recomputedRng;
    for (NodeId id = 0; id < p.graph.size(); ++id) {
        if (!parts->inForward[id] || !parts->inBackward[id] || p.graph.node(id).op != NodeOp::CallFunction)
            continue;
        p.recomputed.push_back(id);
        if (rules && rules->honorRecomputeTags && mustRecompute(p.info.policy[id]) &&
            isRngOp(p.graph.node(id), *rules))
            recomputedRng.push_back(id);
    }
    if (rules)
        p.rngStates = rngStatesSaved(p.graph, recomputedRng, *rules);
    p.rngReplayed = std::move(recomputedRng);
    if (graphs == BuildGraphs::AsTorch && rules && !p.rngReplayed.empty()) {
        std::vector<RngOpToWrap> ops;
        for (NodeId id : p.rngReplayed) {
            const Node& node = p.graph.node(id);
            const bool stateSaved =
                std::find(p.rngStates.begin(), p.rngStates.end(), id) != p.rngStates.end();
            ops.push_back({node.name, stateSaved, graphsafeDevice(node, *rules).value_or(Device{"cpu", -1})});
        }
        functionalizeRngOps(p.forward, p.backward, ops, extractedNames(p.graph, parts->forwardPlan),
                            extractedNames(p.graph, parts->backwardPlan), p.savedSym.size());
    }
    p.savedBytes = 0;
    p.activationBytes = 0;
    for (NodeId id : p.saved) {
        p.savedBytes += p.info.bytes[id];
        if (p.graph.node(id).op != NodeOp::Placeholder)
            p.activationBytes += p.info.bytes[id];
    }
    return true;
}

// default_partition's saved values (already filtered, in its order), then the graphs.
Expected<bool> finishWithDefaultPartition(Partition& p, const Ruleset& rules, BuildGraphs graphs) {
    Expected<SavedSet> set = Diagnostic{};
    if (rules.defaultPartitionByPlacement) {
        std::vector<uint8_t> mustSave(p.graph.size(), 0), recompute(p.graph.size(), 0);
        for (NodeId id = 0; id < p.graph.size(); ++id) {
            mustSave[id] = p.info.policy[id] == Policy::MustSave;
            recompute[id] = mustRecompute(p.info.policy[id]);
        }
        set = defaultPartitionByPlacement(p.graph, mustSave, recompute);
    } else {
        set = defaultPartition(p.graph);
    }
    if (!set)
        return set.error();
    std::vector<NodeId> saved = set->saved;
    saved.insert(saved.end(), set->savedSym.begin(), set->savedSym.end());
    if (Expected<bool> done = finishPartition(p, saved, graphs, &rules, /*byDefaultPartition=*/true); !done)
        return done.error();
    p.escalation = Escalation::Default;
    return true;
}

// torch reads activation_memory_budget from the first node whose meta carries a float "memory_budget" (set by
// torch._functorch.config.patch inside a compiled region).
std::optional<double> graphMemoryBudget(const Graph& graph) {
    for (const Node& node : graph.nodes())
        for (const auto& [key, json] : node.meta.extra)
            if (key == "memory_budget") {
                char* end = nullptr;
                const double value = std::strtod(json.c_str(), &end);
                if (end != json.c_str() && *end == '\0' && json.find('.') != std::string::npos)
                    return value;
            }
    return std::nullopt;
}

bool hasMustRecompute(const std::vector<Policy>& tags) {
    return std::any_of(tags.begin(), tags.end(), [](Policy p) { return mustRecompute(p); });
}

} // namespace

namespace {
constexpr EnumName<Strategy> kStrategyNames[] = {
    {Strategy::MinCut, "min-cut"}, {Strategy::MinCut, "mincut"}, {Strategy::Default, "default"}};
constexpr EnumName<Escalation> kEscalationNames[] = {
    {Escalation::RuntimeOptimized, "runtime-optimized min-cut"},
    {Escalation::MoreAggressive, "more aggressive min-cut"},
    {Escalation::Aggressive, "aggressive min-cut"},
    {Escalation::Knapsack, "knapsack over banned nodes"},
    {Escalation::InputsOnly, "inputs only"},
    {Escalation::Default, "default partition"},
    {Escalation::Edited, "edited"},
};
} // namespace

std::optional<Strategy> parseStrategy(std::string_view text) {
    return valueNamed(kStrategyNames, text);
}

std::string_view escalationName(Escalation e) {
    return nameOf(kEscalationNames, e, "");
}

Expected<Partition> partitionJoint(Graph joint, const Ruleset& rules, const PartitionOptions& options) {
    const Clock::time_point start = Clock::now();
    applySymbolHints(joint);
    Partition p;
    if (!joint.numFwdOutputs)
        return makeError(
            {}, "graph '" + joint.name +
                    "': the number of forward outputs is unknown (torch 1.13 joint graphs need their "
                    ".meta.json sidecar; torch 2 graphs carry output descriptors)");
    const double budget =
        options.memoryBudget ? *options.memoryBudget : graphMemoryBudget(joint).value_or(1.0);
    if (budget < 0 || budget > 1)
        return makeError({}, "the memory budget must lie in [0, 1]; got " + std::to_string(budget));
    if (budget < 1 && !rules.memoryBudget)
        p.warnings.push_back("ruleset " + rules.name +
                             " has no activation memory budget; applying torch 2's");
    p.memoryBudget = budget;

    bool useMinCut = options.strategy == Strategy::MinCut;
    std::vector<Policy> defaultTags; // the tags torch >= 2.8's default_partition honours itself
    if (!useMinCut) {
        Expected<std::vector<Policy>> tags = initialTags(joint, rules, options, {}, p.warnings);
        if (!tags)
            return tags.error();
        if (rules.defaultPartitionByPlacement) {
            defaultTags = tags.take();
        } else if (rules.honorRecomputeTags && hasMustRecompute(*tags)) {
            // Older default_partition hands graphs with recompute tags to the min-cut partitioner.
            useMinCut = true;
            p.warnings.push_back(
                "the graph has recompute tags: default_partition defers to the min-cut partitioner");
        }
    }
    if (!useMinCut) {
        p.graph = std::move(joint);
        Expected<NodeInfo> info =
            classifyNodes(p.graph, rules, std::move(defaultTags), ClassifyFor::DefaultPartition);
        if (!info)
            return info.error();
        p.info = info.take();
        if (Expected<bool> done = finishWithDefaultPartition(p, rules, options.graphs); !done)
            return done.error();
        p.seconds = secondsSince(start);
        return p;
    }

    PreparedJoint prepared = prepareJoint(std::move(joint), rules);
    p.graph = std::move(prepared.graph);
    p.deadNodes = std::move(prepared.deadNodes);
    p.merged = std::move(prepared.merged);
    Expected<std::vector<Policy>> tags = initialTags(p.graph, rules, options, p.merged, p.warnings);
    if (!tags)
        return tags.error();
    Expected<NodeInfo> info = classifyNodes(p.graph, rules, tags.take());
    if (!info)
        return info.error();
    p.info = info.take();

    if (std::none_of(p.info.requiredBw.begin(), p.info.requiredBw.end(), [](bool b) { return b; })) {
        // "networkx blows up on graphs with no required backward nodes": torch hands them to
        // default_partition.
        p.warnings.push_back("no backward nodes: partitioned with default_partition, as torch does");
        if (Expected<bool> done = finishWithDefaultPartition(p, rules, options.graphs); !done)
            return done.error();
        p.seconds = secondsSince(start);
        return p;
    }

    SavedValuesChooser chooser(p.graph, p.info, rules, options);
    Expected<SavedValuesChooser::Choice> choice = chooser.choose(budget);
    if (!choice)
        return choice.error();
    if (choice->cut)
        p.cut = *choice->cut;
    p.escalation = choice->escalation;
    p.knapsackOtherOptima = choice->otherOptima;
    if (choice->otherOptimum)
        p.warnings.push_back(
            "the ilp knapsack's optimum is not unique: another choice of banned nodes to recompute saves as "
            "much runtime within the budget; torch's scipy milp (HiGHS) may take that one, and its saved "
            "list "
            "then differs from this one");
    if (Expected<bool> done = finishPartition(p, choice->saved, options.graphs, &rules); !done)
        return done.error();
    p.seconds = secondsSince(start);
    return p;
}

Expected<Partition> evaluateSaved(Graph joint, const Ruleset& rules, const std::vector<std::string>& saved,
                                  BuildGraphs graphs) {
    const Clock::time_point start = Clock::now();
    if (!joint.numFwdOutputs)
        return makeError({}, "graph '" + joint.name + "': the number of forward outputs is unknown");
    applySymbolHints(joint);
    Partition p;
    PreparedJoint prepared = prepareJoint(std::move(joint), rules);
    p.graph = std::move(prepared.graph);
    p.deadNodes = std::move(prepared.deadNodes);
    p.merged = std::move(prepared.merged);
    // The graph's own recompute tags, as torch sees them: they say which recomputed random ops get their RNG
    // state saved (rngStates), even though nothing is decided here.
    Expected<std::vector<Policy>> tags =
        initialTags(p.graph, rules, PartitionOptions{}, p.merged, p.warnings);
    if (!tags)
        return tags.error();
    Expected<NodeInfo> info = classifyNodes(p.graph, rules, tags.take());
    if (!info)
        return info.error();
    p.info = info.take();
    std::vector<NodeId> ids;
    std::string unknown;
    // Names from a graph without CSE (torch's default partition does none) may have been merged into an
    // equal node: that node holds the same value. A dead node is never needed by the backward.
    auto mergedInto = [&](const std::string& name) -> const std::string* {
        for (const auto& [from, into] : p.merged)
            if (from == name)
                return &into;
        return nullptr;
    };
    for (const std::string& name : saved) {
        const std::string* kept = mergedInto(name);
        if (std::optional<NodeId> id = p.graph.find(kept ? *kept : name))
            ids.push_back(*id);
        else if (std::find(p.deadNodes.begin(), p.deadNodes.end(), name) == p.deadNodes.end())
            unknown += (unknown.empty() ? "'" : ", '") + name + "'";
    }
    if (!unknown.empty())
        return makeError({}, "the decision saves value(s) not in graph '" + p.graph.name + "': " + unknown);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    if (Expected<bool> done = finishPartition(p, ids, graphs, &rules); !done)
        return done.error();
    p.escalation = Escalation::Edited;
    p.seconds = secondsSince(start);
    return p;
}

NodeExplanation explainNode(const Partition& p, NodeId id) {
    NodeExplanation e;
    const Node& node = p.graph.node(id);
    e.distFromBw = p.info.distFromBw[id];
    e.bytes = p.info.bytes[id];
    e.policy = std::string(policyName(p.info.policy[id]));
    if (!p.info.policyNote[id].empty())
        e.policy += " (" + p.info.policyNote[id] + ")";
    if (p.cut) {
        e.weight = p.cut->weight[id];
        e.banReason = std::string(banReasonText(p.cut->banReason[id]));
    }
    const auto contains = [](const std::vector<NodeId>& v, NodeId x) {
        return std::find(v.begin(), v.end(), x) != v.end();
    };
    const bool banned = !e.banReason.empty();
    if (contains(p.saved, id) || contains(p.savedSym, id)) {
        e.decision = "saved";
        e.rule = banned ? "banned from recomputation (" + e.banReason + "), and the backward needs it"
                        : "on the minimum cut: saving it is cheaper than saving what recomputing it needs";
    } else if (contains(p.recomputed, id)) {
        e.decision = "recomputed";
        e.rule = mustRecompute(p.info.policy[id])
                     ? "policy " + e.policy
                     : "recomputable, and recomputing it from saved values is cheaper";
    } else if (p.info.requiredBw[id]) {
        e.decision = node.meta.partitionerTag == "must_be_in_backward" ? "must-be-in-backward" : "backward";
        e.rule =
            isTangent(node) ? "tangent input" : "reads a tangent (tangent closure) or is a backward output";
    } else if (node.op == NodeOp::Placeholder) {
        e.decision = "input";
        e.rule =
            p.info.epilogueMutated[id]
                ? "cannot be saved: the forward mutates it, and AOTAutograd's runtime epilogue applies the "
                  "mutation after the forward returns (input mutation replayed after forward)"
                : "forward input the backward does not read";
    } else if (p.info.requiredFw[id]) {
        e.decision = banned ? "banned" : "forward";
        e.rule = banned ? "banned from recomputation (" + e.banReason + "); the backward does not need it"
                        : "forward only: the backward does not need it";
    } else {
        e.decision = "unclaimed";
        e.rule = "neither needed by the forward outputs nor reading a tangent";
    }
    return e;
}

Expected<std::vector<ParetoPoint>> paretoCurve(Graph joint, const Ruleset& rules,
                                               const PartitionOptions& options, int points) {
    applySymbolHints(joint);
    PreparedJoint prepared = prepareJoint(std::move(joint), rules);
    std::vector<std::string> warnings;
    Expected<std::vector<Policy>> tags =
        initialTags(prepared.graph, rules, options, prepared.merged, warnings);
    if (!tags)
        return tags.error();
    Expected<NodeInfo> infoOr = classifyNodes(prepared.graph, rules, tags.take());
    if (!infoOr)
        return infoOr.error();
    const NodeInfo& info = *infoOr;
    const Graph& graph = prepared.graph;
    SavedValuesChooser chooser(graph, info, rules, options);
    // The runtime-optimized cut fixes the normalisation of memory ratios.
    Expected<SavedValuesChooser::Choice> full = chooser.choose(1.0);
    if (!full)
        return full.error();
    uint64_t inputBytes = 0, fullBytes = 0;
    for (NodeId id : info.inputs)
        inputBytes += info.bytes[id];
    for (NodeId id : full->saved)
        fullBytes += info.bytes[id];
    std::vector<double> runtime(graph.size(), -1);
    std::vector<ParetoPoint> curve;
    for (int i = 0; i < points; ++i) {
        const double budget = points == 1 ? 1.0 : double(i) / double(points - 1);
        Expected<SavedValuesChooser::Choice> choice = chooser.choose(budget);
        if (!choice)
            return choice.error();
        ParetoPoint point;
        point.budget = budget;
        point.escalation = choice->escalation;
        point.savedCount = choice->saved.size();
        for (NodeId id : choice->saved) {
            point.savedBytes += info.bytes[id];
            if (graph.node(id).op != NodeOp::Placeholder)
                point.activationBytes += info.bytes[id];
        }
        point.memoryRatio = fullBytes > inputBytes ? (double(point.savedBytes) - double(inputBytes)) /
                                                         (double(fullBytes) - double(inputBytes))
                                                   : 1.0;
        // Recomputed: forward call_function nodes on the sink side of the cut (everything, when only inputs
        // are saved).
        for (NodeId id = 0; id < graph.size(); ++id) {
            if (!info.requiredFw[id] || graph.node(id).op != NodeOp::CallFunction ||
                info.distFromBw[id] >= 1000000000)
                continue;
            const bool recomputed = choice->cut ? choice->cut->recomputeSide[id] : true;
            if (!recomputed)
                continue;
            if (runtime[id] < 0)
                runtime[id] = chooser.runtimeOf(id);
            point.recomputeCost += runtime[id];
            ++point.recomputedCount;
        }
        curve.push_back(point);
    }
    return curve;
}

Expected<std::vector<std::pair<std::string, Policy>>> readPolicyFile(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        return makeError({path, 0, 0}, "cannot open policy file");
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object())
        return makeError({path, 1, 1}, "a policy file is a JSON object {\"node\": \"MUST_SAVE\", ...}");
    // By reference, and no dump() of containers: copying or printing a JSON value recurses once per nesting
    // level, and the file may nest 100k deep (nlohmann's parser and destructor do not recurse).
    const nlohmann::json* map = &doc;
    if (doc.contains("policies") && doc.at("policies").is_object())
        map = &doc.at("policies");
    std::vector<std::pair<std::string, Policy>> policies;
    for (const auto& [name, value] : map->items()) {
        const std::optional<Policy> policy =
            value.is_string() ? parsePolicy(value.get<std::string>()) : std::nullopt;
        if (!policy || *policy == Policy::None)
            return makeError({path, 1, 1}, "node '" + name +
                                               "': policy must be MUST_SAVE, PREFER_SAVE, "
                                               "MUST_RECOMPUTE or PREFER_RECOMPUTE; got " +
                                               (value.is_structured() ? "an " + std::string(value.type_name())
                                                                      : value.dump()));
        policies.emplace_back(name, *policy);
    }
    return policies;
}

} // namespace jointscope::partition
