// torch's min-cut rematerialization, step by step (torch/_functorch/partitioners.py):
// classify_nodes -> dist_from_bw -> solve_min_cut (ban rules, capacities, max-flow, cut).
#pragma once

#include "graph/Graph.h"
#include "ops/Ruleset.h"
#include "partition/FlowNetwork.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::partition {

// torch.utils.checkpoint.CheckpointPolicy, as node.meta["recompute"] carries it.
enum class Policy : uint8_t { None, MustSave, PreferSave, MustRecompute, PreferRecompute };
std::optional<Policy> parsePolicy(std::string_view text); // "MUST_SAVE", "CheckpointPolicy.MUST_SAVE", ...
std::string_view policyName(Policy policy);
inline bool mustRecompute(Policy p) {
    return p == Policy::MustRecompute || p == Policy::PreferRecompute;
}

// The ruleset's op classes of a node, looked up once per partition.
enum OpClass : uint8_t {
    kRecomputable = 1,
    kView = 2,
    kRandom = 4,
    kComputeIntensive = 8,
    kFusible = 16,
};

// What the partitioner knows about each node before cutting (NodeInfo + dist_from_bw + sizes + tags).
struct NodeInfo {
    std::vector<NodeId> inputs; // primals, then forward seed / offset placeholders
    std::vector<bool> requiredFw, requiredBw, staticLifetime;
    std::vector<bool> epilogueMutated; // epilogueMutatedInputs, where the ruleset makes them unsaveable
    std::vector<bool> tangentsClosure; // requiredBw before the backward outputs join it (torch >= 2.8)
    std::vector<int32_t> fwOrder; // position among required forward nodes; -1 otherwise
    std::vector<int64_t> distFromBw;
    std::vector<uint64_t> bytes;         // _size_of
    std::vector<bool> hasTensorSize;     // 1.13: 'tensor_meta' in node.meta; torch 2: val is a Tensor
    std::vector<uint8_t> opClass;        // OpClass bits of each node under the ruleset
    std::vector<Policy> policy;          // after cleanup_recompute_tags / force_save_collectives
    std::vector<std::string> policyNote; // why a policy was set by the partitioner itself
    bool isUnclaimed(NodeId id) const { return !requiredFw[id] && !requiredBw[id]; }
};

// Placeholders whose data lives across iterations (parameters and buffers), from AOT descriptors.
bool isStaticLifetimeInput(const Node& node);
// The graph attribute "static_lifetime_input_indices" ("[0, 1, 3]": positions among the primals), when recorded.
std::optional<std::vector<int64_t>> staticLifetimeInputIndices(const Graph& graph);
bool isSymNode(const Node& node);

// _size_of under the ruleset's size model. Fails on a dtype the ruleset cannot size (1.13 raises there too).
Expected<uint64_t> sizeOf(const Node& node, const Ruleset& rules);

// classify_nodes + the dist_from_bw walk. `tags` are the graph's own recompute tags, possibly overridden.
// Who classifies: the default partition runs cleanup_recompute_tags(is_default_partition=True), which also
// saves the inputs of checkpointed regions, and never weighs values, so it needs no dtype sizes or tensor
// metadata (torch's default_partition does not either).
enum class ClassifyFor : uint8_t { MinCut, DefaultPartition };
Expected<NodeInfo> classifyNodes(const Graph& graph, const Ruleset& rules, std::vector<Policy> tags,
                                 ClassifyFor purpose = ClassifyFor::MinCut);

enum class BanReason : uint8_t {
    None,
    Input,                    // primals are always saved rather than recomputed
    MustSave,                 // CheckpointPolicy MUST_SAVE (user tag or forced)
    NotInAllowlist,           // op not in the recomputable list
    RandomOrComputeIntensive, // denylist mode: random or compute-intensive op
    MaterializedBackward,     // a non-fusible backward user must materialize it anyway
    FarFromBackward,          // dist_from_bw > max_dist_from_bw
    Reduction,                // output * 4 < inputs
    UsedFarApart,             // fusible user beyond the first unfusible use
    LongFusibleChain,         // end of a fusible chain longer than 100 nodes
};
std::string_view banReasonText(BanReason reason);

struct MinCutOptions {
    bool banIfUsedFarApart = true;
    bool banIfLongFusibleChains = true;
    bool banIfMaterializedBackward = true;
    bool banIfNotInAllowlist = true;
    bool banIfReduction = true;
    bool keepNetwork = false; // return the flow network in MinCutResult::network (visualisation, benchmarks)
    static MinCutOptions fromRuleset(const Ruleset& rules);
};

struct MinCutResult {
    std::vector<NodeId> saved;        // cut nodes in graph order (sym nodes included)
    std::vector<NodeId> banned;       // banned_nodes, in the order torch adds them
    std::vector<BanReason> banReason; // per node
    std::vector<Capacity> weight;     // capacity of x_in -> x_out; -1 when the node has no such edge
    std::vector<bool> recomputeSide;  // x_in on the sink side: computed in the backward
    Capacity cutValue = 0;
    std::optional<FlowNetwork>
        network; // vertex 2*id is node id's "_in", 2*id+1 its "_out"; then source, sink
};

// solve_min_cut. `dontBan` (may be empty) lists nodes the memory-budget knapsack chose to recompute.
// An infinite source-sink path is reported as the chain of nodes with the rule on each link.
Expected<MinCutResult> solveMinCut(const Graph& graph, const NodeInfo& info, const Ruleset& rules,
                                   const MinCutOptions& options, const std::vector<bool>& dontBan = {});

} // namespace jointscope::partition
