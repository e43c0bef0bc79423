// jointscope-cli check LOG: for every compile of a TORCH_TRACE log that holds torch's joint graph and the
// forward / backward torch partitioned it into, partition the joint graph again and say whether the decision is
// torch's: the saved tensors in torch's order and the saved symbols (the graphs' node differences are listed).
#include "Command.h"

#include "ops/RulesetChoice.h"
#include "partition/Partitioner.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <set>

namespace jointscope::cli {
namespace {

using Json = nlohmann::ordered_json;
using Names = std::vector<std::string>;
using namespace jointscope::partition;

constexpr int kExitDiffers = 1; // a compile whose decision is not torch's

// The three graphs AOTAutograd logs for one compile.
struct CompileGraphs {
    std::optional<size_t> joint, forward, backward;
};

// torch's saved values: the forward graph's outputs after the first num_fwd_outputs, node outputs only
// (min_cut_rematerialization_partition returns fwd_outputs + saved_values + saved_sym_nodes).
void torchSaved(const Graph& forward, size_t numFwdOutputs, Names& saved, Names& savedSym) {
    const std::vector<const Value*> leaves = forward.outputLeaves();
    for (size_t i = numFwdOutputs; i < leaves.size(); ++i) {
        if (leaves[i]->kind() != ValueKind::NodeRef)
            continue;
        const Node& node = forward.node(leaves[i]->asNode());
        (isSymNode(node) ? savedSym : saved).push_back(node.name);
    }
}

std::set<std::string> nodeNames(const Graph& graph) {
    std::set<std::string> names;
    for (const Node& node : graph.nodes())
        if (node.op != NodeOp::Output)
            names.insert(node.name);
    return names;
}

Names minus(const std::set<std::string>& a, const std::set<std::string>& b) {
    Names out;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
    return out;
}

Json namesJson(const Names& names) {
    Json j = Json::array();
    for (const std::string& n : names)
        j.push_back(n);
    return j;
}

std::string joined(const Names& names) {
    std::string text;
    for (const std::string& n : names)
        text += (text.empty() ? "" : " ") + n;
    return "[" + text + "]";
}

// One compile checked: "identical", "differs", or "error" with the message.
Json checkCompile(const GraphFile& file, const std::string& compileId, const CompileGraphs& g,
                  const ParsedArgs& args, const PartitionOptions& options) {
    Json out = Json::object();
    out["compile_id"] = compileId;
    auto failed = [&](const Diagnostic& d) {
        out["status"] = "error";
        out["error"] = d.format();
        return out;
    };
    Expected<Graph> joint = file.load(*g.joint);
    if (!joint)
        return failed(joint.error());
    Expected<Graph> forward = file.load(*g.forward);
    if (!forward)
        return failed(forward.error());
    std::optional<Graph> backward;
    if (g.backward) {
        Expected<Graph> loaded = file.load(*g.backward);
        if (!loaded)
            return failed(loaded.error());
        backward = loaded.take();
    }
    if (!joint->numFwdOutputs)
        return failed(makeError({file.fileName(), file.graphs()[*g.joint].line, 1},
                                "compile " + compileId +
                                    ": the joint graph does not say how many outputs are forward outputs "
                                    "(torch before 2.8 prints no output descriptors)"));
    Names torchTensors, torchSyms;
    torchSaved(*forward, size_t(*joint->numFwdOutputs), torchTensors, torchSyms);

    RulesetChoice choice;
    Expected<Ruleset> rules = loadRulesetFor(args.valueOr("--ruleset", "auto"), *joint, &choice);
    if (!rules)
        return failed(rules.error());
    out["ruleset"] = rules->name;
    out["ruleset_choice"] = choice.reason;
    Expected<Partition> p = partitionJoint(Graph(*joint), *rules, options);
    if (!p) {
        Diagnostic d = p.error();
        if (d.loc.file.empty())
            d.loc = {file.fileName(), file.graphs()[*g.joint].line, 1};
        return failed(d);
    }
    Names ours, oursSym;
    for (NodeId id : p->saved)
        ours.push_back(p->graph.node(id).name);
    for (NodeId id : p->savedSym)
        oursSym.push_back(p->graph.node(id).name);

    bool same = ours == torchTensors && oursSym == torchSyms;
    out["saved"] = {{"ours", namesJson(ours)}, {"torch", namesJson(torchTensors)}};
    out["saved_sym"] = {{"ours", namesJson(oursSym)}, {"torch", namesJson(torchSyms)}};
    // The logged forward / backward come after inductor's joint-graph passes (alias removal, constant
    // folding), which run between the logged joint graph and the partition: their node sets are reported,
    // the decision is the saved lists.
    auto compareGraphs = [&](const char* key, const Graph& mine, const Graph& theirs) {
        const std::set<std::string> a = nodeNames(mine), b = nodeNames(theirs);
        out[key] = {{"nodes", b.size()},
                    {"only_ours", namesJson(minus(a, b))},
                    {"only_torch", namesJson(minus(b, a))}};
    };
    compareGraphs("forward", p->forward, *forward);
    if (backward)
        compareGraphs("backward", p->backward, *backward);
    out["escalation"] = std::string(escalationName(p->escalation));
    out["status"] = same ? "identical" : "differs";
    return out;
}

void printCompile(const Json& c) {
    const std::string id = c["compile_id"].get<std::string>();
    const std::string status = c["status"].get<std::string>();
    if (status == "error") {
        std::printf("[%s] error: %s\n", id.c_str(), c["error"].get<std::string>().c_str());
        return;
    }
    if (status == "skipped") {
        std::printf("[%s] skipped: %s\n", id.c_str(), c["reason"].get<std::string>().c_str());
        return;
    }
    const Names ours = c["saved"]["ours"].get<Names>(), theirs = c["saved"]["torch"].get<Names>();
    std::printf("[%s] %s (%s; %zu saved, %zu sym)\n", id.c_str(), status.c_str(),
                c["ruleset"].get<std::string>().c_str(), theirs.size(), c["saved_sym"]["torch"].size());
    if (status == "identical")
        return;
    if (ours != theirs)
        std::printf("  saved  ours:  %s\n  saved  torch: %s\n", joined(ours).c_str(), joined(theirs).c_str());
    const Names oursSym = c["saved_sym"]["ours"].get<Names>(), torchSym = c["saved_sym"]["torch"].get<Names>();
    if (oursSym != torchSym)
        std::printf("  sym    ours:  %s\n  sym    torch: %s\n", joined(oursSym).c_str(), joined(torchSym).c_str());
    for (const char* key : {"forward", "backward"}) {
        if (!c.contains(key) || status != "differs")
            continue;
        const Names onlyOurs = c[key]["only_ours"].get<Names>(), onlyTorch = c[key]["only_torch"].get<Names>();
        if (!onlyOurs.empty())
            std::printf("  %s: only ours  %s\n", key, joined(onlyOurs).c_str());
        if (!onlyTorch.empty())
            std::printf("  %s: only torch %s\n", key, joined(onlyTorch).c_str());
    }
}

int runCheck(const ParsedArgs& args) {
    const Command& command = checkCommand();
    PartitionOptions options;
    options.extract = true;
    if (int code = readBudgetOptions(command, args, options); code != kExitOk)
        return code;
    Expected<GraphFile> file = openGraphFile(args);
    if (!file)
        return inputError(file.error());
    for (const Diagnostic& d : file->problems())
        std::fprintf(stderr, "%s\n", d.format().c_str());

    // One group per compile, in log order. A compile id seen again with a new joint graph (torch._dynamo.reset()
    // restarts the frame counter) starts a new group, labelled "0/0 #2".
    std::vector<std::pair<std::string, CompileGraphs>> compiles;
    std::map<std::string, size_t> latest, seen; // compile id -> its newest group, how many groups it has
    for (size_t i = 0; i < file->graphs().size(); ++i) {
        const GraphEntry& e = file->graphs()[i];
        const bool joint = e.kind == "aot_joint_graph";
        if (!joint && e.kind != "aot_forward_graph" && e.kind != "aot_backward_graph")
            continue;
        auto it = latest.find(e.compileId);
        if (it == latest.end() || (joint && compiles[it->second].second.joint)) {
            const size_t n = ++seen[e.compileId];
            compiles.emplace_back(n == 1 ? e.compileId : e.compileId + " #" + std::to_string(n), CompileGraphs{});
            latest[e.compileId] = compiles.size() - 1;
            it = latest.find(e.compileId);
        }
        CompileGraphs& g = compiles[it->second].second;
        std::optional<size_t>& slot = joint ? g.joint : e.kind == "aot_forward_graph" ? g.forward : g.backward;
        if (!slot)
            slot = i;
    }
    Json report = Json::object();
    report["log"] = file->fileName();
    Json list = Json::array();
    int identical = 0, differs = 0, errors = 0;
    for (const auto& [id, g] : compiles) {
        if (!g.joint || !g.forward) {
            list.push_back({{"compile_id", id},
                            {"status", "skipped"},
                            {"reason", !g.joint ? "no aot_joint_graph in the log"
                                                : "no aot_forward_graph: torch's decision is not in the log"}});
            continue;
        }
        Json c = checkCompile(*file, id, g, args, options);
        const std::string status = c["status"].get<std::string>();
        identical += status == "identical";
        differs += status == "differs";
        errors += status == "error";
        list.push_back(std::move(c));
    }
    report["compiles"] = list;
    report["identical"] = identical;
    report["differs"] = differs;
    report["errors"] = errors;
    if (args.has("--json")) {
        std::printf("%s\n", report.dump(1).c_str());
    } else {
        for (const Json& c : list)
            printCompile(c);
        std::printf("%d identical, %d differ, %d errors (of %zu compiles)\n", identical, differs, errors,
                    list.size());
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
        "check LOG [--ruleset R] [--memory-budget B] [--solver greedy|dp|ilp] [--json]",
        "Re-partition every compile of a TORCH_TRACE log and compare with torch's own forward/backward.",
        {{"--ruleset", "", "R", "auto (default: from each graph), or a built-in ruleset / ruleset file"},
         {"--memory-budget", "", "B", "the activation_memory_budget torch ran with (the log does not record it)"},
         {"--solver", "", "K", "the knapsack solver torch ran with: greedy, dp (default) or ilp"},
         jsonOption()},
        1,
        1,
        &runCheck,
    };
    return command;
}

} // namespace jointscope::cli
