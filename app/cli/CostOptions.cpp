#include "CostOptions.h"

#include "cost/DeviceInfo.h"
#include "support/EnumNames.h"

#include <algorithm>
#include <filesystem>
#include <set>

namespace jointscope::cli {

std::vector<OptionSpec> costOptions(bool withModel) {
    std::vector<OptionSpec> options;
    if (withModel)
        options.push_back(
            {"--cost-model", "", "M",
             "recompute cost of the memory-budget knapsack: flops (default), roofline or profiled"});
    options.push_back(
        {"--target-device", "", "NAME",
         "device the cost model assumes: an alias (h100, a100, l4, ...) or the name CUDA reports "
         "(default h100; `cost --list-devices` lists them)"});
    options.push_back(
        {"--db", "", "PATH", "profile database of measured op times (default: the user cache's)"});
    options.push_back({"--torch-version", "", "V",
                       "torch version of the profiles to use (default: the only one in the DB)"});
    return options;
}

namespace {

std::optional<CostModelKind> parseKind(std::string_view text) {
    static constexpr EnumName<CostModelKind> kNames[] = {{CostModelKind::Flops, "flops"},
                                                         {CostModelKind::Roofline, "roofline"},
                                                         {CostModelKind::Profiled, "profiled"}};
    return valueNamed(kNames, text);
}

std::string graphTorchVersion(const Graph& graph) {
    for (const auto& [key, value] : graph.attributes)
        if (key == "torch_version")
            return value;
    return {};
}

// The torch version whose profiles to use when none is given: the only one recorded for the device, else the
// graph's own when the database has it.
int chooseTorchVersion(const Command& command, const Graph& graph, CostSetup& setup) {
    std::set<std::string> versions;
    for (const cost::ProfileRecord& r : setup.db->records(setup.device.cudaName))
        versions.insert(r.key.torchVersion);
    if (versions.empty()) {
        setup.warnings.push_back("the profile database has no rows for '" + setup.device.cudaName +
                                 "': every node takes the roofline estimate");
        return kExitOk;
    }
    if (versions.size() == 1) {
        setup.torchVersion = *versions.begin();
        return kExitOk;
    }
    if (const std::string own = graphTorchVersion(graph); versions.count(own)) {
        setup.torchVersion = own;
        return kExitOk;
    }
    std::string list;
    for (const std::string& v : versions)
        list += (list.empty() ? "" : ", ") + v;
    return usageError(command, "the profile database holds several torch versions for '" +
                                   setup.device.cudaName + "' (" + list +
                                   "); choose one with --torch-version");
}

// This machine's CPU, at the peaks `devices --measure` recorded: no table knows a CPU's rates.
int measuredCpu(const Command& command, const ParsedArgs& args, std::optional<cost::DeviceSpec>& device) {
    const std::string name = cost::cpuName();
    const std::string path = args.valueOr("--db", cost::defaultProfileDbPath());
    std::error_code ec;
    std::optional<cost::DevicePeaks> peaks;
    if (std::filesystem::exists(path, ec)) {
        Expected<std::unique_ptr<cost::ProfileDb>> db = cost::ProfileDb::open(path);
        if (!db)
            return inputError(db.error());
        peaks = (*db)->peaks(name);
    }
    if (!peaks)
        return usageError(command, "--target-device cpu needs this CPU's measured peaks ('" + name +
                                       "' has none in " + path + "): run `jointscope-cli devices --measure`");
    cost::CpuMeasurement m;
    m.name = name;
    m.gflops = peaks->fp32Gflops;
    m.fp64Gflops = peaks->fp64Gflops;
    m.gbPerSecond = peaks->gbPerSecond;
    for (const cost::DeviceInfo& d : cost::listDevices())
        if (d.kind == "cpu") {
            m.cores = d.cores;
            m.memoryBytes = double(d.memoryBytes);
        }
    device = cost::cpuDevice(m);
    return kExitOk;
}

} // namespace

int readCostOptions(const Command& command, const ParsedArgs& args, const Graph& graph,
                    CostModelKind fallback, CostSetup& setup) {
    setup.kind = fallback;
    if (std::optional<std::string> m = args.value("--cost-model")) {
        const std::optional<CostModelKind> kind = parseKind(*m);
        if (!kind)
            return usageError(command, "unknown --cost-model '" + *m + "' (flops, roofline or profiled)");
        setup.kind = *kind;
    }
    const std::string deviceName = args.valueOr("--target-device", "h100");
    std::optional<cost::DeviceSpec> device = cost::findDevice(deviceName);
    if (!device && (deviceName == "cpu" || deviceName == cost::cpuName())) {
        if (setup.kind == CostModelKind::Flops) // the device is ignored: no need for measured peaks
            device = cost::cpuDevice({});
        else if (int code = measuredCpu(command, args, device); code != kExitOk)
            return code;
    }
    if (!device)
        return usageError(command, "unknown --target-device '" + deviceName +
                                       "' (`jointscope-cli cost --list-devices` lists the known ones)");
    setup.device = std::move(*device);
    if (setup.kind == CostModelKind::Flops) {
        for (const char* option : {"--target-device", "--db", "--torch-version"})
            if (args.has(option))
                setup.warnings.push_back(std::string(option) + " is ignored by --cost-model flops");
        return kExitOk;
    }
    if (setup.kind == CostModelKind::Roofline) {
        setup.model = std::make_unique<cost::RooflineModel>(setup.device);
    } else if (int code = openProfiledModel(command, args, graph, setup); code != kExitOk) {
        return code;
    }
    setup.estimator = std::make_unique<cost::CostModelEstimator>(*setup.model);
    return kExitOk;
}

int openProfiledModel(const Command& command, const ParsedArgs& args, const Graph& graph, CostSetup& setup) {
    const std::string path = args.valueOr("--db", cost::defaultProfileDbPath());
    // Opening creates a database: a mistyped path would silently profile nothing.
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
        return inputError(makeError({path, 0, 0}, "no profile database here (`jointscope-cli profile` "
                                                  "records one; `profile-db import` loads a JSON export)"));
    Expected<std::unique_ptr<cost::ProfileDb>> db = cost::ProfileDb::open(path);
    if (!db)
        return inputError(db.error());
    setup.db = db.take();
    setup.torchVersion = args.valueOr("--torch-version", "");
    if (setup.torchVersion.empty())
        if (int code = chooseTorchVersion(command, graph, setup); code != kExitOk)
            return code;
    setup.model = std::make_unique<cost::ProfiledModel>(*setup.db, setup.device.cudaName, setup.torchVersion,
                                                        cost::RooflineModel(setup.device));
    return kExitOk;
}

} // namespace jointscope::cli
