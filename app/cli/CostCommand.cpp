// jointscope-cli cost: what every node of a graph costs on a target device (roofline, or measured profiles).
#include "Command.h"
#include "CostOptions.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>

namespace jointscope::cli {
namespace {

using Json = nlohmann::ordered_json;

std::string targetOf(const Node& node) {
    if (node.op == NodeOp::CallFunction)
        return node.target.text;
    if (node.op == NodeOp::CallMethod || node.op == NodeOp::CallModule)
        return std::string(nodeOpName(node.op)) + " " + node.target.text;
    return std::string(nodeOpName(node.op));
}

struct Totals {
    double flops = 0, bytesRead = 0, bytesWritten = 0, timeUs = 0;
    size_t nodes = 0, free = 0, roofline = 0, profiled = 0, unknown = 0, incomplete = 0;
    std::map<std::string, size_t> unknownOps; // target -> nodes
};

Json deviceJson(const cost::DeviceSpec& d) {
    return {{"name", d.name},
            {"alias", d.alias},
            {"cuda_name", d.cudaName},
            {"source", d.source},
            {"fp64_tflops", d.fp64 / 1e12},
            {"fp64_matmul_tflops", d.fp64Matmul / 1e12},
            {"fp32_tflops", d.fp32 / 1e12},
            {"tf32_tflops", d.tf32 / 1e12},
            {"bf16_tflops", d.bf16 / 1e12},
            {"fp16_tflops", d.fp16 / 1e12},
            {"fp8_tflops", d.fp8 / 1e12},
            {"int8_tops", d.int8 / 1e12},
            {"bandwidth_gbs", d.memoryBandwidth / 1e9},
            {"memory_gb", d.memoryBytes / 1e9},
            {"sms", d.smCount}};
}

int listDevices(const ParsedArgs& args) {
    const std::vector<cost::DeviceSpec> devices = cost::knownDevices();
    if (args.has("--json")) {
        Json list = Json::array();
        for (const cost::DeviceSpec& d : devices)
            list.push_back(deviceJson(d));
        std::printf("%s\n", Json{{"devices", list}}.dump(1).c_str());
        return kExitOk;
    }
    std::printf("%-10s %-34s %7s %7s %7s %7s %7s %7s %6s %5s %4s\n", "alias", "name", "fp64", "fp32", "tf32",
                "bf16", "fp8", "int8", "TB/s", "GB", "SMs");
    for (const cost::DeviceSpec& d : devices)
        std::printf("%-10s %-34s %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f %6.2f %5.0f %4d\n", d.alias.c_str(),
                    d.name.c_str(), d.fp64Matmul / 1e12, d.fp32 / 1e12, d.tf32 / 1e12, d.bf16 / 1e12,
                    d.fp8 / 1e12, d.int8 / 1e12, d.memoryBandwidth / 1e12, d.memoryBytes / 1e9, d.smCount);
    std::printf("dense peaks in TFLOP/s (TOP/s for int8), from public datasheets; fp64 is the matmul rate, 0 "
                "means no such unit\n");
    return kExitOk;
}

// What one node costs, as both renderings show it.
struct NodeRow {
    const Node* node = nullptr;
    cost::NodeCost cost;
};

struct CostReport {
    std::vector<NodeRow> rows;
    Totals totals;
};

CostReport costEveryNode(const Graph& graph, const cost::CostModel& model) {
    CostReport report;
    Totals& totals = report.totals;
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& node = graph.node(id);
        const cost::NodeCost c = model.cost(graph, id);
        ++totals.nodes;
        totals.flops += c.work.flops;
        totals.bytesRead += c.work.bytesRead;
        totals.bytesWritten += c.work.bytesWritten;
        totals.timeUs += c.timeUs;
        totals.free += c.source == cost::CostSource::Free;
        totals.roofline += c.source == cost::CostSource::Roofline;
        totals.profiled += c.source == cost::CostSource::Profiled;
        totals.incomplete += c.work.incomplete;
        if (c.work.unknown) {
            ++totals.unknown;
            ++totals.unknownOps[targetOf(node)];
        }
        report.rows.push_back({&node, c});
    }
    return report;
}

void warnAboutCosts(const CostSetup& setup, const Totals& totals) {
    for (const std::string& w : setup.warnings)
        std::fprintf(stderr, "jointscope-cli: warning: %s\n", w.c_str());
    if (totals.unknownOps.empty())
        return;
    std::string list;
    for (const auto& [op, count] : totals.unknownOps)
        list += (list.empty() ? "" : ", ") + op + (count > 1 ? " (x" + std::to_string(count) + ")" : "");
    std::fprintf(stderr,
                 "jointscope-cli: warning: no cost formula (bytes only, 0 flops) for %zu node%s: %s\n",
                 totals.unknown, totals.unknown == 1 ? "" : "s", list.c_str());
}

void printCostJson(const Graph& graph, const CostSetup& setup, const CostReport& report) {
    Json nodes = Json::array();
    for (const NodeRow& row : report.rows) {
        const cost::NodeCost& c = row.cost;
        Json j = {{"name", row.node->name},
                  {"target", targetOf(*row.node)},
                  {"class", std::string(cost::opClassName(c.work.opClass))},
                  {"flops", c.work.flops},
                  {"bytes_read", c.work.bytesRead},
                  {"bytes_written", c.work.bytesWritten},
                  {"time_us", c.timeUs},
                  {"source", std::string(cost::costSourceName(c.source))}};
        if (c.work.free)
            j["free_reason"] = c.work.freeReason;
        if (c.work.unknown)
            j["unknown"] = true;
        if (c.work.incomplete)
            j["incomplete"] = true;
        nodes.push_back(std::move(j));
    }
    const Totals& totals = report.totals;
    Json out = Json::object();
    out["format"] = "jointscope-cost";
    out["version"] = 1;
    out["graph"] = graph.name;
    out["model"] = std::string(setup.model->name());
    out["device"] = deviceJson(setup.device);
    if (setup.kind == CostModelKind::Profiled)
        out["torch_version"] = setup.torchVersion;
    out["nodes"] = std::move(nodes);
    out["totals"] = {{"nodes", totals.nodes},          {"flops", totals.flops},
                     {"bytes_read", totals.bytesRead}, {"bytes_written", totals.bytesWritten},
                     {"time_us", totals.timeUs},       {"free", totals.free},
                     {"roofline", totals.roofline},    {"profiled", totals.profiled},
                     {"unknown", totals.unknown},      {"incomplete", totals.incomplete}};
    Json unknown = Json::object();
    for (const auto& [op, count] : totals.unknownOps)
        unknown[op] = count;
    out["unknown_ops"] = std::move(unknown);
    std::printf("%s\n", out.dump(1).c_str());
}

void printCostText(const CostSetup& setup, const CostReport& report) {
    std::printf("%-28s %-44s %-13s %12s %12s %10s  %s\n", "node", "target", "class", "flops", "bytes",
                "time us", "source");
    for (const NodeRow& row : report.rows) {
        const cost::NodeCost& c = row.cost;
        const std::string source(cost::costSourceName(c.source));
        std::printf("%-28s %-44s %-13s %12.4g %12.4g %10.3f  %s\n", row.node->name.c_str(),
                    targetOf(*row.node).c_str(), std::string(cost::opClassName(c.work.opClass)).c_str(),
                    c.work.flops, c.work.bytes(), c.timeUs,
                    c.work.free ? (source + " (" + c.work.freeReason + ")").c_str() : source.c_str());
    }
    const Totals& totals = report.totals;
    std::printf(
        "total: %zu nodes (%zu free, %zu roofline, %zu profiled), %.4g flops, %.4g bytes read, %.4g bytes "
        "written, %.3f us on %s (%s)\n",
        totals.nodes, totals.free, totals.roofline, totals.profiled, totals.flops, totals.bytesRead,
        totals.bytesWritten, totals.timeUs, setup.device.name.c_str(),
        std::string(setup.model->name()).c_str());
}

int runCost(const ParsedArgs& args) {
    const Command& command = costCommand();
    if (args.has("--list-devices"))
        return listDevices(args);
    if (args.positional.empty())
        return usageError(command, "missing FILE (or --list-devices)");
    Graph graph;
    if (int code = loadOneGraph(command, args, graph); code != kExitOk)
        return code;
    CostSetup setup;
    const CostModelKind kind = args.has("--db") ? CostModelKind::Profiled : CostModelKind::Roofline;
    if (int code = readCostOptions(command, args, graph, kind, setup); code != kExitOk)
        return code;

    const CostReport report = costEveryNode(graph, *setup.model);
    if (args.has("--json"))
        printCostJson(graph, setup, report);
    else
        printCostText(setup, report);
    warnAboutCosts(setup, report.totals);
    return kExitOk;
}

} // namespace

const Command& costCommand() {
    static const Command command{
        "cost",
        {"FILE", "--list-devices"},
        "Per-node FLOPs, bytes and estimated time on a target device (roofline, or profiles with --db).",
        [] {
            std::vector<OptionSpec> o = {graphOption(), metaOption()};
            for (OptionSpec& spec : costOptions(/*withModel=*/false))
                o.push_back(spec);
            o.push_back({"--list-devices", "", "", "print the device table and exit"});
            o.push_back(jsonOption());
            return o;
        }(),
        0,
        1,
        &runCost,
    };
    return command;
}

} // namespace jointscope::cli
