// Sharding strategies per node: which placements of its inputs let an op run locally on every device and
// what placement its result then has (torch.distributed.tensor's OpStrategy, in our own rules).
//
// Rules are written for one mesh dimension; a node's strategies are the cartesian product over the mesh
// dimensions of its 1-D rules, less the combinations whose shards do not divide a tensor evenly.
#pragma once

#include "graph/Graph.h"
#include "sharding/Mesh.h"
#include "sharding/Placement.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::sharding {

struct Strategy {
    std::vector<Placements> outputs; // one per result: 1 for a tensor, one per element of a tuple
    std::vector<Placements> inputs;  // one per NodeStrategies::inputs entry
};

// How a node's strategies were found.
enum class RuleKind : uint8_t {
    Placeholder, // every placement of the tensor, no Partial
    Rule,        // an op rule
    GetItem,     // follows the tuple element it reads
    Sink,        // reads tensors without constraining them (output, size queries); no options
    Unknown,     // no rule for the op: replicate only, and a warning
};

// A node's strategies, read-only. Nodes of one op on the same shapes share one list: on a 4-D mesh a node has
// up to 2,401 strategies, and copies for the 7,276 nodes of 32 LLaMA layers took 1.4 GB.
class StrategyList {
public:
    StrategyList() = default;
    StrategyList(std::vector<Strategy> own) // implicit: a list is built as a vector
        : list_(std::make_shared<const std::vector<Strategy>>(std::move(own))) {}
    explicit StrategyList(std::shared_ptr<const std::vector<Strategy>> shared) : list_(std::move(shared)) {}

    size_t size() const { return list_ ? list_->size() : 0; }
    bool empty() const { return size() == 0; }
    const Strategy& operator[](size_t i) const { return (*list_)[i]; }
    const Strategy* begin() const { return list_ ? list_->data() : nullptr; }
    const Strategy* end() const { return begin() + size(); }

private:
    std::shared_ptr<const std::vector<Strategy>> list_;
};

struct NodeStrategies {
    RuleKind kind = RuleKind::Sink;
    std::vector<NodeId> inputs;        // tensor producers read, in argument order (repeats kept)
    std::vector<int32_t> inputElement; // element of the producer's result (getitem: its index), else 0
    StrategyList options;
};

struct ShardingProblem {
    DeviceMesh mesh;
    std::vector<NodeStrategies> nodes; // by NodeId
    std::vector<std::string> warnings; // unknown ops, by op name with the nodes affected
};

// The placements a local_map region (autoparallel's local_map_hop, seed 002) mandates: node meta
// "custom" / "dtensor_local_map_kwargs" (or any meta key naming local_map) with in_placements and
// out_placements, each a placement string ("S(0)R") or a list of per-mesh-dim strings ("Shard(0)", "R").
struct LocalMapPlacements {
    std::vector<Placements> inputs;
    std::vector<Placements> outputs;
    // in_grad_placements was given (not None). Like autoparallel, which asserts it is None, the solver places
    // the gradients itself; buildStrategies warns.
    bool inGradGiven = false;
};
std::optional<LocalMapPlacements> localMapPlacements(const Node& node);

// The strategies of every node of `graph` on `mesh`.
ShardingProblem buildStrategies(const Graph& graph, const DeviceMesh& mesh);

// The 1-D rule family an op belongs to ("matmul", "pointwise", ...); empty when no rule knows it.
std::string_view ruleFamily(const Target& target);

} // namespace jointscope::sharding
