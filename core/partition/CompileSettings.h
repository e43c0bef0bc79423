// What a logged compile ran the partitioner with: the functorch config in the log (activation memory budget,
// solver, ban switches, ...) turned into ruleset switches and engine options, inductor's joint-graph passes
// when inductor ran them, and the user's flags on top. One place for `check`, `partition` and the GUI.
#pragma once

#include "io/CompileConfig.h"
#include "io/GraphFile.h"
#include "ops/Ruleset.h"
#include "partition/HopPartition.h"
#include "partition/JointPasses.h"
#include "partition/Partitioner.h"

#include <optional>
#include <string>
#include <vector>

namespace jointscope::partition {

// Flags the user gave; each overrides what the log says (and the notes say so).
struct SettingsOverrides {
    std::optional<double> memoryBudget;
    std::optional<KnapsackSolver> solver;
    std::optional<bool> replayJointPasses;
};

struct CompileSettings {
    PartitionOptions options; // memoryBudget / solver set; the rest is the caller's
    bool replayJointPasses = false;
    JointPassOptions passes;
    // pad_mm's paddings inside invoke_subgraph bodies (PaddedMatmul::body): replayed on each body's joint.
    std::vector<PaddedMatmul> bodyPaddedMatmuls;
    std::vector<std::string> notes; // where each setting came from: "activation_memory_budget 0.5 (log)"
    std::vector<std::string> unsupported; // what torch ran with that jointscope does not follow, and why
};

// What the log knows of the graph itself that its printed text lacks: the torch version (the ruleset follows
// it), the symbols' hints (symbol_hints: what torch sizes symbolic tensors with and guards decide on) and
// the equalities guarded before the joint graph was logged (symbol_equalities, one per line: what torch's
// passes know statically; see ShapeFacts). Attributes the graph already has are kept.
// The one-element tensor constants whose values the compile's dynamo graph shows (config.sourceLiterals) go
// into tensor_constant_values ("_tensor_constant0 = -2", one per line): torch folds them into fulls of that
// value, and merges equal ones.
void addLogGraphFacts(Graph& joint, const CompileConfig& config);

// What the log knows of the compile whose joint graph is `jointIndex` beyond its own records:
// - config.sourceLiterals from its dynamo_output_graph, when the joint graph reads tensor constants (a
// literal
//   is kept only where its source line shows one);
// - served by the AOTAutograd cache, the equality guards the compile that filled the cache took before its
//   joint graph, when the log holds that compile (the same joint graph text): this compile traced nothing and
//   logged none; and its torch._functorch.config (it logged none either): the filler's, else that of the
//   last compile before it that logged one (config.functorchFrom says which);
// - the matmuls inductor's pad_mm padded, read off the compile's forward and backward graphs.
void addCompileFactsFromLog(CompileConfig& config, const GraphFile& file, size_t jointIndex);

// Applies `config` (null: the log records none) to `rules` and the options; then the overrides. What of the
// run the logged `joint` graph cannot show (checkpoint tags torch <= 2.9 did not print) goes in unsupported.
CompileSettings settingsFromLog(const CompileConfig* config, const Graph& joint, Ruleset& rules,
                                const SettingsOverrides& overrides);

bool isLoggedJointGraph(FileFormat format, const GraphEntry& entry);
// The config of the compile graph `index` of `file` belongs to, when it is torch's joint graph in a
// TORCH_TRACE log (read by the log's index; nullopt otherwise or when the log records none). The CLI's
// `partition` and the GUI both start from it.
std::optional<CompileConfig> loggedConfigFor(const GraphFile& file, size_t index);

// run_joint_graph_passes_on_hops with the compile's partition function: each invoke_subgraph body gets
// inductor's joint-graph passes (when inductor ran them) and the partitioner under `settings`.
Expected<HopPartitionReport> partitionHopBodies(Graph& joint, const Ruleset& rules,
                                                const CompileSettings& settings);

// Lists the invoke_subgraph rewrite first among the passes (torch runs it before inductor's).
void addHopChange(JointPassReport& passes, const HopPartitionReport& hops);

// What partitioning a logged joint graph as torch ran it did before the partitioner: the settings applied
// (with the user's overrides), the invoke_subgraph bodies partitioned and the calls rewritten, and inductor's
// joint-graph passes replayed on `joint`. A body that cannot be partitioned leaves the graph as logged and
// says so in settings.unsupported.
struct LoggedRun {
    CompileSettings settings;
    HopPartitionReport hops;
    JointPassReport passes;
};
LoggedRun prepareLoggedRun(Graph& joint, const CompileConfig* config, Ruleset& rules,
                           const SettingsOverrides& overrides);

} // namespace jointscope::partition
