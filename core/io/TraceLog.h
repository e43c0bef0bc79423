// TORCH_TRACE structured logs (glog prefix + JSON + tab-indented payload) and TORCH_LOGS terminal pastes.
#pragma once

#include "io/CompileConfig.h"
#include "io/GraphList.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope {

// The collectives inductor scheduled for one compile (the inductor_collective_schedule artifact), in order.
struct CollectiveSchedule {
    std::string compileId;
    int32_t rank = -1;
    uint32_t line = 0;
    std::vector<std::string> ops; // "torch.ops._c10d_functional.all_reduce_.default", ...
};

struct GraphIndex {
    GraphList graphs;
    std::vector<Diagnostic> problems; // located; the file still loads (e.g. a corrupted JSON line)
    std::vector<CollectiveSchedule> collectives;
    // The records that may carry a compile's configuration (GraphFile::compileConfigFor reads them), and,
    // for a log indexed in memory, what each compile ran with (scanCompileConfigs of the log).
    ConfigRecords configRecords;
    std::vector<CompileConfig> configs;
    bool cancelled = false; // the index stopped early (TraceIndexOptions::progress said so)
};

bool looksLikeTraceLog(std::string_view head);
// Lists every graph payload of a log held in memory with its compile id; checks the md5 of every payload.
// Graph entries hold their payload text.
GraphIndex indexTraceLog(std::string_view text, const std::string& fileName);

struct TraceIndexOptions {
    // Called now and then on the calling thread with the bytes read and graphs found so far; returning false
    // stops the index (GraphIndex::cancelled).
    std::function<bool(uint64_t bytesRead, uint64_t totalBytes, size_t graphs)> progress;
    // Called now and then on the calling thread with the graphs found since the last call, in file order;
    // every graph comes exactly once, the last ones after the whole log is read: a list can fill in as the
    // index grows.
    std::function<void(GraphList)> found;
    unsigned threads = 0;                         // parts of a big log read at once; 0: one per core
    uint64_t bytesPerThread = uint64_t(32) << 20; // a log smaller than this is read on one thread
};
// The same for a log file of any size, read in blocks, big logs in parts on several threads: memory
// independent of the file's size. Graph entries hold their payload's byte span and md5, not its text
// (payloadFromLines of the span gives it).
Expected<GraphIndex> indexTraceLogFile(const std::string& path, const TraceIndexOptions& options = {});
// Bytes [begin, end) of a log (fewer when the file is shorter now).
std::string readLogSpan(std::ifstream& in, uint64_t begin, uint64_t end);
// A payload's text from its raw lines as the log holds them (each one tab-indented).
std::string payloadFromLines(std::string_view raw);

// One "artifact" record of a TORCH_TRACE log (trace_structured("artifact", {"name", "encoding"}, payload)).
struct TraceArtifact {
    std::string name;
    std::string encoding;     // "string", "json", ...
    std::string payload;      // the tab-stripped payload lines joined by '\n'
    uint32_t line = 0;        // the record's line
    uint32_t payloadLine = 0; // the payload's first line (0: no payload)
};
// The artifacts named `name`, in file order; lines that are not records are skipped (indexTraceLog reports
// them).
std::vector<TraceArtifact> traceArtifacts(std::string_view text, std::string_view name);

bool looksLikeLogPaste(std::string_view head);
// Lists every graph in a TORCH_LOGS paste (glog prefixes, ANSI escapes, TRACED GRAPH / Forward graph
// headers).
GraphIndex indexLogPaste(std::string_view text, const std::string& fileName);

} // namespace jointscope
