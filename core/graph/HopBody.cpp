#include "graph/HopBody.h"

namespace jointscope {
namespace {

// The nested graph node `id` itself stands for; null when it reads none or the index is out of range.
const Graph* ownBody(const Graph& graph, NodeId id) {
    if (id >= graph.size())
        return nullptr;
    const int32_t index = graph.node(id).subgraph;
    if (index < 0 || size_t(index) >= graph.subgraphs().size())
        return nullptr;
    return graph.subgraph(index);
}

} // namespace

std::optional<size_t> bodyArgument(const Graph& graph, const Node& call) {
    if (call.target.kind != TargetKind::HigherOrder)
        return std::nullopt;
    const std::vector<Value>& args = call.args;
    for (size_t i = 0; i < args.size(); ++i)
        if (args[i].kind() == ValueKind::NodeRef && ownBody(graph, args[i].asNode()))
            return i;
    return std::nullopt;
}

const Graph* bodyOf(const Graph& graph, NodeId id) {
    if (const Graph* own = ownBody(graph, id))
        return own;
    if (id >= graph.size())
        return nullptr;
    if (const std::optional<size_t> arg = bodyArgument(graph, graph.node(id)))
        return ownBody(graph, graph.node(id).args[*arg].asNode());
    return nullptr;
}

} // namespace jointscope
