// Which ops hand back their first argument's storage when they run (views, in-place ops, and ops that return
// their input unchanged when they can), so that memory accounting counts a view's bytes once, with its base.
// The op lists are data (StorageAlias.cpp); the conditions mirror what ATen does at run time.
#pragma once

#include "graph/Graph.h"

#include <cstdint>
#include <string_view>

namespace jointscope {

enum class StorageAlias : uint8_t {
    None,        // a fresh storage
    Always,      // a view (or, for split / unbind / chunk, a tuple of views) or an in-place op
    IfViewable,  // reshape / flatten / contiguous: a view when the input's strides allow one, else a copy
    IfSameDtype, // to / type_as: the input itself when the dtype already matches, else a copy
};

// By op key ("aten.view", as opKey() spells it). In-place overloads ("aten.add_") are Always.
StorageAlias storageAlias(std::string_view opKey);

// ATen's view rule (computeStride): can a tensor of `from` sizes and strides be seen as `toSizes` without a
// copy? True when `from` has no strides recorded (taken as contiguous).
bool viewable(const TensorMeta& from, const std::vector<SymInt>& toSizes);

// Whether `node` (a call) returns its first argument's storage when it runs, given the tensor it reads
// (`input`, may be null when unknown) and its first result (`output`, may be null).
bool sharesFirstArgumentStorage(const Node& node, const TensorMeta* input, const TensorMeta* output);

// Losses whose reduced (0-d) result holds the storage of the elementwise loss ATen computed first, one
// element per element of the input: mse_loss, smooth_l1_loss, binary_cross_entropy, soft_margin_loss
// (torch 2.15 on the CPU: mse_loss of two [2, 5, 16] tensors returns a 0-d tensor of a 640-byte storage;
// l1_loss, huber_loss, binary_cross_entropy_with_logits and kl_div return 4 bytes).
bool keepsElementwiseLossStorage(std::string_view opKey);

} // namespace jointscope
