// The multi-rank divergence summary as `info DIR --json` and `diff DIR --json` print it.
#pragma once

#include "graph/GraphDiff.h"
#include "io/RankLogs.h"

#include <nlohmann/json.hpp>

namespace jointscope::cli {

nlohmann::ordered_json rankDivergenceJson(const RankDivergence& divergence);
// added / removed / changed / renamed counts and the entries (nodes by name, as the text prints them).
nlohmann::ordered_json graphDiffJson(const GraphDiff& diff, const Graph& a, const Graph& b);

} // namespace jointscope::cli
