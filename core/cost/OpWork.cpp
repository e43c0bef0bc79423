#include "cost/OpWork.h"

#include "cost/RuntimeEstimator.h"
#include "support/EnumNames.h"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

namespace jointscope::cost {

std::string_view opClassName(OpClass c) {
    static constexpr EnumName<OpClass> kNames[] = {
        {OpClass::Free, "free"},
        {OpClass::Matmul, "matmul"},
        {OpClass::Convolution, "convolution"},
        {OpClass::Attention, "attention"},
        {OpClass::Pointwise, "pointwise"},
        {OpClass::Reduction, "reduction"},
        {OpClass::Softmax, "softmax"},
        {OpClass::Normalization, "normalization"},
        {OpClass::Copy, "copy"},
        {OpClass::Gather, "gather"},
        {OpClass::Pool, "pool"},
        {OpClass::Loss, "loss"},
        {OpClass::Creation, "creation"},
        {OpClass::Unknown, "unknown"},
    };
    return nameOf(kNames, c, "unknown");
}

bool usesTensorCores(OpClass c) {
    return c == OpClass::Matmul || c == OpClass::Convolution || c == OpClass::Attention;
}

namespace {

// How an op's work is counted. `cost` in OpRule is the arithmetic per element for the per-element rules.
enum class Rule : uint8_t {
    View,            // free: a view or alias of its input
    Allocation,      // free: an uninitialised tensor, nothing written
    Reshape,         // a view when the input is contiguous, else a copy
    TorchFlops,      // countFlops (torch.utils.flop_counter)
    Pointwise,       // cost per output element; inputs broadcast
    PerInput,        // cost per element of the first tensor argument
    CopySource,      // copy(self, src): reads src only
    Creation,        // writes its output, reads nothing; cost per output element
    LayerNorm,       // (input, normalized_shape, weight, bias, eps)
    GroupNorm,       // (input, weight, bias, N, C, HxW, group, eps)
    BatchNorm,       // (input, weight, bias, running_mean, running_var, training, ...)
    BatchNormEval,   // _native_batch_norm_legit_no_training
    RmsNorm,         // _fused_rms_norm (input, normalized_shape, weight, eps)
    NormBackward,    // layer / batch / group norm backward: output_mask at OpRule::argIndex
    RmsNormBackward, // _fused_rms_norm_backward (grad_out, input, normalized_shape, rstd, weight, mask)
    Embedding,       // embedding (weight, indices, ...)
    GatherRows,      // index / index_select / gather: (self, ..., index): reads the gathered elements
    Accumulate,      // scatter_add / index_add / index_put: one add per element of OpRule::argIndex
    NllLoss,         // nll_loss_forward (self, target, weight, ...)
    NllLossBackward, // nll_loss_backward (grad_output, self, target, weight, reduction, ignore, total)
    Pool,            // pooling forward: output elements x kernel area
    PoolBackward,    // pooling backward (grad_output, self, kernel_size, ...): self only gives the shape
};

struct OpRule {
    std::string_view op;
    Rule rule;
    OpClass opClass;
    double cost = 0;     // arithmetic per element (per-element rules)
    size_t argIndex = 0; // NormBackward: output_mask; Accumulate: the accumulated tensor
};

constexpr OpClass kPointwise = OpClass::Pointwise;

// aten (and prims) ops by overload packet. Per-element costs count each arithmetic operation, comparison or
// transcendental function as 1 (docs/cost-model.md lists how the composite ones add up).
constexpr std::array kRules = {
    // Views and aliases: metadata only.
    OpRule{"view", Rule::View, OpClass::Free},
    OpRule{"_unsafe_view", Rule::View, OpClass::Free},
    OpRule{"_reshape_alias", Rule::View, OpClass::Free},
    OpRule{"expand", Rule::View, OpClass::Free},
    OpRule{"expand_as", Rule::View, OpClass::Free},
    OpRule{"permute", Rule::View, OpClass::Free},
    OpRule{"transpose", Rule::View, OpClass::Free},
    OpRule{"t", Rule::View, OpClass::Free},
    OpRule{"numpy_T", Rule::View, OpClass::Free},
    OpRule{"movedim", Rule::View, OpClass::Free},
    OpRule{"swapaxes", Rule::View, OpClass::Free},
    OpRule{"swapdims", Rule::View, OpClass::Free},
    OpRule{"squeeze", Rule::View, OpClass::Free},
    OpRule{"unsqueeze", Rule::View, OpClass::Free},
    OpRule{"split", Rule::View, OpClass::Free},
    OpRule{"split_with_sizes", Rule::View, OpClass::Free},
    OpRule{"tensor_split", Rule::View, OpClass::Free},
    OpRule{"chunk", Rule::View, OpClass::Free},
    OpRule{"unbind", Rule::View, OpClass::Free},
    OpRule{"slice", Rule::View, OpClass::Free},
    OpRule{"select", Rule::View, OpClass::Free},
    OpRule{"narrow", Rule::View, OpClass::Free},
    OpRule{"diagonal", Rule::View, OpClass::Free},
    OpRule{"unfold", Rule::View, OpClass::Free},
    OpRule{"unflatten", Rule::View, OpClass::Free},
    OpRule{"as_strided", Rule::View, OpClass::Free},
    OpRule{"view_as", Rule::View, OpClass::Free},
    OpRule{"view_as_real", Rule::View, OpClass::Free},
    OpRule{"view_as_complex", Rule::View, OpClass::Free},
    OpRule{"real", Rule::View, OpClass::Free},
    OpRule{"imag", Rule::View, OpClass::Free},
    OpRule{"_conj", Rule::View, OpClass::Free},
    OpRule{"_neg_view", Rule::View, OpClass::Free},
    OpRule{"alias", Rule::View, OpClass::Free},
    OpRule{"detach", Rule::View, OpClass::Free},
    OpRule{"lift_fresh", Rule::View, OpClass::Free},
    OpRule{"reshape", Rule::Reshape, OpClass::Copy},
    OpRule{"flatten", Rule::Reshape, OpClass::Copy},
    OpRule{"contiguous", Rule::Reshape, OpClass::Copy},
    OpRule{"empty", Rule::Allocation, OpClass::Free},
    OpRule{"empty_like", Rule::Allocation, OpClass::Free},
    OpRule{"empty_strided", Rule::Allocation, OpClass::Free},
    OpRule{"new_empty", Rule::Allocation, OpClass::Free},
    OpRule{"new_empty_strided", Rule::Allocation, OpClass::Free},

    // torch.utils.flop_counter's formulas.
    OpRule{"mm", Rule::TorchFlops, OpClass::Matmul},
    OpRule{"addmm", Rule::TorchFlops, OpClass::Matmul},
    OpRule{"_scaled_mm", Rule::TorchFlops, OpClass::Matmul},
    OpRule{"bmm", Rule::TorchFlops, OpClass::Matmul},
    OpRule{"baddbmm", Rule::TorchFlops, OpClass::Matmul},
    OpRule{"einsum", Rule::TorchFlops, OpClass::Matmul},
    OpRule{"convolution", Rule::TorchFlops, OpClass::Convolution},
    OpRule{"_convolution", Rule::TorchFlops, OpClass::Convolution},
    OpRule{"convolution_backward", Rule::TorchFlops, OpClass::Convolution},
    OpRule{"_scaled_dot_product_efficient_attention", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_scaled_dot_product_flash_attention", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_scaled_dot_product_cudnn_attention", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_scaled_dot_product_flash_attention_for_cpu", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_scaled_dot_product_flash_attention_for_cpu_backward", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_scaled_dot_product_efficient_attention_backward", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_scaled_dot_product_flash_attention_backward", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_scaled_dot_product_cudnn_attention_backward", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_flash_attention_forward", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_efficient_attention_forward", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_flash_attention_backward", Rule::TorchFlops, OpClass::Attention},
    OpRule{"_efficient_attention_backward", Rule::TorchFlops, OpClass::Attention},

    // Pointwise: one operation per element.
    OpRule{"add", Rule::Pointwise, kPointwise, 1},
    OpRule{"sub", Rule::Pointwise, kPointwise, 1},
    OpRule{"rsub", Rule::Pointwise, kPointwise, 1},
    OpRule{"mul", Rule::Pointwise, kPointwise, 1},
    OpRule{"div", Rule::Pointwise, kPointwise, 1},
    OpRule{"true_divide", Rule::Pointwise, kPointwise, 1},
    OpRule{"floor_divide", Rule::Pointwise, kPointwise, 1},
    OpRule{"remainder", Rule::Pointwise, kPointwise, 1},
    OpRule{"fmod", Rule::Pointwise, kPointwise, 1},
    OpRule{"neg", Rule::Pointwise, kPointwise, 1},
    OpRule{"abs", Rule::Pointwise, kPointwise, 1},
    OpRule{"sign", Rule::Pointwise, kPointwise, 1},
    OpRule{"reciprocal", Rule::Pointwise, kPointwise, 1},
    OpRule{"square", Rule::Pointwise, kPointwise, 1},
    OpRule{"pow", Rule::Pointwise, kPointwise, 1},
    OpRule{"sqrt", Rule::Pointwise, kPointwise, 1},
    OpRule{"rsqrt", Rule::Pointwise, kPointwise, 1},
    OpRule{"exp", Rule::Pointwise, kPointwise, 1},
    OpRule{"exp2", Rule::Pointwise, kPointwise, 1},
    OpRule{"expm1", Rule::Pointwise, kPointwise, 1},
    OpRule{"log", Rule::Pointwise, kPointwise, 1},
    OpRule{"log2", Rule::Pointwise, kPointwise, 1},
    OpRule{"log10", Rule::Pointwise, kPointwise, 1},
    OpRule{"log1p", Rule::Pointwise, kPointwise, 1},
    OpRule{"sin", Rule::Pointwise, kPointwise, 1},
    OpRule{"cos", Rule::Pointwise, kPointwise, 1},
    OpRule{"tan", Rule::Pointwise, kPointwise, 1},
    OpRule{"tanh", Rule::Pointwise, kPointwise, 1},
    OpRule{"atan", Rule::Pointwise, kPointwise, 1},
    OpRule{"atan2", Rule::Pointwise, kPointwise, 1},
    OpRule{"erf", Rule::Pointwise, kPointwise, 1},
    OpRule{"erfc", Rule::Pointwise, kPointwise, 1},
    OpRule{"erfinv", Rule::Pointwise, kPointwise, 1},
    OpRule{"floor", Rule::Pointwise, kPointwise, 1},
    OpRule{"ceil", Rule::Pointwise, kPointwise, 1},
    OpRule{"round", Rule::Pointwise, kPointwise, 1},
    OpRule{"trunc", Rule::Pointwise, kPointwise, 1},
    OpRule{"frac", Rule::Pointwise, kPointwise, 1},
    OpRule{"maximum", Rule::Pointwise, kPointwise, 1},
    OpRule{"minimum", Rule::Pointwise, kPointwise, 1},
    OpRule{"clamp", Rule::Pointwise, kPointwise, 1},
    OpRule{"clamp_min", Rule::Pointwise, kPointwise, 1},
    OpRule{"clamp_max", Rule::Pointwise, kPointwise, 1},
    OpRule{"where", Rule::Pointwise, kPointwise, 1},
    OpRule{"masked_fill", Rule::Pointwise, kPointwise, 1},
    OpRule{"eq", Rule::Pointwise, kPointwise, 1},
    OpRule{"ne", Rule::Pointwise, kPointwise, 1},
    OpRule{"lt", Rule::Pointwise, kPointwise, 1},
    OpRule{"le", Rule::Pointwise, kPointwise, 1},
    OpRule{"gt", Rule::Pointwise, kPointwise, 1},
    OpRule{"ge", Rule::Pointwise, kPointwise, 1},
    OpRule{"logical_not", Rule::Pointwise, kPointwise, 1},
    OpRule{"logical_and", Rule::Pointwise, kPointwise, 1},
    OpRule{"logical_or", Rule::Pointwise, kPointwise, 1},
    OpRule{"logical_xor", Rule::Pointwise, kPointwise, 1},
    OpRule{"bitwise_not", Rule::Pointwise, kPointwise, 1},
    OpRule{"bitwise_and", Rule::Pointwise, kPointwise, 1},
    OpRule{"bitwise_or", Rule::Pointwise, kPointwise, 1},
    OpRule{"bitwise_xor", Rule::Pointwise, kPointwise, 1},
    OpRule{"isnan", Rule::Pointwise, kPointwise, 1},
    OpRule{"isinf", Rule::Pointwise, kPointwise, 1},
    OpRule{"nan_to_num", Rule::Pointwise, kPointwise, 1},
    OpRule{"relu", Rule::Pointwise, kPointwise, 1},
    OpRule{"threshold", Rule::Pointwise, kPointwise, 1},
    OpRule{"threshold_backward", Rule::Pointwise, kPointwise, 1},
    OpRule{"hardtanh", Rule::Pointwise, kPointwise, 1},
    // Composite pointwise ops: the operations of their definition.
    OpRule{"addcmul", Rule::Pointwise, kPointwise, 3},           // self + value * t1 * t2
    OpRule{"addcdiv", Rule::Pointwise, kPointwise, 3},           // self + value * t1 / t2
    OpRule{"lerp", Rule::Pointwise, kPointwise, 3},              // self + w * (end - self)
    OpRule{"hardtanh_backward", Rule::Pointwise, kPointwise, 2}, // two comparisons, select
    OpRule{"leaky_relu", Rule::Pointwise, kPointwise, 2},
    OpRule{"leaky_relu_backward", Rule::Pointwise, kPointwise, 2},
    OpRule{"sigmoid", Rule::Pointwise, kPointwise, 4},          // 1 / (1 + exp(-x))
    OpRule{"sigmoid_backward", Rule::Pointwise, kPointwise, 3}, // g * y * (1 - y)
    OpRule{"tanh_backward", Rule::Pointwise, kPointwise, 3},    // g * (1 - y * y)
    OpRule{"softplus", Rule::Pointwise, kPointwise, 2},         // log1p(exp(x))
    OpRule{"silu", Rule::Pointwise, kPointwise, 5},             // x * sigmoid(x)
    OpRule{"silu_backward", Rule::Pointwise, kPointwise, 9},    // sigmoid, g * s * (1 + x * (1 - s))
    OpRule{"gelu", Rule::Pointwise, kPointwise, 5},             // erf form; tanh form: see geluCost
    OpRule{"gelu_backward", Rule::Pointwise, kPointwise, 11},
    OpRule{"native_dropout", Rule::Pointwise, kPointwise, 2},          // draw, scale by the mask
    OpRule{"native_dropout_backward", Rule::Pointwise, kPointwise, 2}, // g * mask * scale
    OpRule{"bernoulli", Rule::Pointwise, kPointwise, 1},

    // Copies: bytes, no arithmetic.
    OpRule{"clone", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"_to_copy", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"convert_element_type", Rule::Pointwise, OpClass::Copy, 0}, // prims
    OpRule{"lift_fresh_copy", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"_copy_from", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"copy", Rule::CopySource, OpClass::Copy, 0},
    OpRule{"copy_", Rule::CopySource, OpClass::Copy, 0},
    OpRule{"cat", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"stack", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"constant_pad_nd", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"repeat", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"flip", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"roll", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"tril", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"triu", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"slice_scatter", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"select_scatter", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"diagonal_scatter", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"as_strided_scatter", Rule::Pointwise, OpClass::Copy, 0},
    OpRule{"scatter", Rule::Pointwise, OpClass::Copy, 0},

    // Creation: writes only.
    OpRule{"full", Rule::Creation, OpClass::Creation, 0},
    OpRule{"full_like", Rule::Creation, OpClass::Creation, 0},
    OpRule{"zeros", Rule::Creation, OpClass::Creation, 0},
    OpRule{"zeros_like", Rule::Creation, OpClass::Creation, 0},
    OpRule{"ones", Rule::Creation, OpClass::Creation, 0},
    OpRule{"ones_like", Rule::Creation, OpClass::Creation, 0},
    OpRule{"new_zeros", Rule::Creation, OpClass::Creation, 0},
    OpRule{"new_ones", Rule::Creation, OpClass::Creation, 0},
    OpRule{"new_full", Rule::Creation, OpClass::Creation, 0},
    OpRule{"fill", Rule::Creation, OpClass::Creation, 0},
    OpRule{"scalar_tensor", Rule::Creation, OpClass::Creation, 0},
    OpRule{"arange", Rule::Creation, OpClass::Creation, 1},
    OpRule{"iota", Rule::Creation, OpClass::Creation, 1}, // prims
    OpRule{"rand", Rule::Creation, OpClass::Creation, 1},
    OpRule{"rand_like", Rule::Creation, OpClass::Creation, 1},
    OpRule{"randn", Rule::Creation, OpClass::Creation, 1},
    OpRule{"randn_like", Rule::Creation, OpClass::Creation, 1},
    OpRule{"randint", Rule::Creation, OpClass::Creation, 1},
    OpRule{"randint_like", Rule::Creation, OpClass::Creation, 1},

    // Reductions: per input element.
    OpRule{"sum", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"nansum", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"mean", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"prod", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"amax", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"amin", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"max", Rule::PerInput, OpClass::Reduction, 1}, // max.other is pointwise: see ruleFor
    OpRule{"min", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"argmax", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"argmin", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"any", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"all", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"cumsum", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"cumprod", Rule::PerInput, OpClass::Reduction, 1},
    OpRule{"var", Rule::PerInput, OpClass::Reduction, 3}, // mean, then (x - mean)^2 accumulated
    OpRule{"std", Rule::PerInput, OpClass::Reduction, 3},
    OpRule{"var_mean", Rule::PerInput, OpClass::Reduction, 3},
    OpRule{"std_mean", Rule::PerInput, OpClass::Reduction, 3},
    OpRule{"logsumexp", Rule::PerInput, OpClass::Reduction, 3}, // max, exp(x - max), sum
    OpRule{"linalg_vector_norm", Rule::PerInput, OpClass::Reduction, 2},
    OpRule{"norm", Rule::PerInput, OpClass::Reduction, 2},

    // Softmax: max, subtract, exp, sum, divide (log_softmax: subtract the log-sum instead).
    OpRule{"_softmax", Rule::PerInput, OpClass::Softmax, 5},
    OpRule{"softmax", Rule::PerInput, OpClass::Softmax, 5},
    OpRule{"_safe_softmax", Rule::PerInput, OpClass::Softmax, 5},
    OpRule{"_log_softmax", Rule::PerInput, OpClass::Softmax, 5},
    OpRule{"log_softmax", Rule::PerInput, OpClass::Softmax, 5},
    // y * (g - sum(g * y)) and g - exp(y) * sum(g): multiply, sum, subtract, multiply.
    OpRule{"_softmax_backward_data", Rule::PerInput, OpClass::Softmax, 4},
    OpRule{"_log_softmax_backward_data", Rule::PerInput, OpClass::Softmax, 4},

    // Normalization.
    OpRule{"native_layer_norm", Rule::LayerNorm, OpClass::Normalization},
    OpRule{"native_group_norm", Rule::GroupNorm, OpClass::Normalization},
    OpRule{"native_batch_norm", Rule::BatchNorm, OpClass::Normalization},
    OpRule{"_native_batch_norm_legit", Rule::BatchNorm, OpClass::Normalization},
    OpRule{"_native_batch_norm_legit_functional", Rule::BatchNorm, OpClass::Normalization},
    OpRule{"_native_batch_norm_legit_no_training", Rule::BatchNormEval, OpClass::Normalization},
    OpRule{"_fused_rms_norm", Rule::RmsNorm, OpClass::Normalization},
    OpRule{"native_layer_norm_backward", Rule::NormBackward, OpClass::Normalization, 0, 7},
    OpRule{"native_batch_norm_backward", Rule::NormBackward, OpClass::Normalization, 0, 9},
    OpRule{"native_group_norm_backward", Rule::NormBackward, OpClass::Normalization, 0, 9},
    OpRule{"_fused_rms_norm_backward", Rule::RmsNormBackward, OpClass::Normalization, 0, 5},

    // Gathers and scatters.
    OpRule{"embedding", Rule::Embedding, OpClass::Gather},
    OpRule{"embedding_dense_backward", Rule::Accumulate, OpClass::Gather, 1, 0}, // grad_output rows
    OpRule{"index", Rule::GatherRows, OpClass::Gather},
    OpRule{"index_select", Rule::GatherRows, OpClass::Gather},
    OpRule{"gather", Rule::GatherRows, OpClass::Gather},
    OpRule{"index_put", Rule::Accumulate, OpClass::Gather, 1, 2},  // values
    OpRule{"index_put_", Rule::Accumulate, OpClass::Gather, 1, 2}, // values
    OpRule{"_unsafe_index_put", Rule::Accumulate, OpClass::Gather, 1, 2},
    OpRule{"index_add", Rule::Accumulate, OpClass::Gather, 1, 3},      // source
    OpRule{"scatter_add", Rule::Accumulate, OpClass::Gather, 1, 3},    // src
    OpRule{"scatter_reduce", Rule::Accumulate, OpClass::Gather, 1, 3}, // src

    // Losses.
    OpRule{"nll_loss_forward", Rule::NllLoss, OpClass::Loss},
    OpRule{"nll_loss2d_forward", Rule::NllLoss, OpClass::Loss},
    OpRule{"nll_loss_backward", Rule::NllLossBackward, OpClass::Loss},
    OpRule{"nll_loss2d_backward", Rule::NllLossBackward, OpClass::Loss},

    // Pooling.
    OpRule{"max_pool2d_with_indices", Rule::Pool, OpClass::Pool, 1},
    OpRule{"max_pool2d", Rule::Pool, OpClass::Pool, 1},
    OpRule{"avg_pool2d", Rule::Pool, OpClass::Pool, 1},
    OpRule{"max_pool2d_with_indices_backward", Rule::PoolBackward, OpClass::Pool, 1},
    OpRule{"avg_pool2d_backward", Rule::PoolBackward, OpClass::Pool, 1},
    OpRule{"_adaptive_avg_pool2d", Rule::PerInput, OpClass::Pool, 1},
    OpRule{"_adaptive_avg_pool2d_backward", Rule::PoolBackward, OpClass::Pool, 1},
};

const OpRule* findRule(std::string_view op) {
    for (const OpRule& rule : kRules)
        if (rule.op == op)
            return &rule;
    return nullptr;
}

// Overloads whose work differs from their packet's.
const OpRule* ruleFor(const Node& node) {
    const Target& t = node.target;
    if (node.op != NodeOp::CallFunction || (t.ns != "aten" && t.ns != "prims"))
        return nullptr;
    static constexpr OpRule kBinaryMax{"max", Rule::Pointwise, kPointwise, 1};
    static constexpr OpRule kBinaryMin{"min", Rule::Pointwise, kPointwise, 1};
    if (t.overload == "other")
        return t.op == "max" ? &kBinaryMax : t.op == "min" ? &kBinaryMin : findRule(t.op);
    return findRule(t.op);
}

using Shape = std::vector<uint64_t>;

double product(const Shape& shape) {
    double p = 1;
    for (uint64_t s : shape)
        p *= double(s);
    return p;
}

// Bytes of a tensor as read from memory (broadcast dimensions once).
double readBytes(const TensorMeta& t) {
    return double(storedElements(t)) * itemSize(t.dtype);
}

double writtenBytes(const TensorMeta& t) {
    return double(numel(t)) * itemSize(t.dtype);
}

bool isKnown(const TensorMeta& t) {
    return t.known() || !t.sizes.empty();
}

// Row-major contiguous (size-1 dimensions may have any stride); symbolic strides are taken as contiguous.
bool isContiguous(const TensorMeta& t) {
    if (t.strides.size() != t.sizes.size())
        return true;
    uint64_t expected = 1;
    for (size_t i = t.sizes.size(); i-- > 0;) {
        const uint64_t size = concreteSize(t.sizes[i]);
        if (size == 1 || t.strides[i].isSymbolic())
            continue;
        if (t.strides[i].value != static_cast<int64_t>(expected))
            return false;
        expected *= size;
    }
    return true;
}

// Evaluates the work of one node against its tensors.
class Counter {
public:
    Counter(const Node& node, const OpTensors& tensors) : node_(node), tensors_(tensors) {}

