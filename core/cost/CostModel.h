// Per-node run-time estimates: a roofline on datasheet peaks, or measured profiles with the roofline as
// fallback. Both plug into the partitioner's memory-budget knapsack through CostModelEstimator.
#pragma once

#include "cost/DeviceSpec.h"
#include "cost/OpWork.h"
#include "cost/RuntimeEstimator.h"
#include "graph/Graph.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace jointscope::cost {

class ProfileDb;

enum class CostSource : uint8_t {
    Free,     // no kernel: 0
    Roofline, // from the node's OpWork and the device's peaks
    Profiled, // the profile DB's median for the node's opSignature
};
std::string_view costSourceName(CostSource source); // "free", "roofline", "profiled"

struct NodeCost {
    double timeUs = 0;
    OpWork work;
    CostSource source = CostSource::Free;
};

class CostModel {
public:
    virtual ~CostModel() = default;
    virtual NodeCost cost(const Graph& graph, NodeId id) const = 0;
    virtual double nodeTimeUs(const Graph& graph, NodeId id) const { return cost(graph, id).timeUs; }
    virtual std::string_view name() const = 0;
};

// Fractions of the peaks a kernel reaches. The defaults are typical of large cuBLAS matmuls and streaming
// elementwise kernels on recent NVIDIA GPUs.
struct Efficiency {
    double compute = 0.7;
    double memory = 0.8;
};

// time = max(flops / (peak x compute efficiency), bytes / (bandwidth x memory efficiency)) + launch overhead;
// free ops cost 0. Matmuls, convolutions and attention use the tensor-core peak of their dtype, every other
// op the vector peak.
class RooflineModel final : public CostModel {
public:
    static constexpr double kDefaultLaunchOverheadUs = 3.0;

    explicit RooflineModel(DeviceSpec device, Efficiency efficiency = {},
                           double launchOverheadUs = kDefaultLaunchOverheadUs,
                           Fp32Matmul fp32 = Fp32Matmul::Ieee);

    NodeCost cost(const Graph& graph, NodeId id) const override;
    std::string_view name() const override { return "roofline"; }

    // The time of an already counted piece of work (a shard's local OpWork, say).
    double timeUs(const OpWork& work) const;
    const DeviceSpec& device() const { return device_; }

private:
    DeviceSpec device_;
    Efficiency efficiency_;
    double launchOverheadUs_;
    Fp32Matmul fp32_;
};

// Measured medians from a ProfileDb, keyed by (device, torch version, opSignature); nodes the DB does not
// know take the roofline. Free nodes cost 0 without a lookup.
class ProfiledModel final : public CostModel {
public:
    // `db` must outlive the model.
    ProfiledModel(const ProfileDb& db, std::string device, std::string torchVersion, RooflineModel fallback);

    NodeCost cost(const Graph& graph, NodeId id) const override;
    std::string_view name() const override { return "profiled"; }

private:
    const ProfileDb& db_;
    std::string device_;
    std::string torchVersion_;
    RooflineModel fallback_;
};

// A cost model as the partitioner's runtime estimator: the knapsack then weighs recomputation in
// microseconds instead of FLOPs.
class CostModelEstimator final : public RuntimeEstimator {
public:
    // `model` must outlive the estimator.
    explicit CostModelEstimator(const CostModel& model) : model_(model) {}
    double estimate(const Graph& graph, NodeId id) const override { return model_.nodeTimeUs(graph, id); }
    std::string_view name() const override { return model_.name(); }

private:
    const CostModel& model_;
};

} // namespace jointscope::cost
