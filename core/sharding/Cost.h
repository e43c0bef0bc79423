// What a sharding strategy costs: α-β collectives per mesh dimension for redistributions, and the cost model
// on each shard's local shapes for compute.
#pragma once

#include "cost/CostModel.h"
#include "graph/Graph.h"
#include "sharding/Mesh.h"
#include "sharding/Placement.h"
#include "sharding/StepMetric.h"
#include "sharding/Strategies.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jointscope::sharding {

enum class Collective : uint8_t { AllGather, ReduceScatter, AllReduce, AllToAll };
std::string_view collectiveName(Collective c); // "all_gather", ...

// Ring algorithm time on mesh dimension `meshDim`: latency + steps x step latency + wire bytes / bandwidth;
// or, when the mesh carries measured collectives (mesh.comm), their fitted time. `bytes` is the full buffer
// of the group: the gathered result (all-gather), the unreduced input (reduce-scatter, all-reduce), one
// rank's buffer (all-to-all).
double collectiveUs(Collective c, double bytes, const DeviceMesh& mesh, size_t meshDim);

struct RedistributeStep {
    size_t meshDim = 0;
    Collective collective = Collective::AllGather;
    double bytes = 0;
    double us = 0;
};

struct Redistribution {
    std::vector<RedistributeStep> steps;
    double us = 0;
    std::string str() const; // "all_gather(d0) 12.3us + all_reduce(d1) 4.5us"; "" when free
};

// The cheapest sequence of collectives that turns a tensor laid out as `from` into `to`, one mesh dimension
// per step (torch's min-cost redistribution planner): S->R all-gather, P->R all-reduce, P->S
// reduce-scatter, S(i)->S(j) all-to-all, R->S and R->P local (free). Steps run in order; each one's bytes
// follow the layout reached so far.
Redistribution redistribute(const Placements& from, const Placements& to, const TensorMeta& global,
                            const DeviceMesh& mesh);
class LayoutSpace;

// redistribute(...).us memoized: one search per tensor size, rank and source layout serves every target (the
// tensors of a transformer come in few sizes). The searches run over a dense space of layouts built once per
// tensor size, rank and partial reductions in play; once a table asks for many sources (on a 4-D mesh an
// edge has hundreds, in a space of over a thousand layouts), every pair of the space is searched at once.
class RedistributionCache {
public:
    explicit RedistributionCache(const DeviceMesh& mesh);
    ~RedistributionCache();
    RedistributionCache(const RedistributionCache&) = delete;
    RedistributionCache& operator=(const RedistributionCache&) = delete;

    double us(const Placements& from, const Placements& to, const TensorMeta& global);
    // Every pair's cost over one tensor, times `scale`: result[q * to.size() + p] = scale * us(*from[q],
    // *to[p], global).
    std::vector<double> table(const std::vector<const Placements*>& from,
                              const std::vector<const Placements*>& to, const TensorMeta& global,
                              double scale = 1);
    // table(layouts, layouts, global, scale), and the arcs it is the shortest-path metric of when the layouts
    // lie in one space and every pair has a path.
    struct MetricTable {
        std::vector<double> cost;         // empty when `metric` gives it
        std::optional<StepMetric> metric; // reads the space's shared distances
    };
    MetricTable metricTable(const std::vector<const Placements*>& layouts, const TensorMeta& global,
                            double scale);

private:
    using Key = std::tuple<double, size_t, uint64_t>; // bytes, rank, source layout
    // The space a pair's search runs in (null: a layout it cannot hold, for the single search), made once.
    LayoutSpace* space(const TensorMeta& global, const std::vector<const Placements*>& layouts);
    const DeviceMesh& mesh_;
    std::map<Key, std::unordered_map<uint64_t, double>> searched_; // layouts no space holds
    std::map<std::tuple<double, size_t, uint8_t>, std::unique_ptr<LayoutSpace>>
        spaces_; // bytes, rank, partials
};

// A tensor's shape on one device under `p`.
TensorMeta localMeta(const TensorMeta& global, const Placements& p, const DeviceMesh& mesh);

// Compute time on a shard: the roofline on the shard's local shapes, scaled per node by what measured
// profiles say about the node's own (unsharded) shapes: measured / roofline there is how far the kernel sits
// from the roofline, and the shard runs the same kernel. Nodes without a profile keep the plain roofline.
class ComputeModel {
public:
    // Implicit: a roofline alone is a ComputeModel without profiles.
    ComputeModel(cost::RooflineModel roofline) : roofline_(std::move(roofline)) {}

    // Takes the factor of every node `profiled` has a measurement for (CostSource::Profiled).
    void calibrate(const Graph& graph, const cost::CostModel& profiled);
    size_t calibratedNodes() const { return calibrated_; }
    double factor(NodeId id) const { return id < factor_.size() ? factor_[id] : 1.0; }
    double timeUs(NodeId id, const cost::OpWork& localWork) const {
        return std::max(roofline_.timeUs(localWork) * factor(id), floorUs_);
    }
    // Every op that is not free costs at least this much (autoparallel's kernel-launch floor).
    void setFloorUs(double us) { floorUs_ = us; }
    const cost::RooflineModel& roofline() const { return roofline_; }

private:
    cost::RooflineModel roofline_;
    std::vector<double> factor_; // by NodeId
    size_t calibrated_ = 0;
    double floorUs_ = 0;
};

// autoparallel's compute estimate on `device`, in our roofline's terms (its estimate_strategy_runtime_cost
// and compute_read_write_time): 70 % of peak and of memory bandwidth, fp32 matmuls on TF32, no launch
// overhead added but a 7 us floor per op; its device table gives the H100 3.35 TiB/s (binary tera).
ComputeModel autoparallelComputeModel(cost::DeviceSpec device);

// The time of node `id` running strategy `s` on its local shards.
double computeUs(const Graph& graph, NodeId id, const NodeStrategies& ns, const Strategy& s,
                 const DeviceMesh& mesh, const ComputeModel& model);

// The global tensor a node produces as element `element` (its getitem user's meta for a torch 1.13 tuple).
TensorMeta producedTensor(const Graph& graph, NodeId producer, int32_t element);

} // namespace jointscope::sharding
