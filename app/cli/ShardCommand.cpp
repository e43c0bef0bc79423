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

int runShard(const ParsedArgs& args) {
    const Command& command = shardCommand();
    const Expected<MeshSpec> spec = parseMeshSpec(
        args.valueOr("--mesh", ""), args.valueOr("--mesh-names", ""), args.valueOr("--topology", "h100"));
    if (!spec)
        return usageError(command, spec.error().message);
    const Expected<MeshSetup> setup = resolveMesh(*spec);
    if (!setup)
        return usageError(command, setup.error().message);
    DeviceMesh mesh = setup->mesh;
    const cost::DeviceSpec& device = setup->device;
    if (int code = applyCommModel(command, args, mesh); code != kExitOk)
        return code;

    SolveOptions options;
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
        // LOW:HIGH, or HIGH alone (LOW 0).
        const size_t colon = mem->find(':');
        const std::string_view text = *mem;
        const std::optional<double> parsedLow =
            colon == std::string::npos ? std::optional<double>(0.0) : parseNumber(text.substr(0, colon));
        const std::optional<double> parsedHigh =
            parseNumber(colon == std::string::npos ? text : text.substr(colon + 1));
        const bool ok = parsedLow && parsedHigh;
        const double low = parsedLow.value_or(0), high = parsedHigh.value_or(0);
        if (!ok || !(low >= 0 && low <= high && high <= 1))
            return usageError(command,
                              "--param-memory takes LOW:HIGH fractions in [0, 1]; got '" + *mem + "'");
        options.paramMemoryLow = low;
        options.paramMemoryHigh = high;
    }
#ifndef JOINTSCOPE_HAVE_CBC
    std::fprintf(stderr,
                 "jointscope-cli: error: shard needs COIN-OR CBC; this build has none (configure with "
                 "-DJOINTSCOPE_WITH_CBC=ON)\n");
    return kExitUsage;
