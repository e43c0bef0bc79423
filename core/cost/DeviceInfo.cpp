#include "cost/DeviceInfo.h"

#include <dlfcn.h>
#include <unistd.h>

#include <fstream>
#include <string_view>

namespace jointscope::cost {
namespace {

// CUDA driver ABI (cuda.h). The values are frozen by NVIDIA; copied here so that nothing links against CUDA.
using CUresult = int;
using CUdevice = int;
constexpr CUresult kCudaSuccess = 0;
constexpr int kAttrClockRate = 13;       // CU_DEVICE_ATTRIBUTE_CLOCK_RATE, kHz
constexpr int kAttrMultiprocessors = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrMemoryClockRate = 36; // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, kHz
constexpr int kAttrBusWidth = 37;        // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, bits
constexpr int kAttrL2CacheSize = 38;     // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, bytes
constexpr int kAttrComputeMajor = 75;    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrComputeMinor = 76;    // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

struct CudaDriver {
    CUresult (*init)(unsigned) = nullptr;
    CUresult (*driverGetVersion)(int*) = nullptr;
    CUresult (*deviceGetCount)(int*) = nullptr;
    CUresult (*deviceGet)(CUdevice*, int) = nullptr;
    CUresult (*deviceGetName)(char*, int, CUdevice) = nullptr;
    CUresult (*deviceTotalMem)(size_t*, CUdevice) = nullptr;
    CUresult (*deviceGetAttribute)(int*, int, CUdevice) = nullptr;
    CUresult (*getErrorName)(CUresult, const char**) = nullptr; // optional

    // "100 (CUDA_ERROR_NO_DEVICE)", or just the number when the driver cannot name it.
    std::string describe(CUresult r) const {
        const char* name = nullptr;
        if (getErrorName && getErrorName(r, &name) == kCudaSuccess && name)
            return std::to_string(r) + " (" + name + ")";
        return std::to_string(r);
    }
};

template <typename Fn> bool bind(void* lib, const char* symbol, Fn& fn) {
    fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
    return fn != nullptr;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// "key\t: value" lines of /proc/cpuinfo and /proc/meminfo.
bool splitField(std::string_view line, std::string_view& key, std::string_view& value) {
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
        return false;
    key = trim(line.substr(0, colon));
    value = trim(line.substr(colon + 1));
    return true;
}

uint64_t memTotalBytes() {
    std::ifstream in("/proc/meminfo");
    std::string line;
    while (std::getline(in, line)) {
        std::string_view key, value;
        if (splitField(line, key, value) && key == "MemTotal")
            return std::strtoull(std::string(value).c_str(), nullptr, 10) * 1024; // "16318164 kB"
    }
    return 0;
}

DeviceInfo cpuDevice() {
    DeviceInfo cpu;
    cpu.kind = "cpu";
    cpu.index = 0;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    std::string fallbackName;
    while (std::getline(in, line)) {
        std::string_view key, value;
        if (!splitField(line, key, value))
            continue;
        if (key == "processor")
            ++cpu.cores;
        else if (key == "model name" && cpu.name.empty())
            cpu.name = value;
        else if ((key == "Hardware" || key == "Processor") && fallbackName.empty())
            fallbackName = value;
    }
    if (cpu.name.empty())
        cpu.name = fallbackName;
    if (cpu.cores == 0)
        cpu.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
    cpu.memoryBytes = memTotalBytes();
    return cpu;
}

} // namespace

double peakBandwidthGBs(int memoryClockKHz, int busWidthBits) {
    return 2.0 * memoryClockKHz * 1e3 * busWidthBits / 8.0 / 1e9;
}

std::string cpuName() {
    return cpuDevice().name;
}

std::vector<DeviceInfo> listCudaDevices(const std::string& library, std::string* note) {
    std::vector<DeviceInfo> devices;
    if (note)
        note->clear();
    auto setNote = [&](std::string text) {
        if (note)
            *note = std::move(text);
    };
    // Never dlclose'd: unloading the driver after cuInit is unsupported, and a LibTorch runtime in this
    // process uses the same copy.
    void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        setNote(library + " not found");
        return devices;
    }
    CudaDriver cu;
    // cuDeviceTotalMem is a macro for the _v2 entry point in cuda.h; the unversioned symbol is 32-bit.
    if (!bind(lib, "cuInit", cu.init) || !bind(lib, "cuDriverGetVersion", cu.driverGetVersion) ||
        !bind(lib, "cuDeviceGetCount", cu.deviceGetCount) || !bind(lib, "cuDeviceGet", cu.deviceGet) ||
        !bind(lib, "cuDeviceGetName", cu.deviceGetName) ||
        !bind(lib, "cuDeviceTotalMem_v2", cu.deviceTotalMem) ||
        !bind(lib, "cuDeviceGetAttribute", cu.deviceGetAttribute)) {
        const char* why = dlerror();
        setNote(library + " lacks the CUDA driver entry points" + (why ? std::string(" (") + why + ")" : ""));
        return devices;
    }
    bind(lib, "cuGetErrorName", cu.getErrorName);
    if (CUresult r = cu.init(0); r != kCudaSuccess) {
        setNote("cuInit failed: " + cu.describe(r));
        return devices;
    }
    int driverVersion = 0;
    cu.driverGetVersion(&driverVersion);
    int count = 0;
    if (CUresult r = cu.deviceGetCount(&count); r != kCudaSuccess) {
        setNote("cuDeviceGetCount failed: " + cu.describe(r));
        return devices;
    }
    if (count == 0)
        setNote("the CUDA driver reports no device");
    for (int i = 0; i < count; ++i) {
        CUdevice dev = 0;
        if (CUresult r = cu.deviceGet(&dev, i); r != kCudaSuccess) {
            setNote("cuDeviceGet(" + std::to_string(i) + ") failed: " + cu.describe(r));
            continue;
        }
        DeviceInfo d;
        d.kind = "cuda";
        d.index = i;
        d.driverVersion = driverVersion;
        char name[256] = {};
        if (cu.deviceGetName(name, sizeof name - 1, dev) == kCudaSuccess)
            d.name = name;
        size_t bytes = 0;
        if (cu.deviceTotalMem(&bytes, dev) == kCudaSuccess)
            d.memoryBytes = bytes;
        auto attribute = [&](int attr) {
            int value = 0;
            return cu.deviceGetAttribute(&value, attr, dev) == kCudaSuccess ? value : 0;
        };
        d.sms = attribute(kAttrMultiprocessors);
        const int clockKHz = attribute(kAttrClockRate);
        const int memoryClockKHz = attribute(kAttrMemoryClockRate);
        d.clockMHz = clockKHz / 1000;
        d.memoryClockMHz = memoryClockKHz / 1000;
        d.busWidthBits = attribute(kAttrBusWidth);
        d.bandwidthGBs = peakBandwidthGBs(memoryClockKHz, d.busWidthBits);
        d.ccMajor = attribute(kAttrComputeMajor);
        d.ccMinor = attribute(kAttrComputeMinor);
        d.l2Bytes = static_cast<uint64_t>(attribute(kAttrL2CacheSize));
        devices.push_back(std::move(d));
    }
    return devices;
}

std::vector<DeviceInfo> listDevices(std::string* note) {
    std::vector<DeviceInfo> devices{cpuDevice()};
    for (DeviceInfo& gpu : listCudaDevices("libcuda.so.1", note))
        devices.push_back(std::move(gpu));
    return devices;
}

} // namespace jointscope::cost
