#include "graph/GraphStats.h"

#include "support/Saturating.h"

namespace jointscope {

std::vector<bool> backwardMask(const Graph& graph) {
    std::vector<bool> backward(graph.size(), false);
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& n = graph.node(id);
        if (n.op == NodeOp::Output)
            continue;
        bool isBackward = isTangent(n) || n.meta.partitionerTag == "is_backward";
        if (!isBackward)
            n.forEachInput([&](NodeId input) { isBackward = isBackward || (input < id && backward[input]); });
        backward[id] = isBackward;
    }
    return backward;
}

static uint64_t countSubgraphs(const Graph& graph) {
    uint64_t count = graph.subgraphs().size();
    for (const auto& sub : graph.subgraphs())
        count += countSubgraphs(*sub);
    return count;
}

GraphStats computeStats(const Graph& graph) {
    return computeStats(graph, backwardMask(graph));
}

GraphStats computeStats(const Graph& graph, const std::vector<bool>& backward) {
    GraphStats s;
    s.nodes = graph.size();
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& n = graph.node(id);
        switch (n.op) {
        case NodeOp::Placeholder:
            ++s.placeholders;
            s.primals += isPrimal(n) ? 1 : 0;
            s.tangents += isTangent(n) ? 1 : 0;
            break;
        case NodeOp::GetAttr: ++s.getAttrs; break;
        case NodeOp::CallFunction:
            ++s.callFunctions;
            ++(id < backward.size() && backward[id] ? s.backward : s.forward);
            break;
        default: break;
        }
        for (const TensorMeta& t : n.outputs)
            s.tensorBytes = saturatingAdd(s.tensorBytes, t.bytes().value_or(0));
    }
    s.subgraphs = countSubgraphs(graph);
    return s;
}

} // namespace jointscope
