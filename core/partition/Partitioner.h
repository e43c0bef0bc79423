// The partition engine's entry point: torch's min_cut_rematerialization_partition (or default_partition) on a
// joint graph, with the activation memory budget, policy overrides, explanations and the forward / backward
// graphs.
#pragma once

#include "cost/RuntimeEstimator.h"
#include "graph/Graph.h"
#include "ops/Ruleset.h"
#include "partition/Knapsack.h"
#include "partition/MinCut.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace jointscope::partition {

enum class Strategy : uint8_t { MinCut, Default };
std::optional<Strategy> parseStrategy(std::string_view text); // "min-cut" | "default"

// Which forward / backward graphs a partition builds.
enum class BuildGraphs : uint8_t {
    No,       // the saved lists only
    AsTorch,  // as torch's partitioner returns them: recomputed random ops wrapped so that the backward draws
              // what the forward drew (functionalize_rng_ops)
    Runnable, // those random ops left bare: the runtime replays their draws by name (Partition::rngReplayed)
};

struct PartitionOptions {
    Strategy strategy = Strategy::MinCut;
    std::optional<double> memoryBudget; // activation_memory_budget in [0, 1]; 1 when absent
    KnapsackSolver solver = KnapsackSolver::Dp;
    const cost::RuntimeEstimator* estimator = nullptr;     // FLOP counts when null
    std::vector<std::pair<std::string, Policy>> overrides; // node name -> policy, on top of the graph's tags
    BuildGraphs graphs = BuildGraphs::AsTorch;
    // ilp knapsack with several optima: also min-cut the other equally good choices
    // (Partition::knapsackOtherOptima, which check compares with torch's decision).
    bool knapsackOtherOptima = false;
};

// Which step of choose_saved_values_set produced the saved set.
enum class Escalation : uint8_t {
    RuntimeOptimized,
    MoreAggressive,
    Aggressive,
    Knapsack,
    InputsOnly,
    Default,
    Edited, // a saved list given by the user, evaluated by evaluateSaved
};
std::string_view escalationName(Escalation e);

struct Partition {
    Graph graph; // the joint graph after dead-code elimination and CSE; the ids below index it
    std::vector<std::string> deadNodes;
    std::vector<std::pair<std::string, std::string>> merged;
    NodeInfo info;
    std::optional<MinCutResult> cut; // the min-cut that decided (min-cut strategy only)
    std::vector<NodeId> saved;       // saved tensors, in torch's order
    std::vector<NodeId> savedSym;    // saved symbolic values
    std::vector<NodeId> recomputed;  // forward nodes the backward computes again
    std::vector<NodeId>
        rngStates; // recomputed random ops whose RNG state the forward returns (torch's order)
    // Every recomputed random op torch runs again with the forward's RNG state (functionalize_rng_ops): those
    // of rngStates, and on one CUDA device those whose state the graphs take as inputs instead.
    std::vector<NodeId> rngReplayed;
    uint64_t savedBytes = 0;      // every saved tensor, inputs (parameters, batch) included
    uint64_t activationBytes = 0; // the saved tensors the forward computes: what the decision adds to memory
    Graph forward, backward;
    Escalation escalation = Escalation::RuntimeOptimized;
    // The ilp knapsack found several equally good choices: what each other one's min-cut saves (before the
    // sym split, in graph order), when PartitionOptions::knapsackOtherOptima asked. scipy's milp may have
    // taken one of them.
    std::vector<std::vector<NodeId>> knapsackOtherOptima;
    double memoryBudget = 1.0;
    double seconds = 0; // engine time, extraction included
    std::vector<std::string> warnings;
};

// Takes the joint graph by value: pass it with std::move when it is not needed afterwards (no copy).
Expected<Partition> partitionJoint(Graph joint, const Ruleset& rules, const PartitionOptions& options);

// An edited decision: the given values are saved, nothing is decided (a name CSE merged stands for the node
// it was merged into; a dead node's name is dropped). The result is checked like torch's extraction: a
// backward that needs a value neither saved nor recomputable from saved values is refused, naming both.
Expected<Partition> evaluateSaved(Graph joint, const Ruleset& rules, const std::vector<std::string>& saved,
                                  BuildGraphs graphs = BuildGraphs::AsTorch);

// Why a node ended where it did.
struct NodeExplanation {
    std::string decision; // saved | recomputed | backward | forward | input | banned-unused | unclaimed
    std::string rule;     // the rule that decided, in words
    std::string banReason;
    std::string policy;
    Capacity weight = -1; // capacity of its node edge (-1: none, kInfiniteCapacity: cannot be saved)
    int64_t distFromBw = 0;
    uint64_t bytes = 0;
};
NodeExplanation explainNode(const Partition& partition, NodeId id);

// One point of the memory / recompute trade-off.
struct ParetoPoint {
    double budget = 0;
    double memoryRatio = 0; // (saved - inputs) / (runtime-optimized - inputs), as torch's get_mem_ratio
    uint64_t savedBytes = 0;
    uint64_t activationBytes = 0; // savedBytes less the saved inputs: what the budget bounds
    double recomputeCost = 0;     // estimator units (FLOPs by default) of the recomputed forward nodes
    size_t savedCount = 0;
    size_t recomputedCount = 0;
    Escalation escalation = Escalation::RuntimeOptimized;
};
// `points` budgets evenly spaced over [0, 1].
Expected<std::vector<ParetoPoint>> paretoCurve(Graph joint, const Ruleset& rules,
                                               const PartitionOptions& options, int points = 100);

// Reads a policy file: {"node name": "MUST_SAVE" | "PREFER_SAVE" | "MUST_RECOMPUTE" | "PREFER_RECOMPUTE",
// ...}, optionally wrapped as {"policies": {...}}.
Expected<std::vector<std::pair<std::string, Policy>>> readPolicyFile(const std::string& path);

} // namespace jointscope::partition
