// Numerical validation of a partition: the joint graph against its forward + backward.
#include "runtime/Interpreter.h"
#include "runtime/Runtime.h"

#include "partition/Extract.h"
#include "support/EnumNames.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

namespace jointscope::runtime {
namespace {

// torch.testing.assert_close's default tolerances per dtype (rtol, atol).
struct Tolerance {
    double rtol = 0;
    double atol = 0;
};
Tolerance toleranceFor(c10::ScalarType t) {
    switch (t) {
    case c10::ScalarType::Half:
        return {1e-3, 1e-5};
    case c10::ScalarType::BFloat16:
        return {1.6e-2, 1e-5};
    case c10::ScalarType::Float:
    case c10::ScalarType::ComplexFloat:
        return {1.3e-6, 1e-5};
    case c10::ScalarType::Double:
    case c10::ScalarType::ComplexDouble:
        return {1e-7, 1e-7};
    default:
        return {0, 0};
    }
}

std::string shapeText(const at::Tensor& t) {
    std::string s = std::string(c10::toString(t.scalar_type())) + "[";
    for (int64_t i = 0; i < t.dim(); ++i)
        s += (i ? ", " : "") + std::to_string(t.size(i));
    return s + "]";
}

// Same bits: floating-point values are compared through an integer view, so -0.0 differs from 0.0 and a NaN
// equals the same NaN.
bool bitwiseEqual(const at::Tensor& a, const at::Tensor& b) {
    if (a.is_floating_point() || a.is_complex()) {
        const int64_t bytes = static_cast<int64_t>(a.element_size());
        const c10::ScalarType asInt = bytes == 8   ? c10::ScalarType::Long
                                      : bytes == 4 ? c10::ScalarType::Int
                                      : bytes == 2 ? c10::ScalarType::Short
                                                   : c10::ScalarType::Byte;
        if (a.is_complex())
            return at::equal(at::view_as_real(a.contiguous()), at::view_as_real(b.contiguous()));
        return at::equal(a.contiguous().view(asInt), b.contiguous().view(asInt));
    }
    return at::equal(a, b);
}

Comparison compare(const c10::IValue& expected, const c10::IValue& actual, bool requireBitwise) {
    Comparison c;
    if (expected.isNone() && actual.isNone()) {
        c.status = "none";
        return c;
    }
    if (expected.isTensor() && actual.isTensor()) {
        at::Tensor a = expected.toTensor(), b = actual.toTensor();
        if (!a.defined() && !b.defined()) {
            c.status = "none";
            return c;
        }
        if (!a.defined() || !b.defined() || a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) {
            c.status = "mismatch";
            c.detail = "joint gives " + (a.defined() ? shapeText(a) : std::string("None")) +
                       ", the partition gives " + (b.defined() ? shapeText(b) : std::string("None"));
            return c;
        }
        if (a.device() != b.device())
            b = b.to(a.device());
        if (bitwiseEqual(a, b)) {
            c.status = "bitwise";
            return c;
        }
        const at::Tensor x = a.to(at::kDouble), y = b.to(at::kDouble);
        const at::Tensor diff = (x - y).abs();
        c.maxAbsError = diff.max().item<double>();
        c.maxRelError = (diff / y.abs().clamp_min(1e-300)).max().item<double>();
        const Tolerance tol = toleranceFor(a.scalar_type());
        const bool close = !requireBitwise && (tol.rtol > 0 || tol.atol > 0) &&
                           at::allclose(x, y, tol.rtol, tol.atol, /*equal_nan=*/true);
        c.status = close ? "close" : "differs";
        return c;
    }
    if ((expected.isInt() || expected.isDouble() || expected.isBool()) &&
        expected.tagKind() == actual.tagKind()) {
        c.status = expected == actual ? "bitwise" : "differs";
        if (c.status == "differs")
            c.detail = "joint gives " + std::to_string(expected.isInt() ? expected.toInt() : 0) +
                       ", the partition gives " + std::to_string(actual.isInt() ? actual.toInt() : 0);
        return c;
    }
    c.status = "mismatch";
    c.detail = std::string("joint gives ") + (expected.isNone() ? "None" : expected.tagKind()) +
               ", the partition gives " + (actual.isNone() ? "None" : actual.tagKind());
    return c;
}

InputMap clonedInputs(const Graph& graph, const InputMap& source, const InputMap* extra,
                      std::string& missing) {
    InputMap out;
    for (const Node& n : graph.nodes()) {
        if (n.op != NodeOp::Placeholder)
            continue;
        if (extra)
            if (auto it = extra->find(n.name); it != extra->end()) {
                out[n.name] = it->second;
                continue;
            }
        if (auto it = source.find(n.name); it != source.end())
            out[n.name] = cloneValue(it->second);
        else if (missing.empty())
            missing = n.name;
    }
    return out;
}

std::string leafName(const Graph& g, const Value& v) {
    return v.kind() == ValueKind::NodeRef ? g.node(v.asNode()).name : std::string("None");
}

// Gradient i belongs to the i-th primal when the joint returns one gradient per primal (as AOTAutograd's
// joint does).
std::vector<std::string> gradientLabels(const Graph& joint, const partition::FwdBwdOutputs& outs) {
    std::vector<std::string> primals;
    for (const Node& n : joint.nodes())
        if (n.op == NodeOp::Placeholder && isPrimal(n))
            primals.push_back(n.name);
    std::vector<std::string> labels;
    for (size_t i = 0; i < outs.backward.size(); ++i) {
        const std::string name = leafName(joint, outs.backward[i]);
        if (primals.size() == outs.backward.size())
            labels.push_back("grad of " + primals[i] + " (" + name + ")");
        else
            labels.push_back("gradient " + std::to_string(i) + " (" + name + ")");
    }
    return labels;
}

} // namespace

bool ValidationReport::ok() const {
    return firstMismatch() == nullptr;
}

const Comparison* ValidationReport::firstMismatch() const {
    for (const Comparison& c : outputs)
        if (c.status == "differs" || c.status == "mismatch")
            return &c;
    return nullptr;
}

namespace {

Expected<ValidationReport> validateUnguarded(const Graph& joint, const Graph& forward, const Graph& backward,
                                             int64_t numFwdOutputs, const RunOptions& options) {
    Expected<RunStart> start = startRun({&joint, &forward, &backward}, joint, options);
    if (!start)
        return start.error();
    const c10::Device where = start->where;
    SymbolBindings& symbols = start->symbols;
    const InputMap& inputs = start->inputs;

    // The joint and the forward start from the same random state; the backward continues the forward's, as it
    // does in training, so a random op the backward draws again gives different values and is caught, unless
    // torch replays its draw (functionalize_rng_ops): then the backward runs it with the forward's RNG state.
    RngReplay rng;
    rng.nodes.insert(options.replayedRandomOps.begin(), options.replayedRandomOps.end());
    auto runGraph = [&](const Graph& g, const InputMap& in,
                        const char* what) -> Expected<std::vector<c10::IValue>> {
        if (&g != &backward)
            at::manual_seed(options.seed);
        Interpreter interp(g, where, symbols, options.flags);
        if (&g != &joint) {
            rng.mode = &g == &forward ? RngReplay::Mode::Record : RngReplay::Mode::Replay;
            interp.replayRandom(&rng);
        }
        Expected<std::vector<c10::IValue>> out = interp.run(in);
        if (!out) {
            Diagnostic d = out.error();
            d.message = std::string("running the ") + what + ": " + d.message;
            return d;
        }
        return out;
    };

    std::string missing;
    Expected<std::vector<c10::IValue>> reference =
        runGraph(joint, clonedInputs(joint, inputs, nullptr, missing), "joint graph");
    if (!reference)
        return reference.error();
    InputMap fwdInputs = clonedInputs(forward, inputs, nullptr, missing);
    if (!missing.empty())
        return makeError({}, "the forward graph reads '" + missing +
                                 "', which is not an input of the joint graph");
    Expected<std::vector<c10::IValue>> fwdOut = runGraph(forward, fwdInputs, "forward graph");
    if (!fwdOut)
        return fwdOut.error();

    // The forward returns its outputs, then the saved values: hand those to the backward by name.
    InputMap saved;
    const std::vector<const Value*> leaves = forward.outputLeaves();
    for (size_t i = static_cast<size_t>(numFwdOutputs); i < leaves.size() && i < fwdOut->size(); ++i)
        if (leaves[i]->kind() == ValueKind::NodeRef)
            saved[forward.node(leaves[i]->asNode()).name] = (*fwdOut)[i];
    InputMap bwdInputs = clonedInputs(backward, inputs, &saved, missing);
    if (!missing.empty())
        return makeError({}, "the backward graph reads '" + missing + "', which the forward does not save");
    Expected<std::vector<c10::IValue>> bwdOut = runGraph(backward, bwdInputs, "backward graph");
    if (!bwdOut)
        return bwdOut.error();

    const partition::FwdBwdOutputs outs = partition::splitOutputs(joint, numFwdOutputs);
    if (reference->size() != outs.forward.size() + outs.backward.size())
        return makeError({}, "the joint graph returned " + std::to_string(reference->size()) +
                                 " values, its output node lists " +
                                 std::to_string(outs.forward.size() + outs.backward.size()));
    if (fwdOut->size() < outs.forward.size())
        return makeError({}, "the forward graph returns fewer values than the joint's " +
                                 std::to_string(outs.forward.size()) + " forward outputs");
    if (bwdOut->size() != outs.backward.size())
        return makeError({}, "the backward graph returns " + std::to_string(bwdOut->size()) +
                                 " gradients, the joint " + std::to_string(outs.backward.size()));

    ValidationReport report;
    report.forwardOutputs = outs.forward.size();
    const bool bitwise = !start->device.cuda;
    report.tolerance =
        bitwise ? "bitwise (CPU kernels are deterministic for equal inputs)"
                : "torch.testing.assert_close defaults per dtype (float32: rtol 1.3e-6, atol 1e-5; "
                  "bfloat16: rtol 1.6e-2, atol 1e-5; float16: rtol 1e-3, atol 1e-5)";
    for (size_t i = 0; i < outs.forward.size(); ++i) {
        Comparison c = compare((*reference)[i], (*fwdOut)[i], bitwise);
        c.label = "output " + std::to_string(i) + " (" + leafName(joint, outs.forward[i]) + ")";
        report.outputs.push_back(std::move(c));
    }
    const std::vector<std::string> labels = gradientLabels(joint, outs);
    for (size_t i = 0; i < outs.backward.size(); ++i) {
        Comparison c = compare((*reference)[outs.forward.size() + i], (*bwdOut)[i], bitwise);
        c.label = labels[i];
        report.outputs.push_back(std::move(c));
    }
    return report;
}

} // namespace

Expected<ValidationReport> validatePartition(const Graph& joint, const Graph& forward, const Graph& backward,
                                             int64_t numFwdOutputs, const RunOptions& options) {
    return catchLibTorch(options.flags.debug,
                         [&] { return validateUnguarded(joint, forward, backward, numFwdOutputs, options); });
}

} // namespace jointscope::runtime

