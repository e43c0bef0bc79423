// Peak arithmetic and memory rates of the devices a cost model can target.
//
// GPU numbers are public datasheet figures, dense (without 2:4 sparsity); DeviceSpec.cpp names the source of
// each row. A CPU spec is built from measured rates instead.
#pragma once

#include "graph/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::cost {

struct DeviceSpec {
    std::string name;     // "NVIDIA H100 SXM5 80GB"
    std::string alias;    // "h100": the short name --target-device takes
    std::string cudaName; // what torch.cuda.get_device_name() reports, the profile DB's device key
    std::string source;   // where the numbers come from

    // Dense peaks in FLOP/s (OP/s for int8); 0 where the device has no such unit.
    double fp64 = 0;       // FP64 vector
    double fp64Matmul = 0; // FP64 tensor core (equal to fp64 where there is none)
    double fp32 = 0;       // FP32 without tensor cores
    double tf32 = 0;
    double bf16 = 0;
    double fp16 = 0;
    double fp8 = 0;
    double int8 = 0;
    double memoryBandwidth = 0; // bytes/s
    double memoryBytes = 0;
    int smCount = 0; // SMs (compute units on AMD, cores on a CPU)
    bool measured = false;
};

// How fp32 matmuls run: torch.backends.cuda.matmul.allow_tf32 /
// torch.set_float32_matmul_precision("high") make them TF32.
enum class Fp32Matmul : uint8_t { Ieee, Tf32 };

// The peak a matmul in `dtype` runs at: the tensor-core rate of its dtype class (fp32 uses TF32 only when
// asked), falling back to the next wider class the device has (fp8 -> fp16 -> fp32; bf16 -> fp32).
double peakFlops(const DeviceSpec& spec, DType dtype, Fp32Matmul fp32 = Fp32Matmul::Ieee);
// The peak of elementwise arithmetic (no tensor cores): fp64 for fp64, fp32 for everything else.
double vectorFlops(const DeviceSpec& spec, DType dtype);

// The datasheet table, in a fixed order.
std::vector<DeviceSpec> knownDevices();
// By alias ("h100", "a100", "l40s"), table name or the name CUDA reports ("NVIDIA H100 80GB HBM3",
// "NVIDIA A100-SXM4-80GB"); case, spaces, '-' and '_' are not significant.
std::optional<DeviceSpec> findDevice(std::string_view name);

// Rates measured on a CPU (a matmul benchmark and a streaming copy).
struct CpuMeasurement {
    std::string name = "cpu";
    double gflops = 0;     // measured fp32 matmul GFLOP/s
    double fp64Gflops = 0; // measured fp64 matmul GFLOP/s; 0: half the fp32 rate
    double gbPerSecond = 0;
    int cores = 0;
    double memoryBytes = 0;
};
// A CPU has no tensor cores: every dtype class runs at the measured fp32 rate (fp64 at its own).
DeviceSpec cpuDevice(const CpuMeasurement& measured);

} // namespace jointscope::cost
