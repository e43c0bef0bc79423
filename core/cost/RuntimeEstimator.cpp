#include "cost/RuntimeEstimator.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

namespace jointscope::cost {

namespace {

using Shape = std::vector<uint64_t>;

bool isAbsent(const Value* value) {
    return value == nullptr || value->isNone();
}

std::optional<Shape> tensorShape(const OpTensors& tensors, const Value* value) {
    if (value == nullptr || value->kind() != ValueKind::NodeRef)
        return std::nullopt;
    const TensorMeta* tensor = tensors.input(value->asNode());
    return tensor ? concreteShape(*tensor) : std::nullopt;
}

std::optional<Shape> tensorArg(const OpTensors& tensors, const Node& node, size_t index,
                               std::string_view name) {
    return tensorShape(tensors, argumentOf(node, index, name));
}

// An int argument: a literal; a SymInt (node or expression) has no hint here, so it takes the fallback.
uint64_t intArg(const Value* value) {
    if (value == nullptr)
        return 0;
    if (value->kind() == ValueKind::Int)
        return static_cast<uint64_t>(std::max<int64_t>(value->asInt(), 0));
    return static_cast<uint64_t>(kSymbolicSizeFallback);
}

bool boolArg(const Value* value, bool otherwise) {
    return value != nullptr && value->kind() == ValueKind::Bool ? value->asBool() : otherwise;
}

// Output `index` of the node itself (its tensor, or one element of its tuple).
std::optional<Shape> outputShape(const OpTensors& tensors, size_t index) {
    if (index >= tensors.outputs.size())
        return std::nullopt;
    return concreteShape(tensors.outputs[index]);
}

uint64_t product(const Shape& shape, size_t from) {
    uint64_t p = 1;
    for (size_t i = from; i < shape.size(); ++i)
        p *= shape[i];
    return p;
}

// Mirrors flop_counter.py: mm_flop
uint64_t mmFlop(const std::optional<Shape>& a, const std::optional<Shape>& b) {
    if (!a || !b || a->size() != 2 || b->size() != 2)
        return 0;
    return (*a)[0] * (*b)[1] * 2 * (*a)[1];
}

// Mirrors flop_counter.py: bmm_flop
uint64_t bmmFlop(uint64_t b, uint64_t m, uint64_t k, uint64_t n) {
    return b * m * n * 2 * k;
}

uint64_t bmmFlop(const std::optional<Shape>& a, const std::optional<Shape>& b) {
    if (!a || !b || a->size() != 3 || b->size() != 3)
        return 0;
    return bmmFlop((*a)[0], (*a)[1], (*a)[2], (*b)[2]);
}

// Mirrors flop_counter.py: conv_flop_count (multiplications and additions of the products; bias ignored).
uint64_t convFlopCount(const Shape& x, const Shape& w, const Shape& out, bool transposed) {
    const Shape& conv = transposed ? x : out;
    if (x.empty() || w.size() < 2 || conv.size() < 2)
        return 0;
    return product(conv, 2) * product(w, 2) * x[0] * w[0] * w[1] * 2;
}

// The output size of a non-transposed convolution when the node carries no shape of its own.
std::optional<Shape> convOutputShape(const Node& node, const Shape& x, const Shape& w) {
    if (x.size() < 3 || w.size() != x.size())
        return std::nullopt;
    auto listArg = [&](size_t index, std::string_view name, uint64_t otherwise, size_t i) {
        const Value* v = argumentOf(node, index, name);
        if (v == nullptr || !v->isSequence() || v->items().empty())
            return otherwise;
        const std::vector<Value>& items = v->items();
        return intArg(&items[std::min(i, items.size() - 1)]);
    };
    Shape out = {x[0], w[0]};
    for (size_t d = 2; d < x.size(); ++d) {
        const size_t i = d - 2;
        const uint64_t stride = std::max<uint64_t>(listArg(3, "stride", 1, i), 1);
        const uint64_t padding = listArg(4, "padding", 0, i);
        const uint64_t dilation = listArg(5, "dilation", 1, i);
        const uint64_t span = dilation * (w[d] - 1) + 1;
        const uint64_t padded = x[d] + 2 * padding;
        out.push_back(padded >= span ? (padded - span) / stride + 1 : 0);
    }
    return out;
}

// Mirrors flop_counter.py: conv_flop (aten.convolution, aten._convolution)
uint64_t convFlop(const OpTensors& tensors, const Node& node) {
    const std::optional<Shape> x = tensorArg(tensors, node, 0, "input");
    const std::optional<Shape> w = tensorArg(tensors, node, 1, "weight");
    if (!x || !w)
        return 0;
    const bool transposed = boolArg(argumentOf(node, 6, "transposed"), false);
    std::optional<Shape> out = outputShape(tensors, 0);
    if (!out && !transposed)
        out = convOutputShape(node, *x, *w);
    return convFlopCount(*x, *w, out ? *out : Shape{}, transposed);
}

Shape swapFirstTwo(Shape shape) {
    if (shape.size() >= 2)
        std::swap(shape[0], shape[1]);
    return shape;
}

// Mirrors flop_counter.py: conv_backward_flop. grad_input has the input's shape and grad_weight the weight's,
// so those stand in when the node's tuple outputs carry no shapes.
uint64_t convBackwardFlop(const OpTensors& tensors, const Node& node) {
    const std::optional<Shape> gradOut = tensorArg(tensors, node, 0, "grad_output");
    const std::optional<Shape> x = tensorArg(tensors, node, 1, "input");
    const std::optional<Shape> w = tensorArg(tensors, node, 2, "weight");
    if (!gradOut || !x || !w)
        return 0;
    const bool transposed = boolArg(argumentOf(node, 7, "transposed"), false);
    const Value* mask = argumentOf(node, 10, "output_mask");
    auto wanted = [&](size_t i) {
        return mask != nullptr && mask->isSequence() && i < mask->items().size() && mask->items()[i].asBool();
    };
    uint64_t flops = 0;
    if (wanted(0)) {
        const Shape gradInput = outputShape(tensors, 0).value_or(*x);
        flops += convFlopCount(*gradOut, *w, gradInput, !transposed);
    }
    if (wanted(1)) {
        const Shape gradWeight = swapFirstTwo(outputShape(tensors, 1).value_or(*w));
        if (transposed)
            flops += convFlopCount(swapFirstTwo(*gradOut), swapFirstTwo(*x), gradWeight, false);
        else
            flops += convFlopCount(swapFirstTwo(*x), swapFirstTwo(*gradOut), gradWeight, false);
    }
    return flops;
}

// Mirrors flop_counter.py: sdpa_flop_count (shapes read as [b, h, s, d]).
uint64_t sdpaFlopCount(const Shape& q, const Shape& k, const Shape& v) {
    if (q.size() != 4 || k.size() != 4 || v.size() != 4)
        return 0;
    const uint64_t bh = q[0] * q[1], sQ = q[2], dQ = q[3], sK = k[2], dV = v[3];
    return bmmFlop(bh, sQ, dQ, sK) + bmmFlop(bh, sQ, sK, dV);
}

// Mirrors flop_counter.py: sdpa_backward_flop_count
uint64_t sdpaBackwardFlopCount(const Shape& gradOut, const Shape& q, const Shape& k, const Shape& v) {
    if (gradOut.size() != 4 || q.size() != 4 || k.size() != 4 || v.size() != 4)
        return 0;
    const uint64_t bh = q[0] * q[1], sQ = q[2], dQ = q[3], sK = k[2], dV = v[3];
    return bmmFlop(bh, sQ, dQ, sK)    // recompute scores
           + bmmFlop(bh, sQ, dV, sK)  // grad scores
           + bmmFlop(bh, sK, sQ, dV)  // grad v
           + bmmFlop(bh, sQ, sK, dQ)  // grad q
           + bmmFlop(bh, dQ, sQ, sK); // grad k
}

// The first tensor arguments of a node, all of which must have shapes.
std::optional<std::vector<Shape>> leadingShapes(const OpTensors& tensors, const Node& node, size_t count) {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < count; ++i) {
        std::optional<Shape> s = tensorArg(tensors, node, i, "");
        if (!s)
            return std::nullopt;
        shapes.push_back(std::move(*s));
    }
    return shapes;
}

// The arguments of torch's _flash_attention_* / _efficient_attention_* ops after their tensors.
struct AttentionArgs {
    size_t firstQkv; // index of query (1 in the backward ops, after grad_out)
    size_t cumSeqQ;  // cum_seq_q / cu_seqlens_q
    size_t maxQ;     // max_q / max_seqlen_q
    size_t headAxis; // axis of heads in a nested query: 1 for flash (3-d), 2 for efficient (4-d)
    bool backward;
};

// Mirrors flop_counter.py: _flash_attention_{forward,backward}_flop and
// _efficient_attention_{forward,backward}_flop with _unpack_{flash,efficient}_attention_nested_shapes. Fake
// offsets: every batch element is max_q / max_k long.
uint64_t packedAttentionFlop(const OpTensors& tensors, const Node& node, const AttentionArgs& a) {
    const std::optional<std::vector<Shape>> shapes = leadingShapes(tensors, node, a.firstQkv + 3);
    if (!shapes)
        return 0;
    const Shape& q = (*shapes)[a.firstQkv];
    const Shape& k = (*shapes)[a.firstQkv + 1];
    const Shape& v = (*shapes)[a.firstQkv + 2];
    const Value* cumSeqQ = argumentOf(node, a.cumSeqQ, "");
    if (isAbsent(cumSeqQ)) {
        if (a.backward)
            return sdpaBackwardFlopCount((*shapes)[0], q, k, v);
        return sdpaFlopCount(q, k, v);
    }
    const std::optional<Shape> offsets = tensorShape(tensors, cumSeqQ);
    const size_t dims = a.headAxis + 2;
    if (!offsets || offsets->empty() || (*offsets)[0] == 0 || q.size() != dims || k.size() != dims ||
        v.size() != dims)
        return 0;
    const uint64_t batches = (*offsets)[0] - 1;
    const uint64_t maxQ = intArg(argumentOf(node, a.maxQ, ""));
    const uint64_t maxK = intArg(argumentOf(node, a.maxQ + 1, ""));
    const size_t h = a.headAxis;
    const Shape q1 = {1, q[h], maxQ, q[h + 1]};
    const Shape k1 = {1, k[h], maxK, k[h + 1]};
    const Shape v1 = {1, v[h], maxK, v[h + 1]};
    const uint64_t each = a.backward ? sdpaBackwardFlopCount(q1, q1, k1, v1) : sdpaFlopCount(q1, k1, v1);
    return batches * each;
}

// einsum("bsk,kn->bsn", [a, b]) as FlopCounterMode sees it: torch lowers it to one bmm over the batch,
// free and summed letters, 2 flops per multiply-add of every letter combination.
uint64_t einsumFlop(const OpTensors& tensors, const Node& node) {
    const Value* eq = argumentOf(node, 0, "equation");
    const Value* operands = argumentOf(node, 1, "tensors");
    if (!eq || eq->kind() != ValueKind::String || !operands || operands->kind() != ValueKind::List)
        return 0;
    std::vector<std::string> terms(1);
    for (char ch : eq->text()) {
        if (ch == ',' || ch == '-')
            terms.emplace_back();
        else if (std::isalpha(static_cast<unsigned char>(ch)))
            terms.back() += ch;
    }
    std::map<char, uint64_t> size;
    size_t k = 0;
    for (const Value& v : operands->items()) {
        const std::optional<Shape> shape = tensorShape(tensors, &v);
        if (!shape || k >= terms.size() || terms[k].size() != shape->size())
            return 0;
        for (size_t d = 0; d < shape->size(); ++d)
            size[terms[k][d]] = std::max(size[terms[k][d]], (*shape)[d]);
        ++k;
    }
    uint64_t flops = 2;
    for (const auto& [letter, n] : size)
        flops *= n;
    return size.empty() ? 0 : flops;
}

} // namespace

