// A logical device mesh (torch's DeviceMesh): its shape, dimension names and the link each dimension's
// collectives run over.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::sharding {

class CommModel;

// The interconnect of one cluster type. Numbers follow autoparallel's NCCL cost model
// (meta-pytorch/autoparallel, autoparallel/cost_models/nccl_cost_model.py: NCCLTopoConfig bw_intra /
// bw_inter, the canonical GPUs per node, and the Ring / Simple-protocol latencies of NCCL's tuning.cc it
// ports).
struct Topology {
    std::string name;              // "h100"
    int64_t gpusPerNode = 8;       // a mesh dimension whose group fits in one node runs on NVLink
    double intraBandwidth = 0;     // bytes/s per GPU over NVLink / NVSwitch
    double interBandwidth = 0;     // bytes/s per GPU over the network
    double baseLatencyUs = 0;      // per collective
    double intraStepLatencyUs = 0; // per ring step on NVLink
    double interStepLatencyUs = 0; // per ring step that crosses nodes
};

std::vector<Topology> knownTopologies(); // h100, a100, gb200
std::optional<Topology> findTopology(std::string_view name);

// The link one mesh dimension communicates over.
struct MeshLink {
    double bandwidth = 0;     // bytes/s
    double latencyUs = 0;     // fixed part of a collective
    double stepLatencyUs = 0; // per ring step
    bool interNode = false;
};

struct DeviceMesh {
    std::vector<int64_t> shape;
    std::vector<std::string> names; // "dp", "tp"; defaults "d0", "d1", ...
    std::vector<MeshLink> links;
    std::string topology;
    // Collectives measured on this mesh's shape (CommModel.h); null: the analytic ring model over `links`.
    std::shared_ptr<const CommModel> comm;

    size_t ndim() const { return shape.size(); }
    int64_t size() const;
    std::string str() const; // "8x8 (dp, tp) h100"

    // Links as autoparallel derives them: the last mesh dimension is innermost (consecutive ranks); a
    // dimension spans nodes when its group together with every inner dimension exceeds a node.
    static DeviceMesh make(std::vector<int64_t> shape, std::vector<std::string> names, const Topology& topo);
};

// "8x8", "2", "16x8"; nullopt on anything else (a zero or negative size included).
std::optional<std::vector<int64_t>> parseMeshShape(std::string_view text);

} // namespace jointscope::sharding
