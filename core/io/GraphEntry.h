// One graph found in a file that may hold many (TORCH_TRACE logs, TORCH_LOGS pastes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jointscope {

struct GraphEntry {
    uint32_t index = 0; // position in the file's list
    std::string kind; // "aot_joint_graph", "dynamo_output_graph", "fx", "artifact:after_post_grad_graph", ...
    std::string compileId; // "0/0" (frame_id/frame_compile_id, as tlparse shows it); "" when unknown
    std::string title;     // human label: "[0/0] aot_joint_graph"
    // The rank that wrote the graph: the record's "rank" field, else the log's rank_N file name; -1 when
    // unknown (single-process logs).
    int32_t rank = -1;
    // The log the graph came from when it differs from the GraphFile's own name (a folder of per-rank logs).
    std::string file;
    uint32_t line = 0;  // line of the header that introduced the graph
    uint64_t nodes = 0; // top-level node count (len(graph.nodes)), 0 until parsed
    // The located parse error ("file:line:col: error: ...") of a graph that was found but does not read;
    // empty when it reads (or was not parsed yet). A failed graph stays listed so that the picker can say
    // why.
    std::string error;
    // The graph text, un-indented, when held (pastes, logs read from memory, exported programs); else the
    // byte span of its raw lines in `file` (or the GraphFile's own file).
    std::string payload;
    uint64_t payloadOffset = 0;
    uint64_t payloadBytes = 0;
    std::string digest;         // md5 hex of the payload text (TORCH_TRACE logs); "" when not computed
    uint32_t payloadLine = 0;   // file line of the payload's first line
    uint32_t payloadColumn = 0; // column offset removed by un-indenting (e.g. 1 for the tab)
    // aot_joint_graph of a TORCH_TRACE log: the fw_metadata's static_input_indices of the same compile (which
    // primals are parameters / buffers, what torch passes its partitioner as static_lifetime_input_indices).
    std::optional<std::vector<int64_t>> staticInputIndices;

    bool failed() const { return !error.empty(); }
};

} // namespace jointscope
