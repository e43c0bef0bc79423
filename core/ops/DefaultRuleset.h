// Which built-in partitioner ruleset a graph was made under; the CLI and the GUI's partition document both
// default to it, so a graph partitions the same way in either.
#pragma once

#include "graph/Graph.h"

#include <string>

namespace jointscope {

// torch-1.13 for graphs recorded by torch 1.x (their attributes carry torch_version), else torch-2.
inline std::string defaultRulesetName(const Graph& graph) {
    for (const auto& [key, value] : graph.attributes)
        if (key == "torch_version" && value.rfind("1.", 0) == 0)
            return "torch-1.13";
    return "torch-2";
}

} // namespace jointscope
