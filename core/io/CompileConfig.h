// What torch ran a compile with, as a TORCH_TRACE log records it: the torch version, whether inductor's
// joint-graph passes ran before the partitioner, and the functorch / inductor config values the partitioner
// and those passes read. `check` and `partition` on a log use them instead of asking the user.
#pragma once

#include "graph/Graph.h"
#include "support/SpillBlocks.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope {

// torch._functorch.config values min_cut_rematerialization_partition reads (absent: not in the log).
struct FunctorchConfig {
    std::optional<double> activationMemoryBudget;
    std::optional<std::string> budgetSolver;    // activation_memory_budget_solver: dp | greedy | ilp
    std::optional<std::string> budgetEstimator; // activation_memory_budget_runtime_estimator: flops | ...
    std::optional<bool> recomputeViews;
    std::optional<bool> treatParametersAsFreeToSave;
    std::optional<bool> cse;
    std::optional<bool> banUsedFarApart;
    std::optional<bool> banLongFusibleChains;
    std::optional<bool> banMaterializedBackward;
    std::optional<bool> banNotInAllowlist;
    std::optional<bool> banReductions;
    std::optional<bool> aggressiveRecomputation;
    std::optional<int64_t> maxDistFromBw;

    friend bool operator==(const FunctorchConfig&, const FunctorchConfig&) = default;
};

// torch._inductor.config values joint_graph_passes reads.
struct InductorJointConfig {
    std::optional<bool> useJointGraphPasses;
    std::optional<bool> patternMatcher;
    std::optional<bool> jointGraphConstantFolding;
    std::optional<bool> fallbackRandom;
    bool customPrePass = false;  // joint_custom_pre_pass set: a user pass jointscope cannot replay
    bool customPostPass = false; // joint_custom_post_pass set
    std::optional<std::string> customPartitioner; // custom_partitioner_fn, when not None

    friend bool operator==(const InductorJointConfig&, const InductorJointConfig&) = default;
};

// A matmul inductor's pad_mm padded to aligned sizes (torch/_inductor/fx_passes/pad_mm.py). Whether padding
// pays is timed on the GPU (_should_pad: should_pad_bench), so it cannot be decided again here: a replay
// takes torch's answer, and torch's replacement nodes, from the forward and backward graphs it logged.
struct PaddedMatmul {
    std::string op;                    // "mm", "addmm" or "bmm"
    std::vector<std::string> operands; // the matmul's tensor arguments before padding, in argument order
    // torch's nodes in the order pad_mm makes them: the pads, the product, the slices back to the matmul's
    // size. An argument NodeRef(i) is operands[i] for i < operands.size(), else replacement[i - size].
    std::vector<Node> replacement;
    // The partitioned invoke_subgraph forward body torch's graphs show it in ("partitioned_fw_subgraph_0_0"):
    // inductor's joint-graph passes ran on that body's joint. Empty: the graph itself.
    std::string body;

    friend bool operator==(const PaddedMatmul&, const PaddedMatmul&) = default;
};

