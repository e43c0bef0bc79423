#include "partition/DefaultPartition.h"

#include "partition/Extract.h"
#include "partition/JointGraph.h"
#include "partition/MinCut.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

namespace jointscope::partition {
namespace {

void appendOnce(std::vector<NodeId>& list, std::vector<bool>& listed, NodeId id) {
    if (!listed[id]) {
        listed[id] = true;
        list.push_back(id);
    }
}

} // namespace

Expected<SavedSet> defaultPartition(const Graph& joint) {
    if (!joint.numFwdOutputs)
        return makeError({}, "graph '" + joint.name + "': the number of forward outputs is unknown");
    std::vector<NodeId> inputs;
    for (NodeId id = 0; id < joint.size(); ++id) {
        const Node& n = joint.node(id);
        if (isPrimal(n) || isFwdSeedOffset(n))
            inputs.push_back(id);
    }
    const FwdBwdOutputs outputs = splitOutputs(joint, *joint.numFwdOutputs);
    Expected<ExtractionPlan> forwardOnly =
        planExtraction(joint, inputs, outputs.forward, ExtractSide::Forward);
    if (!forwardOnly)
        return forwardOnly.error();
    // The forward-only graph's nodes: its inputs and the calls it keeps.
    std::vector<bool> inForward = forwardOnly->kept;
    for (NodeId id : inputs)
        inForward[id] = true;

    SavedSet set;
    std::vector<bool> listed(joint.size(), false), listedSym(joint.size(), false);
    for (NodeId id = 0; id < joint.size(); ++id) {
        if (!inForward[id])
            continue;
        const Node& node = joint.node(id);
        const bool hasTensorMeta = node.outputKind == OutputKind::Tensor;
        if (isSymNode(node)) {
            appendOnce(set.savedSym, listedSym, id);
        } else if (!hasTensorMeta && node.op == NodeOp::CallFunction && !node.users.empty() &&
                   std::all_of(node.users.begin(), node.users.end(),
                               [&](NodeId u) { return joint.node(u).target.isGetItem(); })) {
            // A tuple cannot be saved: its elements are.
            for (NodeId user : node.users)
                appendOnce(set.saved, listed, user);
        } else {
            std::vector<NodeId> backwardUsers;
            for (NodeId user : node.users)
                if (!inForward[user])
                    backwardUsers.push_back(user);
            const bool onlySizes =
                hasTensorMeta && std::all_of(backwardUsers.begin(), backwardUsers.end(),
                                             [&](NodeId u) { return isSymNode(joint.node(u)); });
            if (onlySizes) {
                for (NodeId user : backwardUsers)
                    appendOnce(set.savedSym, listedSym, user);
            } else {
                appendOnce(set.saved, listed, id);
            }
        }
    }
    Expected<FwdBwdGraphs> parts =
        extractForwardBackward(joint, set.saved, set.savedSym, *joint.numFwdOutputs);
    if (!parts)
        return parts.error();
    set.saved = parts->saved;
    set.savedSym = parts->savedSym;
    return set;
}

namespace {

// default_partition's skip list: runtime assertions and profiler spans, safe to duplicate.
bool isAssertOrProfilerSpan(const Node& node) {
    const Target& t = node.target;
    if (t.kind != TargetKind::OpOverload)
        return false;
    if (t.ns == "aten")
        return t.op == "_assert_scalar" || t.op == "_assert_async";
    return t.ns == "profiler" && (t.op == "_record_function_enter_new" || t.op == "_record_function_enter" ||
                                  t.op == "_record_function_exit");
}

bool isWaitTensor(const Node& node) {
    return node.target.kind == TargetKind::OpOverload && node.target.ns == "_c10d_functional" &&
           (node.target.op == "wait_tensor" || node.target.op == "wait_tensors");
}

// _is_assert_only_symbool: a SymBool read only by _assert_scalar.
bool isAssertOnlySymBool(const Graph& graph, const Node& node) {
    return node.outputKind == OutputKind::SymBool && !node.users.empty() &&
           std::all_of(node.users.begin(), node.users.end(), [&](NodeId u) {
               return graph.node(u).target.isOp("aten", "_assert_scalar");
           });
}

} // namespace

Expected<SavedSet> defaultPartitionByPlacement(const Graph& joint, const std::vector<uint8_t>& mustSave,
                                               const std::vector<uint8_t>& mustRecompute) {
    if (!joint.numFwdOutputs)
        return makeError({}, "graph '" + joint.name + "': the number of forward outputs is unknown");
    std::optional<NodeId> last;
    for (NodeId id = 0; id < joint.size(); ++id) {
        const Node& n = joint.node(id);
        if (n.meta.partitionerTag == "is_forward" || isPrimal(n) || isFwdSeedOffset(n))
            last = id;
    }
    if (!last)
        return makeError({}, "graph '" + joint.name + "' has no forward node (no primal, nothing tagged is_forward)");
    std::vector<bool> inForward(joint.size(), false);
    for (NodeId id = 0; id <= *last; ++id)
        inForward[id] = !isTangent(joint.node(id)) && joint.node(id).op != NodeOp::Output;

    SavedSet set;
    std::vector<bool> listed(joint.size(), false), listedSym(joint.size(), false);
    for (NodeId id = 0; id <= *last; ++id) {
        if (!inForward[id])
            continue;
        const Node& node = joint.node(id);
        if (node.op == NodeOp::GetAttr && node.subgraph >= 0)
            continue;
        if (isAssertOrProfilerSpan(node))
            continue;
        if (isSymNode(node)) {
            appendOnce(set.savedSym, listedSym, id);
            continue;
        }
        const bool multiOutput =
            !node.users.empty() && std::all_of(node.users.begin(), node.users.end(),
                                               [&](NodeId u) { return joint.node(u).target.isGetItem(); });
        if (multiOutput) // before MUST_SAVE: a tuple is never saved, its getitems are
            continue;
        const bool impure = node.op == NodeOp::CallFunction && isImpure(node, true) && !isWaitTensor(node);
        if (mustSave[id] || impure) {
            appendOnce(set.saved, listed, id);
            continue;
        }
        std::vector<NodeId> backwardUsers;
        for (NodeId user : node.users)
            if (!inForward[user])
                backwardUsers.push_back(user);
        if (std::all_of(backwardUsers.begin(), backwardUsers.end(),
                        [&](NodeId u) { return isSymNode(joint.node(u)); })) {
            // Only sizes are read (or nothing): save those, not the tensor.
            for (NodeId user : backwardUsers)
                appendOnce(set.savedSym, listedSym, user);
            continue;
        }
        if (!mustRecompute[id])
            appendOnce(set.saved, listed, id);
    }
    std::erase_if(set.savedSym, [&](NodeId id) { return isAssertOnlySymBool(joint, joint.node(id)); });
    Expected<FwdBwdGraphs> parts = extractForwardBackward(joint, set.saved, set.savedSym, *joint.numFwdOutputs);
    if (!parts)
        return parts.error();
    set.saved = parts->saved;
    set.savedSym = parts->savedSym;
    return set;
}

} // namespace jointscope::partition
