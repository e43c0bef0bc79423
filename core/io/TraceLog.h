// TORCH_TRACE structured logs (glog prefix + JSON + tab-indented payload) and TORCH_LOGS terminal pastes.
#pragma once

#include "io/GraphEntry.h"
#include "support/Diagnostic.h"

#include <cstdint>
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
    std::vector<GraphEntry> graphs;
    std::vector<Diagnostic> problems; // located; the file still loads (e.g. a corrupted JSON line)
    std::vector<CollectiveSchedule> collectives;
};

bool looksLikeTraceLog(std::string_view head);
// Lists every graph payload with its compile id; checks md5 of payloads; resolves the string table.
GraphIndex indexTraceLog(std::string_view text, const std::string& fileName);

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
