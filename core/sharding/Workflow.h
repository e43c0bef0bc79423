// The sharding workflow every front end runs, in one place: a mesh as the user writes it -> its topology,
// device and DeviceMesh -> strategies -> the placement ILP -> the replicate and data-parallel baselines.
#pragma once

#include "cost/DeviceSpec.h"
#include "graph/Graph.h"
#include "sharding/Cost.h"
#include "sharding/Mesh.h"
#include "sharding/PlanReport.h"
#include "sharding/Solver.h"
#include "sharding/Strategies.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::sharding {

// A mesh as the user describes it: sizes, optional dimension names, the cluster type.
struct MeshSpec {
    std::vector<int64_t> shape{2, 2};
    std::vector<std::string> names; // empty: d0, d1, ...
    std::string topology = "h100";

    friend bool operator==(const MeshSpec&, const MeshSpec&) = default;
};

// Checks sizes (1 to 4 dimensions, each positive), one name per dimension when names are given, and a known
// topology. Errors quote the bad part: "mesh names 'dp': one name per mesh dimension (2)".
Expected<MeshSpec> makeMeshSpec(std::vector<int64_t> shape, std::vector<std::string> names,
                                std::string_view topology);

// "2x2" + "dp, tp" + "h100" -> a checked spec. Blank names text: the default names.
Expected<MeshSpec> parseMeshSpec(std::string_view shape, std::string_view names, std::string_view topology);

// What solving on a spec's mesh needs: the mesh with its links and the roofline device of its topology.
struct MeshSetup {
    DeviceMesh mesh;
    cost::DeviceSpec device;
};
Expected<MeshSetup> resolveMesh(const MeshSpec& spec);

// A solved plan with everything the CLI's report and the GUI's dock show about it.
struct ShardingSolution {
    DeviceMesh mesh;
    std::shared_ptr<const ShardingProblem> problem;
    std::shared_ptr<const ComputeModel> model; // what the plan was costed with (explainNode needs it again)
    SolveOptions options;                      // what the plan was solved with
    Plan plan;
    PlanReport report;
    PlanCost replicate;
    std::optional<PlanCost> dataParallel; // none when there is no data-parallel plan:
    std::string dataParallelWhyNot;       // then why (dataParallelPins, or the solve's refusal)
    // When the plan shards nothing: which costs made sharding lose (whyReplicated); else empty.
    std::string replicatedWhy;
    std::map<std::string, std::string> pinnedBy; // node -> the pin's origin ("local_map", "--pin", "you")
    double seconds = 0;                          // strategies and the ILP, not the baselines
};

// Builds the strategies, solves the ILP and costs the baselines. Strategies and baselines depend on the graph
// and the mesh only: `reuse`, an earlier solution on the same graph and mesh, lends them instead. Errors are
// solvePlacement's (the pin or constraint that made the ILP infeasible; no CBC in this build).
Expected<ShardingSolution> solveWithBaselines(const Graph& graph, const DeviceMesh& mesh,
                                              const SolveOptions& options, const ComputeModel& model,
                                              const ShardingSolution* reuse = nullptr);

// Why node `id` has its placement in `solution` (explainNode with the solution's own options and model).
std::string explainPlacement(const Graph& graph, const ShardingSolution& solution, NodeId id);

} // namespace jointscope::sharding
