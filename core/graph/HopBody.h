// The body graph a higher-order-op call or a get_attr node reads: the one lookup every consumer uses.
#pragma once

#include "graph/Graph.h"

#include <optional>

namespace jointscope {

// Which argument of `call`, a node of `graph`, names its body: for a higher-order op, the first node argument
// whose node reads a nested graph (a get_attr). nullopt for other nodes and for a call whose body is not in
// the file.
std::optional<size_t> bodyArgument(const Graph& graph, const Node& call);

// The nested graph node `id` reads: its own for a get_attr of a body, the body argument's for a higher-order
// op call; null when there is none.
const Graph* bodyOf(const Graph& graph, NodeId id);

} // namespace jointscope
