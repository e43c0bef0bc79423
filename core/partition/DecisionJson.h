// The decision JSON that `jointscope-cli partition --json` prints and python/ apply_partition reads; the GUI
// exports the same document, so both are written here.
#pragma once

#include "partition/MemoryTimeline.h"
#include "partition/Partitioner.h"

#include <nlohmann/json.hpp>

namespace jointscope::partition {

// What a decision document records of a node it names: target, shape, dtype.
nlohmann::ordered_json nodeIdentityJson(const Node& node);
// Node names of `ids` in `graph`, as a JSON array.
nlohmann::ordered_json nodeNamesJson(const Graph& graph, const std::vector<NodeId>& ids);
// explainNode as JSON: node, decision, rule, ban, policy, weight ("inf" when it cannot be saved),
// dist_from_bw, bytes.
nlohmann::ordered_json explanationJson(const Partition& partition, NodeId id);
// The whole decision: format "jointscope-decision", version 1, saved / saved_sym / recomputed / banned /
// cut_value / cse_merged and the identity (target, shape, dtype) of every node it names.
nlohmann::ordered_json decisionJson(const Partition& partition, const Ruleset& rules,
                                    const PartitionOptions& options);

// The memory timeline, compact: forward_steps, saved_bytes, peak_step, peak_node, and per step the node name
// and live bytes in two parallel arrays, plus the indices of the steps that recompute a forward node.
nlohmann::ordered_json memoryTimelineJson(const Graph& graph, const MemoryTimeline& timeline);

} // namespace jointscope::partition
