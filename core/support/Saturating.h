// Saturating unsigned arithmetic for sizes: a tensor a file describes may be large enough to wrap uint64
// (sizes built from symbol hints are not checked by the readers), and a wrapped byte count is a small, wrong
// one.
#pragma once

#include <cstdint>
#include <limits>

namespace jointscope {

inline constexpr uint64_t kSaturated = std::numeric_limits<uint64_t>::max();

inline uint64_t saturatingMul(uint64_t a, uint64_t b) {
    uint64_t r = 0;
    return __builtin_mul_overflow(a, b, &r) ? kSaturated : r;
}

inline uint64_t saturatingAdd(uint64_t a, uint64_t b) {
    uint64_t r = 0;
    return __builtin_add_overflow(a, b, &r) ? kSaturated : r;
}

} // namespace jointscope