    OpWork run();

private:
    const Value* arg(size_t index, std::string_view name = "") const {
        return argumentOf(node_, index, name);
    }
    // The tensors an argument refers to (one, or a list's), each once across calls.
    std::vector<const TensorMeta*> argTensors(size_t index, std::string_view name = "") const;
    const TensorMeta* argTensor(size_t index, std::string_view name = "") const {
        std::vector<const TensorMeta*> ts = argTensors(index, name);
        return ts.empty() ? nullptr : ts.front();
    }
    bool present(size_t index, std::string_view name = "") const {
        const Value* v = arg(index, name);
        return v != nullptr && !v->isNone();
    }
    bool boolArg(size_t index, bool otherwise) const {
        const Value* v = arg(index);
        return v != nullptr && v->kind() == ValueKind::Bool ? v->asBool() : otherwise;
    }
    // Element i of a list of bools (output masks); true when absent.
    bool maskBit(size_t index, size_t i) const {
        const Value* v = arg(index);
        if (v == nullptr || !v->isSequence() || i >= v->items().size())
            return true;
        return v->items()[i].kind() != ValueKind::Bool || v->items()[i].asBool();
    }
    double kernelArea(size_t index) const;

    const TensorMeta* firstInput() const;
    double firstInputElements() const;
    double outputElements() const;
    double broadcastElements() const;