struct CompileConfig {
    std::string compileId; // "0/0", as GraphEntry::compileId
    uint32_t line = 0;     // the compilation_metrics record (or the first record) it was read from
    std::string torchVersion;
    // Without torchVersion: the newest torch whose compilation_metrics look like this compile's (they carry
    // pytorch_version from torch 2.10 on, recompile_user_contexts from 2.9 on); empty when unknown.
    std::string torchVersionAtMost;
    // inductor's partition_fn ran _recursive_joint_graph_passes on the joint graph before partitioning it
    // (compilation_metrics' joint_graph_pass_time_us); false for aot_eager-style backends.
    bool jointGraphPassesRan = false;
    bool fromMetrics = false; // compilation_metrics seen (else only the torch._functorch.config artifact)
    // inductor's own records for the compile (post-grad graphs, output code, FX graph cache): the backend was
    // inductor even where no compilation_metrics was written (a compile that crashed or was cut off).
    bool inductorRecords = false;
    // The AOTAutograd cache served the compile (aotautograd_cache_hit): the joint, forward and backward
    // graphs logged are the cached compile's, and no joint-graph pass ran this time (no
    // joint_graph_pass_time_us).
    bool aotCacheHit = false;
    FunctorchConfig functorch;
    // Where `functorch` came from when the compile logged none of its own (an AOTAutograd cache hit):
    // "that of compile 0/0, which filled the cache ..."; empty when read from its own records.
    std::string functorchFrom;
    InductorJointConfig inductor;
    // create_symbol records: each backed symbol's hint ("s77" -> 4), what torch sizes symbolic tensors with.
    std::vector<std::pair<std::string, int64_t>> symbolHints;
    // Float symbols' values (create_symbol of zf5: "0.1"), which tensorify specializes a float to where it
    // cannot make it a tensor.
    std::vector<std::pair<std::string, double>> floatSymbolHints;
    // guard_added_fast records of equalities ("Eq(64*s11, 64*s11 + 64*s55)"), with their lines: what the
    // ShapeEnv knows statically from then on (its axioms).
    std::vector<std::pair<uint32_t, std::string>> equalityGuards;
    // What the compile's dynamo graph shows where the program made a one-element tensor constant (an index
    // list x[:, [-2]], torch.tensor(3.0)): the literal by source location ("path:line in fn"). The joint
    // graph's get_attr of such a constant prints no value (partition::readSourceLiterals).
    std::vector<std::pair<std::string, std::string>> sourceLiterals;
    // The matmuls torch's forward and backward graphs of the compile show padded by pad_mm (a GPU compile).
    std::vector<PaddedMatmul> paddedMatmuls;
    // The attention ops torch's forward graph holds more often than the joint graph (inductor's
    // fuse_attention rewrote an eager softmax(q @ k^T * scale) @ v into them):
    // "aten._scaled_dot_product_flash_attention_for_cpu".
    std::vector<std::string> fusedAttentionOps;
    // The compile's dynamo graph calls torch.ops.higher_order.tag_activation_checkpoint (a
    // torch.utils.checkpoint region), whose tags the joint graph's text may not show (torch <= 2.9).
    bool dynamoCheckpoints = false;

    friend bool operator==(const CompileConfig&, const CompileConfig&) = default;
};

// Reads every compile's configuration from a TORCH_TRACE log's text, one pass, line by line (records are
// single lines; payloads are skipped). Records it cannot read are skipped: indexTraceLog reports them.
std::vector<CompileConfig> scanCompileConfigs(std::string_view text);

// A record of a log that may carry configuration: its line, the bytes of its lines (the record's line and
// its payload lines) and the compile it belongs to. The index notes them as it reads the log, so that a
// compile's configuration is read from its few records, without a second pass over the file.
struct ConfigRecordSpan {
    uint64_t begin = 0;
    uint64_t end = 0;
    uint32_t line = 0;
    // compileKeyOf the compile id as the scan reads it (compilation_metrics: its compile_id); 0 when none. A
    // log notes 16 thousand records per GB, so the id is not held: two ids of one key only cost reading the
    // other compile's records too, which the scan keeps apart by their own ids.
    uint64_t compileKey = 0;
};
// Past 32 thousand records (a 2 GB log) they wait on the disk.
using ConfigRecords = SpillVector<ConfigRecordSpan>;
uint64_t compileKeyOf(std::string_view compileId); // 0 only for ""
using SpanReader = std::function<std::string(uint64_t begin, uint64_t end)>;
// True for a record line scanCompileConfigs reads; it skips the others unparsed.
bool mayCarryCompileConfig(std::string_view recordLine);
// scanCompileConfigs over only these records, in the log's order, their bytes read with `read`.
std::vector<CompileConfig> scanCompileConfigRecords(const ConfigRecords& records, const SpanReader& read);
// findCompileConfig(scanCompileConfigRecords(records), compileId, line), reading only the records of that
// compile and those of none (the torch version).
std::optional<CompileConfig> compileConfigFromRecords(const ConfigRecords& records,
                                                      std::string_view compileId, uint32_t line,
                                                      const SpanReader& read);

// `config` as it stood when the record at `line` (its joint graph) was written: the guards added later (by
// the partitioner, inductor) dropped.
CompileConfig configAtLine(CompileConfig config, uint32_t line);

// The configuration of one compile id ("0/0 #2" counts as "0/0"'s second joint graph: the newest seen at or
// before `line` wins when ids repeat after torch._dynamo.reset()).
const CompileConfig* findCompileConfig(const std::vector<CompileConfig>& configs, std::string_view compileId,
                                       uint32_t line);

} // namespace jointscope
