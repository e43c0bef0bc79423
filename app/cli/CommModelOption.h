// shard's --comm-model: collectives priced by the analytic ring model (default) or by the ones measured with
// `python -m jointscope_torch.calibrate` and imported into the profile database (--db).
#pragma once

#include "Command.h"

#include "sharding/CommModel.h"
#include "sharding/Solver.h"

#include <nlohmann/json.hpp>

namespace jointscope::cli {

OptionSpec commModelOption();

// Puts the measured model on `mesh` for --comm-model measured (from --db, else the user cache's database).
// Returns kExitOk or the code of the error it printed: an unknown model, no database, or a mesh dimension or
// collective the database has no measurement for.
int applyCommModel(const Command& command, const ParsedArgs& args, sharding::DeviceMesh& mesh);

// Every redistribution of the plan: producer, consumer, placements, and per collective its mesh dimension,
// bytes, microseconds and the model that priced it.
nlohmann::ordered_json redistributionsJson(const Graph& graph, const sharding::ShardingProblem& problem,
                                           const sharding::Plan& plan, const sharding::ComputeModel& model);

} // namespace jointscope::cli
