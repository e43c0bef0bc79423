// jointscope-cli validate: does a partition compute what the joint graph computes? Runs both on real kernels.
#include "Command.h"

#include "ops/RulesetChoice.h"
#include "partition/Partitioner.h"
#include "runtime/Runtime.h"
#include "runtime/Sandbox.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <limits>

namespace jointscope::cli {
#ifdef JOINTSCOPE_CLI_RUNTIME
namespace {

using Json = nlohmann::ordered_json;

// --device, --seed, --bind, --debug and --no-op-allowlist, shared with profile and run.
int readRunOptions(const Command& command, const ParsedArgs& args, runtime::RunOptions& run) {
    run.device = args.valueOr("--device", "cpu");
    run.flags.debug = args.has("--debug");
    run.flags.opAllowlist = !args.has("--no-op-allowlist");
    // One of the two guards always holds: a graph never runs refused ops outside the OS guard.
    if (!run.flags.opAllowlist && args.has("--no-sandbox"))
        return usageError(command,
                          "--no-op-allowlist needs the sandbox: it cannot be combined with --no-sandbox");
    const TypedOption<int64_t> seed = integerOption(args, "--seed", 0, std::numeric_limits<int64_t>::max());
    if (!seed.error.empty())
        return usageError(command, seed.error);
    if (seed.value)
        run.seed = static_cast<uint64_t>(*seed.value);
    for (const std::string& binding : args.values("--bind")) {
        const size_t eq = binding.find('=');
        const std::optional<int64_t> size =
            eq == std::string::npos ? std::nullopt : parseInteger(std::string_view(binding).substr(eq + 1));
        if (eq == 0 || !size || *size <= 0)
            return usageError(command, "--bind takes SYMBOL=SIZE (e.g. s0=128); got '" + binding + "'");
        run.symbols[binding.substr(0, eq)] = *size;
    }
    return kExitOk;
}

struct ChosenDecision {
    std::string source; // "file D.json", "torch_min_cut (recorded in the file)", "jointscope min-cut"
    std::vector<std::string> saved;
    bool decided = false; // no names: let the engine decide
};

// --partition's file, else torch's own min-cut when the file records it (else its first recorded decision),
// else the engine decides.
Expected<ChosenDecision> chooseDecision(const ParsedArgs& args, const Graph& joint, const Ruleset& rules) {
    if (std::optional<std::string> path = args.value("--partition")) {
        Expected<std::vector<std::string>> names = readSavedNames(*path);
        if (!names)
            return names.error();
        return ChosenDecision{"file " + *path, names.take(), false};
    }
    if (joint.decisions.empty())
        return ChosenDecision{"jointscope min-cut (" + rules.name + ")", {}, true};
    const PartitionDecision* d = &joint.decisions.front();
    for (const PartitionDecision& candidate : joint.decisions)
        if (candidate.name == "torch_min_cut")
            d = &candidate;
    ChosenDecision chosen{d->name + " (recorded in the file)", d->saved, false};
    chosen.saved.insert(chosen.saved.end(), d->savedSym.begin(), d->savedSym.end());
    return chosen;
}

Expected<partition::Partition> partitionOf(const Graph& joint, const Ruleset& rules,
                                           const ChosenDecision& chosen) {
    if (!chosen.decided)
        return partition::evaluateSaved(joint, rules, chosen.saved, partition::BuildGraphs::Runnable);
    partition::PartitionOptions options;
    options.graphs = partition::BuildGraphs::Runnable; // the runtime replays random draws by name
    return partition::partitionJoint(joint, rules, options);
}

std::vector<std::string> savedNamesOf(const partition::Partition& p) {
    std::vector<std::string> names;
    for (NodeId id : p.saved)
        names.push_back(p.graph.node(id).name);
    for (NodeId id : p.savedSym)
        names.push_back(p.graph.node(id).name);
    return names;
}

struct ValidateResult {
    std::string file;
    std::string graph;
    ChosenDecision chosen;
    std::vector<std::string> savedNames;
    runtime::ValidationReport report;
};

void printValidateJson(const ValidateResult& r, const runtime::RunOptions& run) {
    Json outputs = Json::array();
    for (const runtime::Comparison& c : r.report.outputs) {
        Json o = {{"label", c.label}, {"status", c.status}};
        if (c.status == "close" || c.status == "differs") {
            o["max_abs_error"] = c.maxAbsError;
            o["max_rel_error"] = c.maxRelError;
        }
        if (!c.detail.empty())
            o["detail"] = c.detail;
        outputs.push_back(std::move(o));
    }
    const runtime::Comparison* bad = r.report.firstMismatch();
    Json j = {{"file", r.file},
              {"graph", r.graph},
              {"decision",
               {{"source", r.chosen.source},
                {"saved", r.savedNames},
                {"replayed_random_ops", run.replayedRandomOps}}},
              {"device", run.device},
              {"torch", runtime::torchVersion()},
              {"seed", run.seed},
              {"tolerance", r.report.tolerance},
              {"ok", r.report.ok()},
              {"first_mismatch", bad ? Json(bad->label) : Json(nullptr)},
              {"outputs", std::move(outputs)}};
    std::printf("%s\n", j.dump(1).c_str());
}

void printValidateText(const ValidateResult& r, const runtime::RunOptions& run) {
    const runtime::ValidationReport& report = r.report;
    size_t counts[2][3] = {}; // [forward, backward][bitwise, close, none]
    for (size_t i = 0; i < report.outputs.size(); ++i) {
        const std::string& s = report.outputs[i].status;
        const int side = i < report.forwardOutputs ? 0 : 1;
        counts[side][s == "bitwise" ? 0
                     : s == "close" ? 1
                                    : 2] += s == "bitwise" || s == "close" || s == "none";
    }
    const size_t nf = report.forwardOutputs, nb = report.outputs.size() - nf;
    std::printf("%s: %s, %zu saved values, on %s (seed %llu)\n", r.file.c_str(), r.chosen.source.c_str(),
                r.savedNames.size(), run.device.c_str(), static_cast<unsigned long long>(run.seed));
    if (!run.replayedRandomOps.empty()) {
        std::printf("  random ops the backward draws again with the forward's RNG state (as torch does):");
        for (const std::string& name : run.replayedRandomOps)
            std::printf(" %s", name.c_str());
        std::printf("\n");
    }
    std::printf("  forward outputs: %zu of %zu bitwise equal, %zu close, %zu None in both\n", counts[0][0],
                nf, counts[0][1], counts[0][2]);
    std::printf("  gradients:       %zu of %zu bitwise equal, %zu close, %zu None in both\n", counts[1][0],
                nb, counts[1][1], counts[1][2]);
    if (const runtime::Comparison* bad = report.firstMismatch()) {
        std::printf("MISMATCH: %s %s", bad->label.c_str(), bad->status.c_str());
        if (bad->status == "differs")
            std::printf(" (max abs error %.3g, max rel error %.3g)", bad->maxAbsError, bad->maxRelError);
        if (!bad->detail.empty())
            std::printf(": %s", bad->detail.c_str());
        std::printf("\n");
        return;
    }
    std::printf("OK: the forward and backward compute the joint graph's outputs and gradients (%s)\n",
                report.tolerance.c_str());
}

int runValidate(const ParsedArgs& args) {
    const Command& command = validateCommand();
    runtime::RunOptions run;
    if (int code = readRunOptions(command, args, run); code != kExitOk)
        return code;
    Graph joint;
    if (int code = loadJointGraph(command, args, joint); code != kExitOk)
        return code;
    if (int code = refuseUnsafeOps(args, {&joint}, run); code != kExitOk)
        return code;
    Expected<Ruleset> rules = loadRulesetFor(args.valueOr("--ruleset", "auto"), joint);
    if (!rules)
        return inputError(rules.error());
    Expected<ChosenDecision> chosen = chooseDecision(args, joint, *rules);
    if (!chosen)
        return inputError(chosen.error());
    Expected<partition::Partition> p = partitionOf(joint, *rules, *chosen);
    if (!p) {
        Diagnostic d = atInputFile(args, p.error());
        d.message = "invalid partition (" + chosen->source + "): " + d.message;
        std::fprintf(stderr, "%s\n", d.format().c_str());
        return kExitInvalidPartition;
    }

    for (NodeId id : p->rngReplayed)
        run.replayedRandomOps.push_back(p->graph.node(id).name);
    // validate writes no file.
    if (int code = enterSandbox(args, {}, kExitCannotRun, run); code != kExitOk)
        return code;
    Expected<runtime::ValidationReport> report =
        runtime::validatePartition(joint, p->forward, p->backward, *joint.numFwdOutputs, run);
    if (!report) {
        std::fprintf(stderr, "%s\n", atInputFile(args, report.error()).format().c_str());
        return kExitCannotRun;
    }
    const ValidateResult result{args.positional[0], joint.name, chosen.take(), savedNamesOf(*p),
                                report.take()};
    if (args.has("--json"))
        printValidateJson(result, run);
    else
        printValidateText(result, run);
    return result.report.firstMismatch() ? int(kExitDiffers) : int(kExitOk);
}

} // namespace
#endif

const Command& validateCommand() {
    static const Command command{
        "validate",
        {"FILE"},
        "Run the joint graph and its forward + backward on real kernels; compare outputs and gradients.",
        withRuntimeOptions(
            {graphOption(),
             metaOption(),
             {"--partition", "", "D.json",
              "the decision to check (what partition --json prints; only saved / saved_sym are "
              "read); default: torch's own decision recorded in the file, else the engine's "
              "min-cut"},
             {"--ruleset", "", "R",
              "torch-2 or torch-1.13 (default: by the torch version that recorded the graph)"},
             {"--num-fwd-outputs", "", "N",
              "the first N outputs are forward outputs (when the file does not say)"},
             jsonOption()}),
        1,
        1,
        JOINTSCOPE_RUNTIME_RUN(&runValidate),
    };
    return command;
}

#ifdef JOINTSCOPE_CLI_RUNTIME
// Shared with profile and run.
int readRuntimeOptions(const Command& command, const ParsedArgs& args, runtime::RunOptions& run) {
    return readRunOptions(command, args, run);
}

int refuseUnsafeOps(const ParsedArgs& args, const std::vector<const Graph*>& graphs,
                    const runtime::RunOptions& run) {
    if (!run.flags.opAllowlist)
        return kExitOk;
    for (const Graph* graph : graphs)
        if (std::optional<Diagnostic> refused = runtime::refusedOp(*graph)) {
            refused->loc.file = args.positional[0];
            return inputError(*refused);
        }
    return kExitOk;
}

int enterSandbox(const ParsedArgs& args, const std::vector<std::string>& writable, int faultExit,
                 const runtime::RunOptions& run) {
    const bool sandbox = !args.has("--no-sandbox");
    // torch's jiterator caches the CUDA kernels it compiles under ~/.cache/torch/kernels: compile them anew
    // instead of writing there.
    if (sandbox)
        ::setenv("USE_PYTORCH_KERNEL_CACHE", "0", 1);
    // CUDA opens the driver's files and starts its threads now rather than inside the sandbox. A device that
    // cannot start is left to the run, which reports it.
    (void)runtime::initializeDevice(run.device);
    // With --debug a fatal signal stays one, for the debugger and the core dump.
    if (!run.flags.debug)
        runtime::installFaultGuard(args.positional[0], faultExit);
    if (!sandbox)
        return kExitOk;
    Expected<runtime::SandboxReport> report = runtime::applySandbox(writable);
    if (!report) {
        std::fprintf(
            stderr,
            "jointscope-cli: error: %s; graph files are run only inside it (pass --no-sandbox to run "
            "without it, on graphs you trust)\n",
            report.error().message.c_str());
        return kExitNoSandbox;
    }
    if (run.flags.debug)
        std::fprintf(stderr,
                     "jointscope-cli: note: sandbox: Landlock ABI %d, writes only to %zu path(s), TCP %s, "
                     "%zu thread(s) started before it\n",
                     report->abi, writable.size(), report->network ? "blocked" : "allowed",
                     report->otherThreads);
    return kExitOk;
}
#endif

} // namespace jointscope::cli
