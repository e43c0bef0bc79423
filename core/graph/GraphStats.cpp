#include "graph/GraphStats.h"

#include <algorithm>

#include "support/Saturating.h"

namespace jointscope {

namespace {

// Graphs that are backward graphs as a whole (the kind a log gives them): torch's partitioned backward
// (aot_backward_graph in TORCH_TRACE, "backward" in a TORCH_LOGS paste) and compiled autograd's graph.
bool isBackwardGraph(const Graph& graph) {
    for (const auto& [key, value] : graph.attributes)
        if (key == "kind")
            return value == "aot_backward_graph" || value == "backward" ||
                   value == "compiled_autograd_graph" || value == "compiled_autograd";
    return false;
}

} // namespace

std::vector<bool> backwardMask(const Graph& graph) {
    if (isBackwardGraph(graph)) {
        std::vector<bool> backward(graph.size(), false);
        for (NodeId id = 0; id < graph.size(); ++id)
            backward[id] = graph.node(id).op == NodeOp::CallFunction;
        return backward;
    }
    std::vector<bool> backward(graph.size(), false);
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& n = graph.node(id);
        if (n.op == NodeOp::Output)
            continue;
        // The file's own tags win: torch tags HOP body ops is_forward / is_backward when it partitions them.
        if (n.meta.partitionerTag == "is_forward")
            continue;
        bool isBackward = isTangent(n) || n.meta.partitionerTag == "is_backward";
        if (!isBackward)
            n.forEachInput([&](NodeId input) { isBackward = isBackward || (input < id && backward[input]); });
        backward[id] = isBackward;
    }
    return backward;
}

static void collectSubgraphs(const Graph& graph, std::vector<const Graph*>& out) {
    for (const auto& sub : graph.subgraphs()) {
        out.push_back(sub.get());
        collectSubgraphs(*sub, out);
    }
}

// Same computation: nodes of the same ops, targets, arguments (node references by position), outputs and
// nested bodies; names, placeholders' argument names and source metadata aside.
static bool sameContent(const Graph& a, const Graph& b) {
    if (a.size() != b.size() || a.subgraphs().size() != b.subgraphs().size())
        return false;
    for (NodeId id = 0; id < a.size(); ++id) {
        const Node& x = a.node(id);
        const Node& y = b.node(id);
        if (x.op != y.op || (x.op != NodeOp::Placeholder && !(x.target == y.target)) || !(x.args == y.args) ||
            !(x.kwargs == y.kwargs) || x.outputKind != y.outputKind || !(x.outputs == y.outputs) ||
            x.subgraph != y.subgraph)
            return false;
    }
    for (size_t i = 0; i < a.subgraphs().size(); ++i)
        if (!sameContent(*a.subgraphs()[i], *b.subgraphs()[i]))
            return false;
    return true;
}

static uint64_t countUnique(const std::vector<const Graph*>& all) {
    std::vector<const Graph*> unique;
    for (const Graph* g : all)
        if (std::none_of(unique.begin(), unique.end(), [&](const Graph* u) { return sameContent(*u, *g); }))
            unique.push_back(g);
    return unique.size();
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
        case NodeOp::GetAttr:
            ++s.getAttrs;
            break;
        case NodeOp::CallFunction:
            ++s.callFunctions;
            ++(id < backward.size() && backward[id] ? s.backward : s.forward);
            break;
        default:
            break;
        }
        for (const TensorMeta& t : n.outputs)
            s.tensorBytes = saturatingAdd(s.tensorBytes, t.bytes().value_or(0));
    }
    std::vector<const Graph*> bodies;
    collectSubgraphs(graph, bodies);
    s.subgraphs = bodies.size();
    s.uniqueSubgraphs = countUnique(bodies);
    return s;
}

} // namespace jointscope
