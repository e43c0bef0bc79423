// torch's default_partition: save what the original forward computed and the backward reads.
#pragma once

#include "graph/Graph.h"
#include "support/Diagnostic.h"

#include <vector>

namespace jointscope::partition {

struct SavedSet {
    std::vector<NodeId> saved;    // tensors, in graph order (functorch 1.13 kept them in set order)
    std::vector<NodeId> savedSym; // symbolic values
};

// Mirrors default_partition (the min-cut hand-off for recompute tags is the caller's): every node of the
// forward-only graph the backward reads is saved; tuple producers save their getitems; a tensor whose
// backward users only read its sizes saves those sym nodes instead. Values the backward does not read are
// dropped by the extraction, as torch's _extract_fwd_bwd_modules does.
Expected<SavedSet> defaultPartition(const Graph& joint);

} // namespace jointscope::partition
