// jointscope-cli info: counts for one graph, or the list of graphs in a log.
#include "Command.h"
#include "RankReport.h"

#include "graph/GraphStats.h"
#include "graph/Layers.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
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

// One cell of a table: its text, numbers right-aligned.
struct Cell {
    std::string text;
    bool right = false;
};
Cell numberCell(uint64_t v) {
    return {std::to_string(v), true};
}

// Columns padded to their widest cell. The rows are made twice (widths, then lines) instead of held: a 10 GB
// log lists 225 thousand graphs.
void printTable(const std::vector<std::string>& header, size_t rowCount,
                const std::function<std::vector<Cell>(size_t)>& rowAt) {
    std::vector<size_t> width(header.size());
    for (size_t c = 0; c < header.size(); ++c)
        width[c] = header[c].size();
    for (size_t r = 0; r < rowCount; ++r) {
        const std::vector<Cell> row = rowAt(r);
        for (size_t c = 0; c < row.size(); ++c)
            width[c] = std::max(width[c], row[c].text.size());
    }
    auto print = [&](const std::vector<Cell>& cells) {
        std::string line;
        for (size_t c = 0; c < cells.size(); ++c) {
            const std::string pad(width[c] - cells[c].text.size(), ' ');
            line += cells[c].right ? pad + cells[c].text : cells[c].text + (c + 1 < cells.size() ? pad : "");
            if (c + 1 < cells.size())
                line += "  ";
        }
        std::printf("%s\n", line.c_str());
    };
    std::vector<Cell> headerCells;
    for (const std::string& title : header)
        headerCells.push_back({title});
    print(headerCells);
    for (size_t r = 0; r < rowCount; ++r)
        print(rowAt(r));
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
// counted when it was read). Printed row by row, never held as a document.
int printGraphList(const GraphFile& file, bool asJson, bool parse) {
    const GraphList& graphs = file.graphs();
    std::vector<std::string> problems;
    for (const Diagnostic& d : file.problems())
        problems.push_back(d.format());
    const bool counted = parse || file.format() != FileFormat::TraceLog;
    const auto counts = counted ? countNodes(file) : std::vector<std::pair<uint64_t, std::string>>{};
    if (counted)
        for (size_t i = 0; i < graphs.size(); ++i) // a failed graph's located message is among the problems
            if (const std::string& error = counts[i].second; !error.empty() && !graphs[i].failed())
                problems.push_back(error);
    const bool ranked = !file.ranks().empty();
    if (asJson) {
        std::printf("{\n  \"graphs\": [");
        for (size_t i = 0; i < graphs.size(); ++i) {
            const GraphEntry entry = graphs[i];
            Json row{
                {"index", i}, {"kind", entry.kind}, {"compile_id", entry.compileId}, {"line", entry.line}};
            if (entry.rank >= 0)
                row["rank"] = entry.rank;
            if (counted) {
                row["nodes"] = counts[i].first;
                if (!counts[i].second.empty())
                    row["error"] = counts[i].second;
            }
            // As the whole document's dump(2) would place it: two levels in.
            std::string text = row.dump(2);
            std::string indented = "\n    ";
            for (const char c : text)
                indented += c == '\n' ? std::string("\n    ") : std::string(1, c);
            std::printf("%s%s", i ? "," : "", indented.c_str());
        }
        std::printf(graphs.empty() ? "]" : "\n  ]");
        Json rest = Json::object();
        if (ranked)
            rest["ranks"] = rankDivergenceJson(summarizeRanks(file));
        if (!problems.empty())
            rest["problems"] = problems;
        std::printf("%s\n", rest.empty() ? "\n}" : (",\n" + rest.dump(2).substr(2)).c_str());
        return kExitOk;
    }
    std::printf("%s: %zu graphs (%.*s)\n", file.fileName().c_str(), graphs.size(),
                int(formatName(file.format()).size()), formatName(file.format()).data());
    std::vector<std::string> header{"index", "compile_id", "kind", "line"};
    if (counted)
        header.push_back("nodes");
    if (ranked)
        header.insert(header.begin() + 1, "rank");
    printTable(header, graphs.size(), [&](size_t i) {
        const GraphEntry entry = graphs[i];
        std::vector<Cell> row{numberCell(i),
                              {entry.compileId.empty() ? "-" : entry.compileId},
                              {entry.kind},
                              numberCell(entry.line)};
        if (counted)
            row.push_back(counts[i].second.empty() ? numberCell(counts[i].first) : Cell{"failed"});
        if (ranked)
            row.insert(row.begin() + 1, Cell{std::to_string(entry.rank), true});
        return row;
    });
    if (ranked) {
        std::printf("\n");
        for (const std::string& line : summarizeRanks(file).lines())
            std::printf("%s\n", line.c_str());
    }
    for (const std::string& p : problems)
        std::fprintf(stderr, "%s\n", p.c_str());
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
