// The placement ILP (autoparallel's formulation, solved with COIN-OR CBC): one strategy per node, consistent
// producer / consumer placements with redistribution costs on the edges, a parameter-memory window, pins, and
// forward / backward consistency (a parameter and its gradient, a forward output and its tangent).
#pragma once

#include "cost/CostModel.h"
#include "graph/Graph.h"
#include "sharding/Cost.h"
#include "sharding/Strategies.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jointscope::sharding {

struct Pin {
    std::string node;
    Placements placement; // of the node's (first) result
    std::string origin;   // "--pin", "local_map"
};

struct SolveOptions {
    std::vector<Pin> pins;
    // Parameters' total local bytes, as a fraction of their replicated bytes, lie in [low, high].
    double paramMemoryLow = 0.0;
    double paramMemoryHigh = 1.0;
    bool forwardBackwardConsistency = true;
    // Nodes in identical copies of a layer share their variables when their surroundings agree this many
    // edges away (see Clusters.h); 0 gives every node its own. More rounds: a finer grouping, a larger ILP.
    // kAutoClusterRounds: exact up to kExactNodeLimit nodes with options, else kLargeGraphRounds rounds
    // (docs/benchmarks.md "Sharding": 3 rounds cost 2.9 % less than 2 on 32 LLaMA layers, 4 only 0.05 %
    // less).
    static constexpr int kAutoClusterRounds = -1;
    static constexpr int kLargeGraphRounds = 3;
    static constexpr size_t kExactNodeLimit = 500;
    int clusterRounds = kAutoClusterRounds;
    double timeLimitSeconds = 60;
    // Exact: the reduced model's whole LP, branched when fractional. Decomposed: column generation with a
    // Lagrangian lower bound (PairBound.h), stopping within `gap` of it (a parameter-memory window relaxed
    // into the bound, every plan kept inside it). Auto: decomposed where options per node multiply: on
    // meshes of four or more dimensions, and on meshes of three for graphs above kExactNodeLimit nodes with
    // options or kExactOptionLimit options in all (one LLaMA block over 4x4x4 has 26k: exact in 11 s,
    // decomposed within 1 % in 0.5 s).
    enum class Method : uint8_t { Auto, Exact, Decomposed };
    static constexpr size_t kExactOptionLimit = 10000;
    Method method = Method::Auto;
    double gap = 0.01; // decomposed: (cost - lower bound) / cost at which it stops
};

struct PlanCost {
    double computeUs = 0;
    double commUs = 0;
    double totalUs() const { return computeUs + commUs; }
};

struct Plan {
    std::vector<int32_t> choice; // option index per node; -1 for sinks
    PlanCost cost;
    bool optimal = false;
    size_t groups = 0; // node groups sharing variables (the node count when nothing is clustered)
    // A proven lower bound on the optimum of the ILP solved (its node groups included), in the cost's µs.
    double lowerBound = 0;
    bool decomposed = false; // solved by column generation, not the exact LP
    double gap() const;      // (total - lower bound) / total; 0 for a free plan
};

// Every pin the graph itself carries: local_map nodes whose meta records out placements.
std::vector<Pin> localMapPins(const Graph& graph);

// The cost of a fixed plan under the same model the ILP optimizes.
PlanCost evaluatePlan(const Graph& graph, const ShardingProblem& problem, const std::vector<int32_t>& choice,
                      const ComputeModel& model);

// All-replicated: every node's all-R option.
std::vector<int32_t> replicatePlan(const ShardingProblem& problem);

// Parameters (primals with a gradient output) and their gradients, data inputs; from the joint graph's
// output list and num_fwd_outputs.
struct JointRoles {
    std::vector<std::pair<NodeId, NodeId>> paramGrad;     // placeholder -> gradient node
    std::vector<std::pair<NodeId, NodeId>> outputTangent; // forward output node -> tangent placeholder
    std::vector<NodeId> dataInputs;                       // primals without a gradient
    std::vector<std::pair<NodeId, NodeId>> inputGrad;     // a data input and its gradient
    bool dataGrad = false; // every primal had a gradient: the last one was taken as the data input
};
JointRoles jointRoles(const Graph& graph);

// Pins of the data-parallel baseline: parameters replicated, data inputs sharded on dim 0 over every mesh
// dimension. An error saying why when there is no such baseline: no data input with a batch dimension, or a
// batch that does not divide the mesh ("data input 'x' has batch 2, which 4 devices do not divide").
Expected<std::vector<Pin>> dataParallelPins(const Graph& graph, const ShardingProblem& problem);

// Solves the ILP. Errors name the pin or constraint that made it infeasible; without CBC, says so.
Expected<Plan> solvePlacement(const Graph& graph, const ShardingProblem& problem, const SolveOptions& options,
                              const ComputeModel& model);

// Why node `id` has its placement: the chosen option's costs against the best alternative with every other
// node kept, or the pin that forbids the others.
std::string explainNode(const Graph& graph, const ShardingProblem& problem, const Plan& plan, NodeId id,
                        const SolveOptions& options, const ComputeModel& model);

// autoparallel's annotated graph: each node followed by
// "# placement=(in, ...) -> out, cost=[transition per input, ...], compute=..", totals at the end.
std::string annotatedLog(const Graph& graph, const ShardingProblem& problem, const Plan& plan,
                         const ComputeModel& model);

} // namespace jointscope::sharding
