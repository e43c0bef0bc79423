// torch's default_partition: save what the original forward computed and the backward reads.
#pragma once

#include "graph/Graph.h"
#include "support/Diagnostic.h"

#include <cstdint>
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

// torch >= 2.8's default_partition: the forward is every non-tangent node up to the last one tagged
// "is_forward" (or the last primal), by placement in the graph rather than by dataflow. Of those, symbolic
// values and MUST_SAVE / impure nodes are saved, tuple producers are skipped (their getitems are nodes too), a
// tensor whose backward users only read sizes saves those instead, and every other node the backward reads
// is saved unless it must be recomputed. `policy` holds the tags after cleanup_recompute_tags
// (is_default_partition=True) and the force_save_* passes.
Expected<SavedSet> defaultPartitionByPlacement(const Graph& joint, const std::vector<uint8_t>& mustSave,
                                               const std::vector<uint8_t>& mustRecompute);

} // namespace jointscope::partition
