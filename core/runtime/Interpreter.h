// Runs a graph through the c10 dispatcher: every aten call by its schema, with boxed arguments.
//
// Internal to core/runtime (it exposes LibTorch types); the rest of the program uses Runtime.h.
#pragma once

#include "graph/Graph.h"
#include "graph/SymbolicExpr.h"
#include "runtime/Runtime.h"
#include "support/Diagnostic.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <c10/core/Device.h>
#include <cstdint>
#include <torch/version.h>

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace jointscope::runtime {

using InputMap = std::unordered_map<std::string, c10::IValue>;

// The RNG states of random ops a later graph draws again (run_and_save_rng_state / run_with_rng_state): the
// forward's run records the generator state before each named node; the backward's sets it before the node
// and puts its own stream back after.
struct RngReplay {
    enum class Mode { Record, Replay };
    Mode mode = Mode::Record;
    std::unordered_set<std::string> nodes;              // the random ops whose draw is repeated
    std::unordered_map<std::string, at::Tensor> states; // node name -> generator state before it
};

// One node's call, ready to repeat: the operator and the boxed arguments it takes.
struct PreparedCall {
    c10::OperatorHandle op;
    std::vector<c10::IValue> stack;
};

class Interpreter {
public:
    Interpreter(const Graph& graph, c10::Device device, SymbolBindings symbols = {}, RunFlags flags = {});

    // Runs every node in order; placeholders take inputs[name]. The result is the output node's values,
    // flattened (a nested list or tuple of outputs becomes its leaves, None stays None). Fails naming the
    // node and op that could not run. With keepValues, every node's value stays available to value() and
    // prepare() afterwards; otherwise values are released after their last reader. With nodeErrors, a node
    // that fails gets its message there (by node id) and the run goes on: its readers fail in turn, naming
    // it.
    Expected<std::vector<c10::IValue>> run(const InputMap& inputs, bool keepValues = false,
                                           std::vector<std::string>* nodeErrors = nullptr);

    const c10::IValue& value(NodeId id) const { return values_[id]; }
    // The dispatcher call of an aten (or other registered namespace) node, with arguments taken from the
    // last run(keepValues = true). nullopt for nodes that are not dispatcher calls.
    Expected<std::optional<PreparedCall>> prepare(NodeId id);

    const Graph& graph() const { return graph_; }
    // Records or replays the RNG state around the nodes `replay` names (it outlives the runs).
    void replayRandom(RngReplay* replay) { rng_ = replay; }
    c10::Device device() const { return device_; }

private:
    Expected<c10::IValue> evalNode(NodeId id);
    Expected<c10::IValue> evalWithRngReplay(NodeId id);
    Expected<c10::IValue> callOperator(const Node& node);
    Expected<c10::IValue> callHigherOrder(const Node& node);
    Expected<c10::IValue> callPythonOperator(const Node& node);
    Expected<PreparedCall> bind(const Node& node); // findOperator, then buildStack for its schema
    Expected<std::vector<c10::IValue>> buildStack(const Node& node, const c10::FunctionSchema& schema);
    Expected<c10::IValue> convert(const Value& value, const c10::TypePtr& type);
    Expected<c10::IValue> plain(const Value& value); // by the value's own kind, no schema
    Expected<int64_t> evalSymbolic(const std::string& expr);
    Expected<c10::OperatorHandle> findOperator(const Node& node);
    std::optional<Diagnostic> checkSizes(const Node& node, const c10::FunctionSchema& schema,
                                         const std::vector<c10::IValue>& stack) const;
    Diagnostic nodeError(const Node& node, const std::string& message) const;
    std::string errorText(const std::exception& e) const;

    const Graph& graph_;
    c10::Device device_;
    SymbolBindings symbols_;
    RunFlags flags_;
    std::vector<c10::IValue> values_;
    std::unordered_map<std::string, c10::OperatorHandle> operators_;
    RngReplay* rng_ = nullptr;
};

// Tensors for a graph's placeholders, seeded: floating point from a normal distribution, integers in ranges
// their readers accept (see docs/runtime.md, "Generated inputs"), booleans at random, symbolic integers
// from `symbols`. Placeholders without a recorded dtype and shape are an error naming them. Symbols that
// sizes use but `symbols` lacks are bound to defaultSymbolSize and added to it.
Expected<InputMap> generateInputs(const Graph& graph, c10::Device device, uint64_t seed,
                                  SymbolBindings& symbols);

// What every run starts from: the device opened, and generated inputs with the symbol sizes they settled.
struct RunStart {
    RunDevice device;
    c10::Device where;
    SymbolBindings symbols;
    InputMap inputs;
};
// Refuses `checked` graphs that call an op outside the allowlist (unless options turn it off), opens the
// device and generates the inputs of `inputsOf` from options' seed and symbols.
Expected<RunStart> startRun(std::initializer_list<const Graph*> checked, const Graph& inputsOf,
                            const RunOptions& options);

// A tensor on `device` with meta's dtype, sizes and strides (uninitialized). Sizes and strides are checked
// first (checkedBytes), so LibTorch never sees a negative or overflowing shape.
Expected<at::Tensor> emptyLike(const TensorMeta& meta, c10::Device device, const SymbolBindings& symbols);

// Why the runtime does not call `schema`'s op (OpPolicy.h), or nullopt when it may.
std::optional<std::string> opRefusal(const c10::FunctionSchema& schema);

// The bytes a tensor of `sizes` (and `strides`, when given) spans: an error for a negative size or stride, a
// byte count that overflows 64 bits, or more than the device could allocate (tensorByteLimit).
Expected<uint64_t> checkedBytes(const std::vector<int64_t>& sizes, const std::vector<int64_t>* strides,
                                size_t itemSize, c10::Device device);
// The largest tensor the runtime creates on `device`: kMaxInputBytes, and on the CPU at most the machine's
// physical memory (a larger one would be allocated lazily and killed by the kernel's OOM killer when
// touched).
uint64_t tensorByteLimit(c10::Device device);

// An exception's message as one line: LibTorch's first line, without its C++ backtrace; the whole text with
// `debug`.
std::string exceptionText(const std::exception& e, bool debug = false);

// fn(), with an exception that escapes it (LibTorch outside any node: comparing results, writing them) turned
// into an error of one line.
template <typename Fn> auto catchLibTorch(bool debug, Fn&& fn) -> decltype(fn()) {
    try {
        return fn();
    } catch (const std::exception& e) {
        return makeError({}, "LibTorch: " + exceptionText(e, debug));
    }
}

// Deep copy of a value (tensors cloned, strides kept), so that runs that mutate their inputs in place
// (batch-norm running statistics) cannot influence each other.
c10::IValue cloneValue(const c10::IValue& value);

std::optional<c10::ScalarType> toScalarType(DType dtype);

inline constexpr int64_t kDefaultSymbolSize = 16;
// Integer inputs no reader constrains are drawn from [0, kDefaultIntegerRange).
inline constexpr int64_t kDefaultIntegerRange = 16;
// One generated input (or tensor a factory op creates) at most this large: a corrupted shape must not exhaust
// memory.
inline constexpr uint64_t kMaxInputBytes = 32ULL << 30;

} // namespace jointscope::runtime
