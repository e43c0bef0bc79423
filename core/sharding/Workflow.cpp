#include "sharding/Workflow.h"

#include "support/Format.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace jointscope::sharding {
namespace {

constexpr size_t kMaxMeshDims = 4;
constexpr int64_t kMaxMeshSize = int64_t(1) << 20; // per dimension, as parseMeshShape bounds it

std::string_view trimmed(std::string_view text) {
    const size_t begin = text.find_first_not_of(" \t\r\n");
    if (begin == std::string_view::npos)
        return {};
    return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

std::string shapeText(const std::vector<int64_t>& shape) {
    std::string out;
    for (size_t i = 0; i < shape.size(); ++i)
        out += (i ? "x" : "") + std::to_string(shape[i]);
    return out;
}

Diagnostic shapeError(std::string_view text) {
    return makeError({}, "mesh '" + std::string(text) +
                             "': give sizes like 2x2, 8x8 or 4 (at most 4 dimensions)");
}

} // namespace

Expected<MeshSpec> makeMeshSpec(std::vector<int64_t> shape, std::vector<std::string> names,
                                std::string_view topology) {
    const bool sizesOk =
        std::all_of(shape.begin(), shape.end(), [](int64_t s) { return s > 0 && s <= kMaxMeshSize; });
    if (shape.empty() || shape.size() > kMaxMeshDims || !sizesOk)
        return shapeError(shapeText(shape));
    if (!names.empty() && names.size() != shape.size()) {
        std::string joined;
        for (size_t i = 0; i < names.size(); ++i)
            joined += (i ? "," : "") + names[i];
        return makeError({}, "mesh names '" + joined + "': one name per mesh dimension (" +
                                 std::to_string(shape.size()) + ")");
    }
    if (!findTopology(topology))
        return makeError({}, "unknown topology '" + std::string(topology) + "' (h100, a100 or gb200)");
    MeshSpec spec;
    spec.shape = std::move(shape);
    spec.names = std::move(names);
    spec.topology = std::string(topology);
    return spec;
}

Expected<MeshSpec> parseMeshSpec(std::string_view shape, std::string_view names, std::string_view topology) {
    const std::optional<std::vector<int64_t>> sizes = parseMeshShape(trimmed(shape));
    if (!sizes)
        return shapeError(shape);
    std::vector<std::string> dimNames;
    if (std::string_view rest = trimmed(names); !rest.empty()) {
        for (;;) {
            const size_t comma = rest.find(',');
            dimNames.emplace_back(trimmed(rest.substr(0, comma)));
            if (comma == std::string_view::npos)
                break;
            rest.remove_prefix(comma + 1);
        }
        if (dimNames.size() != sizes->size())
            return makeError({}, "mesh names '" + std::string(names) + "': one name per mesh dimension (" +
                                     std::to_string(sizes->size()) + ")");
    }
    return makeMeshSpec(*sizes, std::move(dimNames), trimmed(topology));
}

Expected<MeshSetup> resolveMesh(const MeshSpec& spec) {
    const std::optional<Topology> topo = findTopology(spec.topology);
    if (!topo)
        return makeError({}, "unknown topology '" + spec.topology + "' (h100, a100 or gb200)");
    const std::optional<cost::DeviceSpec> device = cost::findDevice(topo->name);
    if (!device)
        return makeError({}, "no device spec for topology " + topo->name);
    return MeshSetup{DeviceMesh::make(spec.shape, spec.names, *topo), *device};
}

namespace {

bool shardsNothing(const ShardingProblem& problem, const Plan& plan) {
    for (size_t id = 0; id < plan.choice.size(); ++id) {
        if (plan.choice[id] < 0)
            continue;
        for (const Placements& out : problem.nodes[id].options[plan.choice[id]].outputs)
            for (const Placement& p : out)
                if (!p.isReplicate())
                    return false;
    }
    return true;
}

// A plan that keeps every node replicated, explained against the data-parallel baseline: the compute sharding
// would save and the collectives it would add. Without that baseline, its own reason is shown beside this.
std::string whyReplicated(const ShardingSolution& s) {
    if (!s.problem || !shardsNothing(*s.problem, s.plan))
        return {};
    if (!s.dataParallel)
        return "every node stays replicated; there is no data-parallel plan to compare with "
               "(the baseline line says why)";
    const PlanCost& dp = *s.dataParallel;
    return "every node stays replicated: data parallel would take compute from " +
           formatMicros(s.replicate.computeUs) + " to " + formatMicros(dp.computeUs) + " but add " +
           formatMicros(dp.commUs) + " of collectives (" + formatMicros(dp.totalUs()) + " in all, against " +
           formatMicros(s.replicate.totalUs()) + ")";
}

} // namespace

Expected<ShardingSolution> solveWithBaselines(const Graph& graph, const DeviceMesh& mesh,
                                              const SolveOptions& options, const ComputeModel& model,
                                              const ShardingSolution* reuse) {
    const auto start = std::chrono::steady_clock::now();
    ShardingSolution s;
    s.mesh = mesh;
    s.model = std::make_shared<const ComputeModel>(model);
    s.options = options;
    s.problem = reuse && reuse->problem
                    ? reuse->problem
                    : std::make_shared<const ShardingProblem>(buildStrategies(graph, mesh));
    if (std::getenv("JOINTSCOPE_SHARD_DEBUG"))
        std::fprintf(stderr, "sharding time: strategies %.3f s\n",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    Expected<Plan> plan = solvePlacement(graph, *s.problem, options, model);
    s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!plan)
        return plan.error();
    s.plan = plan.take();
    s.report = reportPlan(graph, *s.problem, s.plan, model);
    for (const Pin& p : localMapPins(graph))
        s.pinnedBy[p.node] = p.origin;
    for (const Pin& p : options.pins)
        s.pinnedBy[p.node] = p.origin;
    if (reuse && reuse->problem) {
        s.replicate = reuse->replicate;
        s.dataParallel = reuse->dataParallel;
        s.dataParallelWhyNot = reuse->dataParallelWhyNot;
        s.replicatedWhy = whyReplicated(s);
        return s;
    }
    s.replicate = evaluatePlan(graph, *s.problem, replicatePlan(*s.problem), model);
    Expected<std::vector<Pin>> dp = dataParallelPins(graph, *s.problem);
    if (!dp) {
        s.dataParallelWhyNot = dp.error().message;
    } else {
        SolveOptions dpOptions;
        dpOptions.pins = dp.take();
        if (Expected<Plan> p = solvePlacement(graph, *s.problem, dpOptions, model))
            s.dataParallel = p->cost;
        else
            s.dataParallelWhyNot = "its pins admit no plan: " + p.error().message;
    }
    s.replicatedWhy = whyReplicated(s);
    return s;
}

std::string explainPlacement(const Graph& graph, const ShardingSolution& solution, NodeId id) {
    if (!solution.problem || !solution.model)
        return {};
    return explainNode(graph, *solution.problem, solution.plan, id, solution.options, *solution.model);
}

} // namespace jointscope::sharding
