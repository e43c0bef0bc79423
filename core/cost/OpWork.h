// How much arithmetic and memory traffic one node's kernel does: the input of every cost model.
//
// Formulas per op family are in docs/cost-model.md. Matmuls, convolutions and attention count FLOPs exactly
// as torch.utils.flop_counter does (countFlops); every other op counts its arithmetic per element.
#pragma once

#include "cost/OpTensors.h"
#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace jointscope::cost {

// What kind of kernel an op runs. Matmul, Convolution and Attention run on tensor cores; the roofline gives
// them the matmul peak and every other class the vector peak.
enum class OpClass : uint8_t {
    Free,          // views, getitem, placeholders, symbolic arithmetic: no kernel
    Matmul,        // mm, addmm, bmm, baddbmm, _scaled_mm
    Convolution,   // convolution, convolution_backward
    Attention,     // scaled dot-product attention forward / backward
    Pointwise,     // elementwise ops, with broadcasting
    Reduction,     // sum, mean, amax, var, ...
    Softmax,       // _softmax, _log_softmax and their backward
    Normalization, // layer / batch / group / RMS norm and their backward
    Copy,          // clone, _to_copy, cat, scatters into copies: bytes, no arithmetic
    Gather,        // embedding, index, index_select, gather, scatters that accumulate
    Pool,          // max / avg pooling and their backward
    Loss,          // nll_loss forward / backward
    Creation,      // full, zeros, rand, arange: writes only
    Unknown,       // no formula: bytes only
};
std::string_view opClassName(OpClass c); // "matmul", "pointwise", ...
bool usesTensorCores(OpClass c);

struct OpWork {
    double flops = 0;
    double bytesRead = 0; // each distinct tensor argument once (the elements a gather touches, for gathers)
    double bytesWritten = 0; // every tensor result
    bool free = false;       // no kernel runs: time 0
    std::string freeReason;  // "view", "getitem", "placeholder", "output", "symbolic", "allocation", ...
    bool unknown = false;    // no formula for the op: bytes only, flops 0
    bool incomplete = false; // a tensor the formula needs has no recorded shape: the numbers are lower bounds
    OpClass opClass = OpClass::Unknown;
    DType dtype = DType::Undefined; // the dtype the arithmetic runs in: picks the peak FLOP/s

    double bytes() const { return bytesRead + bytesWritten; }
};

// The work of node `id` with the shapes recorded in `graph`.
OpWork opWork(const Graph& graph, NodeId id);
// The work of `node` on explicit tensors: gatherTensors(graph, id) with some shapes replaced (a shard's local
// shapes, say). `node`'s node references key `tensors.inputs`.
OpWork opWork(const Node& node, const OpTensors& tensors);

} // namespace jointscope::cost
