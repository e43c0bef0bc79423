#include "partition/MinCut.h"

#include "partition/JointGraph.h"
#include "support/EnumNames.h"
#include "support/Saturating.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_map>

namespace jointscope::partition {
namespace {

constexpr int64_t kFarFromBackward = 1000000000; // int(1e9)

bool isCollective(const Node& n) {
    return n.op == NodeOp::CallFunction && n.target.kind == TargetKind::OpOverload &&
           n.target.ns == "_c10d_functional";
}

uint64_t tensorBytes(const TensorMeta& meta, const Ruleset& rules, bool& unsized) {
    const uint8_t item = rules.dtypeBytes[size_t(meta.dtype)];
    if (item == 0) {
        unsized = true;
        return 0;
    }
    // Saturating: sizes from symbol hints are not bounded by the readers' checks.
    uint64_t numel = 1;
    for (const SymInt& dim : meta.sizes) {
        if (dim.isSymbolic() && dim.value <= 0)
            return uint64_t(4096) * item; // optimization_hint(numel, fallback=4096): a symbol without a hint
        numel = saturatingMul(numel, uint64_t(std::max<int64_t>(dim.value, 0)));
    }
    return saturatingMul(numel, item);
}

// mark_leaf_tensor_outputs: a node read through getitems passes the mark on to them; a leaf that is not a
// tuple is marked MUST_SAVE.
void markLeafOutputs(const Graph& graph, NodeId id, NodeInfo& info, const char* note) {
    bool hasGetItems = false;
    for (NodeId user : graph.node(id).users)
        if (graph.node(user).target.isGetItem()) {
            hasGetItems = true;
            markLeafOutputs(graph, user, info, note);
        }
    if (hasGetItems || graph.node(id).outputKind == OutputKind::Tuple)
        return;
    info.policy[id] = Policy::MustSave;
    info.policyNote[id] = note;
}

} // namespace

namespace {
// "None", "False" and "True" are the old-style meta["recompute"] values.
constexpr EnumName<Policy> kPolicyNames[] = {
    {Policy::None, ""},
    {Policy::MustSave, "MUST_SAVE"},
    {Policy::PreferSave, "PREFER_SAVE"},
    {Policy::MustRecompute, "MUST_RECOMPUTE"},
    {Policy::PreferRecompute, "PREFER_RECOMPUTE"},
    {Policy::None, "None"},
    {Policy::None, "False"},
    {Policy::PreferRecompute, "True"},
};
} // namespace

std::optional<Policy> parsePolicy(std::string_view text) {
    if (text.rfind("CheckpointPolicy.", 0) == 0)
        text.remove_prefix(17);
    return valueNamed(kPolicyNames, text);
}

std::string_view policyName(Policy policy) {
    return nameOf(kPolicyNames, policy, "");
}

std::string_view banReasonText(BanReason reason) {
    static constexpr EnumName<BanReason> kTexts[] = {
        {BanReason::None, ""},
        {BanReason::Input, "graph input (primals are saved, never recomputed)"},
        {BanReason::MustSave, "MUST_SAVE policy"},
        {BanReason::NotInAllowlist, "op not in the recomputable allowlist"},
        {BanReason::RandomOrComputeIntensive, "random or compute-intensive op"},
        {BanReason::MaterializedBackward, "materialized in backward by a non-fusible user"},
        {BanReason::FarFromBackward, "farther than max_dist_from_bw from the backward"},
        {BanReason::Reduction, "reduction: output * 4 < inputs"},
        {BanReason::UsedFarApart, "fusible use after the first unfusible use (used far apart)"},
        {BanReason::LongFusibleChain, "end of a fusible chain longer than 100 nodes"},
    };
    return nameOf(kTexts, reason, "");
}

MinCutOptions MinCutOptions::fromRuleset(const Ruleset& rules) {
    MinCutOptions o;
    o.banIfUsedFarApart = rules.banIfUsedFarApart;
    o.banIfLongFusibleChains = rules.banIfLongFusibleChains;
    o.banIfMaterializedBackward = rules.banIfMaterializedBackward;
    o.banIfNotInAllowlist = rules.banIfNotInAllowlist;
    o.banIfReduction = rules.banIfReduction;
    return o;
}

bool isSymNode(const Node& n) {
    return n.outputKind == OutputKind::SymInt || n.outputKind == OutputKind::SymFloat ||
           n.outputKind == OutputKind::SymBool;
}

std::optional<std::vector<int64_t>> staticLifetimeInputIndices(const Graph& graph) {
    for (const auto& [key, value] : graph.attributes) {
        if (key != "static_lifetime_input_indices")
            continue;
        std::vector<int64_t> indices;
        int64_t current = -1;
        for (char c : value) {
            if (c >= '0' && c <= '9') {
                current = (current < 0 ? 0 : current * 10) + (c - '0');
                if (current > (int64_t(1) << 40))
                    return std::nullopt;
            } else if (c == ',' || c == ']') {
                if (current >= 0)
                    indices.push_back(current);
                current = -1;
            } else if (c != '[' && c != ' ') {
                return std::nullopt;
            }
        }
        return indices;
    }
    return std::nullopt;
}

bool isStaticLifetimeInput(const Node& n) {
    if (n.op != NodeOp::Placeholder)
        return false;
    const std::string& d = n.meta.descriptor;
    return d.rfind("ParamAOTInput", 0) == 0 || d.rfind("BufferAOTInput", 0) == 0;
}

Expected<uint64_t> sizeOf(const Node& node, const Ruleset& rules) {
    bool unsized = false;
    uint64_t bytes = 0;
    if (rules.sizeModel == SizeModel::TensorMeta) {
        if (const TensorMeta* meta = node.tensor(); meta && meta->known())
            bytes = tensorBytes(*meta, rules, unsized);
    } else if (isSymNode(node)) {
        bytes = 1;
    } else if (node.outputKind == OutputKind::Tensor || node.outputKind == OutputKind::Tuple) {
        for (const TensorMeta& meta : node.outputs)
            if (meta.known())
                bytes = saturatingAdd(bytes, tensorBytes(meta, rules, unsized));
    }
    if (unsized)
        return makeError({"", node.meta.sourceLine, 0}, "node '" + node.name + "' (" + node.target.text +
                                                            "): ruleset " + rules.name +
                                                            " does not know the size of its dtype");
    return bytes;
}

Expected<NodeInfo> classifyNodes(const Graph& graph, const Ruleset& rules, std::vector<Policy> tags,
                                 ClassifyFor purpose) {
    const bool forDefaultPartition = purpose == ClassifyFor::DefaultPartition;
    const size_t n = graph.size();
    NodeInfo info;
    info.requiredFw.assign(n, false);
    info.requiredBw.assign(n, false);
    info.staticLifetime.assign(n, false);
    info.epilogueMutated =
        rules.epilogueMutatedInputsUnsaveable ? epilogueMutatedInputs(graph) : std::vector<bool>(n, false);
    info.fwOrder.assign(n, -1);
    info.distFromBw.assign(n, 0);
    info.bytes.assign(n, 0);
    info.hasTensorSize.assign(n, false);
    info.policy = std::move(tags);
    info.policy.resize(n, Policy::None);
    info.policyNote.assign(n, {});
    info.opClass.assign(n, 0);
    std::unordered_map<std::string_view, uint8_t> classOfTarget; // a graph calls few distinct targets
    for (NodeId id = 0; id < n; ++id) {
        const Node& node = graph.node(id);
        if (node.op != NodeOp::CallFunction)
            continue;
        auto [it, inserted] = classOfTarget.emplace(node.target.text, 0);
        if (inserted) {
            const std::string key = opKey(node.target);
            it->second =
                uint8_t((rules.recomputable.contains(key) ? kRecomputable : 0) |
                        (rules.views.contains(key) ? kView : 0) | (rules.random.contains(key) ? kRandom : 0) |
                        (rules.computeIntensive.contains(key) ? kComputeIntensive : 0) |
                        (rules.fusible.contains(key) ? kFusible : 0));
        }
        info.opClass[id] = it->second;
    }

    const std::optional<NodeId> outputId = graph.outputNode();
    if (!outputId)
        return makeError({}, "graph '" + graph.name + "' has no output node");
    if (!graph.numFwdOutputs)
        return makeError(
            {}, "graph '" + graph.name +
                    "': the number of forward outputs is unknown (a joint graph from torch 1.13 needs "
                    "its .meta.json sidecar; torch 2 graphs carry output descriptors)");

    size_t calls = 0, sized = 0;
    for (const Node& node : graph.nodes())
        if (node.op == NodeOp::CallFunction) {
            ++calls;
            sized += node.outputKind != OutputKind::Unknown;
        }
    if (calls > 0 && sized == 0 && !forDefaultPartition)
        return makeError(
            {}, "graph '" + graph.name +
                    "' carries no tensor metadata (shapes and dtypes), which the partitioner weighs "
                    "values by: load it with its .meta.json sidecar, or export it with jointscope_torch");
    // torch's static_lifetime_input_indices (primal positions), as the capture or the log's fw_metadata
    // records them; under torch.compile lifted parameters carry PlainAOTInput descriptors, so these come
    // first.
    const std::optional<std::vector<int64_t>> staticIndices = staticLifetimeInputIndices(graph);
    int64_t primalIndex = 0;
    for (NodeId id = 0; id < n; ++id) {
        const Node& node = graph.node(id);
        Expected<uint64_t> bytes = sizeOf(node, rules);
        if (!bytes && !forDefaultPartition)
            return bytes.error();
        info.bytes[id] = bytes ? *bytes : 0; // the default partition reports sizes it knows, decides without
        info.hasTensorSize[id] =
            node.outputKind == OutputKind::Tensor && node.tensor() && node.tensor()->known();
        if (node.op == NodeOp::Placeholder && (isPrimal(node) || isFwdSeedOffset(node)))
            info.inputs.push_back(id);
        bool isStatic = false;
        if (node.op == NodeOp::Placeholder && isPrimal(node))
            isStatic = staticIndices ? std::find(staticIndices->begin(), staticIndices->end(),
                                                 primalIndex++) != staticIndices->end()
                                     : isStaticLifetimeInput(node);
        info.staticLifetime[id] = rules.treatParametersAsFreeToSave && isStatic;
    }

    // cleanup_recompute_tags: keep the boundary between two consecutive checkpointed regions.
    for (NodeId id = 0; id < n; ++id) {
        if (!mustRecompute(info.policy[id])) {
            // is_default_partition: a node outside every checkpoint region feeding one is its input: save it
            // (unless it is a getitem of a tuple produced inside a region).
            const Node& node = graph.node(id);
            if (!forDefaultPartition || node.meta.acGraphId != -1)
                continue;
            const bool feedsRegion = std::any_of(node.users.begin(), node.users.end(),
                                                 [&](NodeId u) { return mustRecompute(info.policy[u]); });
            const bool getItemOfRegionTuple =
                node.target.isGetItem() && !node.args.empty() && node.args[0].kind() == ValueKind::NodeRef &&
                graph.node(node.args[0].asNode()).outputKind != OutputKind::Tensor &&
                graph.node(node.args[0].asNode()).meta.acGraphId != -1;
            if (feedsRegion && !getItemOfRegionTuple) {
                info.policy[id] = Policy::MustSave;
                info.policyNote[id] = "input of a checkpoint region (cleanup_recompute_tags)";
            }
            continue;
        }
        for (NodeId user : graph.node(id).users)
            if (mustRecompute(info.policy[user]) && graph.node(user).meta.acGraphId != -1 &&
                graph.node(id).meta.acGraphId != -1 &&
                graph.node(user).meta.acGraphId > graph.node(id).meta.acGraphId) {
                info.policy[id] = Policy::MustSave;
                info.policyNote[id] = "boundary of checkpoint regions (cleanup_recompute_tags)";
            }
    }
    // force_save_collectives: the leaf tensor outputs of a collective (through getitems) must be saved.
    if (rules.forceSaveCollectives)
        for (NodeId id = 0; id < n; ++id)
            if (isCollective(graph.node(id)) && !mustRecompute(info.policy[id]))
                markLeafOutputs(graph, id, info, "collective (force_save_collectives)");
    // force_save_effectful_ops: the getitem outputs of with_effects in the forward.
    if (rules.forceSaveCollectives)
        for (NodeId id = 0; id < n; ++id) {
            const Node& node = graph.node(id);
            if (node.op == NodeOp::CallFunction && node.target.kind == TargetKind::HigherOrder &&
                node.target.op == "with_effects" && node.meta.partitionerTag != "is_backward")
                for (NodeId user : node.users)
                    if (graph.node(user).target.isGetItem())
                        markLeafOutputs(graph, user, info, "effectful op output (force_save_effectful_ops)");
        }
    // force_save_bw_mutation_src: the trailing copy_ nodes of the joint graph.
    if (rules.honorRecomputeTags) {
        std::vector<bool> mutatedInBackward(n, false);
        for (NodeId id = NodeId(n); id-- > 0;) {
            const Node& node = graph.node(id);
            if (node.op == NodeOp::Output)
                continue;
            if (!node.target.isOp("aten", "copy_") || node.args.size() < 2)
                break;
            if (node.args[0].kind() != ValueKind::NodeRef || node.args[1].kind() != ValueKind::NodeRef)
                continue;
            if (node.meta.partitionerTag == "must_be_in_backward")
                mutatedInBackward[node.args[0].asNode()] = true;
            if (node.meta.partitionerTag == "must_be_in_forward" &&
                mutatedInBackward[node.args[0].asNode()]) {
                info.policy[node.args[1].asNode()] = Policy::MustSave;
                info.policyNote[node.args[1].asNode()] = "source of a mutation repeated in backward";
            }
        }
    }

    // required backward: the users-closure of tangents and must-be-in-backward nodes (graph order is
    // topological).
    for (NodeId id = 0; id < n; ++id) {
        const Node& node = graph.node(id);
        if (isTangent(node) || (rules.bwdOutputsRequiredInBackward && mustBeInBackward(node)))
            info.requiredBw[id] = true;
        if (info.requiredBw[id])
            for (NodeId user : node.users)
                info.requiredBw[user] = true;
    }
    info.tangentsClosure = info.requiredBw;
    const std::vector<const Value*> leaves = graph.outputLeaves();
    const size_t numFwd = size_t(std::max<int64_t>(0, *graph.numFwdOutputs));
    if (numFwd > leaves.size())
        return makeError({}, "graph '" + graph.name + "' declares " + std::to_string(numFwd) +
                                 " forward outputs but returns " + std::to_string(leaves.size()) + " values");
    if (rules.bwdOutputsRequiredInBackward)
        for (size_t i = numFwd; i < leaves.size(); ++i)
            if (leaves[i]->kind() == ValueKind::NodeRef)
                info.requiredBw[leaves[i]->asNode()] = true;

    // required forward: the nodes of _extract_graph_with_inputs_outputs(joint, inputs, fwd_outputs,
    // "forward"): computable from the inputs, and live (an ancestor of a forward output or impure), plus
    // every input.
    std::vector<bool> valid(n, false);
    for (NodeId id : info.inputs)
        valid[id] = true;
    for (NodeId id = 0; id < n; ++id) {
        const Node& node = graph.node(id);
        if (node.op == NodeOp::GetAttr) {
            valid[id] = true;
        } else if (node.op == NodeOp::CallFunction &&
                   !(rules.bwdOutputsRequiredInBackward && mustBeInBackward(node))) {
            bool ok = true;
            node.forEachInput([&](NodeId in) { ok = ok && valid[in]; });
            valid[id] = ok;
        }
    }
    std::vector<NodeId> stack;
    auto markLive = [&](NodeId id) {
        if (valid[id] && !info.requiredFw[id]) {
            info.requiredFw[id] = true;
            stack.push_back(id);
        }
    };
    for (size_t i = 0; i < numFwd; ++i)
        if (leaves[i]->kind() == ValueKind::NodeRef) {
            const NodeId out = leaves[i]->asNode();
            if (!valid[out])
                return makeError({"", graph.node(out).meta.sourceLine, 0},
                                 "forward output '" + graph.node(out).name +
                                     "' depends on a tangent or a backward-only node");
            markLive(out);
        }
    for (NodeId id = 0; id < n; ++id)
        if (graph.node(id).op == NodeOp::CallFunction && isImpure(graph.node(id), rules.dceKeepsMutatingOps))
            markLive(id);
    while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        graph.node(id).forEachInput(markLive);
    }
    for (NodeId id : info.inputs)
        info.requiredFw[id] = true;
    int32_t order = 0;
    for (NodeId id = 0; id < n; ++id)
        if (info.requiredFw[id])
            info.fwOrder[id] = order++;

