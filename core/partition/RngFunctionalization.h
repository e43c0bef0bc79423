// Recomputed random ops made to draw in the backward what they drew in the forward, on the extracted graphs
// (torch/_functorch/partitioners.py functionalize_rng_ops).
#pragma once

#include "graph/FxNamespace.h"
#include "graph/Graph.h"

#include <string>
#include <vector>

namespace jointscope::partition {

// One random op both graphs compute, named as in both.
struct RngOpToWrap {
    std::string name;
    // The forward returns its generator state (run_and_save_rng_state, CPU ops and ops of several devices);
    // else both graphs take the device generator's state as an input (graphsafe_run_with_rng_state, CUDA).
    bool stateSaved = true;
    Device device; // functionalize_rng_ops' get_device: the first output on a graphsafe device, else the CPU
};

// The generator state get_sample_rng_state gives a saved state: the CPU Mersenne Twister's 5,056 bytes, a
// CUDA Philox generator's seed and offset (16 bytes, held on the CPU).
TensorMeta rngStateMeta(const Device& device);

// The graphs as functionalize_rng_ops leaves them, the ops taken in joint graph order:
// - a saved state: the forward runs run_and_save_rng_state(op, args...) and reads its state (getitem 0) and
//   the op's value (getitem 1); the states are forward outputs after the saved tensors, before the saved
//   symbols (`numSavedSym` of them); the backward takes each as placeholder rng_state_output_N before the
//   tangents and runs run_with_rng_state(state, op, args...);
// - graphsafe: each graph takes fwd_rng_state_K / bwd_rng_state_K (K counts every op) after its last input
//   and runs graphsafe_run_with_rng_state(op, args..., rng_state=...).
// `forwardNames` / `backwardNames` are the names each graph has spent (extractedNames): new nodes are named
// as torch names them.
void functionalizeRngOps(Graph& forward, Graph& backward, const std::vector<RngOpToWrap>& ops,
                         FxNamespace forwardNames, FxNamespace backwardNames, size_t numSavedSym);

} // namespace jointscope::partition
