// Pins a partition's decision contradicts, for the Partition summary's warning and the canvas's badge.
#pragma once

#include "partition/Partitioner.h"

#include <string>
#include <utility>
#include <vector>

namespace jointscope::partition {

// A pin the decision contradicts: a MUST_SAVE node recomputed in the backward, a MUST_RECOMPUTE node saved
// (an input, which torch always saves, or a node the ban rules keep out of the backward).
struct PinConflict {
    std::string node;
    Policy pinned = Policy::None;
    std::string outcome; // "recomputed" | "saved"
    std::string rule;    // why, as explainNode says it
};
// The conflicts of `pins` (name -> policy, the overrides the partition was solved with) with `partition`'s
// decision, in the pins' order. Only MUST_* pins: PREFER_* ones are allowed to lose.
std::vector<PinConflict> pinConflicts(const Partition& partition,
                                      const std::vector<std::pair<std::string, Policy>>& pins);

} // namespace jointscope::partition