    // dist_from_bw, in reverse graph order.
    for (NodeId id = NodeId(n); id-- > 0;) {
        const Node& node = graph.node(id);
        if (node.op == NodeOp::Output) {
            info.distFromBw[id] = rules.outputDistIsInfinite ? kFarFromBackward : 0;
        } else if (!info.requiredFw[id]) {
            info.distFromBw[id] = 0;
        } else {
            int64_t dist = kFarFromBackward;
            for (NodeId user : node.users)
                dist = std::min(dist, info.distFromBw[user] + 1);
            info.distFromBw[id] = dist;
        }
    }
    return info;
}

namespace {

// The state of one solve_min_cut run.
class MinCutSolver {
public:
    MinCutSolver(const Graph& graph, const NodeInfo& info, const Ruleset& rules, const MinCutOptions& options,
                 const std::vector<bool>& dontBan)
        : graph_(graph), info_(info), rules_(rules), options_(options), dontBan_(dontBan),
          network_(uint32_t(2 * graph.size() + 2)), source_(uint32_t(2 * graph.size())), sink_(source_ + 1) {
        result_.banReason.assign(graph.size(), BanReason::None);
        result_.weight.assign(graph.size(), -1);
        banned_.assign(graph.size(), false);
    }

    Expected<MinCutResult> run();

private:
    static uint32_t in(NodeId id) { return 2 * id; }
    static uint32_t out(NodeId id) { return 2 * id + 1; }
    const Node& node(NodeId id) const { return graph_.node(id); }
    bool has(NodeId id, OpClass c) const { return (info_.opClass[id] & c) != 0; }

