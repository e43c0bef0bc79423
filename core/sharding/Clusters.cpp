#include "sharding/Clusters.h"

#include "sharding/Cost.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace jointscope::sharding {

namespace {

bool hasOptions(const ShardingProblem& problem, NodeId id) {
    return !problem.nodes[id].options.empty();
}

void appendTensor(std::string& key, const TensorMeta& t) {
    key += std::to_string(static_cast<int>(t.dtype)) + "[";
    for (const SymInt& s : t.sizes)
        key += (s.isSymbolic() ? s.expr : std::to_string(s.value)) + ",";
    key += "]";
}

// Literal arguments as text, node references as '%': two copies of a layer print the same.
void appendValue(std::string& key, const Value& v) {
    key += std::to_string(static_cast<int>(v.kind())) + ":";
    switch (v.kind()) {
    case ValueKind::NodeRef:
        key += "%";
        break;
    case ValueKind::Bool:
    case ValueKind::Int:
    case ValueKind::DType:
        key += std::to_string(v.asInt());
        break;
    case ValueKind::Float: {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v.asFloat());
        key += buf;
        break;
    }
    default:
        key += v.text() + "/" + std::to_string(v.deviceIndex());
        break;
    }
    if (!v.items().empty()) {
        key += "(";
        for (const Value& item : v.items())
            appendValue(key, item), key += ",";
        key += ")";
    }
}

// Everything a node's strategies and costs are computed from: equal keys give equal option lists, compute
// costs and redistribution costs on the edges out of the node.
std::string nodeKey(const Graph& graph, const ShardingProblem& problem, NodeId id, const std::string& pin) {
    const Node& n = graph.node(id);
    const NodeStrategies& ns = problem.nodes[id];
    // A placeholder's target is its own name.
    std::string key = std::to_string(static_cast<int>(n.op)) + "|" +
                      (n.op == NodeOp::Placeholder ? std::string() : n.target.text) + "|" +
                      std::to_string(static_cast<int>(n.outputKind)) + "|" +
                      std::to_string(static_cast<int>(ns.kind)) + "|" + pin + "|";
    if (n.op == NodeOp::Placeholder)
        key += isTangent(n) ? "tangent|" : isPrimal(n) ? "primal|" : "input|";
    for (const TensorMeta& t : n.outputs)
        appendTensor(key, t);
    key += "|";
    for (const Value& v : n.args)
        appendValue(key, v);
    for (const auto& [name, v] : n.kwargs)
        key += name + "=", appendValue(key, v);
    key += "|";
    for (size_t k = 0; k < ns.inputs.size(); ++k) {
        key += std::to_string(ns.inputElement[k]) + ":";
        appendTensor(key, producedTensor(graph, ns.inputs[k], ns.inputElement[k]));
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
    std::vector<int32_t> colour(n, -1);
    {
        std::unordered_map<std::string, int32_t> ids;
        for (NodeId id = 0; id < n; ++id)
            if (hasOptions(problem, id))
                colour[id] = ids.emplace(nodeKey(graph, problem, id, id < pinKey.size() ? pinKey[id] : ""),
                                         static_cast<int32_t>(ids.size()))
                                 .first->second;
    }
    struct Use {
        NodeId consumer;
        int32_t position;
    };
    std::vector<std::vector<Use>> uses(n);
    for (NodeId v = 0; v < n; ++v) {
        if (!hasOptions(problem, v))
            continue;
        const NodeStrategies& ns = problem.nodes[v];
        for (size_t k = 0; k < ns.inputs.size(); ++k)
            if (hasOptions(problem, ns.inputs[k]))
                uses[ns.inputs[k]].push_back({v, static_cast<int32_t>(k)});
    }
    size_t count = 0;
    for (int round = 0; round < rounds; ++round) {
        std::map<std::vector<int32_t>, int32_t> ids;
        std::vector<int32_t> next(n, -1);
        std::vector<std::pair<int32_t, int32_t>> users;
        for (NodeId v = 0; v < n; ++v) {
            if (colour[v] < 0)
                continue;
            const NodeStrategies& ns = problem.nodes[v];
            std::vector<int32_t> signature{colour[v]};
            for (NodeId u : ns.inputs)
                signature.push_back(colour[u]);
            users.clear();
            for (const Use& use : uses[v])
                users.push_back({colour[use.consumer], use.position});
            std::sort(users.begin(), users.end());
            for (const auto& [c, k] : users)
                signature.push_back(c), signature.push_back(k);
            next[v] = ids.emplace(std::move(signature), static_cast<int32_t>(ids.size())).first->second;
        }
        colour = std::move(next);
        if (ids.size() == count)
            break;
        count = ids.size();
    }
    return classesFromColours(colour);
}

} // namespace jointscope::sharding
