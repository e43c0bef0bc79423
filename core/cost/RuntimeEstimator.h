// Per-node runtime estimates for the activation memory budget (torch/_functorch/partitioners.py:
// estimate_runtime, selected by config.activation_memory_budget_runtime_estimator).
#pragma once

#include "cost/OpTensors.h"
#include "graph/Graph.h"

#include <cstdint>
#include <string_view>

namespace jointscope::cost {

class RuntimeEstimator {
public:
    virtual ~RuntimeEstimator() = default;
    virtual double estimate(const Graph& graph, NodeId id) const = 0;
    virtual std::string_view name() const = 0;
};

// torch's "flops" mode: max(FlopCounterMode's total, 1).
class FlopEstimator final : public RuntimeEstimator {
public:
    double estimate(const Graph& graph, NodeId id) const override;
    std::string_view name() const override { return "flops"; }
};

// torch's "testing" mode: every node costs 1.
class UnitEstimator final : public RuntimeEstimator {
public:
    double estimate(const Graph&, NodeId) const override { return 1.0; }
    std::string_view name() const override { return "testing"; }
};

// FLOPs of one node as torch.utils.flop_counter counts them: mm, addmm, bmm, baddbmm, _scaled_mm,
// convolution, _convolution, convolution_backward, the _scaled_dot_product_{efficient,flash,cudnn}_attention
// forward and backward ops and _{flash,efficient}_attention_{forward,backward}. Shapes come from the argument
// nodes' TensorMeta and the node's own outputs; a symbolic size uses its recorded hint, else
// kSymbolicSizeFallback. 0 for every other op, and when a shape the formula needs is unknown.
uint64_t countFlops(const Graph& graph, NodeId id);
// The same count from explicit tensors (a shard's local shapes, say).
uint64_t countFlops(const Node& node, const OpTensors& tensors);
// Whether torch's flop_registry has a formula for the node's op (countFlops is 0 for every other node).
bool hasFlopFormula(const Node& node);

} // namespace jointscope::cost
