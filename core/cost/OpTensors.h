// The tensors one node reads and writes, as the cost formulas see them.
//
// Formulas never look at the graph around a node, only at this: the sharding engine asks what a node costs on
// a shard by handing in the node with its local shapes, without building a graph.
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope::cost {

struct OpTensors {
    // The tensor behind each node reference in the node's arguments (args and kwargs, lists included),
    // keyed by the referenced node. References to non-tensors (SymInts, tuples) have no entry.
    std::vector<std::pair<NodeId, TensorMeta>> inputs;
    // The node's results: one for a tensor, one per element for a tuple. An element nobody knows has
    // DType::Undefined and no sizes.
    std::vector<TensorMeta> outputs;

    // nullptr when the referenced node has no known tensor.
    const TensorMeta* input(NodeId id) const;
    // Adds or replaces the tensor of a referenced node.
    void setInput(NodeId id, TensorMeta tensor);
};

// The tensors of node `id` as recorded in `graph`. A multi-output op whose own metadata is missing (torch
// 1.13 sidecars record shapes on the getitem nodes only) takes each element from its getitem users.
OpTensors gatherTensors(const Graph& graph, NodeId id);

// Positional argument `index` of a node, else its keyword argument `name`; nullptr when absent.
const Value* argumentOf(const Node& node, size_t index, std::string_view name);

// The size torch's estimate_runtime gives a symbolic dimension without a hint (hint_int(d, fallback=4096)).
inline constexpr int64_t kSymbolicSizeFallback = 4096;

// hint_int(d, fallback=4096): a symbolic size uses the hint recorded with it, else kSymbolicSizeFallback.
uint64_t concreteSize(const SymInt& size);
// The sizes of a tensor, symbolic ones made concrete; nullopt when the tensor is entirely unknown.
std::optional<std::vector<uint64_t>> concreteShape(const TensorMeta& tensor);
// Number of elements (1 for a 0-d tensor); 0 when unknown.
uint64_t numel(const TensorMeta& tensor);
// Elements a kernel actually touches in memory: dimensions with stride 0 (expand / broadcast views) count
// once. numel() when the strides are not recorded.
uint64_t storedElements(const TensorMeta& tensor);

} // namespace jointscope::cost