    // Byte accounting.
    void readAllInputs();
    void readArgs(std::initializer_list<size_t> indices);
    void writeOutputs();
    void markFree(std::string reason) {
        work_.free = true;
        work_.freeReason = std::move(reason);
        work_.opClass = OpClass::Free;
    }

    void normalization(double perElement, double affine);
    void normBackward(size_t maskIndex, double xHat, double gradInput, double gradWeight, double gradBias);

    const Node& node_;
    const OpTensors& tensors_;
    OpWork work_;
};

std::vector<const TensorMeta*> Counter::argTensors(size_t index, std::string_view name) const {
    std::vector<const TensorMeta*> out;
    if (const Value* v = arg(index, name))
        v->forEachNode([&](NodeId id) {
            if (const TensorMeta* t = tensors_.input(id);
                t && std::find(out.begin(), out.end(), t) == out.end())
                out.push_back(t);
        });
    return out;
}

double Counter::kernelArea(size_t index) const {
    const Value* v = arg(index);
    if (v == nullptr)
        return 1;
    if (v->kind() == ValueKind::Int)
        return double(std::max<int64_t>(v->asInt(), 1)) * double(std::max<int64_t>(v->asInt(), 1));
    if (!v->isSequence() || v->items().empty())
        return 1;
    const std::vector<Value>& items = v->items();
    auto size = [&](size_t i) {
        const Value& item = items[std::min(i, items.size() - 1)];
        return item.kind() == ValueKind::Int ? double(std::max<int64_t>(item.asInt(), 1)) : 1.0;
    };
    return size(0) * size(1); // a single size applies to both spatial dimensions
}

const TensorMeta* Counter::firstInput() const {
    for (const Value& v : node_.args) {
        const TensorMeta* found = nullptr;
        v.forEachNode([&](NodeId id) {
            if (found == nullptr)
                found = tensors_.input(id);
        });
        if (found != nullptr)
            return found;
    }
    return nullptr;
}

double Counter::firstInputElements() const {
    const TensorMeta* t = firstInput();
    if (t == nullptr || !isKnown(*t))
        return 0;
    return double(numel(*t));
}

double Counter::outputElements() const {
    if (tensors_.outputs.empty() || !isKnown(tensors_.outputs[0]))
        return 0;
    return double(numel(tensors_.outputs[0]));
}

// The output's element count, else the broadcast of the inputs' shapes (right-aligned, size-1 dims stretch).
double Counter::broadcastElements() const {
    if (!tensors_.outputs.empty() && isKnown(tensors_.outputs[0]))
        return double(numel(tensors_.outputs[0]));
    Shape shape;
    for (const auto& [id, t] : tensors_.inputs) {
        const std::optional<Shape> s = concreteShape(t);
        if (!s)
            continue;
        if (s->size() > shape.size())
            shape.insert(shape.begin(), s->size() - shape.size(), 1);
        const size_t offset = shape.size() - s->size();
        for (size_t i = 0; i < s->size(); ++i)
            if ((*s)[i] != 1)
                shape[offset + i] = (*s)[i];
    }
    return tensors_.inputs.empty() ? 0 : product(shape);
}

void Counter::readAllInputs() {
    for (const auto& [id, t] : tensors_.inputs)
        work_.bytesRead += readBytes(t);
}

void Counter::readArgs(std::initializer_list<size_t> indices) {
    std::vector<const TensorMeta*> seen;
    for (size_t index : indices)
        for (const TensorMeta* t : argTensors(index))
            if (std::find(seen.begin(), seen.end(), t) == seen.end()) {
                seen.push_back(t);
                work_.bytesRead += readBytes(*t);
            }
}

void Counter::writeOutputs() {
    for (const TensorMeta& t : tensors_.outputs)
        work_.bytesWritten += writtenBytes(t);
}

// Forward normalizations: statistics and normalization per element, plus one operation per affine parameter.
void Counter::normalization(double perElement, double affine) {
    work_.flops = firstInputElements() * (perElement + affine);
    readAllInputs();
    writeOutputs();
}

// Backward of a normalization: x-hat is recomputed once when any gradient needs it, then each requested
// gradient adds its operations per element of the input.
void Counter::normBackward(size_t maskIndex, double xHat, double gradInput, double gradWeight,
                           double gradBias) {
    const bool in = maskBit(maskIndex, 0), weight = maskBit(maskIndex, 1), bias = maskBit(maskIndex, 2);
    double perElement = (in || weight ? xHat : 0) + (in ? gradInput : 0) + (weight ? gradWeight : 0);
    perElement += bias ? gradBias : 0;
    const TensorMeta* input = argTensor(1);
    work_.flops = (input ? double(numel(*input)) : 0) * perElement;
    readAllInputs();
    writeOutputs();
}

OpWork Counter::run() {
    switch (node_.op) {
    case NodeOp::Placeholder:
        markFree("placeholder");
        return work_;
    case NodeOp::Output:
        markFree("output");
        return work_;
    case NodeOp::GetAttr:
        markFree("get_attr");
        return work_;
    case NodeOp::CallMethod:
    case NodeOp::CallModule:
    case NodeOp::CallFunction:
        break;
    }
    const Target& target = node_.target;
    if (target.isGetItem()) {
        markFree("getitem");
        return work_;
    }
    if (node_.outputKind == OutputKind::SymInt || node_.outputKind == OutputKind::SymFloat ||
        node_.outputKind == OutputKind::SymBool || target.op.starts_with("sym_") ||
        (target.kind == TargetKind::Operator && node_.outputKind != OutputKind::Tensor)) {
        markFree("symbolic");
        return work_;
    }
    if (target.ns == "aten" && target.op.starts_with("_assert")) {
        markFree("assertion");
        return work_;
    }

    for (const auto& [id, t] : tensors_.inputs)
        if (work_.dtype == DType::Undefined && isFloatingPoint(t.dtype))
            work_.dtype = t.dtype;
    for (const TensorMeta& t : tensors_.outputs)
        if (work_.dtype == DType::Undefined && t.known())
            work_.dtype = t.dtype;
    for (const auto& [id, t] : tensors_.inputs)
        work_.incomplete = work_.incomplete || !t.known();
    work_.incomplete = work_.incomplete || std::none_of(tensors_.outputs.begin(), tensors_.outputs.end(),
                                                        [](const TensorMeta& t) { return t.known(); });

    const OpRule* rule = ruleFor(node_);
    if (rule == nullptr) {
        work_.unknown = true;
        work_.opClass = OpClass::Unknown;
        readAllInputs();
        writeOutputs();
        return work_;
    }
    work_.opClass = rule->opClass;
    switch (rule->rule) {
    case Rule::View:
        markFree("view");
        return work_;
    case Rule::Allocation:
        markFree("allocation");
        return work_;
    case Rule::Reshape: {
        const TensorMeta* input = argTensor(0);
        if (input == nullptr || isContiguous(*input)) {
            markFree("view");
            return work_;
        }
        readAllInputs(); // a non-contiguous input is copied
        writeOutputs();
        break;
    }
    case Rule::TorchFlops:
        work_.flops = double(countFlops(node_, tensors_));
        readAllInputs();
        writeOutputs();
        break;
    case Rule::Pointwise: {
        double cost = rule->cost;
        if (target.op == "gelu" || target.op == "gelu_backward") {
            const Value* approximate = arg(target.op == "gelu" ? 1 : 2, "approximate");
            if (approximate != nullptr && approximate->kind() == ValueKind::String &&
                approximate->text() == "tanh")
                cost = target.op == "gelu" ? 9 : 18;
        }
        work_.flops = broadcastElements() * cost;
        readAllInputs();
        writeOutputs();
        break;
    }
    case Rule::PerInput:
        work_.flops = firstInputElements() * rule->cost;
        readAllInputs();
        writeOutputs();
        break;
    case Rule::CopySource:
        readArgs({1});
        writeOutputs();
        break;
    case Rule::Creation:
        work_.flops = outputElements() * rule->cost;
        writeOutputs();
        break;
    case Rule::LayerNorm:
        normalization(5, double(present(2, "weight")) + double(present(3, "bias")));
        break;
    case Rule::GroupNorm:
        normalization(5, double(present(1, "weight")) + double(present(2, "bias")));
        break;
    case Rule::BatchNorm: {
        // Statistics only in training; _native_batch_norm_legit.no_stats has no running stats, so
        // `training` moves from argument 5 to 3.
        const bool training = boolArg(target.overload == "no_stats" ? 3 : 5, true);
        normalization(training ? 5 : 2, double(present(1, "weight")) + double(present(2, "bias")));
        break;
    }
    case Rule::BatchNormEval:
        normalization(2, double(present(1, "weight")) + double(present(2, "bias")));
        break;
    case Rule::RmsNorm:
        normalization(3, double(present(2, "weight")));
        break;
    case Rule::NormBackward:
        normBackward(rule->argIndex, 2, 6, 2, 1);
        break;
    case Rule::RmsNormBackward:
        normBackward(rule->argIndex, 1, 4, 2, 0);
        break;
    case Rule::Embedding: {
        // Reads the indices and the gathered rows, not the whole table.
        const TensorMeta* weight = argTensor(0, "weight");
        readArgs({1});
        work_.bytesRead += outputElements() * (weight ? itemSize(weight->dtype) : 0);
        writeOutputs();
        break;
    }
    case Rule::GatherRows: {
        // index(self, indices), index_select(self, dim, index), gather(self, dim, index): the index tensors
        // and the gathered elements of self.
        const TensorMeta* self = argTensor(0, "self");
        readArgs({1, 2});
        work_.bytesRead += outputElements() * (self ? itemSize(self->dtype) : 0);
        writeOutputs();
        break;
    }
    case Rule::Accumulate: {
        const TensorMeta* accumulated = argTensor(rule->argIndex);
        const bool adds = target.op.starts_with("index_put") || target.op == "_unsafe_index_put"
                              ? boolArg(3, false) // accumulate
                              : true;
        work_.flops = adds && accumulated ? double(numel(*accumulated)) * rule->cost : 0;
        if (!adds)
            work_.opClass = OpClass::Copy;
        readAllInputs();
        writeOutputs();
        break;
    }
    case Rule::NllLoss:
    case Rule::NllLossBackward: {
        // forward (self, target, weight, ...), backward (grad_output, self, target, weight, ...,
        // total_weight): one gathered log-probability per target (times its class weight).
        const bool backward = rule->rule == Rule::NllLossBackward;
        const size_t selfIndex = backward ? 1 : 0;
        const TensorMeta* self = argTensor(selfIndex);
        const TensorMeta* labels = argTensor(selfIndex + 1);
        const TensorMeta* weight = argTensor(selfIndex + 2);
        const double targets = labels ? double(numel(*labels)) : 0;
        work_.flops = targets * (weight ? 2 : 1);
        if (backward)
            readArgs({0, 2, 6});
        else
            readArgs({1});
        if (!backward && self)
            work_.bytesRead += targets * itemSize(self->dtype);
        if (weight)
            work_.bytesRead += targets * itemSize(weight->dtype);
        writeOutputs();
        break;
    }
    case Rule::Pool:
        // Every output element looks at kernel_size elements (argument 1).
        work_.flops = outputElements() * kernelArea(1) * rule->cost;
        readAllInputs();
        writeOutputs();
        break;
    case Rule::PoolBackward: {
        // self (argument 1) only gives the gradient's shape; max pooling scatters one add per grad_output
        // element, average pooling spreads each over its kernel.
        const TensorMeta* grad = argTensor(0);
        const double perElement = target.op.starts_with("avg_pool") ? kernelArea(2) : 1;
        work_.flops = (grad ? double(numel(*grad)) : 0) * perElement * rule->cost;
        const TensorMeta* self = argTensor(1);
        for (const auto& [id, t] : tensors_.inputs)
            if (&t != self)
                work_.bytesRead += readBytes(t);
        writeOutputs();
        break;
    }
    }
    return work_;
}

} // namespace

OpWork opWork(const Node& node, const OpTensors& tensors) {
    return Counter(node, tensors).run();
}

OpWork opWork(const Graph& graph, NodeId id) {
    return opWork(graph.node(id), gatherTensors(graph, id));
}

} // namespace jointscope::cost
