// `check`: for every compile of a TORCH_TRACE log that holds torch's joint graph and the forward / backward
// torch partitioned it into, partition the joint graph again under the configuration the log records and say
// whether the decision is torch's: the saved tensors in torch's order and the saved symbols.
#pragma once

#include "io/CompileConfig.h"
#include "io/GraphFile.h"
#include "partition/CompileSettings.h"
#include "partition/JointPasses.h"

#include <optional>
#include <string>
#include <vector>

namespace jointscope::partition {

// The graphs AOTAutograd logged for one compile (indices into the file's graphs).
struct CompileGraphs {
    std::string compileId; // as the log writes it ("0/0")
    std::string label;     // "0/0", or "0/0 #2" when torch._dynamo.reset() restarted the counter
    std::optional<size_t> joint, forward, backward;
    // jointscope_torch's capture of the graph the partitioner received (after inductor's joint passes)
    std::optional<size_t> partitionerInput;
};
// One group per compile, in log order.
std::vector<CompileGraphs> groupCompiles(const GraphFile& file);

enum class CheckStatus { Identical, Differs, Error, Skipped };
std::string_view checkStatusName(CheckStatus status);

struct NodeSetDiff {
    size_t torchNodes = 0;
    std::vector<std::string> onlyOurs, onlyTorch;
};

// One invoke_subgraph body partitioned before the outer graph, against the partitioned forward body torch
// logged.
struct BodyCheck {
    std::string body; // "partitioned_fw_subgraph_0_0"
    std::vector<std::string> ours, torch, oursSym, torchSym;
    bool identical() const { return ours == torch && oursSym == torchSym; }
};

struct CompileCheck {
    std::string label;
    CheckStatus status = CheckStatus::Skipped;
    std::string message; // the error, or why the compile was skipped
    std::string ruleset, rulesetChoice;
    std::string graphSource; // "aot_joint_graph" or "jointscope_partitioner_input"
    CompileSettings settings;
    JointPassReport passes;
    std::vector<std::string> ours, torch, oursSym, torchSym;
    // Random ops recomputed under checkpointing whose RNG state the forward returns (functionalize_rng_ops),
    // as "rng_state(INPUT)", or "rng_state(NS.OP)" for an op of no input (prims.inductor_seeds): torch's
    // forward returns them as getitem 0 of run_and_save_rng_state after the saved tensors.
    std::vector<std::string> oursRng, torchRng;
    std::vector<BodyCheck> bodies;
    std::optional<NodeSetDiff> forward, backward;
    // The forward and backward jointscope extracts hold the nodes torch's do, by name (those compared).
    bool graphsAsTorch() const {
        auto same = [](const std::optional<NodeSetDiff>& d) {
            return !d || (d->onlyOurs.empty() && d->onlyTorch.empty());
        };
        return (forward || backward) && same(forward) && same(backward);
    }
    std::string escalation;
    std::vector<std::string> notes; // what the partitioner warned of (Partition::warnings)
    // A compile that differs: torch's saved values are what another of the ilp knapsack's equally good
    // choices saves (Partition::knapsackOtherOptima), so the two differ by that tie alone.
    bool knapsackTie = false;
};

struct CheckRequest {
    std::string ruleset = "auto";
    SettingsOverrides overrides;
};

CompileCheck checkCompile(const GraphFile& file, const CompileGraphs& graphs,
                          const std::vector<CompileConfig>& configs, const CheckRequest& request);

} // namespace jointscope::partition
