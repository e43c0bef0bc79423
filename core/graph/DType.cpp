#include "graph/DType.h"

#include <array>

namespace jointscope {
namespace {

struct DTypeInfo {
    DType dtype;
    std::string_view abbr;
    std::string_view name;
    uint32_t bytes;
};

// Mirrors torch.fx.graph's dtype_abbrs.
constexpr std::array kDTypes = {
    DTypeInfo{DType::Float64, "f64", "float64", 8},
    DTypeInfo{DType::Float32, "f32", "float32", 4},
    DTypeInfo{DType::Float16, "f16", "float16", 2},
    DTypeInfo{DType::BFloat16, "bf16", "bfloat16", 2},
    DTypeInfo{DType::Float8E4M3FN, "f8e4m3fn", "float8_e4m3fn", 1},
    DTypeInfo{DType::Float8E5M2, "f8e5m2", "float8_e5m2", 1},
    DTypeInfo{DType::Float8E4M3FNUZ, "f8e4m3fnuz", "float8_e4m3fnuz", 1},
    DTypeInfo{DType::Float8E5M2FNUZ, "f8e5m2fnuz", "float8_e5m2fnuz", 1},
    DTypeInfo{DType::Float8E8M0FNU, "f8e8m0fnu", "float8_e8m0fnu", 1},
    DTypeInfo{DType::Float4E2M1FNx2, "f4e2m1fnx2", "float4_e2m1fn_x2", 1},
    DTypeInfo{DType::Complex32, "c32", "complex32", 4},
    DTypeInfo{DType::Complex64, "c64", "complex64", 8},
    DTypeInfo{DType::Complex128, "c128", "complex128", 16},
    DTypeInfo{DType::Int8, "i8", "int8", 1},
    DTypeInfo{DType::Int16, "i16", "int16", 2},
    DTypeInfo{DType::Int32, "i32", "int32", 4},
    DTypeInfo{DType::Int64, "i64", "int64", 8},
    DTypeInfo{DType::UInt8, "u8", "uint8", 1},
    DTypeInfo{DType::UInt16, "u16", "uint16", 2},
    DTypeInfo{DType::UInt32, "u32", "uint32", 4},
    DTypeInfo{DType::UInt64, "u64", "uint64", 8},
    DTypeInfo{DType::Bool, "b8", "bool", 1},
    DTypeInfo{DType::Bits16, "b16", "bits16", 2},
    DTypeInfo{DType::Bits1x8, "b1x8", "bits1x8", 1},
};

// torch's alternative spellings of the same dtypes.
struct DTypeAlias {
    std::string_view name;
    DType dtype;
};
constexpr std::array kAliases = {
    DTypeAlias{"float", DType::Float32},    DTypeAlias{"double", DType::Float64},
    DTypeAlias{"half", DType::Float16},     DTypeAlias{"cfloat", DType::Complex64},
    DTypeAlias{"cdouble", DType::Complex128}, DTypeAlias{"chalf", DType::Complex32},
    DTypeAlias{"long", DType::Int64},       DTypeAlias{"int", DType::Int32},
    DTypeAlias{"short", DType::Int16},
};

const DTypeInfo* find(DType dtype) {
    for (const auto& info : kDTypes)
        if (info.dtype == dtype)
            return &info;
    return nullptr;
}

} // namespace

uint32_t itemSize(DType dtype) {
    const DTypeInfo* info = find(dtype);
    return info ? info->bytes : 0;
}

std::string_view abbreviation(DType dtype) {
    const DTypeInfo* info = find(dtype);
    return info ? info->abbr : std::string_view("?");
}

std::string_view torchName(DType dtype) {
    const DTypeInfo* info = find(dtype);
    return info ? info->name : std::string_view("undefined");
}

bool isFloatingPoint(DType dtype) {
    switch (dtype) {
    case DType::Float64: case DType::Float32: case DType::Float16: case DType::BFloat16:
    case DType::Float8E4M3FN: case DType::Float8E5M2: case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2FNUZ: case DType::Float8E8M0FNU: case DType::Float4E2M1FNx2:
        return true;
    default:
        return false;
    }
}

std::optional<DType> parseDType(std::string_view text) {
    if (text.starts_with("torch."))
        text.remove_prefix(6);
    for (const auto& info : kDTypes)
        if (text == info.abbr || text == info.name)
            return info.dtype;
    for (const auto& alias : kAliases)
        if (text == alias.name)
            return alias.dtype;
    return std::nullopt;
}

} // namespace jointscope
