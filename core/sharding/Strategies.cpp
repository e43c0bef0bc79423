#include "sharding/Strategies.h"

#include "cost/OpTensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace jointscope::sharding {

namespace {

using Shape = std::vector<int64_t>;

enum class Family : uint8_t {
    None,
    Pointwise,       // elementwise with broadcasting; never linear in its inputs
    LinearPointwise, // add / sub: Partial when every operand is Partial
    ScalePointwise,  // mul / div: Partial through one operand, the others replicated
    Identity,        // clone, detach, alias, casts: any placement passes through
    Mm,
    Addmm,
    Bmm,
    Baddbmm,
    Reduce, // sum / mean / amax / amin / var / var_mean / std with dims and keepdim
    Softmax,
    SoftmaxBackward,
    LayerNorm,
    LayerNormBackward,
    Embedding,
    EmbeddingBackward,
    NllLoss,
    NllLossBackward,
    Attention,         // sdpa flash / efficient forward
    AttentionBackward, // and backward
    View,              // view, reshape, _unsafe_view, _reshape_alias
    Expand,
    Permute,
    Transpose,
    T,
    Squeeze,
    Unsqueeze,
    Split,
    Slice,
    Select,
    Cat,
    Factory,
    Convolution,
    ConvolutionBackward,
    Pool,        // max_pool / avg_pool and their backward: batch and channel dims
    Triangular,  // triu / tril: the last two dimensions stay whole
    BatchLike,   // ops that only take the leading batch dimension apart
    Einsum,      // two-operand einsum (autoparallel rewrites view-mm-view into it)
    ComplexView, // view_as_complex / view_as_real: every dim but the trailing pair of reals
};

struct FamilyEntry {
    std::string_view op;
    Family family;
};

// Op knowledge, keyed by aten packet name.
constexpr FamilyEntry kFamilies[] = {
    {"add", Family::LinearPointwise},
    {"sub", Family::LinearPointwise},
    {"mul", Family::ScalePointwise},
    {"div", Family::ScalePointwise},
    {"neg", Family::Identity},
    {"clone", Family::Identity},
    {"detach", Family::Identity},
    {"alias", Family::Identity},
    {"_to_copy", Family::Identity},
    {"convert_element_type", Family::Identity},
    {"contiguous", Family::Identity},
    {"lift_fresh_copy", Family::Identity},
    {"relu", Family::Pointwise},
    {"gelu", Family::Pointwise},
    {"gelu_backward", Family::Pointwise},
    {"silu", Family::Pointwise},
    {"silu_backward", Family::Pointwise},
    {"sigmoid", Family::Pointwise},
    {"sigmoid_backward", Family::Pointwise},
    {"tanh", Family::Pointwise},
    {"tanh_backward", Family::Pointwise},
    {"threshold_backward", Family::Pointwise},
    {"exp", Family::Pointwise},
    {"log", Family::Pointwise},
    {"sqrt", Family::Pointwise},
    {"rsqrt", Family::Pointwise},
    {"pow", Family::Pointwise},
    {"abs", Family::Pointwise},
    {"sin", Family::Pointwise},
    {"cos", Family::Pointwise},
    {"where", Family::Pointwise},
    {"masked_fill", Family::Pointwise},
    {"maximum", Family::Pointwise},
    {"minimum", Family::Pointwise},
    {"eq", Family::Pointwise},
    {"ne", Family::Pointwise},
    {"gt", Family::Pointwise},
    {"lt", Family::Pointwise},
    {"ge", Family::Pointwise},
    {"le", Family::Pointwise},
    {"reciprocal", Family::Pointwise},
    {"erf", Family::Pointwise},
    {"bitwise_not", Family::Pointwise},
    {"logical_not", Family::Pointwise},
    {"triu", Family::Triangular},
    {"tril", Family::Triangular},
    {"fill", Family::Pointwise},
    {"zeros_like", Family::Pointwise},
    {"ones_like", Family::Pointwise},
    {"empty_like", Family::Pointwise},
    {"full_like", Family::Pointwise},
    {"mm", Family::Mm},
    {"addmm", Family::Addmm},
    {"bmm", Family::Bmm},
    {"baddbmm", Family::Baddbmm},
    {"sum", Family::Reduce},
    {"mean", Family::Reduce},
    {"amax", Family::Reduce},
    {"amin", Family::Reduce},
    {"var", Family::Reduce},
    {"var_mean", Family::Reduce},
    {"std", Family::Reduce},
    {"_softmax", Family::Softmax},
    {"_log_softmax", Family::Softmax},
    {"softmax", Family::Softmax},
    {"log_softmax", Family::Softmax},
    {"_softmax_backward_data", Family::SoftmaxBackward},
    {"_log_softmax_backward_data", Family::SoftmaxBackward},
    {"native_layer_norm", Family::LayerNorm},
    {"native_layer_norm_backward", Family::LayerNormBackward},
    {"embedding", Family::Embedding},
    {"embedding_dense_backward", Family::EmbeddingBackward},
    {"nll_loss_forward", Family::NllLoss},
    {"nll_loss_backward", Family::NllLossBackward},
    {"_scaled_dot_product_flash_attention", Family::Attention},
    {"_scaled_dot_product_efficient_attention", Family::Attention},
    {"_scaled_dot_product_flash_attention_backward", Family::AttentionBackward},
    {"_scaled_dot_product_efficient_attention_backward", Family::AttentionBackward},
    {"view", Family::View},
    {"_unsafe_view", Family::View},
    {"reshape", Family::View},
    {"_reshape_alias", Family::View},
    {"expand", Family::Expand},
    {"permute", Family::Permute},
    {"transpose", Family::Transpose},
    {"t", Family::T},
    {"squeeze", Family::Squeeze},
    {"unsqueeze", Family::Unsqueeze},
    {"split", Family::Split},
    {"split_with_sizes", Family::Split},
    {"slice", Family::Slice},
    {"select", Family::Select},
    {"cat", Family::Cat},
    {"full", Family::Factory},
    {"zeros", Family::Factory},
    {"ones", Family::Factory},
    {"empty", Family::Factory},
    {"scalar_tensor", Family::Factory},
    {"convolution", Family::Convolution},
    {"convolution_backward", Family::ConvolutionBackward},
    {"max_pool2d_with_indices", Family::Pool},
    {"max_pool2d_with_indices_backward", Family::Pool},
    {"avg_pool2d", Family::Pool},
    {"avg_pool2d_backward", Family::Pool},
    {"einsum", Family::Einsum},
    {"view_as_complex", Family::ComplexView},
    {"view_as_real", Family::ComplexView},
    {"_conj", Family::Identity},
};

Family familyOf(const Target& target) {
    // autoparallel's parameter cast keeps its input's layout, as its convert_element_type_rule does for
    // prims.convert_element_type.
    if (target.ns == "autoparallel" && target.op == "dtype_cast")
        return Family::Identity;
    if (target.ns != "aten" && target.ns != "prims")
        return Family::None;
    for (const FamilyEntry& e : kFamilies)
        if (e.op == target.op)
            return e.family;
    return Family::None;
}

// One mesh dimension's rule: a placement per result and per tensor input.
struct Rule1D {
    std::vector<Placement> outs;
    std::vector<Placement> ins;
};

struct OpContext {
    const Node& node;
    std::vector<Shape> inShapes; // per tensor input; empty shape for a 0-d tensor
    std::vector<bool> inKnown;
    std::vector<Shape> outShapes; // per result
    std::vector<bool> outKnown;
};

int64_t intArg(const Node& node, size_t index, std::string_view name, int64_t fallback) {
    const Value* v = cost::argumentOf(node, index, name);
    if (!v || v->kind() != ValueKind::Int)
        return fallback;
    return v->asInt();
}

std::vector<int64_t> intListArg(const Node& node, size_t index, std::string_view name) {
    std::vector<int64_t> out;
    const Value* v = cost::argumentOf(node, index, name);
    if (!v)
        return out;
    if (v->kind() == ValueKind::Int)
        out.push_back(v->asInt());
    else if (v->isSequence())
        for (const Value& item : v->items())
            if (item.kind() == ValueKind::Int)
                out.push_back(item.asInt());
    return out;
}

int64_t normDim(int64_t d, size_t rank) {
    const int64_t r = static_cast<int64_t>(rank);
    return d < 0 ? d + std::max<int64_t>(r, 1) : d;
}

Placement S(int64_t d) {
    return Placement::shard(static_cast<int32_t>(d));
}
const Placement R = Placement::replicate();

// All-replicated: always valid.
Rule1D replicated(const OpContext& c) {
    return {std::vector<Placement>(c.outShapes.size(), R), std::vector<Placement>(c.inShapes.size(), R)};
}

// Pointwise rules: the output sharded on one dim, each input on its broadcast-aligned dim (replicated where
// it broadcasts), plus Partial where the op is linear.
void pointwiseRules(const OpContext& c, Family family, std::vector<Rule1D>& rules) {
    if (c.outShapes.empty())
        return;
    const Shape& out = c.outShapes[0];
    for (size_t d = 0; d < out.size(); ++d) {
        Rule1D r;
        r.outs.assign(c.outShapes.size(), S(d));
        for (const Shape& in : c.inShapes) {
            const int64_t offset = static_cast<int64_t>(out.size()) - static_cast<int64_t>(in.size());
            const int64_t id = static_cast<int64_t>(d) - offset;
            if (id >= 0 && in[id] == out[d])
                r.ins.push_back(S(id));
            else
                r.ins.push_back(R);
        }
        rules.push_back(std::move(r));
    }
    const size_t n = c.inShapes.size();
    if (n == 0)
        return;
    const Placement P = Placement::partial();
    if (family == Family::Identity) {
        rules.push_back({std::vector<Placement>(c.outShapes.size(), P), {P}});
        if (n > 1)
            rules.back().ins.resize(n, R);
    } else if (family == Family::LinearPointwise) {
        // x + y is linear only when both operands are tensors: a scalar would be added once per shard.
        const Value* a = cost::argumentOf(c.node, 0, "self");
        const Value* b = cost::argumentOf(c.node, 1, "other");
        const bool alpha = cost::argumentOf(c.node, 2, "alpha") != nullptr;
        if (a && b && a->kind() == ValueKind::NodeRef && b->kind() == ValueKind::NodeRef && !alpha)
            rules.push_back({{P}, std::vector<Placement>(n, P)});
    } else if (family == Family::ScalePointwise) {
        // x * y with exactly one Partial factor; a divisor must stay replicated.
        const size_t candidates = c.node.target.op == "div" ? 1 : n;
        for (size_t i = 0; i < candidates; ++i) {
            Rule1D r{{P}, std::vector<Placement>(n, R)};
            r.ins[i] = P;
            rules.push_back(std::move(r));
        }
    }
}

void matmulRules(const OpContext& c, Family family, std::vector<Rule1D>& rules) {
    const Placement P = Placement::partial();
    // mm: a[M,K] @ b[K,N]; bmm: a[B,M,K] @ b[B,K,N]. addmm's bias and baddbmm's self come first, broadcast to
    // the output.
    const bool batched = family != Family::Mm && family != Family::Addmm;
    const size_t base = family == Family::Addmm || family == Family::Baddbmm ? 1 : 0;
    if (c.inShapes.size() < base + 2)
        return;
    // The added operand with the output sharded on outDim: sharded alike where it spans that dim, else
    // replicated.
    auto addendFor = [&](int outDim) -> Placement {
        if (base == 0)
            return R;
        const Shape& addend = c.inShapes[0];
        const int64_t offset = (batched ? 3 : 2) - static_cast<int64_t>(addend.size());
        const int64_t bd = outDim - offset;
        if (bd >= 0 && !c.outShapes.empty() && addend[bd] == c.outShapes[0][outDim])
            return S(bd);
        return R;
    };
    auto make = [&](Placement o, Placement a, Placement b, Placement addend) {
        Rule1D r{{o}, {}};
        if (base)
            r.ins.push_back(addend);
        r.ins.push_back(a);
        r.ins.push_back(b);
        rules.push_back(std::move(r));
    };
    if (batched) {
        make(S(0), S(0), S(0), addendFor(0));
        make(S(1), S(1), R, addendFor(1));
        make(S(2), R, S(2), addendFor(2));
        make(P, S(2), S(1), P);
    } else {
        make(S(0), S(0), R, addendFor(0));
        make(S(1), R, S(1), addendFor(1));
        make(P, S(1), S(0), P);
    }
    // Linear in a and in b: a Partial operand gives a Partial product. The added operand is Partial with it
    // (alone it may not be).
    make(P, P, R, P);
    make(P, R, P, P);
}

void reduceRules(const OpContext& c, std::vector<Rule1D>& rules) {
    if (c.inShapes.empty())
        return;
    const Node& n = c.node;
    const std::string& op = n.target.op;
    const size_t rank = c.inShapes[0].size();
    // dims: sum.dim_IntList(x, dims, keepdim), var.correction(x, dims, correction=, keepdim=)
    std::vector<int64_t> dims = intListArg(n, 1, "dim");
    const Value* keep = cost::argumentOf(n, 2, "keepdim");
    bool keepdim = false;
    if (op == "var" || op == "var_mean" || op == "std") {
        const Value* k = cost::argumentOf(n, 99, "keepdim");
        keepdim = k && k->kind() == ValueKind::Bool && k->asBool();
        if (n.target.overload == "dim" || n.target.overload == "correction") {
            const Value* pos = cost::argumentOf(n, 3, "keepdim");
            if (!k && pos && pos->kind() == ValueKind::Bool)
                keepdim = pos->asBool();
        }
    } else {
        keepdim = keep && keep->kind() == ValueKind::Bool && keep->asBool();
    }
    std::vector<bool> reduced(rank, dims.empty());
    for (int64_t d : dims) {
        const int64_t nd = normDim(d, rank);
        if (nd >= 0 && nd < static_cast<int64_t>(rank))
            reduced[nd] = true;
    }
    ReduceOp partialOp = ReduceOp::Sum;
    bool partialOk = true;
    if (op == "mean")
        partialOp = ReduceOp::Avg;
    else if (op == "amax")
        partialOp = ReduceOp::Max;
    else if (op != "sum")
        partialOk = false; // var / std / amin: no Partial result we model
    const size_t outs = c.outShapes.size();
    int64_t outDim = 0;
    for (size_t d = 0; d < rank; ++d) {
        if (!reduced[d]) {
            rules.push_back({std::vector<Placement>(outs, S(outDim)), {S(d)}});
            ++outDim;
        } else {
            if (partialOk)
                rules.push_back({std::vector<Placement>(outs, Placement::partial(partialOp)), {S(d)}});
            if (keepdim)
                ++outDim;
        }
    }
    if (op == "sum")
        rules.push_back({{Placement::partial()}, {Placement::partial()}});
    for (Rule1D& r : rules)
        r.ins.resize(c.inShapes.size(), R);
}

// Shard any dimension the op does not work along; every tensor operand alike (where its rank allows).
void independentDims(const OpContext& c, const std::vector<bool>& allowed, std::vector<Rule1D>& rules) {
    for (size_t d = 0; d < allowed.size(); ++d) {
        if (!allowed[d])
            continue;
        Rule1D r;
        for (size_t i = 0; i < c.outShapes.size(); ++i)
            r.outs.push_back(c.outShapes[i].size() > d ? S(d) : R);
        for (size_t i = 0; i < c.inShapes.size(); ++i)
            r.ins.push_back(c.inShapes[i].size() > d ? S(d) : R);
        rules.push_back(std::move(r));
    }
}

// Leading-dimension sharding for ops whose operands share a batch dimension `d` of size `size`: every operand
// and result with that size there is sharded, the rest (weights, scalars) replicated; weight gradients
// (results without that dimension) are Partial.
void batchRule(const OpContext& c, size_t d, int64_t size, bool partialForOthers,
               std::vector<Rule1D>& rules) {
    Rule1D r;
    for (size_t i = 0; i < c.outShapes.size(); ++i) {
        if (c.outShapes[i].size() > d && c.outShapes[i][d] == size && c.outKnown[i])
            r.outs.push_back(S(d));
        else
            r.outs.push_back(partialForOthers && c.outKnown[i] ? Placement::partial() : R);
    }
    for (const Shape& in : c.inShapes)
        r.ins.push_back(in.size() > d && in[d] == size ? S(d) : R);
    rules.push_back(std::move(r));
}

// view / reshape: a sharded dimension maps across when it is the leading non-1 dimension of a group of
// dimensions whose products match on both sides.
void viewRules(const OpContext& c, std::vector<Rule1D>& rules) {
    if (c.inShapes.empty() || c.outShapes.empty())
        return;
    const Shape& in = c.inShapes[0];
    const Shape& out = c.outShapes[0];
    size_t i = 0, o = 0;
    while (i < in.size() && o < out.size()) {
        const size_t i0 = i, o0 = o;
        int64_t pi = in[i++], po = out[o++];
        while (pi != po) {
            if (pi < po && i < in.size())
                pi *= in[i++];
            else if (po < pi && o < out.size())
                po *= out[o++];
            else
                return;
        }
        size_t a = i0, b = o0;
        while (a < i && in[a] == 1)
            ++a;
        while (b < o && out[b] == 1)
            ++b;
        if (a < i && b < o)
            rules.push_back({{S(b)}, {S(a)}});
    }
    rules.push_back({{Placement::partial()}, {Placement::partial()}});
}

void permutationRules(const OpContext& c, const std::vector<int64_t>& perm, std::vector<Rule1D>& rules) {
    for (size_t j = 0; j < perm.size(); ++j)
        rules.push_back({{S(j)}, {S(perm[j])}});
    rules.push_back({{Placement::partial()}, {Placement::partial()}});
    (void)c;
}

// einsum("bsk,kn->bsn", a, b) on one mesh dimension, the way torch's gen_single_dim_einsum_strategies
// enumerates it, without Partial operands (autoparallel's _einsum_single_dim_strategy drops those): a letter
// of both operands and the result shards all three; one summed over shards both operands and leaves the
// result Partial; one of a single operand and the result shards those two, the other operand replicated.
void einsumRules(const OpContext& c, std::vector<Rule1D>& rules) {
    const Value* eq = cost::argumentOf(c.node, 0, "equation");
    if (!eq || eq->kind() != ValueKind::String || c.inShapes.size() != 2)
        return;
    std::string text;
    for (char ch : eq->text())
        if (ch != ' ')
            text += ch;
    const size_t comma = text.find(','), arrow = text.find("->");
    if (comma == std::string::npos || arrow == std::string::npos || comma > arrow)
        return;
    const std::string a = text.substr(0, comma), b = text.substr(comma + 1, arrow - comma - 1),
                      out = text.substr(arrow + 2);
    if (a.size() != c.inShapes[0].size() || b.size() != c.inShapes[1].size() || c.outShapes.empty() ||
        out.size() != c.outShapes[0].size())
        return;
    std::string letters = a + b;
    std::sort(letters.begin(), letters.end());
    letters.erase(std::unique(letters.begin(), letters.end()), letters.end());
    for (char l : letters) {
        const size_t ia = a.find(l), ib = b.find(l), io = out.find(l);
        auto dimOr = [](size_t i) { return i == std::string::npos ? R : S(static_cast<int64_t>(i)); };
        const bool inA = ia != std::string::npos, inB = ib != std::string::npos,
                   inOut = io != std::string::npos;
        if (inA && inB)
            rules.push_back({{inOut ? S(io) : Placement::partial()}, {S(ia), S(ib)}});
        else if (inOut)
            rules.push_back({{S(io)}, {dimOr(ia), dimOr(ib)}});
    }
}

// view_as_complex folds the trailing pair of reals into one complex element; view_as_real unfolds it. The
// dims before it are the same on both sides.
void complexViewRules(const OpContext& c, std::vector<Rule1D>& rules) {
    if (c.inShapes.empty() || c.outShapes.empty())
        return;
    const size_t kept = std::min(c.inShapes[0].size(), c.outShapes[0].size());
    for (size_t d = 0; d < kept; ++d)
        rules.push_back({{S(d)}, {S(d)}});
    rules.push_back({{Placement::partial()}, {Placement::partial()}});
}

void opRules(const OpContext& c, Family family, std::vector<Rule1D>& rules) {
    const Node& n = c.node;
    const size_t outRank = c.outShapes.empty() ? 0 : c.outShapes[0].size();
    const size_t inRank = c.inShapes.empty() ? 0 : c.inShapes[0].size();
    switch (family) {
    case Family::Pointwise:
    case Family::LinearPointwise:
    case Family::ScalePointwise:
    case Family::Identity:
        pointwiseRules(c, family, rules);
        break;
    case Family::Einsum:
        einsumRules(c, rules);
        break;
    case Family::ComplexView:
        complexViewRules(c, rules);
        break;
    case Family::Mm:
    case Family::Addmm:
    case Family::Bmm:
    case Family::Baddbmm:
        matmulRules(c, family, rules);
        break;
    case Family::Reduce:
        reduceRules(c, rules);
        break;
    case Family::Softmax:
    case Family::SoftmaxBackward: {
        const size_t dimIndex = family == Family::Softmax ? 1 : 2;
        const int64_t dim = normDim(intArg(n, dimIndex, "dim", -1), outRank);
        std::vector<bool> allowed(outRank, true);
        if (dim >= 0 && dim < static_cast<int64_t>(outRank))
            allowed[dim] = false;
        independentDims(c, allowed, rules);
        break;
    }
    case Family::LayerNorm:
    case Family::LayerNormBackward: {
        const size_t shapeIndex = family == Family::LayerNorm ? 1 : 2;
        const size_t normalized = intListArg(n, shapeIndex, "normalized_shape").size();
        const size_t xIndex = family == Family::LayerNorm ? 0 : 1;
        if (c.inShapes.size() <= xIndex || normalized > c.inShapes[xIndex].size())
            break;
        const Shape& x = c.inShapes[xIndex];
        for (size_t d = 0; d + normalized < x.size(); ++d)
            batchRule(c, d, x[d], family == Family::LayerNormBackward, rules);
        break;
    }
    case Family::Embedding: {
        // embedding(weight[V, D], indices[...]) -> [..., D]
        if (c.inShapes.size() < 2)
            break;
        const Shape& idx = c.inShapes[1];
        for (size_t d = 0; d < idx.size(); ++d)
            rules.push_back({{S(d)}, {R, S(d)}});
        if (c.inShapes[0].size() == 2)
            rules.push_back({{S(idx.size())}, {S(1), R}});
        break;
    }
    case Family::EmbeddingBackward: {
        // embedding_dense_backward(grad[..., D], indices[...], num_weights, ...) -> [V, D]
        if (c.inShapes.size() < 2)
            break;
        const Shape& idx = c.inShapes[1];
        for (size_t d = 0; d < idx.size(); ++d)
            rules.push_back({{Placement::partial()}, {S(d), S(d)}});
        rules.push_back({{S(1)}, {S(idx.size()), R}});
        break;
    }
    case Family::NllLoss: {
        // reduction: 0 none, 1 mean, 2 sum. A batch-sharded mean would divide by the local weight total.
        const int64_t reduction = intArg(n, 3, "reduction", 1);
        if (inRank == 0 || reduction == 1)
            break;
        Rule1D r;
        r.outs = {reduction == 0 ? S(0) : Placement::partial(), Placement::partial()};
        for (size_t i = 0; i < c.inShapes.size(); ++i)
            r.ins.push_back(i < 2 ? S(0) : R);
        rules.push_back(std::move(r));
        break;
    }
    case Family::NllLossBackward: {
        // nll_loss_backward(grad, self[N, C], target[N], weight, reduction, ignore_index, total_weight):
        // the global weight total stays replicated, so a batch shard computes its rows exactly.
        if (c.inShapes.size() < 3 || c.inShapes[1].empty())
            break;
        const int64_t reduction = intArg(n, 4, "reduction", 1);
        Rule1D r{{S(0)}, std::vector<Placement>(c.inShapes.size(), R)};
        r.ins[0] = reduction == 0 ? S(0) : R;
        r.ins[1] = S(0);
        r.ins[2] = S(0);
        rules.push_back(std::move(r));
        break;
    }
    case Family::Attention:
    case Family::AttentionBackward: {
        // q / k / v [B, H, S, D]: batch and heads are independent.
        const size_t q = family == Family::Attention ? 0 : 1;
        if (c.inShapes.size() <= q || c.inShapes[q].size() != 4)
            break;
        for (size_t d = 0; d < 2; ++d)
            batchRule(c, d, c.inShapes[q][d], false, rules);
        break;
    }
    case Family::View:
        viewRules(c, rules);
        break;
    case Family::Expand: {
        if (c.inShapes.empty() || c.outShapes.empty())
            break;
        const Shape& in = c.inShapes[0];
        const Shape& out = c.outShapes[0];
        const size_t offset = out.size() - std::min(out.size(), in.size());
        for (size_t j = 0; j < out.size(); ++j) {
            if (j < offset || in[j - offset] != out[j])
                rules.push_back({{S(j)}, {R}});
            else
                rules.push_back({{S(j)}, {S(j - offset)}});
        }
        rules.push_back({{Placement::partial()}, {Placement::partial()}});
        break;
    }
    case Family::Permute: {
        std::vector<int64_t> perm = intListArg(n, 1, "dims");
        for (int64_t& p : perm)
            p = normDim(p, inRank);
        permutationRules(c, perm, rules);
        break;
    }
    case Family::Transpose:
    case Family::T: {
        std::vector<int64_t> perm(inRank);
        for (size_t i = 0; i < inRank; ++i)
            perm[i] = static_cast<int64_t>(i);
        if (family == Family::T) {
            if (inRank == 2)
                std::swap(perm[0], perm[1]);
        } else {
            const int64_t a = normDim(intArg(n, 1, "dim0", 0), inRank);
            const int64_t b = normDim(intArg(n, 2, "dim1", 0), inRank);
            if (a < 0 || b < 0 || a >= static_cast<int64_t>(inRank) || b >= static_cast<int64_t>(inRank))
                break;
            std::swap(perm[a], perm[b]);
        }
        permutationRules(c, perm, rules);
        break;
    }
    case Family::Squeeze:
    case Family::Unsqueeze: {
        if (c.inShapes.empty() || c.outShapes.empty())
            break;
        // Map the non-1 dimensions in order: squeeze / unsqueeze only add or drop size-1 dimensions.
        const Shape& in = c.inShapes[0];
        const Shape& out = c.outShapes[0];
        size_t j = 0;
        for (size_t i = 0; i < in.size(); ++i) {
            if (in[i] == 1)
                continue;
            while (j < out.size() && out[j] == 1)
                ++j;
            if (j < out.size())
                rules.push_back({{S(j)}, {S(i)}});
            ++j;
        }
        rules.push_back({{Placement::partial()}, {Placement::partial()}});
        break;
    }
    case Family::Split:
    case Family::Slice:
    case Family::Select: {
        const size_t dimIndex = family == Family::Split ? 2 : 1;
        const int64_t dim = normDim(intArg(n, dimIndex, "dim", 0), inRank);
        for (size_t d = 0; d < inRank; ++d) {
            if (static_cast<int64_t>(d) == dim)
                continue;
            const size_t od = family == Family::Select && static_cast<int64_t>(d) > dim ? d - 1 : d;
            rules.push_back({std::vector<Placement>(c.outShapes.size(), S(od)), {S(d)}});
        }
        rules.push_back(
            {std::vector<Placement>(c.outShapes.size(), Placement::partial()), {Placement::partial()}});
        break;
    }
    case Family::Cat: {
        const int64_t dim = normDim(intArg(n, 1, "dim", 0), outRank);
        for (size_t d = 0; d < outRank; ++d) {
            if (static_cast<int64_t>(d) == dim)
                continue;
            Rule1D r{{S(d)}, {}};
            for (const Shape& s : c.inShapes)
                r.ins.push_back(s.size() == outRank ? S(d) : R);
            rules.push_back(std::move(r));
        }
        rules.push_back(
            {{Placement::partial()}, std::vector<Placement>(c.inShapes.size(), Placement::partial())});
        break;
    }
    case Family::Factory:
        if (n.target.op != "scalar_tensor")
            for (size_t d = 0; d < outRank; ++d)
                rules.push_back({{S(d)}, {}});
        break;
    case Family::Convolution:
        if (inRank > 0)
            batchRule(c, 0, c.inShapes[0][0], false, rules);
        break;
    case Family::ConvolutionBackward:
        // convolution_backward(grad_out, input, weight, ...) -> (grad_input, grad_weight, grad_bias)
        if (c.inShapes.size() >= 2 && !c.inShapes[1].empty()) {
            Rule1D r;
            r.ins = std::vector<Placement>(c.inShapes.size(), R);
            r.ins[0] = S(0);
            r.ins[1] = S(0);
            r.outs = {S(0), Placement::partial(), Placement::partial()};
            r.outs.resize(c.outShapes.size(), R);
            for (size_t i = 0; i < r.outs.size(); ++i)
                if (!c.outKnown[i])
                    r.outs[i] = R;
            rules.push_back(std::move(r));
        }
        break;
    case Family::Pool:
        if (inRank >= 3) {
            batchRule(c, 0, c.inShapes[0][0], false, rules);
            batchRule(c, 1, c.inShapes[0][1], false, rules);
        }
        break;
    case Family::Triangular: {
        std::vector<bool> allowed(outRank, false);
        for (size_t d = 0; d + 2 < outRank; ++d)
            allowed[d] = true;
        independentDims(c, allowed, rules);
        break;
    }
    case Family::BatchLike:
    case Family::None:
        break;
    }
}

// Every placement of a tensor of rank `rank` on one mesh dimension, without Partial.
std::vector<Placement> plainPlacements(size_t rank) {
    std::vector<Placement> out{R};
    for (size_t d = 0; d < rank; ++d)
        out.push_back(S(d));
    return out;
}

bool divisible(const Shape& shape, const Placements& p, const DeviceMesh& mesh) {
    for (const Placement& pl : p)
        if (pl.isShard() && (pl.dim < 0 || static_cast<size_t>(pl.dim) >= shape.size()))
            return false;
    for (size_t d = 0; d < shape.size(); ++d) {
        const int64_t f = shardFactor(p, mesh.shape, static_cast<int32_t>(d));
        if (f > 1 && shape[d] % f != 0)
            return false;
    }
    return true;
}

// The cartesian product over mesh dimensions of 1-D rules, less uneven shards, deduplicated: the distinct
// rules of the node's arity are taken first, so their products are distinct (and in the order the first
// copy of each had), with no key to build per product (a 4-D mesh has up to 1,296 per node).
std::vector<Strategy> combine(const std::vector<Rule1D>& given, const OpContext& c, const DeviceMesh& mesh) {
    std::vector<const Rule1D*> rules;
    for (const Rule1D& r : given)
        if (r.outs.size() == c.outShapes.size() && r.ins.size() == c.inShapes.size() &&
            std::none_of(rules.begin(), rules.end(),
                         [&](const Rule1D* q) { return q->outs == r.outs && q->ins == r.ins; }))
            rules.push_back(&r);
    std::vector<Strategy> out;
    if (rules.empty())
        return out;
    const size_t m = mesh.ndim();
    std::vector<size_t> pick(m, 0);
    while (true) {
        Strategy s;
        s.outputs.assign(c.outShapes.size(), Placements(m));
        s.inputs.assign(c.inShapes.size(), Placements(m));
        for (size_t k = 0; k < m; ++k) {
            const Rule1D& r = *rules[pick[k]];
            for (size_t i = 0; i < r.outs.size(); ++i)
                s.outputs[i][k] = r.outs[i];
            for (size_t i = 0; i < r.ins.size(); ++i)
                s.inputs[i][k] = r.ins[i];
        }
        bool ok = true;
        for (size_t i = 0; ok && i < s.outputs.size(); ++i)
            ok = !c.outKnown[i] || divisible(c.outShapes[i], s.outputs[i], mesh);
        for (size_t i = 0; ok && i < s.inputs.size(); ++i)
            ok = !c.inKnown[i] || divisible(c.inShapes[i], s.inputs[i], mesh);
        if (ok)
            out.push_back(std::move(s));
        size_t k = 0;
        while (k < m && ++pick[k] == rules.size())
            pick[k++] = 0;
        if (k == m)
            break;
    }
    return out;
}

// combine() once per distinct set of rules and shapes: the layers of a model repeat the same few nodes, and
// on a 4-D mesh each product is hundreds of strategies.
class CombinedStrategies {
public:
    StrategyList get(const std::vector<Rule1D>& rules, const OpContext& c, const DeviceMesh& mesh) {
        std::string key;
        for (const Rule1D& r : rules) {
            key += toString(r.outs) + ">" + toString(r.ins) + ";";
        }
        for (const auto& [shapes, known] :
             {std::pair{&c.inShapes, &c.inKnown}, std::pair{&c.outShapes, &c.outKnown}}) {
            key += "|";
            for (size_t i = 0; i < shapes->size(); ++i) {
                key += (*known)[i] ? "k" : "u";
                for (int64_t d : (*shapes)[i])
                    key += std::to_string(d) + "x";
                key += ",";
            }
        }
        auto [it, fresh] = cache_.try_emplace(std::move(key));
        if (fresh)
            it->second = std::make_shared<const std::vector<Strategy>>(combine(rules, c, mesh));
        return StrategyList(it->second);
    }

private:
    std::unordered_map<std::string, std::shared_ptr<const std::vector<Strategy>>> cache_;
};

Shape shapeOf(const TensorMeta& t) {
    Shape s;
    if (auto c = cost::concreteShape(t))
        for (uint64_t v : *c)
            s.push_back(static_cast<int64_t>(v));
    return s;
}

std::optional<Placements> jsonPlacements(const nlohmann::json& j) {
    if (j.is_string())
        return parsePlacements(j.get<std::string>());
    if (!j.is_array() || j.empty())
        return std::nullopt;
    Placements out;
    for (const nlohmann::json& e : j) {
        if (!e.is_string())
            return std::nullopt;
        std::optional<Placements> p = parsePlacements(e.get<std::string>());
        if (!p)
            return std::nullopt;
        out.insert(out.end(), p->begin(), p->end());
    }
    return out;
}

// in_placements / out_placements: one entry per tensor (a list), or a single entry for a single tensor.
std::optional<std::vector<Placements>> jsonPlacementList(const nlohmann::json& j) {
    if (std::optional<Placements> single = jsonPlacements(j))
        return std::vector<Placements>{*single};
    if (!j.is_array())
        return std::nullopt;
    std::vector<Placements> out;
    for (const nlohmann::json& e : j) {
        std::optional<Placements> p = jsonPlacements(e);
        if (!p)
            return std::nullopt;
        out.push_back(*p);
    }
    return out;
}

// Looks `depth` objects deep at most: the text comes from a graph file's node meta, nested as deep as it
// likes.
const nlohmann::json* findKey(const nlohmann::json& j, std::string_view key, int depth = 16) {
    if (j.is_object() && depth > 0) {
        for (auto it = j.begin(); it != j.end(); ++it)
            if (it.key() == key)
                return &it.value();
        for (auto it = j.begin(); it != j.end(); ++it)
            if (const nlohmann::json* found = findKey(it.value(), key, depth - 1))
                return found;
    }
    return nullptr;
}

} // namespace

