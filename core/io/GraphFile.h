// Opens any graph file engineers have: FX text, TORCH_TRACE logs, TORCH_LOGS pastes, jointscope JSON.
#pragma once

#include "graph/Graph.h"
#include "io/GraphList.h"
#include "io/TraceLog.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope {

enum class FileFormat { FxText, TraceLog, LogPaste, Json };
std::string_view formatName(FileFormat format);

struct OpenOptions {
    std::string metaPath;     // explicit torch 1.13 sidecar; else <stem>.meta.json beside the file if present
    bool autoSidecars = true; // also reference.json beside joint.txt (torch's own decisions)
    std::function<void()> jsonParsed; // called for each JSON document read into a graph (tests count them)
    // TORCH_TRACE logs: called while the log is indexed (TraceIndexOptions::progress); false cancels the
    // open.
    std::function<bool(uint64_t bytesRead, uint64_t totalBytes, size_t graphs)> progress;
    // A TORCH_TRACE log file (not a folder): its graphs as the index finds them (TraceIndexOptions::found).
    std::function<void(GraphList)> graphsFound;
};

// "FILE" or "FILE#GRAPH" (GRAPH as GraphFile::select takes it): the path and the graph ("" when none). A '#'
// that is part of an existing file's name stays in the path.
std::pair<std::string, std::string> splitGraphReference(const std::string& argument);

// One log of a folder of per-rank TORCH_TRACE logs.
struct RankLog {
    int32_t rank = -1;
    std::string file;
    size_t graphs = 0;
    ConfigRecords configRecords; // where this log records what its compiles ran with
};

class GraphFile {
public:
    // A path to a folder opens its per-rank TORCH_TRACE logs as one file: every graph tagged with its rank
    // (GraphEntry::rank, ::file), ranks() listing the logs.
    static Expected<GraphFile> open(const std::string& path, const OpenOptions& options = {});
    static Expected<GraphFile> fromText(std::string text, std::string fileName,
                                        const OpenOptions& options = {});

    FileFormat format() const { return format_; }
    const std::string& fileName() const { return fileName_; }
    const GraphList& graphs() const { return graphs_; }
    const std::vector<Diagnostic>& problems() const { return problems_; }
    const std::vector<CollectiveSchedule>& collectives() const { return collectives_; }
    const std::vector<RankLog>& ranks() const { return ranks_; } // empty unless opened from a folder
    // What the compile of graph `entry` ran with, as its TORCH_TRACE log records it (findCompileConfig of
    // scanCompileConfigs), read from that compile's records the index noted: no pass over the log.
    std::optional<CompileConfig> compileConfigFor(const GraphEntry& entry) const;
    // What every compile of the log `entry` came from ran with (scanCompileConfigs of it).
    std::vector<CompileConfig> compileConfigsOf(const GraphEntry& entry) const;

    // Parses graph `index` (sidecars applied for single-graph files).
    Expected<Graph> load(size_t index) const;
    // The text of graph `index` as the log holds it (read from the file for an indexed log, checked against
    // the digest taken at open).
    Expected<std::string> payload(size_t index) const;
    // "INDEX", "KIND" (first of that kind) or "KIND@COMPILE_ID", each optionally after "rankN:" (only rank
    // N's graphs; the INDEX then counts them).
    std::optional<size_t> select(std::string_view spec) const;

private:
    FileFormat format_ = FileFormat::FxText;
    std::string fileName_;
    std::string text_; // whole file for single-graph formats (a log's graphs hold their payload or its span)
    // A JSON file is read whole at open (the listing needs its kind, compile id and node count); the first
    // load() takes that graph instead of parsing the document again, later ones parse text_. Shared by the
    // copies of this file, which may load on several threads.
    struct ParsedJson;
    Expected<Graph> readJson(std::string_view text) const; // counts as a parse (OpenOptions::jsonParsed)
    std::shared_ptr<ParsedJson> parsedJson_;
    OpenOptions options_;
    GraphList graphs_;
    std::vector<Diagnostic> problems_;
    std::vector<CollectiveSchedule> collectives_;
    ConfigRecords configRecords_;
    std::optional<std::vector<CompileConfig>> configs_; // held when the log was indexed in memory
    // The log `entry` came from (a folder's rank log, else this file) and the records it noted.
    std::pair<const std::string*, const ConfigRecords*> configSource(const GraphEntry& entry) const;
    std::vector<RankLog> ranks_;

    static Expected<GraphFile> openFolder(const std::string& path, const OpenOptions& options);
    static Expected<GraphFile> openTraceLog(const std::string& path, std::string_view head,
                                            const OpenOptions& options);
};

} // namespace jointscope
