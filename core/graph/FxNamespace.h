// The names torch.fx gives nodes that a pass inserts (torch.fx.graph._Namespace.create_name), so that a graph
// jointscope rewrites as torch did names its new nodes as torch's log does.
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace jointscope {

class FxNamespace {
public:
    // A new graph's: no name spent.
    FxNamespace() = default;
    // Seeded with the names of `graph`: each taken, and each base's count at its highest suffix. FX creates a
    // getitem for every element of a tuple when it traces, and dead ones are erased before torch logs the
    // graph; their numbers are still spent, so a tuple's getitems count up to its last element.
    explicit FxNamespace(const Graph& graph);

    // _Namespace.create_name(candidate, None): the candidate (characters Python names cannot hold made '_')
    // when it is free, else base_N with the base's next N.
    std::string create(std::string_view candidate);

    // Graph._target_to_str's snake_case: "pascalCase" -> "pascal_case", "ALL_CAPS" -> "all_caps".
    static std::string targetToName(std::string_view target);

private:
    void take(std::string_view name);

    std::unordered_set<std::string> used_;
    std::unordered_map<std::string, int64_t> baseCount_;
};

} // namespace jointscope
