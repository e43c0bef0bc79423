#include "sharding/Clusters.h"

#include "sharding/Cost.h"

#include "graph/ColourRefinement.h"

#include <algorithm>
#include <unordered_map>

namespace jointscope::sharding {

namespace {

bool hasOptions(const ShardingProblem& problem, NodeId id) {
    return !problem.nodes[id].options.empty();
}

// Everything a node's strategies and costs are computed from: equal keys give equal option lists, compute
// costs and redistribution costs on the edges out of the node.
std::string nodeKey(const Graph& graph, const ShardingProblem& problem, NodeId id, const std::string& pin) {
    const Node& n = graph.node(id);
    const NodeStrategies& ns = problem.nodes[id];
    std::string key = structuralKey(n) + "|" + std::to_string(static_cast<int>(ns.kind)) + "|" + pin + "|";
    if (n.op == NodeOp::Placeholder)
        key += isTangent(n) ? "tangent|" : isPrimal(n) ? "primal|" : "input|";
    key += "|";
    for (size_t k = 0; k < ns.inputs.size(); ++k) {
        key += std::to_string(ns.inputElement[k]) + ":";
        appendTensorKey(key, producedTensor(graph, ns.inputs[k], ns.inputElement[k]));
    }
    if (std::optional<LocalMapPlacements> lm = localMapPlacements(n)) {
        key += "|local_map";
        for (const Placements& p : lm->inputs)
            key += " " + toString(p);
        key += " ->";
        for (const Placements& p : lm->outputs)
            key += " " + toString(p);
    }
    key += "|" + std::to_string(ns.options.size());
    return key;
}

NodeClasses classesFromColours(const std::vector<int32_t>& colour) {
    NodeClasses classes;
    classes.classOf.assign(colour.size(), -1);
    std::unordered_map<int32_t, int32_t> classOfColour;
    for (NodeId id = 0; id < colour.size(); ++id) {
        if (colour[id] < 0)
            continue;
        auto [it, fresh] = classOfColour.emplace(colour[id], static_cast<int32_t>(classes.members.size()));
        if (fresh)
            classes.members.emplace_back();
        classes.classOf[id] = it->second;
        classes.members[it->second].push_back(id);
    }
    return classes;
}

} // namespace

NodeClasses singletonClasses(const ShardingProblem& problem) {
    std::vector<int32_t> colour(problem.nodes.size(), -1);
    for (NodeId id = 0; id < problem.nodes.size(); ++id)
        if (hasOptions(problem, id))
            colour[id] = static_cast<int32_t>(id);
    return classesFromColours(colour);
}

// Colour refinement (1-dimensional Weisfeiler-Leman), bounded: a node's colour is its own key, then, round by
// round, its colour with its producers' colours by argument position and its consumers' colours. Unbounded
// refinement would tell every layer apart by its distance from the graph's ends; a few rounds keep the
// copies of a layer together and still separate nodes whose surroundings differ.
NodeClasses clusterRepeatedNodes(const Graph& graph, const ShardingProblem& problem,
                                 const std::vector<std::string>& pinKey, int rounds) {
    const size_t n = problem.nodes.size();
    std::vector<std::string> keys(n);
    std::vector<std::vector<NodeId>> inputs(n);
    for (NodeId id = 0; id < n; ++id)
        if (hasOptions(problem, id)) {
            keys[id] = nodeKey(graph, problem, id, id < pinKey.size() ? pinKey[id] : "");
            inputs[id] = problem.nodes[id].inputs;
        }
    const std::vector<int32_t> colour = refineColours(coloursOfKeys(keys), inputs, {rounds, true});
    return classesFromColours(colour);
}

} // namespace jointscope::sharding
