#include "partition/DefaultPartition.h"

#include "partition/Extract.h"
#include "partition/MinCut.h"

#include <algorithm>
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

} // namespace jointscope::partition
