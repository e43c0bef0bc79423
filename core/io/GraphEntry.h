// One graph found in a file that may hold many (TORCH_TRACE logs, TORCH_LOGS pastes).
#pragma once

#include "io/Md5.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jointscope {

struct GraphEntry {
    uint32_t index = 0; // position in the file's list
    // The rank that wrote the graph: the record's "rank" field, else the log's rank_N file name; -1 when
    // unknown (single-process logs).
    int32_t rank = -1;
    uint32_t line = 0;          // line of the header that introduced the graph
    uint32_t payloadLine = 0;   // file line of the payload's first line
    uint32_t payloadColumn = 0; // column offset removed by un-indenting (e.g. 1 for the tab)
    uint64_t nodes = 0;         // top-level node count (len(graph.nodes)), 0 until parsed
    // The graph text, un-indented, when held (pastes, logs read from memory, exported programs); else the
    // byte span of its raw lines in `file` (or the GraphFile's own file).
    std::string payload;
    uint64_t payloadOffset = 0;
    uint64_t payloadBytes = 0;
    std::optional<std::array<uint8_t, 16>> digest; // md5 of the payload text (TORCH_TRACE logs)
    std::string kind; // "aot_joint_graph", "dynamo_output_graph", "fx", "artifact:after_post_grad_graph", ...
    std::string compileId; // "0/0" (frame_id/frame_compile_id, as tlparse shows it); "" when unknown
    // The words torch printed for the graph when they are not the kind (a TORCH_LOGS paste's header, "TRACED
    // GRAPH"); "" shows the kind.
    std::string heading;
    // The log the graph came from when it differs from the GraphFile's own name (a folder of per-rank logs).
    std::string file;
    // The located parse error ("file:line:col: error: ...") of a graph that was found but does not read;
    // empty when it reads (or was not parsed yet). A failed graph stays listed so that the picker can say
    // why.
    std::string error;
    // aot_joint_graph of a TORCH_TRACE log: the fw_metadata's static_input_indices of the same compile (which
    // primals are parameters / buffers, what torch passes its partitioner as static_lifetime_input_indices).
    std::optional<std::vector<int64_t>> staticInputIndices;

    bool failed() const { return !error.empty(); }
    // Human label, built when asked (a log of 200k graphs keeps no 200k labels): "[0/0] aot_joint_graph", in
    // a folder of per-rank logs "rank 1 [0/0] aot_joint_graph".
    std::string title() const {
        std::string text = rank >= 0 && !file.empty() ? "rank " + std::to_string(rank) + " " : std::string();
        if (!compileId.empty())
            text += "[" + compileId + "] ";
        return text + (heading.empty() ? kind : heading);
    }
    std::string digestHex() const { return digest ? md5HexOf(*digest) : std::string(); }
};

} // namespace jointscope
