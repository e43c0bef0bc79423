// What every reader checks before a graph reaches an engine: a tensor's metadata describes a tensor that can
// exist, nodes come after the nodes they use (no cycles), and calls fit their op's schema. Readers report the
// problems at file:line:col; engines may then assume them away.
#pragma once

#include "graph/Graph.h"
#include "ops/OpSchema.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace jointscope {

struct TensorMetaIssue {
    bool stride = false;     // the entry is strides[dim], else sizes[dim]
    size_t dim = 0;          // index of the offending entry
    uint32_t exprOffset = 0; // byte offset into a symbolic entry's expression
    std::string message;
};

// A negative size or stride, a size expression checkSymbolic refuses (too deep, overflowing constants), or
// sizes whose element count or byte size (with the dtype's item size) overflows int64. Symbolic sizes count
// as unknown but at least 1: a tensor whose known sizes already overflow cannot exist whatever the symbols
// are.
std::optional<TensorMetaIssue> checkTensorMeta(const TensorMeta& tensor);

// Why the call of a call_function node cannot bind to `schema` (checkCallArguments), as a message naming the
// node, its target and the schema; nullopt when it binds.
std::optional<std::string> checkCall(const Node& node, const OpSchema& schema);

struct NodeIssue {
    NodeId node = 0;
    std::string message; // names the node and its target
};

// The node-level checks of one graph (not of its subgraphs: readers check each body where they can locate its
// nodes): every node reference points at an earlier node of the graph (a later one is a forward reference or
// a cycle, which the message spells out), the output node has one argument, and call_function nodes bind to
// their schema (checkCall). Stops after `limit` issues. Linear in the graph size. The FX reader checks calls
// as it reads them (the rest holds there by construction); the JSON reader runs this on every graph it reads.
std::vector<NodeIssue> validateGraph(const Graph& graph, size_t limit = 1);

} // namespace jointscope
