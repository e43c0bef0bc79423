// Human-readable quantities for reports, tables and tool tips, one rule each, shared by the CLI and the GUI.
// Times and FLOP counts show three significant digits in the largest unit that keeps the number at least 1
// ("12.3 µs", "480 µs", "1.00 ms"); bytes count in binary units with one decimal ("12.0 KiB"). Text is UTF-8.
// Placements are formatted by sharding/Placement.h (formatPlacements).
#pragma once

#include <cstdint>
#include <string>

namespace jointscope {

// "512 B", "12.0 KiB", "3.4 MiB", up to TiB.
std::string formatBytes(uint64_t bytes);

// A duration given in microseconds: "0.52 µs", "12.3 µs", "480 µs", "8.81 ms", "1.20 s".
std::string formatMicros(double us);

// A count of floating-point operations: "512 FLOP", "1.50 kFLOP", "12.3 GFLOP", "2.00 TFLOP", up to PFLOP.
std::string formatFlops(double flops);

} // namespace jointscope
