#include "partition/LogCheck.h"

#include "graph/FxNamespace.h"
#include "ops/RulesetChoice.h"
#include "partition/Partitioner.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <optional>
#include <set>

namespace jointscope::partition {
namespace {

using Names = std::vector<std::string>;

constexpr std::string_view kPartitionerInput = "artifact:jointscope_partitioner_input";

// The RNG state saved for a random op, named by the op's first input (torch keeps joint names); a random op
// of no input (inductor_seeds, which inductor's replace_random puts in aten.rand's place) by its op, as
// "prims.inductor_seeds". `args` are the op's arguments.
std::string rngStateLabel(const Graph& graph, const std::vector<Value>& args, const Target& randomOp) {
    for (const Value& a : args)
        if (a.kind() == ValueKind::NodeRef)
            return "rng_state(" + graph.node(a.asNode()).name + ")";
    return "rng_state(" + randomOp.ns + "." + randomOp.op + ")";
}

// getitem 0 of run_and_save_rng_state(op, inputs...): the state functionalize_rng_ops adds to the forward's
// outputs; the label of its random op. nullopt for any other node.
std::optional<std::string> savedRngState(const Graph& forward, const Node& node) {
    if (!node.target.isGetItem() || node.args.size() != 2 || node.args[0].kind() != ValueKind::NodeRef ||
        node.args[1].kind() != ValueKind::Int || node.args[1].asInt() != 0)
        return std::nullopt;
    const Node& run = forward.node(node.args[0].asNode());
    if (run.target.text.find("run_and_save_rng_state") == std::string::npos || run.args.empty())
        return std::nullopt;
    const Target op = Target::parseFunction(run.args[0].text());
    return rngStateLabel(forward, {run.args.begin() + 1, run.args.end()}, op);
}

// torch's saved values: the forward graph's outputs after the first num_fwd_outputs, node outputs only
// (min_cut_rematerialization_partition returns fwd_outputs + saved_values + saved_sym_nodes;
// functionalize_rng_ops puts the RNG states between the tensors and the symbols).
void torchSaved(const Graph& forward, size_t numFwdOutputs, Names& saved, Names& savedSym, Names& rng) {
    const std::vector<const Value*> leaves = forward.outputLeaves();
    for (size_t i = numFwdOutputs; i < leaves.size(); ++i) {
        if (leaves[i]->kind() != ValueKind::NodeRef)
            continue;
        const Node& node = forward.node(leaves[i]->asNode());
        if (std::optional<std::string> state = savedRngState(forward, node))
            rng.push_back(std::move(*state));
        else
            (isSymNode(node) ? savedSym : saved).push_back(node.name);
    }
}

// A diagnostic of the engine (no file of its own) placed at the joint graph, keeping a line it names.
Diagnostic located(Diagnostic d, const SourceLocation& joint) {
    if (d.loc.file.empty()) {
        const uint32_t line = d.loc.line;
        d.loc = joint;
        if (line)
            d.loc.line = line;
    }
    return d;
}

// Whether torch's saved values (tensors and symbolic ones, as a set) are what another of the ilp knapsack's
// equally good choices saves. Trusted only when the same comparison holds for the choice taken: its min-cut's
// saved set is the saved lists reported as ours.
bool isAnotherKnapsackOptimum(const Partition& p, const CompileCheck& c) {
    if (p.knapsackOtherOptima.empty() || !p.cut)
        return false;
    auto namesOf = [&](const std::vector<NodeId>& ids) {
        std::set<std::string> names;
        for (NodeId id : ids)
            names.insert(p.graph.node(id).name);
        return names;
    };
    auto setOf = [](const std::vector<std::string>& a, const std::vector<std::string>& b) {
        std::set<std::string> names(a.begin(), a.end());
        names.insert(b.begin(), b.end());
        return names;
    };
    if (namesOf(p.cut->saved) != setOf(c.ours, c.oursSym))
        return false;
    const std::set<std::string> torch = setOf(c.torch, c.torchSym);
    return std::any_of(p.knapsackOtherOptima.begin(), p.knapsackOtherOptima.end(),
                       [&](const std::vector<NodeId>& saved) { return namesOf(saved) == torch; });
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

// Nodes only torch's graph holds that a joint-graph pass made: named after their op's overload
// ("bmm_default", "_unsafe_index_tensor_3"), as graph.call_function names what a pattern replacement inserts,
// where a traced joint graph names a node after its op ("bmm_2"). torch's partitioner's own sym_size_int
// nodes are left out.
std::vector<std::string> madeByAPass(const Graph& torchGraph, const NodeSetDiff& diff) {
    std::vector<std::string> out;
    for (const std::string& name : diff.onlyTorch) {
        const std::optional<NodeId> id = torchGraph.find(name);
        if (!id)
            continue;
        const Target& t = torchGraph.node(*id).target;
        if (t.op.empty() || t.overload.empty() || t.op == "sym_size")
            continue;
        std::string base = FxNamespace::targetToName(t.op + "." + t.overload);
        std::replace(base.begin(), base.end(), '.', '_');
        const std::string_view rest = std::string_view(name).substr(std::min(base.size(), name.size()));
        if (name.starts_with(base) &&
            (rest.empty() ||
             (rest.size() > 1 && rest[0] == '_' && std::all_of(rest.begin() + 1, rest.end(), [](char ch) {
                  return std::isdigit(static_cast<unsigned char>(ch)) != 0;
              }))))
            out.push_back(name);
    }
    return out;
}

// Where torch's graphs differ in nodes and no pass said why: the nodes a joint-graph pass jointscope does not
// replay made (a pattern torch added, fuse_attention with dropout), named in not_replayed.
void reportUnreplayedPassNodes(CompileCheck& c, const Graph& forward, const Graph* backward) {
    if (!c.passes.notReplayed.empty())
        return;
    std::vector<std::string> made = madeByAPass(forward, c.forward ? *c.forward : NodeSetDiff{});
    if (backward && c.backward)
        for (std::string& name : madeByAPass(*backward, *c.backward))
            if (std::find(made.begin(), made.end(), name) == made.end())
                made.push_back(std::move(name));
    if (made.empty())
        return;
    constexpr size_t kShown = 8;
    std::string text =
        "a joint-graph pass torch ran made nodes no replayed pass makes (named after their op's "
        "overload, as pattern replacements name new nodes): ";
    for (size_t i = 0; i < std::min(made.size(), kShown); ++i)
        text += (i ? ", " : "") + made[i];
    if (made.size() > kShown)
        text += " and " + std::to_string(made.size() - kShown) + " more";
    c.passes.notReplayed.push_back(std::move(text));
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
    torchSaved(*forward, size_t(*joint->numFwdOutputs), out.torch, out.torchSym, out.torchRng);

    const uint32_t jointLine = file.graphs()[jointIndex].line;
    const CompileConfig* found = findCompileConfig(configs, g.compileId, jointLine);
    std::optional<CompileConfig> atJoint =
        found ? std::optional<CompileConfig>(configAtLine(*found, jointLine)) : std::nullopt;
    if (atJoint)
        addCompileFactsFromLog(*atJoint, file, jointIndex);
    const CompileConfig* config = atJoint ? &*atJoint : nullptr;
    if (config)
        addLogGraphFacts(*joint, *config);
    RulesetChoice choice;
    Expected<Ruleset> rules = loadRulesetFor(request.ruleset, *joint, &choice);
    if (!rules)
        return failed(rules.error());
    out.ruleset = rules->name;
    out.rulesetChoice = choice.reason;
    out.settings = settingsFromLog(config, *joint, *rules, request.overrides);
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
    // AOTAutograd's tensorify_python_scalars ran between the logged joint graph and the partitioner.
    const JointPassReport tensorified = g.partitionerInput || !rules->tensorifyPythonScalars
                                            ? JointPassReport{}
                                            : replayTensorifyPythonScalars(partitioned, *rules);
    // nested_compile_region: the invoke_subgraph bodies first, each compared with the body torch's forward
    // calls.
    Expected<HopPartitionReport> hops = partitionHopBodies(partitioned, *rules, out.settings);
    if (!hops)
        return failed(located(hops.error(), jointAt));
    for (const std::string& note : hops->notes)
        out.settings.notes.push_back(note);
    for (const HopBodyPartition& body : hops->bodies) {
        BodyCheck b;
        b.body = body.forwardBody;
        b.ours = body.saved;
        b.oursSym = body.savedSym;
        const int32_t logged = forward->findSubgraph(body.forwardBody);
        if (logged >= 0) {
            Names rng;
            torchSaved(*forward->subgraph(logged), body.forwardOutputs, b.torch, b.torchSym, rng);
        }
        out.bodies.push_back(std::move(b));
    }
    if (out.settings.replayJointPasses)
        out.passes = replayJointGraphPasses(partitioned, *rules, out.settings.passes);
    prependPasses(out.passes, tensorified);
    addHopChange(out.passes, *hops);
    PartitionOptions options = out.settings.options;
    options.graphs = BuildGraphs::AsTorch;
    options.knapsackOtherOptima = true; // a tie may explain a difference
    Expected<Partition> p = partitionJoint(std::move(partitioned), *rules, options);
    if (!p)
        return failed(located(p.error(), jointAt));
    for (NodeId id : p->saved)
        out.ours.push_back(p->graph.node(id).name);
    for (NodeId id : p->savedSym)
        out.oursSym.push_back(p->graph.node(id).name);
    for (NodeId id : p->rngStates)
        out.oursRng.push_back(rngStateLabel(p->graph, p->graph.node(id).args, p->graph.node(id).target));
    // The node sets of the graphs are reported; the decision is the saved lists.
    out.forward = nodeSetDiff(p->forward, *forward);
    if (backward)
        out.backward = nodeSetDiff(p->backward, *backward);
    if (out.settings.replayJointPasses)
        reportUnreplayedPassNodes(out, *forward, backward ? &*backward : nullptr);
    out.escalation = std::string(escalationName(p->escalation));
    out.notes = p->warnings;
    const bool bodiesIdentical =
        std::all_of(out.bodies.begin(), out.bodies.end(), [](const BodyCheck& b) { return b.identical(); });
    out.status =
        out.ours == out.torch && out.oursSym == out.torchSym && out.oursRng == out.torchRng && bodiesIdentical
            ? CheckStatus::Identical
            : CheckStatus::Differs;
    out.knapsackTie = out.status == CheckStatus::Differs && isAnotherKnapsackOptimum(*p, out);
    if (out.knapsackTie)
        out.notes.push_back(
            "torch's saved values are what another of the ilp knapsack's equally good choices "
            "saves: the two differ by that tie alone");
    return out;
}

} // namespace jointscope::partition
