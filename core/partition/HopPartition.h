// nested_compile_region: torch partitions each invoke_subgraph body on its own before the outer joint graph
// (run_joint_graph_passes_on_hops, torch/_functorch/_aot_autograd/graph_compile.py). The forward call then
// runs the partitioned forward body, whose extra outputs are the body's saved values; the backward call takes
// those instead of the body's inputs. The outer partitioner sees the calls so rewritten.
#pragma once

#include "graph/Graph.h"
#include "partition/JointPasses.h"
#include "partition/Partitioner.h"
#include "support/Diagnostic.h"

#include <functional>
#include <string>
#include <vector>

namespace jointscope::partition {

// One invoke_subgraph body, partitioned once for all its calls.
struct HopBodyPartition {
    std::string forwardBody;   // "partitioned_fw_subgraph_0_0": the forward calls now run it
    std::string backwardBody;  // "partitioned_bw_subgraph_0_0"
    std::string jointBody;     // "repeated_subgraph1": the body torch partitioned
    size_t calls = 0;          // forward calls rewritten
    size_t forwardOutputs = 0; // the body's own outputs; its partitioned forward returns the saved after them
    std::vector<std::string> saved, savedSym; // in the body, torch's order
    Escalation escalation = Escalation::RuntimeOptimized;
};

struct HopPartitionReport {
    std::vector<HopBodyPartition> bodies;
    // The outer graph's rewrite, as a pass: each call replaced by its partitioned body's call, the get_attr
    // and getitem nodes added ("run_joint_graph_passes_on_hops"; empty when nothing was rewritten).
    PassChange change;
    std::vector<std::string> notes; // how calls were paired when the graph lacks call ids
};

// The compile's own partition function on a body: `joint` has (*primals, *tangents) placeholders named so and
// its forward outputs first, as prepare_for_partitioner leaves it. Must extract the forward and backward.
// `forwardBody` names the partitioned forward body the result becomes ("partitioned_fw_subgraph_0_0").
using BodyPartitioner = std::function<Expected<Partition>(Graph joint, const std::string& forwardBody)>;

// Rewrites `joint` as run_joint_graph_passes_on_hops does: forward and backward invoke_subgraph calls ("fw*"
// / "bw*" identifiers) paired by their call_id annotation, each body partitioned by `partitionBody`, the
// calls restitched with FX's names for the new nodes. A graph without such calls is left as it is.
Expected<HopPartitionReport> partitionInvokeSubgraphBodies(Graph& joint,
                                                           const BodyPartitioner& partitionBody);

// The call_id of an invoke_subgraph call (its "# Annotation: {'call_id': 3}" summary).
std::optional<int64_t> invokeSubgraphCallId(const Node& node);

} // namespace jointscope::partition
