// jointscope-cli devices: the CPU and CUDA GPUs of this machine, the names profiles are keyed by.
#include "Command.h"

#include "cost/DeviceInfo.h"
#include "cost/ProfileDb.h"
#ifdef JOINTSCOPE_CLI_RUNTIME
#include "runtime/Runtime.h"
#endif

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>

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

Json peaksJson(const cost::DevicePeaks& p) {
    Json j = Json::object();
    j["fp32_gflops"] = p.fp32Gflops;
    j["fp64_gflops"] = p.fp64Gflops;
    j["gb_per_s"] = p.gbPerSecond;
    j["measured_at"] = p.measuredAt;
    return j;
}

// `--measure`: times this machine's devices once and keeps the peaks in the profile DB, where the roofline
// model finds them (`--target-device cpu`).
int measureDevices(const std::vector<cost::DeviceInfo>& devices, cost::ProfileDb& db, std::string& note) {
#ifdef JOINTSCOPE_CLI_RUNTIME
    for (const cost::DeviceInfo& d : devices) {
        Expected<cost::DevicePeaks> peaks = runtime::measurePeaks(d.str());
        if (!peaks) {
            note += (note.empty() ? "" : "; ") + peaks.error().message;
            continue;
        }
        if (!db.storePeaks(*peaks))
            return inputError(makeError({}, "cannot store device peaks: " + db.lastError()));
    }
    return kExitOk;
#else
    (void)devices;
    (void)db;
    (void)note;
    return inputError(makeError({}, "--measure needs a jointscope built with LibTorch"));
#endif
}

int runDevices(const ParsedArgs& args) {
    std::string note;
    const std::vector<cost::DeviceInfo> devices = cost::listDevices(&note);
    // Peaks measured earlier are shown beside each device; listing never creates a database.
    const std::string dbPath = args.valueOr("--db", cost::defaultProfileDbPath());
    std::unique_ptr<cost::ProfileDb> db;
    std::error_code ec;
    if (args.has("--measure") || std::filesystem::exists(dbPath, ec)) {
        Expected<std::unique_ptr<cost::ProfileDb>> opened = cost::ProfileDb::open(dbPath);
        if (!opened)
            return inputError(opened.error());
        db = opened.take();
    }
    if (args.has("--measure"))
        if (int code = measureDevices(devices, *db, note); code != kExitOk)
            return code;
    auto peaksOf = [&](const cost::DeviceInfo& d) -> std::optional<cost::DevicePeaks> {
        return db ? db->peaks(d.name) : std::nullopt;
    };
    if (args.has("--json")) {
        Json out = Json::object();
        Json list = Json::array();
        for (const cost::DeviceInfo& d : devices) {
            Json j = deviceJson(d);
            if (auto p = peaksOf(d))
                j["measured"] = peaksJson(*p);
            list.push_back(std::move(j));
        }
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
        } else {
            std::printf(
                "%-7s %s\n        sm_%d%d, %d SMs at %d MHz, %.1f GiB at %.0f GB/s (%d MHz x %d bit), "
                "L2 %.0f MiB\n",
                d.str().c_str(), d.name.c_str(), d.ccMajor, d.ccMinor, d.sms, d.clockMHz, gib(d.memoryBytes),
                d.bandwidthGBs, d.memoryClockMHz, d.busWidthBits, static_cast<double>(d.l2Bytes) / 1048576.0);
        }
        if (auto p = peaksOf(d))
            std::printf("        measured %s: %.0f GFLOP/s fp32, %.0f GFLOP/s fp64, %.1f GB/s copy\n",
                        p->measuredAt.c_str(), p->fp32Gflops, p->fp64Gflops, p->gbPerSecond);
    }
    if (!note.empty())
        std::printf("note: %s\n", note.c_str());
    return kExitOk;
}

} // namespace

const Command& devicesCommand() {
    static const Command command{
        "devices",
        {},
        "List this machine's CPU and CUDA GPUs (the device names profiles are keyed by) and their measured "
        "peaks.",
        {{"--measure", "", "",
          "time a large matmul (fp32, fp64) and a large copy on each device once and keep the peaks in the "
          "profile DB (the roofline model uses them for --target-device cpu)"},
         {"--db", "", "PATH", "profile database (default: the user cache's)"},
         jsonOption()},
        0,
        0,
        &runDevices,
    };
    return command;
}

} // namespace jointscope::cli
