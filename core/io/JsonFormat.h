// jointscope JSON: the full IR, nested subgraphs, meta and attached decisions (docs/formats.md).
#pragma once

#include "graph/Graph.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace jointscope {

inline constexpr int kJsonFormatVersion = 1;

bool looksLikeJsonGraph(std::string_view head);
// Which parser reads a JSON graph. Fast: simdjson where the build has it, falling back to nlohmann for a
// document it cannot read cleanly, so that the problem is located. Nlohmann: nlohmann alone (tests and the
// fuzzer compare the two).
enum class JsonParser : uint8_t { Fast, Nlohmann };
Expected<Graph> readJsonGraph(std::string_view text, const std::string& fileName,
                              JsonParser parser = JsonParser::Fast);
std::string writeJsonGraph(const Graph& graph);

// torch 1.13 sidecar (<stem>.meta.json): per-node tensor_meta and num_fwd_outputs, matched by node name.
// Returns a located diagnostic when the sidecar does not match the graph.
std::optional<Diagnostic> applyMetaSidecar(Graph& graph, std::string_view json, const std::string& fileName);
// torch 1.13 reference.json beside the graph: torch's own decisions.
std::optional<Diagnostic> applyReferenceDecisions(Graph& graph, std::string_view json,
                                                  const std::string& fileName);

} // namespace jointscope