bool hasFlopFormula(const Node& node) {
    static constexpr std::string_view kOps[] = {
        "mm",
        "addmm",
        "_scaled_mm",
        "bmm",
        "baddbmm",
        "convolution",
        "_convolution",
        "convolution_backward",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_flash_attention_for_cpu_backward",
        "_scaled_dot_product_efficient_attention_backward",
        "_scaled_dot_product_flash_attention_backward",
        "_scaled_dot_product_cudnn_attention_backward",
        "_flash_attention_forward",
        "_efficient_attention_forward",
        "_flash_attention_backward",
        "_efficient_attention_backward",
        "einsum",
    };
    if (node.op != NodeOp::CallFunction || node.target.ns != "aten")
        return false;
    return std::find(std::begin(kOps), std::end(kOps), node.target.op) != std::end(kOps);
}

// Mirrors torch/utils/flop_counter.py: flop_registry (keyed by overload packet, so every overload counts).
uint64_t countFlops(const Node& node, const OpTensors& tensors) {
    if (!hasFlopFormula(node))
        return 0;
    const std::string& op = node.target.op;
    if (op == "mm")
        return mmFlop(tensorArg(tensors, node, 0, "self"), tensorArg(tensors, node, 1, "mat2"));
    if (op == "addmm")
        return mmFlop(tensorArg(tensors, node, 1, "mat1"), tensorArg(tensors, node, 2, "mat2"));
    if (op == "_scaled_mm")
        return mmFlop(tensorArg(tensors, node, 0, "self"), tensorArg(tensors, node, 1, "mat2"));
    if (op == "bmm")
        return bmmFlop(tensorArg(tensors, node, 0, "self"), tensorArg(tensors, node, 1, "mat2"));
    if (op == "baddbmm")
        return bmmFlop(tensorArg(tensors, node, 1, "batch1"), tensorArg(tensors, node, 2, "batch2"));
    if (op == "convolution" || op == "_convolution")
        return convFlop(tensors, node);
    if (op == "einsum")
        return einsumFlop(tensors, node);
    if (op == "convolution_backward")
        return convBackwardFlop(tensors, node);
    // torch's flop_counter registers the CPU flash kernels with the same formulas as the CUDA ones.
    if (op == "_scaled_dot_product_efficient_attention" || op == "_scaled_dot_product_flash_attention" ||
        op == "_scaled_dot_product_cudnn_attention" || op == "_scaled_dot_product_flash_attention_for_cpu") {
        const std::optional<std::vector<Shape>> s = leadingShapes(tensors, node, 3);
        return s ? sdpaFlopCount((*s)[0], (*s)[1], (*s)[2]) : 0;
    }
    if (op == "_scaled_dot_product_efficient_attention_backward" ||
        op == "_scaled_dot_product_flash_attention_backward" ||
        op == "_scaled_dot_product_cudnn_attention_backward" ||
        op == "_scaled_dot_product_flash_attention_for_cpu_backward") {
        const std::optional<std::vector<Shape>> s = leadingShapes(tensors, node, 4);
        return s ? sdpaBackwardFlopCount((*s)[0], (*s)[1], (*s)[2], (*s)[3]) : 0;
    }
    // (query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, ...)
    if (op == "_flash_attention_forward")
        return packedAttentionFlop(tensors, node, {0, 3, 5, 1, false});
    // (query, key, value, bias, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, ...)
    if (op == "_efficient_attention_forward")
        return packedAttentionFlop(tensors, node, {0, 4, 6, 2, false});
    // (grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, ...)
    if (op == "_flash_attention_backward")
        return packedAttentionFlop(tensors, node, {1, 6, 8, 1, true});
    // (grad_out, query, key, value, bias, out, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, ...)
    if (op == "_efficient_attention_backward")
        return packedAttentionFlop(tensors, node, {1, 6, 8, 2, true});
    return 0;
}

uint64_t countFlops(const Graph& graph, NodeId id) {
    const Node& node = graph.node(id);
    // Most nodes have no formula: answer them without copying their tensors.
    return hasFlopFormula(node) ? countFlops(node, gatherTensors(graph, id)) : 0;
}

// Mirrors partitioners.py: estimate_runtime, RUNTIME_MODE == "flops"
double FlopEstimator::estimate(const Graph& graph, NodeId id) const {
    return static_cast<double>(std::max<uint64_t>(countFlops(graph, id), 1));
}

} // namespace jointscope::cost
