// Clustering of repeated layers (autoparallel's cluster links over torch's identical-region tracker): nodes
// that play the same part in identical layers share one set of ILP variables, so 32 identical layers solve as
// one.
//
// Any grouping of nodes whose strategies and costs are identical gives a valid, smaller ILP whose solutions
// are plans of the whole graph; the grouping only decides how much freedom is given up. Ours groups nodes
// whose ops, literal arguments, tensors, pins and neighbourhoods (up to `rounds` edges away) agree: the same
// node in another copy of a layer, while nodes near the graph's ends and unique nodes keep their own
// variables.
#pragma once

#include "graph/Graph.h"
#include "sharding/Strategies.h"

#include <cstdint>
#include <string>
#include <vector>

namespace jointscope::sharding {

struct NodeClasses {
    std::vector<int32_t> classOf;             // by NodeId; -1 for nodes without options
    std::vector<std::vector<NodeId>> members; // by class, in graph order; members[c][0] stands for the class
    size_t size() const { return members.size(); }
};

// One class per node that has options.
NodeClasses singletonClasses(const ShardingProblem& problem);

// `pinKey[id]` is the node's pinned placement as text, empty when free: differently pinned nodes never share.
NodeClasses clusterRepeatedNodes(const Graph& graph, const ShardingProblem& problem,
                                 const std::vector<std::string>& pinKey, int rounds);

} // namespace jointscope::sharding
