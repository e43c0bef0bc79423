// Shared helpers of the libFuzzer targets.
#pragma once

#include "io/FxReader.h"
#include "io/GraphEntry.h"
#include "io/TraceLog.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace jointscope::fuzz {

inline std::string_view asText(const uint8_t* data, size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// A failed reader must still say where: a located `file:line:col` diagnostic (house rule).
inline void checkLocated(const Diagnostic& error, const char* what) {
    if (error.message.empty() || error.loc.file.empty()) {
        std::fprintf(stderr, "%s: unlocated or empty diagnostic: '%s'\n", what, error.format().c_str());
        std::abort();
    }
}

// Parses every payload of an index the way GraphFile::load does (the index parses none: a graph is read when
// it is chosen); one that does not read says where.
inline void loadEveryPayload(const GraphList& graphs, const char* fileName) {
    for (const GraphEntry& entry : graphs) {
        FxReadOptions options{fileName, entry.payloadLine, entry.payloadColumn};
        Expected<Graph> graph = readFxText(entry.payload, options);
        if (!graph)
            checkLocated(graph.error(), "readFxText(payload)");
    }
}

// A log format's target: its sniffer on the first 4 KiB, its indexer on the whole input, every problem the
// index reports located and every payload read (what opening a log does).
inline int fuzzLogIndex(const uint8_t* data, size_t size, bool (*looksLike)(std::string_view),
                        GraphIndex (*indexLog)(std::string_view, const std::string&), const char* fileName) {
    const std::string_view text = asText(data, size);
    looksLike(text.substr(0, 4096));
    const GraphIndex index = indexLog(text, fileName);
    for (const Diagnostic& problem : index.problems)
        checkLocated(problem, "index problem");
    loadEveryPayload(index.graphs, fileName);
    return 0;
}

} // namespace jointscope::fuzz
