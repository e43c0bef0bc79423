// jointscope-cli info: counts for one graph, or the list of graphs in a log.
#include "Command.h"
#include "RankReport.h"

#include "graph/GraphStats.h"
#include "graph/Layers.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

namespace jointscope::cli {
namespace {

using Json = nlohmann::ordered_json;

Json statsJson(const Graph& graph) {
    const GraphStats s = computeStats(graph);
    Json j = Json::object();
    j["nodes"] = s.nodes;
    j["placeholders"] = s.placeholders;
    j["call_function"] = s.callFunctions;
    j["primals"] = s.primals;
    j["tangents"] = s.tangents;
    j["forward"] = s.forward;
    j["backward"] = s.backward;
    j["tensor_bytes"] = s.tensorBytes;
    j["subgraphs"] = s.subgraphs;
    j["unique_subgraphs"] = s.uniqueSubgraphs;
    j["num_fwd_outputs"] = graph.numFwdOutputs ? Json(*graph.numFwdOutputs) : Json(nullptr);
    return j;
}

std::string cellText(const Json& j) {
    return j.is_string() ? j.get<std::string>() : j.dump();
}

// Columns padded to their widest cell; numbers right-aligned.
void printTable(const std::vector<std::string>& header, const std::vector<std::vector<Json>>& rows) {
    std::vector<size_t> width(header.size());
    for (size_t c = 0; c < header.size(); ++c) {
        width[c] = header[c].size();
        for (const auto& row : rows)
            width[c] = std::max(width[c], cellText(row[c]).size());
    }
    auto print = [&](const std::vector<std::string>& cells, const std::vector<bool>& right) {
        std::string line;
        for (size_t c = 0; c < cells.size(); ++c) {
            const std::string pad(width[c] - cells[c].size(), ' ');
            line += right[c] ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
            if (c + 1 < cells.size())
                line += "  ";
        }
        std::printf("%s\n", line.c_str());
    };
    print(header, std::vector<bool>(header.size(), false));
    for (const auto& row : rows) {
        std::vector<std::string> cells;
        std::vector<bool> right;
        for (const Json& cell : row) {
            cells.push_back(cellText(cell));
            right.push_back(cell.is_number());
        }
        print(cells, right);
    }
}

// --layers: the layer split the GUI groups by (graph/Layers), one entry per segment in execution order.
Json layersJson(const Graph& graph, bool useModuleStack) {
    LayerOptions options;
    options.useModuleStack = useModuleStack;
    const LayerSplit split = findLayers(graph, options);
    Json segments = Json::array();
    for (const LayerSegment& s : split.segments) {
        Json row{{"phase", s.backward ? "backward" : "forward"},
                 {"kind", std::string(segmentKindName(s.kind))},
                 {"label", s.label},
                 {"nodes", s.nodes.size()},
                 {"first", s.nodes.empty() ? "" : graph.node(s.nodes.front()).name}};
        if (s.kind == SegmentKind::Layer)
            row["layer"] = s.layer;
        segments.push_back(std::move(row));
    }
    return Json{{"source", std::string(layerSourceName(split.source))},
                {"layers", split.layers},
                {"module_path", split.modulePath},
                {"segments", std::move(segments)}};
}

int printGraphInfo(const GraphFile& file, size_t index, bool asJson, const ParsedArgs& args) {
    Expected<Graph> graph = file.load(index);
    if (!graph)
        return inputError(graph.error());
    Json stats = statsJson(*graph);
    if (args.has("--layers") || args.has("--layers-by-structure"))
        stats["layers"] = layersJson(*graph, !args.has("--layers-by-structure"));
    if (asJson) {
        std::printf("%s\n", stats.dump(2).c_str());
        return kExitOk;
    }
    const GraphEntry& entry = file.graphs()[index];
    const std::string_view format = formatName(file.format());
    const std::string label =
        entry.title().empty() || entry.title() == format ? "graph '" + graph->name + "'" : entry.title();
    std::printf("%s: %s (%.*s)\n", file.fileName().c_str(), label.c_str(), int(format.size()), format.data());
    size_t width = 0;
    for (const auto& item : stats.items())
        width = std::max(width, item.key().size());
    for (const auto& item : stats.items())
        if (item.key() != "layers")
            std::printf("  %-*s  %s\n", int(width), item.key().c_str(),
                        item.value().is_null() ? "-" : item.value().dump().c_str());
    if (stats.contains("layers")) {
        const Json& layers = stats["layers"];
        std::printf("  layers  %s (%s)\n", layers["layers"].dump().c_str(),
                    layers["source"].get<std::string>().c_str());
        for (const Json& s : layers["segments"])
            std::printf("    %-8s  %-10s  %5s nodes  from %s\n", s["phase"].get<std::string>().c_str(),
                        s["label"].get<std::string>().c_str(), s["nodes"].dump().c_str(),
                        s["first"].get<std::string>().c_str());
    }
    return kExitOk;
}

// Each graph's node count, or its located error, parsing the graphs not counted yet on every core.
std::vector<std::pair<uint64_t, std::string>> countNodes(const GraphFile& file) {
    std::vector<std::pair<uint64_t, std::string>> counts(file.graphs().size());
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i = next++; i < counts.size(); i = next++) {
            const GraphEntry& entry = file.graphs()[i];
            if (entry.nodes > 0 || entry.failed()) {
                counts[i] = {entry.nodes, entry.error};
                continue;
            }
            Expected<Graph> graph = file.load(i);
            counts[i] = graph ? std::pair<uint64_t, std::string>{graph->size(), ""}
                              : std::pair<uint64_t, std::string>{0, graph.error().format()};
        }
    };
    std::vector<std::thread> threads(std::max(1u, std::thread::hardware_concurrency()) - 1);
    for (std::thread& t : threads)
        t = std::thread(work);
    work();
    for (std::thread& t : threads)
        t.join();
    return counts;
}

