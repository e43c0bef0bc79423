// jointscope-cli shard: DTensor placements for every node of a joint graph on a device mesh (the sharding
// ILP of core/sharding), with its cost against the replicate and data-parallel baselines.
#include "CommModelOption.h"
#include "Command.h"
#include "CostOptions.h"

#include "cost/CostModel.h"
#include "cost/DeviceSpec.h"
#include "sharding/AutoparallelPlan.h"
#include "sharding/Workflow.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope::cli {
namespace {

using Json = nlohmann::ordered_json;
using namespace jointscope::sharding;

Json planJson(const Graph& graph, const ShardingProblem& problem, const Plan& plan) {
    Json placements = Json::object();
    for (NodeId id = 0; id < graph.size(); ++id) {
        if (plan.choice[id] < 0)
            continue;
        const Strategy& s = problem.nodes[id].options[plan.choice[id]];
        Json in = Json::array();
        for (const Placements& p : s.inputs)
            in.push_back(toString(p));
        Json out = Json::array();
        for (const Placements& p : s.outputs)
            out.push_back(toString(p));
        placements[graph.node(id).name] = {{"output", out.size() == 1 ? out[0] : out}, {"inputs", in}};
    }
    return placements;
}

Json costJson(const PlanCost& c) {
    return {{"total_cost", c.totalUs()}, {"comm_cost", c.commUs}, {"compute_cost", c.computeUs}};
}

// --compare-plan: autoparallel's plan costed with our model, and the nodes whose placement differs.
Json comparisonJson(const Graph& graph, const PlanComparison& c) {
    auto names = [&](const std::vector<NodeId>& ids) {
        Json list = Json::array();
        for (NodeId id : ids)
            list.push_back(graph.node(id).name);
        return list;
    };
    Json differing = Json::array();
    for (const PlacementDifference& d : c.differing)
        differing.push_back({{"node", graph.node(d.node).name},
                             {"jointscope", toString(d.ours)},
                             {"autoparallel", toString(d.theirs)}});
    return {{"source", c.theirs.source},
            {"autoparallel_objective",
             {{"total", c.theirs.total},
              {"compute", c.theirs.compute},
              {"comm", c.theirs.comm},
              {"transition", c.theirs.transition}}},
            {"jointscope_cost_of_autoparallel_plan", costJson(c.theirsCost)},
            {"jointscope_plan_cost", costJson(c.oursCost)},
            {"nodes_placed", c.mapped.placed},
            {"unmatched", names(c.mapped.unmatched)},
            {"inputs_differ", names(c.mapped.inputsDiffer)},
            {"unknown_nodes", c.mapped.unknownNames},
            {"differing", differing}};
}

// What the command line asks for.
struct ShardRequest {
    DeviceMesh mesh;
    cost::DeviceSpec device;
    SolveOptions options;
    std::string costModel;
    std::vector<std::string> explain; // node names
    std::optional<std::string> comparePlan;
    std::optional<std::string> logPath;
    bool json = false;
};

// --param-memory LOW:HIGH, or HIGH alone (LOW 0): fractions in [0, 1].
std::optional<std::pair<double, double>> parseParamMemory(std::string_view text) {
    const size_t colon = text.find(':');
    const std::optional<double> low =
        colon == std::string_view::npos ? std::optional<double>(0.0) : parseNumber(text.substr(0, colon));
    const std::optional<double> high =
        parseNumber(colon == std::string_view::npos ? text : text.substr(colon + 1));
    if (!low || !high || !(*low >= 0 && *low <= *high && *high <= 1))
        return std::nullopt;
    return std::pair{*low, *high};
}

int parseShardArgs(const Command& command, const ParsedArgs& args, ShardRequest& out) {
    const Expected<MeshSpec> spec = parseMeshSpec(
        args.valueOr("--mesh", ""), args.valueOr("--mesh-names", ""), args.valueOr("--topology", "h100"));
    if (!spec)
        return usageError(command, spec.error().message);
    const Expected<MeshSetup> setup = resolveMesh(*spec);
    if (!setup)
        return usageError(command, setup.error().message);
    out.mesh = setup->mesh;
    out.device = setup->device;
    if (int code = applyCommModel(command, args, out.mesh); code != kExitOk)
        return code;
    SolveOptions& options = out.options;
    for (const std::string& pin : args.values("--pin")) {
        const size_t eq = pin.rfind('=');
        std::optional<Placements> p =
            eq == std::string::npos ? std::nullopt : parsePlacements(pin.substr(eq + 1));
        if (!p)
            return usageError(command, "--pin takes NODE=PLACEMENT like mm_1=S(0)R; got '" + pin + "'");
        options.pins.push_back({pin.substr(0, eq), *p, "--pin"});
    }
    const TypedOption<int64_t> rounds = integerOption(args, "--cluster-rounds", 0, 64);
    if (!rounds.error.empty())
        return usageError(command, rounds.error);
    if (rounds.value)
        options.clusterRounds = static_cast<int>(*rounds.value);
    const TypedOption<double> limit = numberOption(args, "--time-limit", 0, 1e9, /*lowOpen=*/true);
    if (!limit.error.empty())
        return usageError(command, limit.error);
    if (limit.value)
        options.timeLimitSeconds = *limit.value;
    const std::string solver = args.valueOr("--solver", "auto");
    if (solver == "exact")
        options.method = SolveOptions::Method::Exact;
    else if (solver == "decomposed")
        options.method = SolveOptions::Method::Decomposed;
    else if (solver != "auto")
        return usageError(command, "unknown --solver '" + solver + "' (auto, exact or decomposed)");
    const TypedOption<double> gap = numberOption(args, "--gap", 0, 100);
    if (!gap.error.empty())
        return usageError(command, gap.error);
    if (gap.value)
        options.gap = *gap.value / 100;
    if (std::optional<std::string> mem = args.value("--param-memory")) {
        const auto range = parseParamMemory(*mem);
        if (!range)
            return usageError(command,
                              "--param-memory takes LOW:HIGH fractions in [0, 1]; got '" + *mem + "'");
        options.paramMemoryLow = range->first;
        options.paramMemoryHigh = range->second;
    }
    out.costModel = args.valueOr("--cost-model", "roofline");
    if (out.costModel != "roofline" && out.costModel != "profiled" && out.costModel != "autoparallel")
        return usageError(command, "unknown --cost-model '" + out.costModel +
                                       "' (roofline, profiled or autoparallel)");
    out.explain = args.values("--explain");
    out.comparePlan = args.value("--compare-plan");
    out.logPath = args.value("--log");
    out.json = args.has("--json");
    return kExitOk;
}

// What the solve found, with what its report needs.
struct ShardOutcome {
    Graph graph;
    std::optional<ComputeModel> model;
    CostSetup profiles; // owns the database the calibration reads
    std::optional<ShardingSolution> solution;
    std::vector<std::string> explain; // explainPlacement of each node asked
    std::optional<PlanComparison> comparison;
};

// Compute: the roofline on local shapes, calibrated per node by measured profiles with --cost-model
// profiled.
int solveShard(const Command& command, const ParsedArgs& args, const ShardRequest& request,
               ShardOutcome& out) {
    if (int code = loadOneGraph(command, args, out.graph); code != kExitOk)
        return code;
    const Graph& graph = out.graph;
    out.model.emplace(cost::RooflineModel(request.device));
    if (request.costModel == "profiled") {
        out.profiles.device = request.device;
        if (int code = openProfiledModel(command, args, out.graph, out.profiles); code != kExitOk)
            return code;
        out.model->calibrate(graph, *out.profiles.model);
    } else if (request.costModel == "autoparallel") {
        out.model = autoparallelComputeModel(request.device);
    }
    Expected<ShardingSolution> solution =
        solveWithBaselines(graph, request.mesh, request.options, *out.model);
    if (!solution) {
        Diagnostic d = solution.error();
        d.loc.file = args.positional[0];
        return inputError(d);
    }
    out.solution = solution.take();
    for (const std::string& name : request.explain) {
        const std::optional<NodeId> id = graph.find(name);
        if (!id)
            return usageError(command, "--explain: no node named " + name);
        out.explain.push_back(explainPlacement(graph, *out.solution, *id));
    }
    if (request.comparePlan) {
        Expected<AutoparallelPlan> theirs = loadAutoparallelPlan(*request.comparePlan);
        if (!theirs)
            return inputError(theirs.error());
        Expected<PlanComparison> c =
            compareWithAutoparallel(graph, *out.solution, theirs.take(), *request.comparePlan);
        if (!c)
            return inputError(c.error());
        out.comparison = c.take();
    }
    return kExitOk;
}

void printShardJson(const ShardRequest& request, const ShardOutcome& out) {
    const Graph& graph = out.graph;
    const ShardingSolution& solution = *out.solution;
    const ShardingProblem& problem = *solution.problem;
    const Plan& plan = solution.plan;
    const DeviceMesh& mesh = request.mesh;
    Json j;
    j["mesh"] = {{"shape", mesh.shape}, {"names", mesh.names}, {"topology", mesh.topology}};
    j["placements"] = planJson(graph, problem, plan);
    const Json c = costJson(plan.cost);
    for (auto it = c.begin(); it != c.end(); ++it)
        j[it.key()] = it.value();
    j["optimal"] = plan.optimal;
    j["lower_bound"] = plan.lowerBound;
    j["gap"] = plan.gap();
    j["solver"] = plan.decomposed ? "decomposed" : "exact";
    j["variable_groups"] = plan.groups;
    j["baselines"] = {
        {"replicate", costJson(solution.replicate)},
        {"data_parallel", solution.dataParallel ? costJson(*solution.dataParallel) : Json(nullptr)}};
    if (!solution.dataParallel)
        j["baselines"]["data_parallel_why_not"] = solution.dataParallelWhyNot;
    if (!solution.replicatedWhy.empty())
        j["replicated_why"] = solution.replicatedWhy;
    const JointRoles roles = jointRoles(graph);
    Json data = Json::array();
    for (NodeId d : roles.dataInputs)
        data.push_back(graph.node(d).name);
    j["roles"] = {{"parameters", roles.paramGrad.size()}, {"data_inputs", data}};
    j["compute_model"] = {{"kind", request.costModel},
                          {"device", request.device.cudaName},
                          {"torch_version", out.profiles.torchVersion},
                          {"calibrated_nodes", out.model->calibratedNodes()}};
    j["comm_model"] = std::string(commModelKind(mesh));
    j["comm_model_source"] = commModelDescription(mesh);
    j["redistributions"] = redistributionsJson(graph, problem, plan, *out.model);
    j["seconds"] = solution.seconds;
    std::vector<std::string> warnings = out.profiles.warnings;
    warnings.insert(warnings.end(), problem.warnings.begin(), problem.warnings.end());
    j["warnings"] = warnings;
    if (!out.explain.empty())
        j["explain"] = out.explain;
    if (out.comparison)
        j["compare"] = comparisonJson(graph, *out.comparison);
    std::printf("%s\n", j.dump(2).c_str());
}

void printComparison(const Graph& graph, const PlanComparison& c) {
    std::printf("autoparallel's plan (%s): its objective %.4g (compute %.4g, comm %.4g, transitions %.4g); "
                "under jointscope's model %.4g us (compute %.4g us, comm %.4g us) against jointscope's "
                "%.4g us\n",
                c.theirs.source.c_str(), c.theirs.total, c.theirs.compute, c.theirs.comm, c.theirs.transition,
                c.theirsCost.totalUs(), c.theirsCost.computeUs, c.theirsCost.commUs, c.oursCost.totalUs());
    if (!c.mapped.unmatched.empty())
        std::printf("%zu nodes have a placement no jointscope option has (costed at the closest option)\n",
                    c.mapped.unmatched.size());
    std::printf("%zu nodes placed differently:\n", c.differing.size());
    for (const PlacementDifference& d : c.differing)
        std::printf("  %s: jointscope %s, autoparallel %s\n", graph.node(d.node).name.c_str(),
                    toString(d.ours).c_str(), toString(d.theirs).c_str());
}

void printShardText(const ShardRequest& request, const ShardOutcome& out) {
    const Graph& graph = out.graph;
    const ShardingSolution& solution = *out.solution;
    const ShardingProblem& problem = *solution.problem;
    const Plan& plan = solution.plan;
    for (const std::string& w : out.profiles.warnings)
        std::fprintf(stderr, "jointscope-cli: warning: %s\n", w.c_str());
    for (const std::string& w : problem.warnings)
        std::fprintf(stderr, "jointscope-cli: warning: %s\n", w.c_str());
    if (request.costModel == "profiled")
        std::printf("compute: roofline calibrated by profiles of %s (torch %s) on %zu nodes\n",
                    request.device.cudaName.c_str(), out.profiles.torchVersion.c_str(),
                    out.model->calibratedNodes());
    std::printf("mesh %s: total %.4g us (compute %.4g us, comm %.4g us)%s in %.3f s\n",
                request.mesh.str().c_str(), plan.cost.totalUs(), plan.cost.computeUs, plan.cost.commUs,
                plan.optimal ? "" : " (not proven optimal)", solution.seconds);
    std::printf("cost %.6g us, lower bound %.6g us, gap %.2f %% (%s solve)\n", plan.cost.totalUs(),
                plan.lowerBound, 100 * plan.gap(), plan.decomposed ? "decomposed" : "exact");
    std::printf("baselines: replicate %.4g us", solution.replicate.totalUs());
    if (solution.dataParallel)
        std::printf(", data parallel %.4g us", solution.dataParallel->totalUs());
    else
        std::printf("; no data parallel: %s", solution.dataParallelWhyNot.c_str());
    std::printf("\n");
    if (!solution.replicatedWhy.empty())
        std::printf("%s\n", solution.replicatedWhy.c_str());
    for (NodeId id = 0; id < graph.size(); ++id)
        if (plan.choice[id] >= 0 && graph.node(id).op == NodeOp::Placeholder)
            std::printf("  %s: %s\n", graph.node(id).name.c_str(),
                        toString(problem.nodes[id].options[plan.choice[id]].outputs[0]).c_str());
    for (const std::string& e : out.explain)
        std::printf("%s", e.c_str());
    if (out.comparison)
        printComparison(graph, *out.comparison);
}

// Parse the command line, solve, then report: the annotated graph (--log), JSON or text.
int runShard(const ParsedArgs& args) {
    const Command& command = shardCommand();
    ShardRequest request;
    if (int code = parseShardArgs(command, args, request); code != kExitOk)
        return code;
#ifndef JOINTSCOPE_HAVE_CBC
    std::fprintf(stderr,
                 "jointscope-cli: error: shard needs COIN-OR CBC; this build has none (configure with "
                 "-DJOINTSCOPE_WITH_CBC=ON)\n");
    return kExitUsage;
#endif
    ShardOutcome out;
    if (int code = solveShard(command, args, request, out); code != kExitOk)
        return code;
    if (request.logPath && !writeOutputFile(*request.logPath, annotatedLog(out.graph, *out.solution->problem,
                                                                           out.solution->plan, *out.model)))
        return kExitBadInput;
    if (request.json)
        printShardJson(request, out);
    else
        printShardText(request, out);
    return kExitOk;
}

} // namespace