#endif
    Graph graph;
    if (int code = loadOneGraph(command, args, graph); code != kExitOk)
        return code;
    // Compute: the roofline on local shapes, calibrated per node by measured profiles with --cost-model
    // profiled.
    ComputeModel model{cost::RooflineModel(device)};
    CostSetup profiles; // owns the database the calibration reads
    const std::string costModel = args.valueOr("--cost-model", "roofline");
    if (costModel == "profiled") {
        profiles.device = device;
        if (int code = openProfiledModel(command, args, graph, profiles); code != kExitOk)
            return code;
        model.calibrate(graph, *profiles.model);
    } else if (costModel == "autoparallel") {
        model = autoparallelComputeModel(device);
    } else if (costModel != "roofline") {
        return usageError(command,
                          "unknown --cost-model '" + costModel + "' (roofline, profiled or autoparallel)");
    }
    Expected<ShardingSolution> solution = solveWithBaselines(graph, mesh, options, model);
    if (!solution) {
        Diagnostic d = solution.error();
        d.loc.file = args.positional[0];
        return inputError(d);
    }
    const ShardingProblem& problem = *solution->problem;
    const Plan& plan = solution->plan;
    const PlanCost& replicate = solution->replicate;
    const std::optional<PlanCost>& dataParallel = solution->dataParallel;
    const double seconds = solution->seconds;
    std::vector<std::string> explain;
    for (const std::string& name : args.values("--explain")) {
        const std::optional<NodeId> id = graph.find(name);
        if (!id)
            return usageError(command, "--explain: no node named " + name);
        explain.push_back(explainPlacement(graph, *solution, *id));
    }
    std::optional<PlanComparison> comparison;
    if (std::optional<std::string> planFile = args.value("--compare-plan")) {
        Expected<AutoparallelPlan> theirs = loadAutoparallelPlan(*planFile);
        if (!theirs)
            return inputError(theirs.error());
        Expected<PlanComparison> c = compareWithAutoparallel(graph, *solution, theirs.take(), *planFile);
        if (!c)
            return inputError(c.error());
        comparison = c.take();
    }
    if (std::optional<std::string> log = args.value("--log"))
        if (!writeOutputFile(*log, annotatedLog(graph, problem, plan, model)))
            return kExitBadInput;
    if (args.has("--json")) {
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
        j["baselines"] = {{"replicate", costJson(replicate)},
                          {"data_parallel", dataParallel ? costJson(*dataParallel) : Json(nullptr)}};
        if (!dataParallel)
            j["baselines"]["data_parallel_why_not"] = solution->dataParallelWhyNot;
        if (!solution->replicatedWhy.empty())
            j["replicated_why"] = solution->replicatedWhy;
        const JointRoles roles = jointRoles(graph);
        Json data = Json::array();
        for (NodeId d : roles.dataInputs)
            data.push_back(graph.node(d).name);
        j["roles"] = {{"parameters", roles.paramGrad.size()}, {"data_inputs", data}};
        j["compute_model"] = {{"kind", costModel},
                              {"device", device.cudaName},
                              {"torch_version", profiles.torchVersion},
                              {"calibrated_nodes", model.calibratedNodes()}};
        j["comm_model"] = std::string(commModelKind(mesh));
        j["comm_model_source"] = commModelDescription(mesh);
        j["redistributions"] = redistributionsJson(graph, problem, plan, model);
        j["seconds"] = seconds;
        std::vector<std::string> warnings = profiles.warnings;
        warnings.insert(warnings.end(), problem.warnings.begin(), problem.warnings.end());
        j["warnings"] = warnings;
        if (!explain.empty())
            j["explain"] = explain;
        if (comparison)
            j["compare"] = comparisonJson(graph, *comparison);
        std::printf("%s\n", j.dump(2).c_str());
        return kExitOk;
    }
    for (const std::string& w : profiles.warnings)
        std::fprintf(stderr, "jointscope-cli: warning: %s\n", w.c_str());
    for (const std::string& w : problem.warnings)
        std::fprintf(stderr, "jointscope-cli: warning: %s\n", w.c_str());
    if (costModel == "profiled")
        std::printf("compute: roofline calibrated by profiles of %s (torch %s) on %zu nodes\n",
                    device.cudaName.c_str(), profiles.torchVersion.c_str(), model.calibratedNodes());
    std::printf("mesh %s: total %.4g us (compute %.4g us, comm %.4g us)%s in %.3f s\n", mesh.str().c_str(),
                plan.cost.totalUs(), plan.cost.computeUs, plan.cost.commUs,
                plan.optimal ? "" : " (not proven optimal)", seconds);
    std::printf("cost %.6g us, lower bound %.6g us, gap %.2f %% (%s solve)\n", plan.cost.totalUs(),
                plan.lowerBound, 100 * plan.gap(), plan.decomposed ? "decomposed" : "exact");
    std::printf("baselines: replicate %.4g us", replicate.totalUs());
    if (dataParallel)
        std::printf(", data parallel %.4g us", dataParallel->totalUs());
    else
        std::printf("; no data parallel: %s", solution->dataParallelWhyNot.c_str());
    std::printf("\n");
    if (!solution->replicatedWhy.empty())
        std::printf("%s\n", solution->replicatedWhy.c_str());
    for (NodeId id = 0; id < graph.size(); ++id)
        if (plan.choice[id] >= 0 && graph.node(id).op == NodeOp::Placeholder)
            std::printf("  %s: %s\n", graph.node(id).name.c_str(),
                        toString(problem.nodes[id].options[plan.choice[id]].outputs[0]).c_str());
    for (const std::string& e : explain)
        std::printf("%s", e.c_str());
    if (comparison) {
        const PlanComparison& c = *comparison;
        std::printf(
            "autoparallel's plan (%s): its objective %.4g (compute %.4g, comm %.4g, transitions %.4g); "
            "under jointscope's model %.4g us (compute %.4g us, comm %.4g us) against jointscope's "
            "%.4g us\n",
            c.theirs.source.c_str(), c.theirs.total, c.theirs.compute, c.theirs.comm, c.theirs.transition,
            c.theirsCost.totalUs(), c.theirsCost.computeUs, c.theirsCost.commUs, c.oursCost.totalUs());
        if (!c.mapped.unmatched.empty())
            std::printf(
                "%zu nodes have a placement no jointscope option has (costed at the closest option)\n",
                c.mapped.unmatched.size());
        std::printf("%zu nodes placed differently:\n", c.differing.size());
        for (const PlacementDifference& d : c.differing)
            std::printf("  %s: jointscope %s, autoparallel %s\n", graph.node(d.node).name.c_str(),
                        toString(d.ours).c_str(), toString(d.theirs).c_str());
    }
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
