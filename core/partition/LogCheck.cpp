#include "partition/LogCheck.h"

#include "ops/RulesetChoice.h"
#include "partition/Partitioner.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

namespace jointscope::partition {
namespace {

using Names = std::vector<std::string>;

constexpr std::string_view kPartitionerInput = "artifact:jointscope_partitioner_input";

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

NodeSetDiff nodeSetDiff(const Graph& mine, const Graph& theirs) {
    auto names = [](const Graph& g) {
        std::set<std::string> out;
        for (const Node& n : g.nodes())
            if (n.op != NodeOp::Output)
                out.insert(n.name);
        return out;
    };
    const std::set<std::string> a = names(mine), b = names(theirs);
    NodeSetDiff d;
    d.torchNodes = b.size();
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(d.onlyOurs));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(d.onlyTorch));
    return d;
}

} // namespace

std::string_view checkStatusName(CheckStatus status) {
    switch (status) {
    case CheckStatus::Identical:
        return "identical";
    case CheckStatus::Differs:
        return "differs";
    case CheckStatus::Error:
        return "error";
    case CheckStatus::Skipped:
        return "skipped";
    }
    return "?";
}

std::vector<CompileGraphs> groupCompiles(const GraphFile& file) {
    // A compile id seen again with a new joint graph (torch._dynamo.reset() restarts the frame counter)
    // starts a new group, labelled "0/0 #2".
    std::vector<CompileGraphs> compiles;
    std::map<std::string, size_t> latest, seen;
    for (size_t i = 0; i < file.graphs().size(); ++i) {
        const GraphEntry& e = file.graphs()[i];
        const bool joint = e.kind == "aot_joint_graph";
        const bool input = e.kind == kPartitionerInput;
        if (!joint && !input && e.kind != "aot_forward_graph" && e.kind != "aot_backward_graph")
            continue;
        auto it = latest.find(e.compileId);
        if (it == latest.end() || (joint && compiles[it->second].joint)) {
            const size_t n = ++seen[e.compileId];
            CompileGraphs g;
            g.compileId = e.compileId;
            g.label = n == 1 ? e.compileId : e.compileId + " #" + std::to_string(n);
            compiles.push_back(std::move(g));
            it = latest.insert_or_assign(e.compileId, compiles.size() - 1).first;
        }
        CompileGraphs& g = compiles[it->second];
        std::optional<size_t>& slot = joint                           ? g.joint
                                      : input                         ? g.partitionerInput
                                      : e.kind == "aot_forward_graph" ? g.forward
                                                                      : g.backward;
        if (!slot)
            slot = i;
    }
    return compiles;
}

CompileCheck checkCompile(const GraphFile& file, const CompileGraphs& g,
                          const std::vector<CompileConfig>& configs, const CheckRequest& request) {
    CompileCheck out;
    out.label = g.label;
    if (!g.joint && !g.partitionerInput) {
        out.message = "no aot_joint_graph in the log";
        return out;
    }
    if (!g.forward) {
        out.message = "no aot_forward_graph: torch's decision is not in the log";
        return out;
    }
    auto failed = [&](Diagnostic d) {
        out.status = CheckStatus::Error;
        out.message = d.format();
        return out;
    };
    // jointscope_torch's capture is the partitioner's own input: preferred, nothing to replay.
    const size_t jointIndex = g.partitionerInput ? *g.partitionerInput : *g.joint;
    out.graphSource = g.partitionerInput ? "jointscope_partitioner_input" : "aot_joint_graph";
    Expected<Graph> joint = file.load(jointIndex);
    if (!joint)
        return failed(joint.error());
    // The parameters (fw_metadata's static_input_indices) are listed with the logged joint graph.
    if (g.partitionerInput && g.joint) {
        const auto& indices = file.graphs()[*g.joint].staticInputIndices;
        const bool has = std::any_of(joint->attributes.begin(), joint->attributes.end(), [](const auto& a) {
            return a.first == "static_lifetime_input_indices";
        });
        if (indices && !has) {
            std::string list;
            for (int64_t i : *indices)
                list += (list.empty() ? "" : ", ") + std::to_string(i);
            joint->attributes.emplace_back("static_lifetime_input_indices", "[" + list + "]");
        }
    }
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
    const SourceLocation jointAt{file.fileName(), file.graphs()[jointIndex].line, 1};
    if (!joint->numFwdOutputs)
        return failed(makeError(jointAt, "compile " + g.label +
                                             ": the joint graph does not say how many outputs are forward "
                                             "outputs (torch before 2.8 prints no output descriptors)"));
    torchSaved(*forward, size_t(*joint->numFwdOutputs), out.torch, out.torchSym);

    const CompileConfig* config = findCompileConfig(configs, g.compileId, file.graphs()[jointIndex].line);
    if (config)
        addLogGraphFacts(*joint, *config);
    RulesetChoice choice;
    Expected<Ruleset> rules = loadRulesetFor(request.ruleset, *joint, &choice);
    if (!rules)
        return failed(rules.error());
    out.ruleset = rules->name;
    out.rulesetChoice = choice.reason;
    out.settings = settingsFromLog(config, *rules, request.overrides);
    if (g.partitionerInput) {
        auto& notes = out.settings.notes;
        notes.erase(
            std::remove_if(notes.begin(), notes.end(),
                           [](const std::string& n) { return n.find("joint-graph passes") != n.npos; }),
            notes.end());
        notes.push_back(
            "the graph is jointscope_partitioner_input, what the partitioner received: no pass to "
            "replay");
        // The artifact is logged by jointscope_torch's custom_partitioner_fn, which runs torch's min-cut as
        // inductor calls it: the one custom partitioner whose decision is torch's own.
        auto& unsupported = out.settings.unsupported;
        unsupported.erase(
            std::remove_if(unsupported.begin(), unsupported.end(),
                           [](const std::string& u) { return u.starts_with("custom_partitioner_fn"); }),
            unsupported.end());
        out.settings.replayJointPasses = false;
    }
    Graph partitioned = joint.take();
    if (out.settings.replayJointPasses)
        out.passes = replayJointGraphPasses(partitioned, *rules, out.settings.passes);
    PartitionOptions options = out.settings.options;
    options.extract = true;
    Expected<Partition> p = partitionJoint(std::move(partitioned), *rules, options);
    if (!p) {
        Diagnostic d = p.error();
        if (d.loc.file.empty())
            d.loc = jointAt;
        return failed(d);
    }
    for (NodeId id : p->saved)
        out.ours.push_back(p->graph.node(id).name);
    for (NodeId id : p->savedSym)
        out.oursSym.push_back(p->graph.node(id).name);
    // The node sets of the graphs are reported; the decision is the saved lists.
    out.forward = nodeSetDiff(p->forward, *forward);
    if (backward)
        out.backward = nodeSetDiff(p->backward, *backward);
    out.escalation = std::string(escalationName(p->escalation));
    out.status =
        out.ours == out.torch && out.oursSym == out.torchSym ? CheckStatus::Identical : CheckStatus::Differs;
    return out;
}

} // namespace jointscope::partition
