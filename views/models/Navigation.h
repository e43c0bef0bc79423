// Keyboard walk along data edges (Alt+arrows) and the text search reads: Qt-free graph queries.
#pragma once

#include "graph/Graph.h"

#include <string>
#include <vector>

namespace jointscope::views {

// Distinct nodes `id` reads, in argument order (args, then kwargs).
std::vector<NodeId> producersOf(const Graph& graph, NodeId id);
// Distinct nodes reading `id`, in graph order.
std::vector<NodeId> consumersOf(const Graph& graph, NodeId id);

enum class WalkStep { Producer, Consumer, Previous, Next };

// Alt+Up goes to the first producer, Alt+Down to the first consumer; Alt+Left / Alt+Right step among the
// siblings on the edge last walked: the other consumers of the producer we came down from, or the other
// producers of the consumer we came up from. Without a walked edge, siblings are the other consumers of
// the first producer (or, for a source, the other producers of its first consumer).
class EdgeWalker {
public:
    // The node to go to; kNoNode when there is none (the walk stays where it is).
    NodeId step(const Graph& graph, NodeId current, WalkStep step);
    void reset() { at_ = pivot_ = kNoNode; }

private:
    NodeId at_ = kNoNode;
    NodeId pivot_ = kNoNode;
    bool pivotIsProducer_ = true; // siblings are consumersOf(pivot) when true, else producersOf(pivot)
};

// Meta a search also reads: stack trace, nn_module_stack paths and types, tags, descriptor, other meta.
std::string metaSearchText(const Node& node);

} // namespace jointscope::views
