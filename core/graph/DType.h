// Tensor element types as torch names them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace jointscope {

enum class DType : uint8_t {
    Undefined,
    Float64, Float32, Float16, BFloat16,
    Float8E4M3FN, Float8E5M2, Float8E4M3FNUZ, Float8E5M2FNUZ, Float8E8M0FNU, Float4E2M1FNx2,
    Complex32, Complex64, Complex128,
    Int8, Int16, Int32, Int64,
    UInt8, UInt16, UInt32, UInt64,
    Bool, Bits16, Bits1x8,
};

// Size of one element in bytes (0 for Undefined).
uint32_t itemSize(DType dtype);
// FX annotation abbreviation: "f32", "bf16", "b8", ...
std::string_view abbreviation(DType dtype);
// Python name without module: "float32", "bfloat16", "bool", ...
std::string_view torchName(DType dtype);
bool isFloatingPoint(DType dtype);

// Accepts "f32", "float32", "torch.float32", and torch's aliases ("float", "half", "long", ...).
std::optional<DType> parseDType(std::string_view text);

} // namespace jointscope
