#include "partition/SplitDw.h"

#include "partition/DefaultPartition.h"
#include "partition/Extract.h"

namespace jointscope::partition {

Expected<DiDwSplit> splitDiDw(const Graph& backward, int64_t numWeightGrads) {
    const std::optional<NodeId> outputId = backward.outputNode();
    if (!outputId)
        return makeError({}, "graph '" + backward.name + "' has no output node");
    const size_t outputs = splitOutputs(backward, 0).backward.size();
    if (numWeightGrads < 0 || size_t(numWeightGrads) > outputs)
        return makeError({"", backward.node(*outputId).meta.sourceLine, 0},
                         "--num-weight-grads " + std::to_string(numWeightGrads) + " is outside [0, " +
                             std::to_string(outputs) + "]: graph '" + backward.name + "' returns " +
                             std::to_string(outputs) + " values");
    Graph joint = backward;
    // Everything the backward reads is an input of dI: no tangents, no placement tags.
    for (NodeId id = 0; id < joint.size(); ++id) {
        Node& node = joint.node(id);
        node.meta.partitionerTag.clear();
        node.meta.recompute.clear();
    }
    std::vector<std::pair<NodeId, std::string>> renames;
    for (NodeId id = 0; id < joint.size(); ++id) {
        const Node& node = joint.node(id);
        if (node.op == NodeOp::Placeholder && node.name.rfind("tangent", 0) == 0)
            renames.emplace_back(id, "not_tngnt" + node.name.substr(std::string("tangents").size()));
    }
    if (!renames.empty()) {
        Graph renamed;
        renamed.name = joint.name;
        renamed.attributes = joint.attributes;
        for (const auto& sub : joint.subgraphs())
            renamed.addSubgraph(std::make_unique<Graph>(*sub));
        size_t next = 0;
        for (NodeId id = 0; id < joint.size(); ++id) {
            Node node = joint.node(id);
            if (next < renames.size() && renames[next].first == id) {
                node.name = renames[next].second;
                node.target = Target::name(node.name);
                ++next;
            }
            node.users.clear();
            renamed.addNode(std::move(node));
        }
        renamed.computeUsers();
        joint = std::move(renamed);
    }
    joint.numFwdOutputs = int64_t(outputs) - numWeightGrads;

    Expected<SavedSet> carried = defaultPartition(joint);
    if (!carried)
        return carried.error();
    Expected<FwdBwdGraphs> parts =
        extractForwardBackward(joint, carried->saved, carried->savedSym, *joint.numFwdOutputs);
    if (!parts)
        return parts.error();
    DiDwSplit split;
    split.di = std::move(parts->forward);
    split.dw = std::move(parts->backward);
    split.di.name = backward.name + "_di";
    split.dw.name = backward.name + "_dw";
    for (NodeId id : parts->saved)
        split.carried.push_back(joint.node(id).name);
    for (NodeId id : parts->savedSym)
        split.carried.push_back(joint.node(id).name);
    return split;
}

} // namespace jointscope::partition
