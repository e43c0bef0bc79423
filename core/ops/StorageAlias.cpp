#include "ops/StorageAlias.h"

#include "ops/Ruleset.h"

#include <algorithm>
#include <array>

namespace jointscope {
namespace {

struct AliasEntry {
    std::string_view key;
    StorageAlias alias;
};

// Sorted by key. Views per the aten schemas' alias annotations (Tensor(a) -> Tensor(a)); reshape and friends
// alias only when ATen finds a view; to / type_as return self when nothing changes.
constexpr std::array kAliasOps = {
    AliasEntry{"_c10d_functional.wait_tensor", StorageAlias::Always}, // returns the collective's output
    AliasEntry{"aten._conj", StorageAlias::Always},
    AliasEntry{"aten._reshape_alias", StorageAlias::Always},
    AliasEntry{"aten._unsafe_view", StorageAlias::Always},
    AliasEntry{"aten.alias", StorageAlias::Always},
    AliasEntry{"aten.as_strided", StorageAlias::Always},
    AliasEntry{"aten.chunk", StorageAlias::Always},
    AliasEntry{"aten.contiguous", StorageAlias::IfViewable},
    AliasEntry{"aten.detach", StorageAlias::Always},
    AliasEntry{"aten.diagonal", StorageAlias::Always},
    AliasEntry{"aten.expand", StorageAlias::Always},
    AliasEntry{"aten.expand_as", StorageAlias::Always},
    AliasEntry{"aten.flatten", StorageAlias::IfViewable},
    AliasEntry{"aten.imag", StorageAlias::Always},
    AliasEntry{"aten.lift_fresh", StorageAlias::Always},
    AliasEntry{"aten.mT", StorageAlias::Always},
    AliasEntry{"aten.movedim", StorageAlias::Always},
    AliasEntry{"aten.narrow", StorageAlias::Always},
    AliasEntry{"aten.numpy_T", StorageAlias::Always},
    AliasEntry{"aten.permute", StorageAlias::Always},
    AliasEntry{"aten.real", StorageAlias::Always},
    AliasEntry{"aten.reshape", StorageAlias::IfViewable},
    AliasEntry{"aten.select", StorageAlias::Always},
    AliasEntry{"aten.slice", StorageAlias::Always},
    AliasEntry{"aten.split", StorageAlias::Always},
    AliasEntry{"aten.split_with_sizes", StorageAlias::Always},
    AliasEntry{"aten.squeeze", StorageAlias::Always},
    AliasEntry{"aten.swapaxes", StorageAlias::Always},
    AliasEntry{"aten.swapdims", StorageAlias::Always},
    AliasEntry{"aten.t", StorageAlias::Always},
    AliasEntry{"aten.tensor_split", StorageAlias::Always},
    AliasEntry{"aten.to", StorageAlias::IfSameDtype},
    AliasEntry{"aten.transpose", StorageAlias::Always},
    AliasEntry{"aten.type_as", StorageAlias::IfSameDtype},
    AliasEntry{"aten.unbind", StorageAlias::Always},
    AliasEntry{"aten.unflatten", StorageAlias::Always},
    AliasEntry{"aten.unfold", StorageAlias::Always},
    AliasEntry{"aten.unsafe_chunk", StorageAlias::Always},
    AliasEntry{"aten.unsafe_split", StorageAlias::Always},
    AliasEntry{"aten.unsafe_split_with_sizes", StorageAlias::Always},
    AliasEntry{"aten.unsqueeze", StorageAlias::Always},
    AliasEntry{"aten.view", StorageAlias::Always},
    AliasEntry{"aten.view_as", StorageAlias::Always},
    AliasEntry{"aten.view_as_complex", StorageAlias::Always},
    AliasEntry{"aten.view_as_real", StorageAlias::Always},
};

static_assert(std::is_sorted(kAliasOps.begin(), kAliasOps.end(),
                             [](const AliasEntry& a, const AliasEntry& b) { return a.key < b.key; }));

bool isInPlace(std::string_view key) {
    const size_t dot = key.rfind('.');
    const std::string_view op = dot == std::string_view::npos ? key : key.substr(dot + 1);
    return op.size() > 1 && op.back() == '_' && !op.ends_with("__");
}

int64_t dimValue(const SymInt& d) {
    return d.isSymbolic() ? (d.value > 0 ? d.value : -1) : d.value;
}

bool isContiguous(const TensorMeta& t) {
    if (t.strides.size() != t.sizes.size())
        return true;
    int64_t expected = 1;
    for (size_t i = t.sizes.size(); i-- > 0;) {
        const int64_t size = dimValue(t.sizes[i]);
        if (size == 1)
            continue;
        if (dimValue(t.strides[i]) != expected)
            return false;
        expected *= size;
    }
    return true;
}

} // namespace

StorageAlias storageAlias(std::string_view opKey) {
    const auto it = std::lower_bound(kAliasOps.begin(), kAliasOps.end(), opKey,
                                     [](const AliasEntry& e, std::string_view k) { return e.key < k; });
    if (it != kAliasOps.end() && it->key == opKey)
        return it->alias;
    return isInPlace(opKey) ? StorageAlias::Always : StorageAlias::None;
}

bool viewable(const TensorMeta& from, const std::vector<SymInt>& toSizes) {
    if (from.strides.size() != from.sizes.size() || from.sizes.empty())
        return true;
    int64_t numel = 1;
    for (const SymInt& d : from.sizes)
        numel *= dimValue(d);
    if (numel == 0)
        return true;
    // Old dimensions fall into chunks laid out contiguously in memory; the new sizes must tile each chunk.
    int64_t viewDim = int64_t(toSizes.size()) - 1;
    int64_t chunkBaseStride = dimValue(from.strides.back());
    int64_t chunkNumel = 1, viewNumel = 1;
    for (int64_t d = int64_t(from.sizes.size()) - 1; d >= 0; --d) {
        chunkNumel *= dimValue(from.sizes[d]);
        const bool chunkEnds = d == 0 || (dimValue(from.sizes[d - 1]) != 1 &&
                                          dimValue(from.strides[d - 1]) != chunkNumel * chunkBaseStride);
        if (!chunkEnds)
            continue;
        while (viewDim >= 0 && (viewNumel < chunkNumel || dimValue(toSizes[viewDim]) == 1)) {
            viewNumel *= dimValue(toSizes[viewDim]);
            --viewDim;
        }
        if (viewNumel != chunkNumel)
            return false;
        if (d > 0) {
            chunkBaseStride = dimValue(from.strides[d - 1]);
            chunkNumel = viewNumel = 1;
        }
    }
    return viewDim == -1;
}

bool keepsElementwiseLossStorage(std::string_view opKey) {
    static constexpr std::string_view kLosses[] = {"aten.binary_cross_entropy", "aten.mse_loss",
                                                   "aten.smooth_l1_loss", "aten.soft_margin_loss"};
    return std::find(std::begin(kLosses), std::end(kLosses), opKey) != std::end(kLosses);
}

bool sharesFirstArgumentStorage(const Node& node, const TensorMeta* input, const TensorMeta* output) {
    if (node.op != NodeOp::CallFunction || node.args.empty() || node.args[0].kind() != ValueKind::NodeRef)
        return false;
    const std::string key = opKey(node.target);
    switch (storageAlias(key)) {
    case StorageAlias::None:
        return false;
    case StorageAlias::Always:
        return true;
    case StorageAlias::IfViewable:
        if (input == nullptr || output == nullptr)
            return true;
        if (key == "aten.contiguous")
            return isContiguous(*input);
        return viewable(*input, output->sizes);
    case StorageAlias::IfSameDtype:
        for (const auto& [name, value] : node.kwargs)
            if (name == "copy" && value.kind() == ValueKind::Bool && value.asBool())
                return false;
        return input == nullptr || output == nullptr || !input->known() || !output->known() ||
               input->dtype == output->dtype;
    }
    return false;
}

} // namespace jointscope