std::optional<LocalMapPlacements> localMapPlacements(const Node& node) {
    for (const auto& [key, text] : node.meta.extra) {
        if (key.find("local_map") == std::string::npos && key != "custom")
            continue;
        const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded())
            continue;
        const nlohmann::json* out = findKey(j, "out_placements");
        if (!out)
            continue;
        LocalMapPlacements lm;
        if (std::optional<std::vector<Placements>> o = jsonPlacementList(*out))
            lm.outputs = *o;
        else
            continue;
        if (const nlohmann::json* in = findKey(j, "in_placements"))
            if (std::optional<std::vector<Placements>> i = jsonPlacementList(*in))
                lm.inputs = *i;
        const nlohmann::json* inGrad = findKey(j, "in_grad_placements");
        lm.inGradGiven = inGrad && !inGrad->is_null();
        return lm;
    }
    return std::nullopt;
}

std::string_view ruleFamily(const Target& target) {
    switch (familyOf(target)) {
    case Family::None:
        return {};
    case Family::Pointwise:
    case Family::LinearPointwise:
    case Family::ScalePointwise:
    case Family::Identity:
        return "pointwise";
    case Family::Mm:
    case Family::Addmm:
    case Family::Bmm:
    case Family::Baddbmm:
        return "matmul";
    case Family::Reduce:
        return "reduction";
    default:
        return "op";
    }
}

