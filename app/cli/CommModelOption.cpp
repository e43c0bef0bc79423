#include "CommModelOption.h"

#include "cost/ProfileDb.h"
#include "sharding/CommModel.h"
#include "sharding/PlanReport.h"

#include <filesystem>

namespace jointscope::cli {

using namespace jointscope::sharding;

OptionSpec commModelOption() {
    return {"--comm-model", "", "M",
            "collective cost: analytic (default; the --topology ring model) or measured: the fits of "
            "`python -m jointscope_torch.calibrate` imported into --db"};
}

int applyCommModel(const Command& command, const ParsedArgs& args, DeviceMesh& mesh) {
    const std::string kind = args.valueOr("--comm-model", "analytic");
    if (kind == "analytic")
        return kExitOk;
    if (kind != "measured")
        return usageError(command, "unknown --comm-model '" + kind + "' (analytic or measured)");
    const std::string path = args.valueOr("--db", cost::defaultProfileDbPath());
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return inputError(makeError({path, 0, 0},
                                    "no profile database here; measure the collectives with "
                                    "`torchrun ... -m jointscope_torch.calibrate --out comm.json` "
                                    "and `jointscope-cli profile-db import comm.json`"));
    Expected<std::unique_ptr<cost::ProfileDb>> db = cost::ProfileDb::open(path);
    if (!db)
        return inputError(db.error());
    Expected<CommModel> model = CommModel::measured((*db)->collectives(), mesh);
    if (!model) {
        Diagnostic d = model.error();
        d.loc.file = path;
        return inputError(d);
    }
    mesh.comm = std::make_shared<const CommModel>(model.take());
    return kExitOk;
}

nlohmann::ordered_json redistributionsJson(const Graph& graph, const ShardingProblem& problem,
                                           const Plan& plan, const ComputeModel& model) {
    const std::string priced(commModelKind(problem.mesh));
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const EdgeTransition& t : reportPlan(graph, problem, plan, model).transitions) {
        nlohmann::ordered_json steps = nlohmann::ordered_json::array();
        for (const RedistributeStep& s : t.redistribution.steps)
            steps.push_back({{"collective", collectiveName(s.collective)},
                             {"mesh_dim", s.meshDim},
                             {"bytes", s.bytes},
                             {"us", s.us},
                             {"comm_model", priced}});
        out.push_back({{"producer", graph.node(t.producer).name},
                       {"consumer", graph.node(t.consumer).name},
                       {"from", toString(t.from)},
                       {"to", toString(t.to)},
                       {"us", t.redistribution.us},
                       {"steps", steps}});
    }
    return out;
}

} // namespace jointscope::cli
