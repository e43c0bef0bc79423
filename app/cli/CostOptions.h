// --cost-model, --target-device, --db and --torch-version: the cost model behind partition, pareto and cost.
#pragma once

#include "Command.h"

#include "cost/CostModel.h"
#include "cost/ProfileDb.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::cli {

enum class CostModelKind : uint8_t { Flops, Roofline, Profiled };

// What the options chose, and the objects that serve it (the estimator points into the model, the model
// into the database).
struct CostSetup {
    CostModelKind kind = CostModelKind::Flops;
    cost::DeviceSpec device;
    std::string torchVersion; // the profiles' torch version (profiled only)
    std::unique_ptr<cost::ProfileDb> db;
    std::unique_ptr<cost::CostModel> model;              // null for flops
    std::unique_ptr<cost::CostModelEstimator> estimator; // null for flops
    std::vector<std::string> warnings;
};

// The options; `withModel` adds --cost-model (cost picks the model from --db instead).
std::vector<OptionSpec> costOptions(bool withModel);

// Reads the options for `graph`. Without --cost-model the model is `fallback`. For profiled, the torch
// version is --torch-version, else the only one the database holds for the device, else the graph's.
// Returns kExitOk or the code of the usage / input error it printed.
int readCostOptions(const Command& command, const ParsedArgs& args, const Graph& graph,
                    CostModelKind fallback, CostSetup& setup);

// The profiled model on `setup.device` from --db and --torch-version (as readCostOptions picks them): sets
// setup.db, torchVersion and model. Returns kExitOk or the code of the error it printed.
int openProfiledModel(const Command& command, const ParsedArgs& args, const Graph& graph, CostSetup& setup);

} // namespace jointscope::cli