    bool isFusible(NodeId a, NodeId b) const;
    bool isMaterialized(NodeId id) const;
    bool isMaterializedBackwards(NodeId id) const;
    BanReason shouldBanRecomputation(NodeId id) const;
    Capacity nodeWeight(NodeId id) const;
    bool banIfAllowed(NodeId id, BanReason reason);
    int32_t findFirstUnfusible(const std::vector<NodeId>& starts, int32_t maxRange) const;
    void banUsedFarApart();
    void banLongFusibleChains();
    Diagnostic explainInfinitePath(const std::vector<uint32_t>& path) const;

    const Graph& graph_;
    const NodeInfo& info_;
    const Ruleset& rules_;
    const MinCutOptions& options_;
    const std::vector<bool>& dontBan_;
    FlowNetwork network_;
    uint32_t source_, sink_;
    std::vector<bool> banned_;
    MinCutResult result_;
    // Visit marks for the per-node walks, reset in O(1) by bumping the stamp.
    mutable std::vector<uint32_t> mark_, markUnfusible_;
    mutable uint32_t stamp_ = 0;
    uint32_t nextStamp() const {
        if (mark_.empty()) {
            mark_.assign(graph_.size(), 0);
            markUnfusible_.assign(graph_.size(), 0);
        }
        return ++stamp_;
    }
};

bool MinCutSolver::isFusible(NodeId a, NodeId b) const {
    const Node& consumer = node(b);
    if (rules_.catFusesProducers) {
        if (consumer.target.isOp("aten", "cat"))
            return true;
        if (consumer.target.ns == "higher_order" && consumer.target.op == "auto_functionalized") {
            bool mutated = false;
            for (const auto& kv : consumer.kwargs)
                kv.second.forEachNode([&](NodeId x) { mutated = mutated || x == a; });
            if (mutated)
                return true;
        }
    }
    return has(a, kFusible) && has(b, kFusible);
}

bool MinCutSolver::isMaterialized(NodeId id) const {
    if (node(id).op == NodeOp::Placeholder)
        return true;
    for (NodeId user : node(id).users)
        if (!isFusible(id, user))
            return true;
    return false;
}

bool MinCutSolver::isMaterializedBackwards(NodeId id) const {
    if (has(id, kView))
        return false;
    std::vector<NodeId> pending{id};
    const uint32_t stamp = nextStamp();
    mark_[id] = stamp;
    while (!pending.empty()) {
        const NodeId cur = pending.back();
        pending.pop_back();
        for (NodeId user : node(cur).users) {
            if (!info_.requiredFw[user] && !isFusible(cur, user))
                return true;
            if (has(user, kView) && mark_[user] != stamp) {
                mark_[user] = stamp;
                pending.push_back(user);
            }
        }
    }
    return false;
}

// should_ban_recomputation (torch 2) / ban_recomputation (functorch 1.13); the ruleset's switches select.
BanReason MinCutSolver::shouldBanRecomputation(NodeId id) const {
    const Node& n = node(id);
    if (n.op != NodeOp::CallFunction)
        return BanReason::None;
    if (n.target.isGetItem())
        return BanReason::None;
    if (info_.policy[id] == Policy::MustSave)
        return BanReason::MustSave;
    if (rules_.recomputeViews && has(id, kView))
        return BanReason::None;
    if (rules_.liftFreshRecomputable &&
        (n.target.isOp("aten", "lift_fresh_copy") || n.target.isOp("aten", "lift_fresh")) &&
        n.target.overload == "default")
        return BanReason::None;
    if (options_.banIfNotInAllowlist) {
        if (!has(id, kRecomputable))
            return BanReason::NotInAllowlist;
    } else if (has(id, kRandom) || has(id, kComputeIntensive)) {
        return BanReason::RandomOrComputeIntensive;
    }
    if (options_.banIfMaterializedBackward && isMaterializedBackwards(id))
        return BanReason::MaterializedBackward;
    const int64_t dist = info_.distFromBw[id];
    if (rules_.maxDistFromBw >= 0 && dist < 1000 && dist > rules_.maxDistFromBw)
        return BanReason::FarFromBackward;
    if (options_.banIfReduction) {
        if (rules_.sizeModel == SizeModel::TensorMeta && !info_.hasTensorSize[id])
            return BanReason::None;
        uint64_t inputBytes = 0;
        for (const Value& arg : n.args) // top-level node arguments only, as torch
            if (arg.kind() == ValueKind::NodeRef)
                inputBytes = saturatingAdd(inputBytes, info_.bytes[arg.asNode()]);
        if (saturatingMul(info_.bytes[id], 4) < inputBytes)
            return BanReason::Reduction;
    }
    return BanReason::None;
}

// get_node_weight and the sym / non-tensor cases before it.
Capacity MinCutSolver::nodeWeight(NodeId id) const {
    const Node& n = node(id);
    if (rules_.sizeModel == SizeModel::Val) {
        if (isSymNode(n))
            return n.outputKind == OutputKind::SymFloat ? 4 : 1;
        if (!info_.hasTensorSize[id])
            return kInfiniteCapacity; // tuples and other non-tensors cannot be saved whole
        if (info_.epilogueMutated[id])
            return kInfiniteCapacity; // the runtime epilogue mutates it after the forward returns
        if (info_.staticLifetime[id])
            return 0;
        if (rules_.recomputeViews && has(id, kView))
            return kInfiniteCapacity;
    } else if (!info_.hasTensorSize[id]) {
        return kInfiniteCapacity;
    }
    const int64_t dist = std::max<int64_t>(std::min<int64_t>(info_.distFromBw[id], 100), 1);
    // int(mem_sz * (1.1 ** dist)): the same double arithmetic as CPython.
    // Huge tensors weigh at most "infinite": converting a larger double to int64 is undefined.
    const double exact = double(info_.bytes[id]) * std::pow(1.1, double(dist));
    const Capacity weight = exact >= double(kInfiniteCapacity) ? kInfiniteCapacity : Capacity(exact);
    return isMaterialized(id) ? weight : std::min(weight * 2, kInfiniteCapacity);
}

// ban_recomputation_if_allowed
bool MinCutSolver::banIfAllowed(NodeId id, BanReason reason) {
    const Node& n = node(id);
    if (has(id, kView))
        return false;
    if (!dontBan_.empty() && dontBan_[id] && !isCollective(n))
        return false;
    if (mustRecompute(info_.policy[id]))
        return false;
    if (n.outputKind == OutputKind::SymFloat)
        return false;
    if (!banned_[id]) {
        banned_[id] = true;
        result_.banned.push_back(id);
        result_.banReason[id] = reason;
        network_.addEdge(source_, in(id), kInfiniteCapacity);
    }
    return true;
}

int32_t MinCutSolver::findFirstUnfusible(const std::vector<NodeId>& starts, int32_t maxRange) const {
    // heapq of (fw order, node, fusible): for equal order, a non-fusible entry pops first (False < True).
    using Entry = std::pair<int32_t, bool>;
    struct Item {
        int32_t order;
        bool fusible;
        NodeId id;
        bool operator>(const Item& o) const { return Entry{order, fusible} > Entry{o.order, o.fusible}; }
    };
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> heap;
    const uint32_t stamp = nextStamp();
    for (NodeId s : starts)
        if (mark_[s] != stamp) {
            mark_[s] = stamp;
            heap.push({info_.fwOrder[s], true, s});
        }
    while (!heap.empty()) {
        const Item item = heap.top();
        heap.pop();
        if (!item.fusible)
            return item.order;
        for (NodeId user : node(item.id).users) {
            if (!info_.requiredFw[user] || info_.fwOrder[user] > maxRange)
                continue;
            const bool fusible = isFusible(item.id, user);
            std::vector<uint32_t>& pushed = fusible ? mark_ : markUnfusible_;
            if (pushed[user] != stamp) {
                pushed[user] = stamp;
                heap.push({info_.fwOrder[user], fusible, user});
            }
        }
    }
    return maxRange;
}

// The "used far apart" ban: a fusible user placed after the first unfusible use is unlikely to fuse with it.
void MinCutSolver::banUsedFarApart() {
    for (NodeId used = 0; used < graph_.size(); ++used) {
        if (!info_.requiredFw[used])
            continue;
        std::vector<NodeId> fwUsers;
        int32_t maxOrder = -1;
        for (NodeId user : node(used).users)
            if (info_.requiredFw[user]) {
                fwUsers.push_back(user);
                maxOrder = std::max(maxOrder, info_.fwOrder[user]);
            }
        if (fwUsers.empty())
            continue;
        const int32_t firstUnfusibleUse = findFirstUnfusible(fwUsers, maxOrder);
        for (NodeId user : fwUsers)
            if (info_.fwOrder[user] > firstUnfusibleUse && isFusible(used, user) && !banned_[user])
                banIfAllowed(user, BanReason::UsedFarApart);
    }
}

// The "long fusible chains" ban: cut chains of fusible ops that run more than 100 forward nodes.
void MinCutSolver::banLongFusibleChains() {
    std::vector<bool> visited(graph_.size(), false);
    using Item = std::pair<int32_t, NodeId>;
    for (NodeId start = 0; start < graph_.size(); ++start) {
        if (!info_.requiredFw[start])
            continue;
        std::priority_queue<Item, std::vector<Item>, std::greater<Item>> fusible;
        const int32_t startOrder = info_.fwOrder[start];
        fusible.push({startOrder, start});
        while (!fusible.empty()) {
            const NodeId cur = fusible.top().second;
            fusible.pop();
            if (visited[cur])
                continue;
            visited[cur] = true;
            if (info_.fwOrder[cur] > startOrder + 100 && fusible.empty()) {
                banIfAllowed(cur, BanReason::LongFusibleChain);
                break;
            }
            for (NodeId user : node(cur).users)
                if (info_.requiredFw[user] && isFusible(cur, user) && !banned_[user])
                    fusible.push({info_.fwOrder[user], user});
        }
    }
}

std::string describe(const Node& n) {
    return "'" + n.name + "' (" + (n.op == NodeOp::Placeholder ? std::string("placeholder") : n.target.text) +
           ")";
}

// _find_infinite_capacity_path, reported in the user's terms.
Diagnostic MinCutSolver::explainInfinitePath(const std::vector<uint32_t>& path) const {
    std::string chain;
    uint32_t firstLine = 0;
    std::vector<std::string> names;
    for (size_t i = 0; i + 1 < path.size(); ++i) {
        const uint32_t u = path[i], v = path[i + 1];
        // x_in and x_out of one node are one step on the user's path.
        for (const uint32_t vertex : {u, v})
            if (vertex != source_ && vertex != sink_ &&
                (names.empty() || names.back() != node(vertex / 2).name))
                names.push_back(node(vertex / 2).name);
        std::string step;
        if (u == source_) {
            const NodeId id = v / 2;
            step = describe(node(id)) + " is banned from recomputation [" +
                   std::string(banReasonText(result_.banReason[id])) + "]";
            firstLine = node(id).meta.sourceLine;
        } else if (v == sink_) {
            const NodeId id = u / 2;
            if (mustRecompute(info_.policy[id]) && u == in(id))
                step = describe(node(id)) + " must be recomputed [" +
                       std::string(policyName(info_.policy[id])) + " policy]";
            else
                step = describe(node(id)) + " is required in the backward [tangent closure]";
        } else if (u % 2 == 0 && v == u + 1) {
            const NodeId id = u / 2;
            step = describe(node(id)) + " cannot be saved [" +
                   std::string(info_.hasTensorSize[id] ? "view recomputed by recompute_views"
                                                       : "its output is not a single tensor") +
                   "]";
        } else {
            step = describe(node(v / 2)) + " reads " + describe(node(u / 2));
        }
        if (!chain.empty())
            chain += "\n  -> ";
        chain += step;
    }
    Diagnostic d =
        makeError({"", firstLine, 0},
                  "no finite cut: these decisions contradict each other (a value that may not be recomputed "
                  "feeds one that must be, through nodes that cannot be saved):\n  " +
                      chain);
    d.nodes = std::move(names);
    return d;
}

Expected<MinCutResult> MinCutSolver::run() {
    const size_t n = graph_.size();
    std::vector<bool> isInput(n, false);
    for (NodeId id : info_.inputs)
        isInput[id] = true;
    for (NodeId id = 0; id < n; ++id) {
        const Node& nd = node(id);
        if (nd.op == NodeOp::Output)
            continue;
        if (info_.requiredBw[id]) {
            // Note [tangents_closure vs required_bw_nodes]: a backward output computed from forward values
            // alone must be available to the backward (saved or recomputed), not computed there.
            const bool computedInBackward =
                rules_.tangentsClosure ? bool(info_.tangentsClosure[id]) : !isInput[id];
            if (computedInBackward) {
                network_.addEdge(in(id), sink_, kInfiniteCapacity);
                continue;
            }
            network_.addEdge(out(id), sink_, kInfiniteCapacity);
        }
        if (mustRecompute(info_.policy[id])) {
            network_.addEdge(in(id), sink_, kInfiniteCapacity);
            continue;
        }
        const bool primalLike =
            rules_.primalSourceByTargetName
                ? nd.op == NodeOp::Placeholder && nd.target.text.find("primals") != std::string::npos
                : isInput[id];
        if (primalLike)
            banIfAllowed(id, BanReason::Input);
        if (info_.requiredFw[id])
            if (const BanReason reason = shouldBanRecomputation(id); reason != BanReason::None)
                banIfAllowed(id, reason);
        const Capacity weight = nodeWeight(id);
        result_.weight[id] = weight;
        network_.addEdge(in(id), out(id), weight);
        for (NodeId user : nd.users)
            network_.addEdge(out(id), in(user), kInfiniteCapacity);
    }
    if (options_.banIfUsedFarApart)
        banUsedFarApart();
    if (options_.banIfLongFusibleChains)
        banLongFusibleChains();

    const std::vector<uint32_t> infinite = network_.infinitePath(source_, sink_);
    if (!infinite.empty())
        return explainInfinitePath(infinite);
    result_.cutValue = network_.maxFlow(source_, sink_);
    const std::vector<bool> sinkSide = network_.sinkSide(sink_);
    result_.recomputeSide.assign(n, false);
    for (NodeId id = 0; id < n; ++id) {
        result_.recomputeSide[id] = sinkSide[in(id)];
        if (result_.weight[id] >= 0 && !sinkSide[in(id)] && sinkSide[out(id)])
            result_.saved.push_back(id);
    }
    if (options_.keepNetwork)
        result_.network = std::move(network_);
    return std::move(result_);
}

} // namespace

Expected<MinCutResult> solveMinCut(const Graph& graph, const NodeInfo& info, const Ruleset& rules,
                                   const MinCutOptions& options, const std::vector<bool>& dontBan) {
    MinCutSolver solver(graph, info, rules, options, dontBan);
    return solver.run();
}

} // namespace jointscope::partition
