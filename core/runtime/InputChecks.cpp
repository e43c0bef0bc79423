#include "runtime/InputChecks.h"

#include <limits>
#include <string>

namespace jointscope::runtime {
namespace {

Diagnostic refusal(const Node& node, const std::string& why) {
    return makeError({{}, node.meta.sourceLine, 0},
                     "node '" + node.name + "' (" + node.target.text + "): refused: " + why);
}

std::string shapeText(const std::vector<int64_t>& sizes) {
    std::string s = "[";
    for (size_t i = 0; i < sizes.size(); ++i)
        s += (i ? ", " : "") + std::to_string(sizes[i]);
    return s + "]";
}

} // namespace

std::optional<Diagnostic> refusedOpIn(const Graph& graph, const SchemaLookup& schemaOf) {
    for (const Node& node : graph.nodes()) {
        if (node.op != NodeOp::CallFunction ||
            (node.target.kind != TargetKind::OpOverload && node.target.kind != TargetKind::OpPacket))
            continue;
        // Other namespaces never reach the dispatcher (Interpreter::findOperator says so on the node).
        if (node.target.ns != "aten" && node.target.ns != "prims")
            continue;
        if (std::optional<OpSchemaView> schema = schemaOf(node.target))
            if (std::optional<std::string> why = opRefusal(*schema))
                return refusal(node, *why);
    }
    for (const std::unique_ptr<Graph>& body : graph.subgraphs())
        if (std::optional<Diagnostic> d = refusedOpIn(*body, schemaOf))
            return d;
    return std::nullopt;
}

Expected<int64_t> dimValue(const SymInt& dim, const SymbolBindings& symbols) {
    if (!dim.isSymbolic())
        return dim.value;
    return evaluateSymbolic(dim.expr, symbols);
}

Expected<std::vector<int64_t>> dimValues(const std::vector<SymInt>& dims, const SymbolBindings& symbols) {
    std::vector<int64_t> out;
    out.reserve(dims.size());
    for (const SymInt& d : dims) {
        Expected<int64_t> v = dimValue(d, symbols);
        if (!v)
            return v.error();
        out.push_back(*v);
    }
    return out;
}

Expected<uint64_t> storageBytes(const std::vector<int64_t>& sizes, const std::vector<int64_t>* strides,
                                size_t itemSize, uint64_t limitBytes, std::string_view deviceName) {
    // The elements the storage spans: the numel for contiguous tensors, 1 + sum((size - 1) * stride) for
    // strided ones (empty_strided allocates that many).
    if (strides && strides->size() != sizes.size())
        return makeError({}, "shape " + shapeText(sizes) + " has " + std::to_string(sizes.size()) +
                                 " dimensions but " + std::to_string(strides->size()) + " strides");
    bool empty = false;
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (sizes[i] < 0)
            return makeError({}, "negative size " + std::to_string(sizes[i]) + " in dimension " +
                                     std::to_string(i) + " of shape " + shapeText(sizes));
        if (strides && (*strides)[i] < 0)
            return makeError({}, "negative stride " + std::to_string((*strides)[i]) + " in dimension " +
                                     std::to_string(i));
        empty = empty || sizes[i] == 0;
    }
    const std::string overflowed = "shape " + shapeText(sizes) + " overflows a 64-bit byte count";
    uint64_t elements = 1;
    if (empty) {
        elements = 0;
    } else if (strides) {
        for (size_t i = 0; i < sizes.size(); ++i) {
            uint64_t step = 0;
            if (__builtin_mul_overflow(static_cast<uint64_t>(sizes[i] - 1),
                                       static_cast<uint64_t>((*strides)[i]), &step) ||
                __builtin_add_overflow(elements, step, &elements))
                return makeError({}, overflowed);
        }
    } else {
        for (int64_t s : sizes)
            if (__builtin_mul_overflow(elements, static_cast<uint64_t>(s), &elements))
                return makeError({}, overflowed);
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(itemSize), &bytes) ||
        bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return makeError({}, overflowed);
    if (bytes > limitBytes)
        return makeError({}, "shape " + shapeText(sizes) + " would need " + std::to_string(bytes >> 20) +
                                 " MiB; tensors above " + std::to_string(limitBytes >> 20) +
                                 " MiB are not created on " + std::string(deviceName));
    return bytes;
}

} // namespace jointscope::runtime