const Command& shardCommand() {
    static const Command command{
        "shard",
        {"FILE"},
        "DTensor placements for a joint graph on a device mesh (ILP with CBC), against replicate / data "
        "parallel.",
        {graphOption(),
         metaOption(),
         {"--mesh", "", "SHAPE", "mesh sizes: 8x8, 2x2, 4", true},
         {"--mesh-names", "", "NAMES", "comma-separated mesh dimension names (dp,tp)"},
         {"--topology", "", "T", "h100 (default), a100 or gb200: link bandwidths and the roofline device"},
         {"--pin", "", "NODE=P", "fix a node's output placement (repeatable)"},
         {"--param-memory", "", "LOW:HIGH",
          "parameters' local bytes as a fraction of replicated, in [LOW, HIGH]"},
         {"--cluster-rounds", "", "N",
          "nodes of repeated layers share variables when alike N edges around (0: off; default: off up to "
          "500 nodes, else 3)"},
         {"--time-limit", "", "S", "give up on the ILP after S seconds (default 60)"},
         {"--solver", "", "M",
          "exact (the whole LP), decomposed (a TRW-S lower bound and restricted ILPs, to a certified gap) "
          "or auto (default: decomposed on meshes of 4 or more dimensions, and of 3 for graphs above 500 "
          "nodes or 10,000 options)"},
         {"--gap", "", "PCT",
          "decomposed: stop once the plan is within PCT % of the lower bound (default 1)"},
         {"--cost-model", "", "M",
          "compute cost: roofline (default) on local shapes, or profiled: the roofline scaled per node by "
          "measured / roofline time on its own shapes, or autoparallel: its compute estimate (70 % of peak, "
          "a 7 us floor per op)"},
         commModelOption(),
         {"--db", "", "PATH",
          "profile database for --cost-model profiled and --comm-model measured (default: the user cache's)"},
         {"--torch-version", "", "V",
          "torch version of the profiles to use (default: the only one in the DB)"},
         {"--explain", "", "NODE", "why NODE has its placement (repeatable)"},
         {"--log", "", "OUT", "write the annotated graph (autoparallel style)"},
         {"--compare-plan", "", "PLAN",
          "autoparallel's plan (a TORCH_TRACE log with its autoparallel_solution artifact, or that JSON) "
          "costed "
          "with jointscope's model, and the nodes placed differently"},
         jsonOption()},
        1,
        1,
        &runShard,
    };
    return command;
}

} // namespace jointscope::cli