namespace jointscope::runtime {
namespace {

std::optional<std::string> safetensorsDType(c10::ScalarType t) {
    using c10::ScalarType;
    static constexpr EnumName<ScalarType> kNames[] = {
        {ScalarType::Double, "F64"},    {ScalarType::Float, "F32"}, {ScalarType::Half, "F16"},
        {ScalarType::BFloat16, "BF16"}, {ScalarType::Long, "I64"},  {ScalarType::Int, "I32"},
        {ScalarType::Short, "I16"},     {ScalarType::Char, "I8"},   {ScalarType::Byte, "U8"},
        {ScalarType::Bool, "BOOL"}};
    const std::string_view name = nameOf(kNames, t, "");
    return name.empty() ? std::nullopt : std::optional<std::string>(name);
}

std::string jsonString(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        out += c;
    }
    return out + "\"";
}

} // namespace

namespace {

Expected<size_t> runUnguarded(const Graph& graph, const RunOptions& options, const std::string& path) {
    Expected<RunStart> start = startRun({&graph}, graph, options);
    if (!start)
        return start.error();
    const c10::Device where = start->where;
    SymbolBindings& symbols = start->symbols;
    const InputMap& inputs = start->inputs;
    InputMap copies;
    for (const auto& [name, value] : inputs)
        copies[name] = cloneValue(value);
    at::manual_seed(options.seed);
    Interpreter interp(graph, where, symbols, options.flags);
    Expected<std::vector<c10::IValue>> outputs = interp.run(copies);
    if (!outputs)
        return outputs.error();

    std::vector<std::pair<std::string, at::Tensor>> tensors;
    for (const Node& n : graph.nodes())
        if (n.op == NodeOp::Placeholder)
            if (auto it = inputs.find(n.name); it != inputs.end() && it->second.isTensor())
                tensors.emplace_back("input:" + n.name, it->second.toTensor());
    for (size_t i = 0; i < outputs->size(); ++i)
        if ((*outputs)[i].isTensor() && (*outputs)[i].toTensor().defined())
            tensors.emplace_back("output:" + std::to_string(i), (*outputs)[i].toTensor());

    std::string header = "{\"__metadata__\":{\"outputs\":\"" + std::to_string(outputs->size()) + "\"}";
    std::vector<at::Tensor> data;
    uint64_t offset = 0;
    for (auto& [name, tensor] : tensors) {
        std::optional<std::string> dtype = safetensorsDType(tensor.scalar_type());
        if (!dtype)
            return makeError({}, "'" + name + "': dtype " + std::string(c10::toString(tensor.scalar_type())) +
                                     " cannot be written to safetensors");
        at::Tensor bytes = tensor.contiguous().cpu();
        const uint64_t size = static_cast<uint64_t>(bytes.nbytes());
        header += "," + jsonString(name) + ":{\"dtype\":\"" + *dtype + "\",\"shape\":[";
        for (int64_t d = 0; d < bytes.dim(); ++d)
            header += (d ? "," : "") + std::to_string(bytes.size(d));
        header +=
            "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + size) + "]}";
        offset += size;
        data.push_back(std::move(bytes));
    }
    header += "}";
    header.append((8 - header.size() % 8) % 8, ' '); // the data starts 8-byte aligned
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
        return makeError({path, 0, 0}, "cannot write file");
    const uint64_t headerSize = header.size();
    unsigned char le[8];
    for (int i = 0; i < 8; ++i)
        le[i] = static_cast<unsigned char>(headerSize >> (8 * i));
    bool ok =
        std::fwrite(le, 1, 8, f) == 8 && std::fwrite(header.data(), 1, header.size(), f) == header.size();
    for (const at::Tensor& t : data)
        ok = ok && std::fwrite(t.data_ptr(), 1, t.nbytes(), f) == t.nbytes();
    ok = std::fclose(f) == 0 && ok;
    if (!ok)
        return makeError({path, 0, 0}, "cannot write file");
    return outputs->size();
}

} // namespace

Expected<size_t> runToSafetensors(const Graph& graph, const RunOptions& options, const std::string& path) {
    return catchLibTorch(options.flags.debug, [&] { return runUnguarded(graph, options, path); });
}

} // namespace jointscope::runtime
