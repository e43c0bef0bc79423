// Reader for FX readable text (print_readable / gm.code) of every torch version. Never executes anything.
#pragma once

#include "graph/Graph.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace jointscope {

struct FxReadOptions {
    std::string fileName;       // for diagnostics
    uint32_t firstLine = 1;     // file line of text's first line (payloads inside logs)
    uint32_t columnOffset = 0;  // added to every reported column
};

// Parses one graph module (with nested HOP body classes) into a Graph with users computed.
Expected<Graph> readFxText(std::string_view text, const FxReadOptions& options = {});

} // namespace jointscope
