// Layouts place graph nodes; to place something else (a level of nested groups, a collapsed view's items),
// the layout runs on a stand-in graph with one node per thing.
#pragma once

#include "graph/Graph.h"

#include <string>
#include <vector>

namespace jointscope::layout {

// Thing i becomes call_function node `prefix`i reading the nodes inputs[i] lists.
inline Graph standInGraph(const std::vector<std::vector<NodeId>>& inputs, const std::string& prefix) {
    Graph graph;
    graph.reserve(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        Node node;
        node.name = prefix + std::to_string(i);
        node.op = NodeOp::CallFunction;
        for (NodeId in : inputs[i])
            node.args.push_back(Value::nodeRef(in));
        graph.addNode(std::move(node));
    }
    return graph;
}

} // namespace jointscope::layout
