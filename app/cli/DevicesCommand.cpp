// jointscope-cli devices: the CPU and CUDA GPUs of this machine, the names profiles are keyed by.
#include "Command.h"

#include "cost/DeviceInfo.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace jointscope::cli {
namespace {

using Json = nlohmann::ordered_json;

Json deviceJson(const cost::DeviceInfo& d) {
    Json j = Json::object();
    j["kind"] = d.kind;
    j["index"] = d.index;
    j["name"] = d.name;
    j["memory_bytes"] = d.memoryBytes;
    if (d.kind == "cpu") {
        j["cores"] = d.cores;
        return j;
    }
    j["compute_capability"] = d.computeCapability();
    j["sms"] = d.sms;
    j["clock_mhz"] = d.clockMHz;
    j["memory_clock_mhz"] = d.memoryClockMHz;
    j["bus_width_bits"] = d.busWidthBits;
    j["bandwidth_gbs"] = d.bandwidthGBs;
    j["l2_bytes"] = d.l2Bytes;
    j["driver_version"] = d.driverVersion;
    return j;
}

double gib(uint64_t bytes) {
    return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
}

int runDevices(const ParsedArgs& args) {
    std::string note;
    const std::vector<cost::DeviceInfo> devices = cost::listDevices(&note);
    if (args.has("--json")) {
        Json out = Json::object();
        Json list = Json::array();
        for (const cost::DeviceInfo& d : devices)
            list.push_back(deviceJson(d));
        out["devices"] = std::move(list);
        if (!note.empty())
            out["note"] = note;
        std::printf("%s\n", out.dump(2, ' ', false, Json::error_handler_t::replace).c_str());
        return kExitOk;
    }
    for (const cost::DeviceInfo& d : devices) {
        if (d.kind == "cpu") {
            std::printf("%-7s %s\n        %d logical cores, %.1f GiB memory\n", d.str().c_str(),
                        d.name.c_str(), d.cores, gib(d.memoryBytes));
            continue;
        }
        std::printf("%-7s %s\n        sm_%d%d, %d SMs at %d MHz, %.1f GiB at %.0f GB/s (%d MHz x %d bit), "
                    "L2 %.0f MiB\n",
                    d.str().c_str(), d.name.c_str(), d.ccMajor, d.ccMinor, d.sms, d.clockMHz,
                    gib(d.memoryBytes), d.bandwidthGBs, d.memoryClockMHz, d.busWidthBits,
                    static_cast<double>(d.l2Bytes) / 1048576.0);
    }
    if (!note.empty())
        std::printf("note: %s\n", note.c_str());
    return kExitOk;
}

} // namespace

const Command& devicesCommand() {
    static const Command command{
        "devices",
        "devices [--json]",
        "List this machine's CPU and CUDA GPUs (the device names profiles are keyed by).",
        {jsonOption()},
        0,
        0,
        &runDevices,
    };
    return command;
}

} // namespace jointscope::cli
