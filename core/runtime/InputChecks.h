// What the runtime checks in a graph before LibTorch sees it, free of LibTorch types so that it can be fuzzed
// and tested without a LibTorch: the ops a graph calls (OpPolicy.h) and the shapes of the tensors it makes.
#pragma once

#include "graph/Graph.h"
#include "graph/SymbolicExpr.h"
#include "runtime/OpPolicy.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace jointscope::runtime {

// The schema the runtime would call for an aten / prims node, or nullopt when it has none for it.
using SchemaLookup = std::function<std::optional<OpSchemaView>(const Target&)>;

// The first aten / prims call, in the graph or the bodies it holds, whose op the policy refuses, as an error
// on that node ("node 'x' (aten.from_file.default): refused: reads or writes files").
std::optional<Diagnostic> refusedOpIn(const Graph& graph, const SchemaLookup& schemaOf);

// The integer value of a dim, a symbolic one evaluated under `symbols`.
Expected<int64_t> dimValue(const SymInt& dim, const SymbolBindings& symbols);
// The integer values of dims, symbolic ones evaluated under `symbols`.
Expected<std::vector<int64_t>> dimValues(const std::vector<SymInt>& dims, const SymbolBindings& symbols);

// The bytes a tensor of `sizes` (and `strides`, when given) with elements of `itemSize` bytes spans: an error
// for a negative size or stride, a byte count that overflows 64 bits or int64, or more than `limitBytes`
// (`deviceName` says where in that message).
Expected<uint64_t> storageBytes(const std::vector<int64_t>& sizes, const std::vector<int64_t>* strides,
                                size_t itemSize, uint64_t limitBytes, std::string_view deviceName);

} // namespace jointscope::runtime
