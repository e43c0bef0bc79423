// jointscope-cli partition / pareto: torch's activation-checkpointing partition of a joint graph, natively.
#include "Command.h"
#include "CostOptions.h"

#include "cost/RuntimeEstimator.h"
#include "io/CompileConfig.h"
#include "io/FxWriter.h"
#include "io/JsonFormat.h"
#include "ops/RulesetChoice.h"
#include "partition/CompileSettings.h"
#include "partition/DecisionJson.h"
#include "partition/Partitioner.h"
#include "partition/PinConflicts.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace jointscope::cli {
namespace {

using Json = nlohmann::ordered_json;
using namespace jointscope::partition;

std::vector<OptionSpec> partitionOptions() {
    std::vector<OptionSpec> options = {
        graphOption(),
        metaOption(),
        {"--ruleset", "", "R",
         "auto (default: from the graph's torch version), torch-2.15, torch-2.14, torch-2.13, torch-2.12, "
         "torch-2.11, torch-2.10, torch-2.9, torch-2.8, torch-1.13, or a ruleset JSON file"},
        {"--strategy", "", "S", "min-cut (default) or default"},
        {"--memory-budget", "", "B",
         "activation_memory_budget in [0, 1] (default 1, or the one a TORCH_TRACE log records for the "
         "compile)"},
        {"--solver", "", "K",
         "knapsack solver for budgets below 1: greedy, dp (default) or ilp (default on a log: the log's)"},
        {"--policy", "", "P.json",
         "node name -> MUST_SAVE | PREFER_SAVE | MUST_RECOMPUTE | PREFER_RECOMPUTE"},
        {"--num-fwd-outputs", "", "N",
         "the first N outputs are forward outputs (when the file does not say)"},
        jsonOption()};
    for (const OptionSpec& o : costOptions(/*withModel=*/true))
        options.push_back(o);
    return options;
}

// What partition and pareto run the engine on: the joint graph, its ruleset (the graph's with --ruleset auto,
// unless named), the engine's options, and the knapsack's runtime estimator (--cost-model and its device /
// database; FLOP counts when none).
struct EngineSetup {
    Graph graph;
    Ruleset rules;
    RulesetChoice choice;
    PartitionOptions options;
    CostSetup costs;
    std::optional<CompileSettings> logSettings; // a TORCH_TRACE joint graph: what the log says torch ran
    JointPassReport passes;
};

// A joint graph from a TORCH_TRACE log is partitioned as torch ran it: the compile's functorch / inductor
// config (budget, solver, switches) and inductor's joint-graph passes, flags overriding.
void applyLogSettings(const ParsedArgs& args, const CompileConfig* config, EngineSetup& e) {
    SettingsOverrides overrides;
    overrides.memoryBudget = e.options.memoryBudget;
    if (args.has("--solver"))
        overrides.solver = e.options.solver;
    LoggedRun run = prepareLoggedRun(e.graph, config, e.rules, overrides);
    e.options.memoryBudget = run.settings.options.memoryBudget;
    e.options.solver = run.settings.options.solver;
    e.passes = std::move(run.passes);
    for (const std::string& u : run.settings.unsupported)
        std::fprintf(stderr, "jointscope-cli: warning: not followed: %s\n", u.c_str());
    e.logSettings = std::move(run.settings);
}

// Fills `e` from the command line; returns kExitOk or a usage / input error code.
int setUpEngine(const Command& command, const ParsedArgs& args, EngineSetup& e) {
    GraphOrigin origin;
    if (int code = loadJointGraph(command, args, e.graph, &origin); code != kExitOk)
        return code;
    const bool fromLog = isLoggedJointGraph(origin.format, origin.entry);
    const CompileConfig* config = origin.logged ? &*origin.logged : nullptr;
    if (config)
        addLogGraphFacts(e.graph, *config);
    Expected<Ruleset> loaded = loadRulesetFor(args.valueOr("--ruleset", "auto"), e.graph, &e.choice);
    if (!loaded)
        return inputError(loaded.error());
    e.rules = loaded.take();
    if (std::optional<std::string> s = args.value("--strategy")) {
        const std::optional<Strategy> strategy = parseStrategy(*s);
        if (!strategy)
            return usageError(command, "unknown --strategy '" + *s + "' (min-cut or default)");
        e.options.strategy = *strategy;
    }
    if (int code = readBudgetOptions(command, args, e.options); code != kExitOk)
        return code;
    if (fromLog)
        applyLogSettings(args, config, e);
    if (std::optional<std::string> p = args.value("--policy")) {
        Expected<std::vector<std::pair<std::string, Policy>>> policy = readPolicyFile(*p);
        if (!policy)
            return inputError(policy.error());
        e.options.overrides = policy.take();
    }
    if (int code = readCostOptions(command, args, e.graph, CostModelKind::Flops, e.costs); code != kExitOk)
        return code;
    for (const std::string& w : e.costs.warnings)
        std::fprintf(stderr, "jointscope-cli: warning: %s\n", w.c_str());
    e.options.estimator = e.costs.estimator.get();
    return kExitOk;
}

// The partition asked for: torch's algorithm on the graph, or the saved set of an edited --decision. With
// --repeat N the engine runs N times in this warm process and reports the median time.
int solvePartition(const ParsedArgs& args, EngineSetup& setup, int repeat, std::optional<Partition>& out) {
    std::vector<double> seconds;
    for (int i = 1; i < repeat; ++i) {
        Expected<Partition> run = partitionJoint(Graph(setup.graph), setup.rules, setup.options);
        if (!run)
            break;
        seconds.push_back(run->seconds);
    }
    Expected<Partition> partition = Diagnostic{};
    if (std::optional<std::string> edited = args.value("--decision")) {
        Expected<std::vector<std::string>> names = readSavedNames(*edited);
        if (!names)
            return inputError(names.error());
        partition = evaluateSaved(std::move(setup.graph), setup.rules, *names, setup.options.graphs);
    } else {
        partition = partitionJoint(std::move(setup.graph), setup.rules, setup.options);
    }
    if (!partition)
        return inputError(atInputFile(args, partition.error()));
    out = partition.take();
    seconds.push_back(out->seconds);
    std::sort(seconds.begin(), seconds.end());
    out->seconds = seconds[seconds.size() / 2];
    return kExitOk;
}

// decisionJson, and how this run was set up: why the ruleset, what the log said, the joint passes replayed.
Json runDecisionJson(const Partition& p, const EngineSetup& setup, int repeat) {
    Json decision = decisionJson(p, setup.rules, setup.options);
    decision["ruleset_choice"] = setup.choice.reason;
    if (setup.logSettings) {
        decision["log_settings"] = setup.logSettings->notes;
        Json passes = Json::array();
        for (const PassChange& c : setup.passes.changes)
            passes.push_back({{"pass", c.pass},
                              {"removed", c.removed.size()},
                              {"replaced", c.replaced.size()},
                              {"added", c.added.size()}});
        decision["joint_passes"] = passes;
    }
    if (repeat > 1)
        decision["runs"] = repeat;
    return decision;
}

// --explain NODE: the node, or the one a CSE-merged NODE became.
int findExplained(const Command& command, const std::string& name, const Partition& p, NodeId& out) {
    std::optional<NodeId> found = p.graph.find(name);
    for (const auto& [removed, kept] : p.merged)
        if (!found && removed == name)
            found = p.graph.find(kept);
    if (!found)
        return usageError(command, "--explain: no node '" + name + "' in graph '" + p.graph.name + "'");
    out = *found;
    return kExitOk;
}

// --out DIR: the forward and backward graphs as FX text and JSON, and the decision.
bool writePartitionFiles(const std::string& outDir, const Partition& p, const Json& decision) {
    std::error_code ec;
    std::filesystem::create_directories(outDir, ec);
    const std::filesystem::path dir(outDir);
    Graph forward = p.forward, backward = p.backward;
    forward.name = "forward";
    backward.name = "backward";
    return writeOutputFile(dir / "forward.txt", writeFxText(forward)) &&
           writeOutputFile(dir / "backward.txt", writeFxText(backward)) &&
           writeOutputFile(dir / "forward.json", writeJsonGraph(forward)) &&
           writeOutputFile(dir / "backward.json", writeJsonGraph(backward)) &&
           writeOutputFile(dir / "decision.json", decision.dump(1) + "\n");
}

void printPartitionWarnings(const Partition& p, const PartitionOptions& options) {
    for (const std::string& w : p.warnings)
        std::fprintf(stderr, "jointscope-cli: warning: %s\n", w.c_str());
    for (const PinConflict& c : pinConflicts(p, options.overrides))
        std::fprintf(stderr, "jointscope-cli: warning: %s pin on '%s' overridden: %s (%s)\n",
                     std::string(policyName(c.pinned)).c_str(), c.node.c_str(), c.outcome.c_str(),
                     c.rule.c_str());
}

void printExplanation(const Partition& p, NodeId id) {
    const NodeExplanation e = explainNode(p, id);
    std::printf("%s: %s — %s", p.graph.node(id).name.c_str(), e.decision.c_str(), e.rule.c_str());
    if (e.weight >= kInfiniteCapacity)
        std::printf("; weight inf");
    else if (e.weight >= 0)
        std::printf("; weight %lld", (long long)e.weight);
    std::printf("; dist_from_bw %lld; %llu bytes\n", (long long)e.distFromBw, (unsigned long long)e.bytes);
}

void printPartitionText(const Partition& p, const EngineSetup& setup, const Json& decision) {
    const Ruleset& rules = setup.rules;
    std::printf("ruleset %s: %s\n", rules.name.c_str(), setup.choice.reason.c_str());
    std::printf("graph %s: %zu nodes after DCE/CSE (%zu dead, %zu merged), ruleset %s, %s\n",
                p.graph.name.c_str(), p.graph.size(), p.deadNodes.size(), p.merged.size(), rules.name.c_str(),
                std::string(escalationName(p.escalation)).c_str());
    std::printf(
        "saved %zu tensors (%llu bytes: %llu of activations, %llu of inputs)%s, %zu sym; recomputed %zu; "
        "banned %zu; engine %.3f ms\n",
        p.saved.size(), (unsigned long long)p.savedBytes, (unsigned long long)p.activationBytes,
        (unsigned long long)(p.savedBytes - p.activationBytes),
        p.cut ? (" cut value " + std::to_string(p.cut->cutValue)).c_str() : "", p.savedSym.size(),
        p.recomputed.size(), p.cut ? p.cut->banned.size() : size_t(0), p.seconds * 1e3);
    std::printf("saved:");
    for (NodeId id : p.saved)
        std::printf(" %s", p.graph.node(id).name.c_str());
    std::printf("\n");
    if (decision.contains("memory_timeline")) {
        const Json& t = decision["memory_timeline"];
        if (!t["peak_node"].is_null())
            std::printf("peak activation memory %llu bytes at %s (step %zu of %zu); %llu bytes saved between "
                        "forward and backward\n",
                        (unsigned long long)decision["peak_bytes"].get<uint64_t>(),
                        t["peak_node"].get<std::string>().c_str(), t["peak_step"].get<size_t>(),
                        t["nodes"].size(), (unsigned long long)t["saved_bytes"].get<uint64_t>());
    }
}

// Set up the engine from the command line, solve, then report: --out files, JSON or text.
int runPartition(const ParsedArgs& args) {
    const Command& command = partitionCommand();
    EngineSetup setup;
    if (int code = setUpEngine(command, args, setup); code != kExitOk)
        return code;
    const std::optional<std::string> outDir = args.value("--out");
    setup.options.graphs =
        outDir ? BuildGraphs::AsTorch : BuildGraphs::No; // the graphs are only written, never printed
    int repeat = 1;
    if (int code = readIntOption(command, args, "--repeat", 1, 1000, repeat); code != kExitOk)
        return code;
    std::optional<Partition> solved;
    if (int code = solvePartition(args, setup, repeat, solved); code != kExitOk)
        return code;
    const Partition& p = *solved;
    Json decision = runDecisionJson(p, setup, repeat);
    std::optional<NodeId> explained;
    if (std::optional<std::string> name = args.value("--explain")) {
        NodeId id = kNoNode;
        if (int code = findExplained(command, *name, p, id); code != kExitOk)
            return code;
        explained = id;
        decision["explain"] = explanationJson(p, id);
    }
    if (outDir && !writePartitionFiles(*outDir, p, decision))
        return kExitBadInput;
    printPartitionWarnings(p, setup.options);
    if (args.has("--json")) {
        std::printf("%s\n", decision.dump(1).c_str());
        return kExitOk;
    }
    printPartitionText(p, setup, decision);
    if (explained)
        printExplanation(p, *explained);
    if (outDir)
        std::printf("wrote %s/{forward,backward}.{txt,json} and decision.json\n", outDir->c_str());
    return kExitOk;
}

int runPareto(const ParsedArgs& args) {
    const Command& command = paretoCommand();
    int points = 100;
    if (int code = readIntOption(command, args, "--points", 2, 10000, points); code != kExitOk)
        return code;
    EngineSetup setup;
    if (int code = setUpEngine(command, args, setup); code != kExitOk)
        return code;
    auto& [graph, rules, choice, options, costs, logSettings, logPasses] = setup;
    const std::string graphName = graph.name;
    const auto start = std::chrono::steady_clock::now();
    Expected<std::vector<ParetoPoint>> curve = paretoCurve(std::move(graph), rules, options, points);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!curve)
        return inputError(atInputFile(args, curve.error()));
    if (args.has("--json")) {
        Json j = Json::object();
        j["format"] = "jointscope-pareto";
        j["graph"] = graphName;
        j["ruleset"] = rules.name;
        j["ruleset_choice"] = choice.reason;
        j["solver"] = args.valueOr("--solver", "dp");
        if (options.estimator) // recompute_cost is then in microseconds
            j["cost_model"] = std::string(options.estimator->name());
        j["seconds"] = seconds;
        Json list = Json::array();
        for (const ParetoPoint& pt : *curve)
            list.push_back({{"budget", pt.budget},
                            {"memory_ratio", pt.memoryRatio},
                            {"saved_bytes", pt.savedBytes},
                            {"activation_bytes", pt.activationBytes},
                            {"saved", pt.savedCount},
                            {"recomputed", pt.recomputedCount},
                            {"recompute_cost", pt.recomputeCost},
                            {"decided_by", std::string(escalationName(pt.escalation))}});
        j["points"] = list;
        std::printf("%s\n", j.dump(1).c_str());
        return kExitOk;
    }
    std::printf("ruleset %s: %s\n", rules.name.c_str(), choice.reason.c_str());
    std::printf("%8s %12s %14s %14s %8s %10s %16s  %s\n", "budget", "mem ratio", "saved bytes", "activations",
                "saved", "recomputed", "recompute cost", "decided by");
    for (const ParetoPoint& pt : *curve)
        std::printf("%8.3f %12.4f %14llu %14llu %8zu %10zu %16.4g  %s\n", pt.budget, pt.memoryRatio,
                    (unsigned long long)pt.savedBytes, (unsigned long long)pt.activationBytes, pt.savedCount,
                    pt.recomputedCount, pt.recomputeCost, std::string(escalationName(pt.escalation)).c_str());
    std::printf("%d budgets in %.1f ms\n", points, seconds * 1e3);
    return kExitOk;
}

} // namespace

