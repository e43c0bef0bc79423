// Colour refinement (1-dimensional Weisfeiler-Leman) over a graph's data edges, and the structural text of a
// node that two copies of one layer print alike. Used to find repeated layers: the sharding engine merges
// the ILP variables of nodes that play the same part in identical layers (sharding/Clusters), the views group
// a graph into its layers (graph/Layers).
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <vector>

namespace jointscope {

// dtype and sizes ("6[2,s0,]"): strides and devices are left out.
void appendTensorKey(std::string& key, const TensorMeta& tensor);
// Literal arguments as text, node references as '%': the same call in two copies of a layer prints the same.
void appendValueKey(std::string& key, const Value& value);
// op, target (none for placeholders, whose target is their own name), output kind and tensors, literal
// arguments and kwargs. Node names never enter.
std::string structuralKey(const Node& node);

// Dense colours (0, 1, ...) for keys; an empty key gives -1 (the node takes no part).
std::vector<int32_t> coloursOfKeys(const std::vector<std::string>& keys);

struct RefineOptions {
    int rounds = 1;
    // Also refine by the colours of consumers (with the argument position they read at). Off: only
    // producers, so a node's colour does not depend on what happens after it (the last copy of a layer
    // keeps the colours of the others).
    bool consumers = true;
};

// Refines `colour` (-1: not taking part) round by round: a node's new colour is its colour with its
// producers' colours by position (`inputs[v]`) and, with options.consumers, its consumers' colours. Stops
// early when a round splits no class. Bounded on purpose: unbounded refinement tells every copy of a layer
// apart by its distance from the graph's ends.
std::vector<int32_t> refineColours(std::vector<int32_t> colour,
                                   const std::vector<std::vector<NodeId>>& inputs,
                                   const RefineOptions& options);

} // namespace jointscope
