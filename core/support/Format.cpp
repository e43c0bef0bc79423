#include "support/Format.h"

#include <cmath>
#include <cstdio>
#include <span>
#include <string_view>

namespace jointscope {
namespace {

// `value` in the largest of `units` (each `step` times the one before) that keeps it at least 1, with three
// significant digits. The digits are chosen after rounding, so that 999.96 shows as "1.00 k", not "1000".
std::string formatScaled(double value, double step, std::span<const std::string_view> units) {
    if (!std::isfinite(value))
        return std::string(std::isnan(value) ? "nan " : value < 0 ? "-inf " : "inf ") + std::string(units[0]);
    const char* sign = value < 0 ? "-" : "";
    double magnitude = std::fabs(value);
    size_t unit = 0;
    while (magnitude >= 999.5 && unit + 1 < units.size()) {
        magnitude /= step;
        ++unit;
    }
    const int decimals = magnitude < 9.995 ? 2 : magnitude < 99.95 ? 1 : 0;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%.*f %.*s", sign, decimals, magnitude, int(units[unit].size()),
                  units[unit].data());
    return buf;
}

} // namespace

std::string formatBytes(uint64_t bytes) {
    char buf[32];
    if (bytes < 1024) {
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
        return buf;
    }
    static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    double value = double(bytes) / 1024.0;
    size_t unit = 0;
    while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
        value /= 1024.0;
        ++unit;
    }
    std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
    return buf;
}

std::string formatMicros(double us) {
    static constexpr std::string_view kUnits[] = {"µs", "ms", "s"};
    return formatScaled(us, 1000.0, kUnits);
}

std::string formatFlops(double flops) {
    static constexpr std::string_view kUnits[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP"};
    if (std::fabs(flops) < 999.5 && std::isfinite(flops)) {
        // Whole operations: "512 FLOP", not "512.00 FLOP" or "1.50 FLOP".
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f FLOP", flops);
        return buf;
    }
    return formatScaled(flops, 1000.0, kUnits);
}

} // namespace jointscope
