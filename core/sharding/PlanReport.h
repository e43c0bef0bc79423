// A solved placement plan spelled out per node and per edge: what each node runs, what it costs, and which
// producer -> consumer edges redistribute (the GUI's table, overlay and comparison read this).
#pragma once

#include "cost/CostModel.h"
#include "graph/Graph.h"
#include "sharding/Cost.h"
#include "sharding/Solver.h"
#include "sharding/Strategies.h"

#include <string>
#include <vector>

namespace jointscope::sharding {

struct NodeReport {
    bool placed = false;             // false for sinks (output, size queries): no placement
    std::vector<Placements> outputs; // one per result
    std::vector<Placements> inputs;  // one per NodeStrategies::inputs entry
    double computeUs = 0;
    double commUs = 0; // redistributions of this node's inputs
    size_t options = 0;
};

// One edge whose producer's placement differs from what its consumer reads, with the collectives between.
struct EdgeTransition {
    NodeId producer = kNoNode;
    NodeId consumer = kNoNode;
    size_t input = 0; // index into the consumer's NodeStrategies::inputs
    Placements from, to;
    Redistribution redistribution;
};

struct PlanReport {
    std::vector<NodeReport> nodes;           // by NodeId
    std::vector<EdgeTransition> transitions; // only the edges that cost something
    PlanCost total;                          // the sum of the nodes: evaluatePlan's figures
    bool optimal = false;
};

// Costs the way evaluatePlan does (same edges, same redistribution model), one node and one edge at a time.
PlanReport reportPlan(const Graph& graph, const ShardingProblem& problem, const Plan& plan,
                      const ComputeModel& model);

// The output placements node `id` can take (the distinct first outputs of its options), in option order.
std::vector<Placements> outputChoices(const ShardingProblem& problem, NodeId id);

// The collective's short human name: "all-gather", "reduce-scatter", "all-reduce", "all-to-all" (its
// collectiveName with dashes).
std::string collectiveLabel(Collective c);

} // namespace jointscope::sharding
