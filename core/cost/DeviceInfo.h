// The machine's compute devices: the CPU from /proc/cpuinfo, CUDA GPUs from the driver, loaded at run time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace jointscope::cost {

struct DeviceInfo {
    std::string kind; // "cpu" or "cuda"
    int index = 0;
    std::string name;         // "NVIDIA H100 80GB HBM3", /proc/cpuinfo's model name
    int cores = 0;            // logical CPUs (cpu)
    uint64_t memoryBytes = 0; // device memory; MemTotal for the CPU
    int sms = 0;              // multiprocessors (cuda)
    int clockMHz = 0;         // peak SM clock (cuda)
    int memoryClockMHz = 0;   // peak memory clock (cuda)
    int busWidthBits = 0;     // global memory bus width (cuda)
    double bandwidthGBs = 0;  // peak DRAM bandwidth derived from the two above, 0 when unknown
    int ccMajor = 0;          // compute capability (cuda)
    int ccMinor = 0;
    uint64_t l2Bytes = 0;  // L2 cache (cuda)
    int driverVersion = 0; // cuDriverGetVersion: 12040 for 12.4 (cuda)

    std::string str() const {
        return index >= 0 && kind != "cpu" ? kind + ":" + std::to_string(index) : kind;
    }
    std::string computeCapability() const { return std::to_string(ccMajor) + "." + std::to_string(ccMinor); }
};

// Peak DRAM bandwidth in GB/s (1e9 bytes/s): double data rate, so 2 transfers per memory clock, each as wide
// as the bus. H100 SXM: 2619 MHz x 5120 bit -> 3352 GB/s.
double peakBandwidthGBs(int memoryClockKHz, int busWidthBits);

// /proc/cpuinfo's "model name" (x86), or its "Processor" / "Hardware" line elsewhere; empty when unreadable.
std::string cpuName();

// The CPU, then every CUDA device. When no GPU is listed, `note` (if given) says why: "libcuda.so.1 not
// found", "cuInit failed: 100 (CUDA_ERROR_NO_DEVICE)".
std::vector<DeviceInfo> listDevices(std::string* note = nullptr);

// The CUDA devices the driver library `library` reports (dlopen'ed; no link-time dependency on CUDA).
std::vector<DeviceInfo> listCudaDevices(const std::string& library, std::string* note = nullptr);

} // namespace jointscope::cost
