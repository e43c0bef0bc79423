// Live activation bytes over a partition's execution: the forward module's nodes in the order torch runs
// them, then the backward module's (recomputed nodes included), as torch's generated code frees each value
// after its last use. docs/partition.md ("How peak memory is estimated") says what counts.
#pragma once

#include "graph/Graph.h"
#include "ops/Ruleset.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <span>
#include <vector>

namespace jointscope::partition {

struct Partition;

enum class MemoryPhase : uint8_t { Forward, Backward };

struct MemoryStep {
    NodeId node = kNoNode; // in the joint graph the timeline was computed on
    MemoryPhase phase = MemoryPhase::Forward;
    bool recomputed = false;     // a forward node the backward computes again
    uint64_t liveBytes = 0;      // while the node runs: what was live before it plus what it allocates
    uint64_t allocatedBytes = 0; // fresh storages it creates (0 for views and getitems)
    uint64_t freedBytes = 0;     // released right after it: storages whose last reader it was
};

struct MemoryTimeline {
    std::vector<MemoryStep> steps; // the forward's steps, then the backward's
    size_t forwardSteps = 0;
    size_t peakStep = 0; // index into steps of the first step at peakBytes (0 when steps is empty)
    uint64_t peakBytes = 0;
    uint64_t savedBytes = 0; // live between the modules: the saved values' storages that are not inputs

    const MemoryStep* peak() const { return steps.empty() ? nullptr : &steps[peakStep]; }
};

// The timeline of `joint` (dead code eliminated, as a Partition's graph) when the forward returns `saved` and
// `savedSym` to the backward. Graph inputs (primals, tangents, seeds, get_attr constants) and every view of
// them are not activations: they are not counted. Fails when the saved values do not make a valid partition.
// `rngStates`: recomputed random ops whose generator state the forward saves (Partition::rngStates); the
// state lives until the backward replays the op.
Expected<MemoryTimeline> memoryTimeline(const Graph& joint, std::span<const NodeId> saved,
                                        std::span<const NodeId> savedSym, const Ruleset& rules,
                                        std::span<const NodeId> rngStates = {});
Expected<MemoryTimeline> memoryTimeline(const Partition& partition, const Ruleset& rules);

// The bytes of the storage a fresh tensor of `tensor`'s sizes and strides occupies (its strided extent).
uint64_t storageBytes(const TensorMeta& tensor);

} // namespace jointscope::partition