// The graphs as the index lists them: a log's graphs are parsed only for --nodes (a pasted log's were
// counted when it was read).
int printGraphList(const GraphFile& file, bool asJson, bool parse) {
    Json graphs = Json::array();
    Json problems = Json::array();
    for (const Diagnostic& d : file.problems())
        problems.push_back(d.format());
    const bool counted = parse || file.format() != FileFormat::TraceLog;
    const auto counts = counted ? countNodes(file) : std::vector<std::pair<uint64_t, std::string>>{};
    for (size_t i = 0; i < file.graphs().size(); ++i) {
        const GraphEntry& entry = file.graphs()[i];
        Json row{{"index", i}, {"kind", entry.kind}, {"compile_id", entry.compileId}, {"line", entry.line}};
        if (entry.rank >= 0)
            row["rank"] = entry.rank;
        if (counted) {
            const auto& [nodes, error] = counts[i];
            row["nodes"] = nodes;
            if (!error.empty()) {
                row["error"] = error;
                if (!entry.failed()) // a failed graph's located message is already among the problems
                    problems.push_back(error);
            }
        }
        graphs.push_back(std::move(row));
    }
    if (asJson) {
        Json out = Json::object();
        out["graphs"] = std::move(graphs);
        if (!file.ranks().empty())
            out["ranks"] = rankDivergenceJson(summarizeRanks(file));
        if (!problems.empty())
            out["problems"] = std::move(problems);
        std::printf("%s\n", out.dump(2).c_str());
        return kExitOk;
    }
    std::printf("%s: %zu graphs (%.*s)\n", file.fileName().c_str(), file.graphs().size(),
                int(formatName(file.format()).size()), formatName(file.format()).data());
    const bool ranked = !file.ranks().empty();
    std::vector<std::vector<Json>> rows;
    for (const Json& g : graphs) {
        rows.push_back({g["index"], g["compile_id"].get<std::string>().empty() ? Json("-") : g["compile_id"],
                        g["kind"], g["line"]});
        if (counted)
            rows.back().push_back(g.contains("error") ? Json("failed") : g["nodes"]);
        if (ranked)
            rows.back().insert(rows.back().begin() + 1, g.value("rank", Json(-1)));
    }
    std::vector<std::string> header{"index", "compile_id", "kind", "line"};
    if (counted)
        header.push_back("nodes");
    if (ranked)
        header.insert(header.begin() + 1, "rank");
    printTable(header, rows);
    if (ranked) {
        std::printf("\n");
        for (const std::string& line : summarizeRanks(file).lines())
            std::printf("%s\n", line.c_str());
    }
    for (const Json& p : problems)
        std::fprintf(stderr, "%s\n", p.get<std::string>().c_str());
    return kExitOk;
}

int runInfo(const ParsedArgs& args) {
    std::optional<GraphFile> file;
    std::optional<size_t> index;
    if (int code = openChosenGraph(infoCommand(), args, file, index); code != kExitOk)
        return code;
    const bool asJson = args.has("--json");
    const bool singleGraphFormat = file->format() == FileFormat::FxText || file->format() == FileFormat::Json;
    if (index && (args.has("--graph") || singleGraphFormat))
        return printGraphInfo(*file, *index, asJson, args);
    return printGraphList(*file, asJson, args.has("--nodes"));
}

} // namespace

const Command& infoCommand() {
    static const Command command{
        "info",
        {"FILE|DIR"},
        "Print node counts of a graph (GraphStats), or list the graphs of a TORCH_TRACE log / TORCH_LOGS "
        "paste, or of a folder of per-rank logs with where the ranks diverge. A log is listed from its index "
        "(read in one pass, graphs parsed only when chosen); --nodes parses every graph to count its nodes.",
        {graphOption(),
         metaOption(),
         jsonOption(),
         {"--nodes", "", "", "a log's list: parse every graph and give its node count (or why it fails)"},
         {"--layers", "", "", "also the layers (embedding, layer 0 … N-1, head, loss) found in the graph"},
         {"--layers-by-structure", "", "",
          "the layers from repeated structure only, ignoring nn_module_stack"}},
        1,
        1,
        &runInfo,
    };
    return command;
}

} // namespace jointscope::cli