ShardingProblem buildStrategies(const Graph& graph, const DeviceMesh& mesh) {
    ShardingProblem problem;
    problem.mesh = mesh;
    problem.nodes.resize(graph.size());
    std::map<std::string, std::vector<std::string>> unknown;
    const size_t m = mesh.ndim();
    CombinedStrategies combined;
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& node = graph.node(id);
        NodeStrategies& ns = problem.nodes[id];
        const cost::OpTensors tensors = cost::gatherTensors(graph, id);
        OpContext c{node, {}, {}, {}, {}};
        node.forEachInput([&](NodeId in) {
            const TensorMeta* t = tensors.input(in);
            const Node& producer = graph.node(in);
            const bool tensorLike = (t && t->known()) || producer.outputKind == OutputKind::Tensor;
            if (!tensorLike)
                return;
            ns.inputs.push_back(in);
            ns.inputElement.push_back(0);
            c.inShapes.push_back(t ? shapeOf(*t) : Shape{});
            c.inKnown.push_back(t && t->known() && cost::concreteShape(*t).has_value());
        });
        for (const TensorMeta& t : tensors.outputs) {
            c.outShapes.push_back(shapeOf(t));
            c.outKnown.push_back(t.known());
        }
        if (node.op == NodeOp::Placeholder || node.op == NodeOp::GetAttr) {
            if (!node.tensor()) {
                ns.kind = RuleKind::Sink;
                continue;
            }
            ns.kind = RuleKind::Placeholder;
            std::vector<Rule1D> rules;
            for (const Placement& p : plainPlacements(c.outShapes[0].size()))
                rules.push_back({{p}, {}});
            ns.options = combined.get(rules, c, mesh);
            continue;
        }
        if (node.op == NodeOp::Output || node.outputKind == OutputKind::SymInt ||
            node.outputKind == OutputKind::SymFloat || node.outputKind == OutputKind::SymBool ||
            node.outputKind == OutputKind::None) {
            ns.kind = RuleKind::Sink;
            continue;
        }
        if (node.target.isGetItem() && node.args.size() >= 2 && node.args[0].kind() == ValueKind::NodeRef &&
            node.args[1].kind() == ValueKind::Int) {
            const NodeId src = node.args[0].asNode();
            const int64_t index = node.args[1].asInt();
            const NodeStrategies& producer = problem.nodes[src];
            ns.kind = RuleKind::GetItem;
            ns.inputs = {src};
            ns.inputElement = {static_cast<int32_t>(index)};
            std::set<std::string> seen;
            std::vector<Strategy> options;
            for (const Strategy& s : producer.options) {
                if (index < 0 || static_cast<size_t>(index) >= s.outputs.size())
                    continue;
                if (seen.insert(toString(s.outputs[index])).second)
                    options.push_back({{s.outputs[index]}, {s.outputs[index]}});
            }
            if (options.empty()) // a producer without rules: replicated
                options.push_back({{Placements(m, R)}, {Placements(m, R)}});
            ns.options = std::move(options);
            continue;
        }
        if (c.outShapes.empty()) { // a call with no tensor result we know of
            ns.kind = RuleKind::Sink;
            continue;
        }
        if (std::optional<LocalMapPlacements> lm = localMapPlacements(node);
            lm && lm->outputs.size() >= 1 && lm->outputs[0].size() == m) {
            // The region runs on local tensors with exactly these placements: its only strategy.
            Strategy s;
            s.outputs = lm->outputs;
            s.outputs.resize(c.outShapes.size(), lm->outputs.back());
            s.inputs = lm->inputs;
            if (s.inputs.size() != c.inShapes.size()) {
                problem.warnings.push_back(node.name + ": local_map in_placements has " +
                                           std::to_string(lm->inputs.size()) + " entries for " +
                                           std::to_string(c.inShapes.size()) +
                                           " tensor inputs; inputs replicated");
                s.inputs.assign(c.inShapes.size(), Placements(m, R));
            }
            if (lm->inGradGiven)
                problem.warnings.push_back(
                    node.name + ": local_map in_grad_placements is not applied: as in autoparallel, "
                                "the solver places the gradients (--pin fixes one)");
            ns.kind = RuleKind::Rule;
            ns.options = std::vector<Strategy>{std::move(s)};
            continue;
        }
        const Family family = familyOf(node.target);
        std::vector<Rule1D> rules{replicated(c)};
        opRules(c, family, rules);
        ns.kind = family == Family::None ? RuleKind::Unknown : RuleKind::Rule;
        if (family == Family::None)
            unknown[node.target.text.empty() ? node.name : node.target.text].push_back(node.name);
        ns.options = combined.get(rules, c, mesh);
        if (ns.options.empty()) {
            Strategy s;
            s.outputs.assign(c.outShapes.size(), Placements(m, R));
            s.inputs.assign(c.inShapes.size(), Placements(m, R));
            ns.options = std::vector<Strategy>{std::move(s)};
        }
    }
    for (const auto& [op, nodes] : unknown) {
        std::string w = "no sharding rule for " + op + ": replicated (" + std::to_string(nodes.size()) +
                        " node" + (nodes.size() == 1 ? "" : "s") + ": ";
        for (size_t i = 0; i < nodes.size() && i < 3; ++i)
            w += (i ? ", " : "") + nodes[i];
        if (nodes.size() > 3)
            w += ", ...";
        problem.warnings.push_back(w + ")");
    }
    return problem;
}

} // namespace jointscope::sharding
