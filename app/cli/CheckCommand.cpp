// jointscope-cli check LOG: every compile of a TORCH_TRACE log partitioned again under the configuration the
// log records (partition/LogCheck.h), compared with torch's own forward / backward.
#include "Command.h"

#include "partition/LogCheck.h"

#include <nlohmann/json.hpp>

#include <map>

namespace jointscope::cli {
namespace {

using Json = nlohmann::ordered_json;
using Names = std::vector<std::string>;
using namespace jointscope::partition;

// ---- parse ----

struct CheckArgs {
    CheckRequest request;
    bool json = false;
};

int parseCheckArgs(const Command& command, const ParsedArgs& args, CheckArgs& out) {
    PartitionOptions given;
    if (int code = readBudgetOptions(command, args, given); code != kExitOk)
        return code;
    out.request.overrides.memoryBudget = given.memoryBudget;
    if (args.has("--solver"))
        out.request.overrides.solver = given.solver;
    if (std::optional<std::string> passes = args.value("--joint-passes")) {
        if (*passes != "on" && *passes != "off" && *passes != "auto")
            return usageError(command, "--joint-passes takes auto, on or off, not '" + *passes + "'");
        if (*passes != "auto")
            out.request.overrides.replayJointPasses = *passes == "on";
    }
    out.request.ruleset = args.valueOr("--ruleset", "auto");
    out.json = args.has("--json");
    return kExitOk;
}

// ---- render ----

Json namesJson(const Names& names) {
    Json j = Json::array();
    for (const std::string& n : names)
        j.push_back(n);
    return j;
}

Json passesJson(const JointPassReport& report) {
    Json list = Json::array();
    for (const PassChange& c : report.changes) {
        Json replaced = Json::array();
        for (const auto& [from, to] : c.replaced)
            replaced.push_back({from, to});
        list.push_back({{"pass", c.pass},
                        {"removed", namesJson(c.removed)},
                        {"replaced", replaced},
                        {"added", namesJson(c.added)}});
    }
    return list;
}

Json compileJson(const CompileCheck& c) {
    Json out = Json::object();
    out["compile_id"] = c.label;
    out["status"] = std::string(checkStatusName(c.status));
    if (c.status == CheckStatus::Skipped) {
        out["reason"] = c.message;
        return out;
    }
    if (c.status == CheckStatus::Error) {
        out["error"] = c.message;
        return out;
    }
    out["ruleset"] = c.ruleset;
    out["ruleset_choice"] = c.rulesetChoice;
    out["graph"] = c.graphSource;
    out["settings"] = namesJson(c.settings.notes);
    out["notes"] = namesJson(c.notes);
    if (c.knapsackTie)
        out["knapsack_tie"] = true;
    out["not_followed"] = namesJson(c.settings.unsupported);
    out["joint_passes"] = {{"replayed", c.settings.replayJointPasses},
                           {"changes", passesJson(c.passes)},
                           {"not_replayed", namesJson(c.passes.notReplayed)}};
    out["saved"] = {{"ours", namesJson(c.ours)}, {"torch", namesJson(c.torch)}};
    out["saved_sym"] = {{"ours", namesJson(c.oursSym)}, {"torch", namesJson(c.torchSym)}};
    out["rng_states"] = {{"ours", namesJson(c.oursRng)}, {"torch", namesJson(c.torchRng)}};
    if (!c.bodies.empty()) {
        Json bodies = Json::array();
        for (const BodyCheck& b : c.bodies)
            bodies.push_back(
                {{"body", b.body},
                 {"identical", b.identical()},
                 {"saved", {{"ours", namesJson(b.ours)}, {"torch", namesJson(b.torch)}}},
                 {"saved_sym", {{"ours", namesJson(b.oursSym)}, {"torch", namesJson(b.torchSym)}}}});
        out["invoke_subgraph_bodies"] = bodies;
    }
    auto graphJson = [](const NodeSetDiff& d) {
        return Json{{"nodes", d.torchNodes},
                    {"only_ours", namesJson(d.onlyOurs)},
                    {"only_torch", namesJson(d.onlyTorch)}};
    };
    out["graphs_as_torch"] = c.graphsAsTorch();
    if (c.forward)
        out["forward"] = graphJson(*c.forward);
    if (c.backward)
        out["backward"] = graphJson(*c.backward);
    out["escalation"] = c.escalation;
    return out;
}

std::string joined(const Names& names) {
    std::string text;
    for (const std::string& n : names)
        text += (text.empty() ? "" : " ") + n;
    return "[" + text + "]";
}

void printNodeSetDiffs(const CompileCheck& c) {
    for (const auto* graph : {&c.forward, &c.backward}) {
        if (!*graph)
            continue;
        const char* key = graph == &c.forward ? "forward" : "backward";
        if (!(*graph)->onlyOurs.empty())
            std::printf("  %s: only ours  %s\n", key, joined((*graph)->onlyOurs).c_str());
        if (!(*graph)->onlyTorch.empty())
            std::printf("  %s: only torch %s\n", key, joined((*graph)->onlyTorch).c_str());
    }
}

void printCompile(const CompileCheck& c) {
    const char* id = c.label.c_str();
    if (c.status == CheckStatus::Error || c.status == CheckStatus::Skipped) {
        std::printf("[%s] %s: %s\n", id, c.status == CheckStatus::Error ? "error" : "skipped",
                    c.message.c_str());
        return;
    }
    size_t passChanges = 0;
    for (const PassChange& p : c.passes.changes)
        passChanges += p.removed.size() + p.replaced.size() + p.added.size();
    std::printf("[%s] %s (%s; %zu saved, %zu sym%s; %s)\n", id,
                std::string(checkStatusName(c.status)).c_str(), c.ruleset.c_str(), c.torch.size(),
                c.torchSym.size(),
                c.settings.replayJointPasses
                    ? ("; joint passes replayed: " + std::to_string(passChanges) + " node changes").c_str()
                    : "",
                c.graphsAsTorch() ? "graphs hold torch's nodes" : "graphs differ in nodes");
    for (const std::string& u : c.settings.unsupported)
        std::printf("  not followed: %s\n", u.c_str());
    if (c.status == CheckStatus::Identical) {
        printNodeSetDiffs(c);
        return;
    }
    for (const std::string& n : c.settings.notes)
        std::printf("  setting: %s\n", n.c_str());
    for (const std::string& n : c.notes)
        std::printf("  note: %s\n", n.c_str());
    for (const std::string& n : c.passes.notReplayed)
        std::printf("  not replayed: %s\n", n.c_str());
    if (c.ours != c.torch)
        std::printf("  saved  ours:  %s\n  saved  torch: %s\n", joined(c.ours).c_str(),
                    joined(c.torch).c_str());
    if (c.oursSym != c.torchSym)
        std::printf("  sym    ours:  %s\n  sym    torch: %s\n", joined(c.oursSym).c_str(),
                    joined(c.torchSym).c_str());
    if (c.oursRng != c.torchRng)
        std::printf("  rng    ours:  %s\n  rng    torch: %s\n", joined(c.oursRng).c_str(),
                    joined(c.torchRng).c_str());
    for (const BodyCheck& b : c.bodies) {
        if (b.identical())
            continue;
        std::printf("  body %s saved ours:  %s\n  body %s saved torch: %s\n", b.body.c_str(),
                    joined(b.ours).c_str(), b.body.c_str(), joined(b.torch).c_str());
        if (b.oursSym != b.torchSym)
            std::printf("  body %s sym   ours:  %s\n  body %s sym   torch: %s\n", b.body.c_str(),
                        joined(b.oursSym).c_str(), b.body.c_str(), joined(b.torchSym).c_str());
    }
    printNodeSetDiffs(c);
}

// ---- run ----

int runCheck(const ParsedArgs& args) {
    const Command& command = checkCommand();
    CheckArgs parsed;
    if (int code = parseCheckArgs(command, args, parsed); code != kExitOk)
        return code;
    Expected<GraphFile> file = openGraphFile(args);
    if (!file)
        return inputError(file.error());
    for (const Diagnostic& d : file->problems())
        std::fprintf(stderr, "%s\n", d.format().c_str());
    std::vector<CompileCheck> checks;
    std::map<std::string, std::vector<CompileConfig>> configsOfLog; // a folder: each rank's log
    for (const CompileGraphs& g : groupCompiles(*file)) {
        if (!g.joint) {
            checks.push_back(checkCompile(*file, g, {}, parsed.request));
            continue;
        }
        const GraphEntry& entry = file->graphs()[*g.joint];
        auto configs = configsOfLog.find(entry.file);
        if (configs == configsOfLog.end())
            configs = configsOfLog.emplace(entry.file, file->compileConfigsOf(entry)).first;
        checks.push_back(checkCompile(*file, g, configs->second, parsed.request));
    }

    int identical = 0, differs = 0, errors = 0, graphsAsTorch = 0;
    for (const CompileCheck& c : checks) {
        graphsAsTorch += c.graphsAsTorch();
        identical += c.status == CheckStatus::Identical;
        differs += c.status == CheckStatus::Differs;
        errors += c.status == CheckStatus::Error;
    }
    if (parsed.json) {
        Json report = Json::object();
        report["log"] = file->fileName();
        Json list = Json::array();
        for (const CompileCheck& c : checks)
            list.push_back(compileJson(c));
        report["compiles"] = list;
        report["identical"] = identical;
        report["differs"] = differs;
        report["errors"] = errors;
        report["graphs_as_torch"] = graphsAsTorch;
        std::printf("%s\n", report.dump(1).c_str());
    } else {
        for (const CompileCheck& c : checks)
            printCompile(c);
        std::printf(
            "%d identical, %d differ, %d errors (of %zu compiles); %d with torch's forward and backward "
            "nodes\n",
            identical, differs, errors, checks.size(), graphsAsTorch);
    }
    if (identical + differs + errors == 0) {
        std::fprintf(stderr, "%s: error: no compile with both a joint graph and torch's forward graph\n",
                     file->fileName().c_str());
        return kExitBadInput;
    }
    if (differs > 0)
        return kExitDiffers;
    return errors > 0 ? kExitBadInput : kExitOk;
}

} // namespace

const Command& checkCommand() {
    static const Command command{
        "check",
        {"LOG"},
        "Re-partition every compile of a TORCH_TRACE log as torch ran it (the functorch / inductor config "
        "the "
        "log records, inductor's joint-graph passes replayed) and compare with torch's own forward/backward.",
        {{"--ruleset", "", "R", "auto (default: from each graph), or a built-in ruleset / ruleset file"},
         {"--memory-budget", "", "B",
          "override the activation_memory_budget the log records for each compile (default: the log's)"},
         {"--solver", "", "K", "override the knapsack solver the log records: greedy, dp or ilp"},
         {"--joint-passes", "", "M",
          "auto (default: replay inductor's joint-graph passes where the log says they ran), on or off"},
         jsonOption()},
        1,
        1,
        &runCheck,
    };
    return command;
}

} // namespace jointscope::cli
