// Running graphs on real kernels (LibTorch): numerical validation of partitions and per-op profiling.
//
// This header is free of LibTorch types; the implementation links LibTorch and exists only in builds with
// JOINTSCOPE_HAVE_TORCH. Generated inputs, tolerances and timing rules are described in docs/runtime.md.
#pragma once

#include "cost/ProfileDb.h"
#include "graph/Graph.h"
#include "graph/SymbolicExpr.h"
#include "support/Diagnostic.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace jointscope::runtime {

// "1.13.1", "2.11.0+cu130": the LibTorch this program runs on.
std::string torchVersion();

// A device given as "cpu", "cuda" or "cuda:N"; the error says what is wrong (no CUDA in this LibTorch, index
// out of range).
struct RunDevice {
    std::string spec; // normalized: "cpu", "cuda:0"
    std::string name; // what the profile DB is keyed by: the CPU model or the GPU name
    bool cuda = false;
};
Expected<RunDevice> openDevice(const std::string& spec);
// openDevice, and on a GPU its context and allocator started too: what a run would open lazily, done before
// the sandbox (Sandbox.h) forbids opening the driver's files for writing.
Expected<RunDevice> initializeDevice(const std::string& spec);

// How the runtime treats ops and errors; the command line sets them (--no-op-allowlist, --debug).
struct RunFlags {
    // Refuse ops outside the allowlist (OpPolicy.h, docs/runtime.md "Which ops run"). Off only for testing
    // the OS guard, which the command line then requires.
    bool opAllowlist = true;
    // LibTorch errors keep their whole text, C++ backtrace included, instead of their first line.
    bool debug = false;
};

struct RunOptions {
    std::string device = "cpu";
    uint64_t seed = 0;
    SymbolBindings symbols; // sizes for symbolic dimensions; unbound ones get a default
    RunFlags flags;
    // validatePartition: nodes (by name) the forward and the backward both run whose random draw torch
    // repeats in the backward with the forward's RNG state (Partition::rngReplayed). Any other random op the
    // backward runs again draws new numbers, as it would in torch.
    std::vector<std::string> replayedRandomOps;
};

// The first node of `graph` or of a body graph it holds that calls an op the runtime refuses to run (a file,
// storage-sharing or process-wide op; OpPolicy.h), as a located error naming the node, its op and the reason;
// nullopt when there is none. Ops that are not registered are left to the run, which reports them on their
// node. validatePartition, profileGraph and runToSafetensors check this before anything runs.
std::optional<Diagnostic> refusedOp(const Graph& graph);

// One compared value: a forward output or a gradient.
struct Comparison {
    std::string label;  // "output 0 (add_2)", "grad of primals_3"
    std::string status; // "bitwise" | "close" | "differs" | "none" (both None) | "mismatch" (kind/shape)
    double maxAbsError = 0;
    double maxRelError = 0;
    std::string detail; // shape / dtype mismatch text
};

struct ValidationReport {
    std::vector<Comparison> outputs; // forward outputs, then gradients, in the joint's output order
    size_t forwardOutputs = 0;
    std::string tolerance; // the tolerance rule that applied, in words
    bool ok() const;
    const Comparison* firstMismatch() const;
};

// Runs `joint` on seeded inputs; runs `forward` on the same primals and `backward` on the values the forward
// saved plus the same tangents (random ops reseeded identically before each side); compares every forward
// output and every gradient. Values compare bitwise on CPU; on CUDA within the tolerance for their dtype.
// Fails (no report) when a graph cannot run: the node and op that could not run are named.
Expected<ValidationReport> validatePartition(const Graph& joint, const Graph& forward, const Graph& backward,
                                             int64_t numFwdOutputs, const RunOptions& options);

// Runs `graph` once on generated inputs and writes its inputs ("input:NAME") and outputs ("output:I", None
// outputs left out) to `path` as a safetensors file, so another program (torch itself, in the oracle tests)
// can run the same graph on the same inputs. Returns how many outputs the graph produced.
Expected<size_t> runToSafetensors(const Graph& graph, const RunOptions& options, const std::string& path);

struct ProfileOptions {
    RunOptions run;
    int reps = 10;
    int warmup = 3;
    bool flushL2 = false; // CUDA: overwrite a buffer larger than L2 before each timed rep
    // Measured signatures are looked up here first and stored here. A row timed over fewer reps than asked
    // is measured again and replaced: asking for more reps asks for a better median.
    cost::ProfileDb* db = nullptr;
    bool remeasure = false; // measure every signature again, ignoring (and replacing) the DB's rows
    std::function<bool(size_t done, size_t total)> progress; // return false to cancel
};

struct NodeTiming {
    std::string name;
    std::string op;               // target text
    std::string signature;        // cost::opSignature
    std::optional<double> timeUs; // median of the timed reps
    std::string skipped;          // why it was not timed ("view", "getitem", "placeholder", ...)
    std::string error;            // the op threw: its message
    bool cached = false;          // time taken from the profile DB
    bool measuredHere = false;    // first node of its signature measured by this run
};

struct ProfileReport {
    std::string device; // RunDevice::name
    std::string torchVersion;
    std::vector<NodeTiming> nodes;  // every node of the graph, in order
    size_t measured = 0;            // signatures measured now
    size_t cached = 0;              // signatures found in the DB
    double sumUs = 0;               // Σ time over nodes
    std::optional<double> replayUs; // median time of running the whole graph end to end
    bool cancelled = false;
    std::vector<std::string> storeErrors; // "signature: SQLite's message" for each measurement not stored
};

// Times every call_function node: the median of `reps` runs after `warmup`, with CUDA events on a GPU and
// steady_clock on the CPU. Nodes that move no data (views, getitem, symbolic arithmetic) are skipped with
// the reason. Nodes with equal signatures are measured once. An op that throws is reported on its node and
// the run goes on. With replay, the whole graph is also timed end to end for comparison with Σ per-op.
Expected<ProfileReport> profileGraph(const Graph& graph, const ProfileOptions& options, bool replay = false);

// Measures a device's peak rates once: GFLOP/s of large fp32 and fp64 matmuls and GB/s of a large copy
// (medians of timed reps), keyed by the device's name as openDevice reports it.
Expected<cost::DevicePeaks> measurePeaks(const std::string& device);

} // namespace jointscope::runtime
