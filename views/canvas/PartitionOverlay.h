// What the canvas shows of a partition: per node of the graph shown, its decision, its pin and its bytes.
// Built by the app from the engine's result (views decide nothing).
#pragma once

#include <cstdint>
#include <vector>

namespace jointscope::views {

enum class PartitionMark : uint8_t { None, Saved, Recomputed, Banned, Backward };
enum class PinMark : uint8_t { None, MustSave, MustRecompute };

struct NodePartitionMark {
    PartitionMark mark = PartitionMark::None;
    PinMark pin = PinMark::None;
    bool banned = false;        // banned from recomputation (a saved node can be banned too)
    uint64_t bytes = 0;         // saved bytes, shown on the badge
    bool pinOverridden = false; // the solve contradicts the pin (a MUST_SAVE node recomputed, ...)
};

struct PartitionOverlay {
    std::vector<NodePartitionMark> nodes; // indexed by NodeId of the graph shown; empty: no overlay
};

} // namespace jointscope::views