int readBudgetOptions(const Command& command, const ParsedArgs& args, PartitionOptions& options) {
    const TypedOption<double> budget = numberOption(args, "--memory-budget", 0, 1);
    if (!budget.error.empty())
        return usageError(command, budget.error);
    options.memoryBudget = budget.value;
    if (std::optional<std::string> k = args.value("--solver")) {
        const std::optional<KnapsackSolver> solver = parseKnapsackSolver(*k);
        if (!solver)
            return usageError(command, "unknown --solver '" + *k + "' (greedy, dp or ilp)");
        options.solver = *solver;
    }
    return kExitOk;
}

const Command& partitionCommand() {
    static const Command command{
        "partition",
        {"FILE"},
        "Decide which activations torch saves and which it recomputes, as torch's partitioner does.",
        [] {
            std::vector<OptionSpec> o = partitionOptions();
            o.push_back({"--explain", "", "NODE", "why NODE is saved, recomputed or banned"});
            o.push_back(
                {"--out", "", "DIR", "write forward.txt, backward.txt (and .json) and decision.json"});
            o.push_back(
                {"--repeat", "", "N", "run the engine N times in this process; seconds is the median"});
            o.push_back({"--decision", "", "D.json",
                         "evaluate an edited decision (its saved list) instead of deciding"});
            return o;
        }(),
        1,
        1,
        &runPartition,
    };
    return command;
}

const Command& paretoCommand() {
    static const Command command{
        "pareto",
        {"FILE"},
        "Saved memory against recompute cost over N activation memory budgets (default 100).",
        [] {
            std::vector<OptionSpec> o = partitionOptions();
            o.push_back({"--points", "", "N", "number of budgets in [0, 1] (default 100)"});
            return o;
        }(),
        1,
        1,
        &runPareto,
    };
    return command;
}

} // namespace jointscope::cli
