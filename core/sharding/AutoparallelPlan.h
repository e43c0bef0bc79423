// autoparallel's chosen plan, read back from what it writes into TORCH_TRACE (seed 002): the
// "autoparallel_solution" artifact (JSON: mesh, one entry per node with its placement, the placements its
// inputs are redistributed to and its costs) or, in logs from before that artifact, the
// "autoparallel_sharding_optimizer_log" artifact (the joint graph with "# placement=(in, ...) -> out,
// cost=[(comm, compute, transition), ...]" after every node). The plan is then put on the joint graph's own
// nodes (by name) and costed with jointscope's model beside jointscope's plan.
#pragma once

#include "graph/Graph.h"
#include "sharding/Solver.h"
#include "sharding/Strategies.h"
#include "sharding/Workflow.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::sharding {

struct AutoparallelNode {
    std::string name;
    std::vector<Placements> outputs; // one per result ("(RR, RR)" for a tuple)
    std::vector<std::optional<Placements>>
        inputs;             // what each input is redistributed to; nullopt: none/unknown
    double computeCost = 0; // autoparallel's own figures (its µs; transitions count 1)
    double commCost = 0;
    double transitionCost = 0;
    uint32_t line = 0; // where the node's entry is in the file read
};

struct AutoparallelPlan {
    std::vector<int64_t> meshShape; // empty when the source does not say (the optimizer log)
    std::vector<AutoparallelNode> nodes;
    // autoparallel's totals (its objective: compute + comm + transitions), from the artifact or the log.
    double total = 0, compute = 0, comm = 0, transition = 0;
    std::string source; // "autoparallel_solution" or "autoparallel_sharding_optimizer_log"
};

// Reads `text`: a TORCH_TRACE log (the last autoparallel_solution artifact, else the last optimizer log), the
// extracted solution JSON, or the optimizer log's text on its own. Errors carry file:line:col.
Expected<AutoparallelPlan> readAutoparallelPlan(std::string_view text, const std::string& fileName);
// readAutoparallelPlan on a file's contents.
Expected<AutoparallelPlan> loadAutoparallelPlan(const std::string& path);

// autoparallel's plan as options of `problem`: per node the option with autoparallel's output placements
// and, among those, the most input placements alike. A node whose output placement no option of ours has
// (an op our rules shard differently) keeps our closest option and is listed in `unmatched`.
struct MappedPlan {
    std::vector<int32_t> choice;                   // by NodeId; -1 for sinks
    std::vector<std::optional<Placements>> output; // autoparallel's (first) output placement, by NodeId
    std::vector<NodeId> unmatched;                 // autoparallel's placement is not one of our options
    std::vector<NodeId> inputsDiffer;              // output matched, some input placements did not
    std::vector<std::string> unknownNames;         // autoparallel nodes the graph does not have
    size_t placed = 0;                             // graph nodes autoparallel's plan places
};
MappedPlan mapAutoparallelPlan(const Graph& graph, const ShardingProblem& problem,
                               const AutoparallelPlan& plan);

// A node whose output placement in our plan is not autoparallel's.
struct PlacementDifference {
    NodeId node = kNoNode;
    Placements ours, theirs;
};
std::vector<PlacementDifference> differingPlacements(const ShardingProblem& problem, const Plan& ours,
                                                     const MappedPlan& theirs);

// autoparallel's plan beside a solved one, both costed with the solution's model (evaluatePlan).
struct PlanComparison {
    AutoparallelPlan theirs;
    MappedPlan mapped;
    PlanCost oursCost;   // the solution's plan
    PlanCost theirsCost; // autoparallel's plan as mapped
    std::vector<PlacementDifference> differing;
};
// An error when autoparallel solved for another mesh shape, or none of its nodes is in the graph.
Expected<PlanComparison> compareWithAutoparallel(const Graph& graph, const ShardingSolution& solution,
                                                 AutoparallelPlan theirs, const std::string& planFile);

} // namespace jointscope::sharding
