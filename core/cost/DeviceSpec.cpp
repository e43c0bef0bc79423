#include "cost/DeviceSpec.h"

#include <array>
#include <cctype>

namespace jointscope::cost {
namespace {

constexpr double kTera = 1e12;
constexpr double kGiga = 1e9;

// Peak rates in TFLOP/s (TOP/s for int8), 0 where the device has no such unit; dense: datasheets print
// tensor-core rates "with sparsity" and mark them with an asterisk; those are halved here.
struct Rates {
    double fp64, fp64Matmul, fp32, tf32, bf16, fp16, fp8, int8;
};

// One datasheet row. Bandwidth in GB/s, memory in GB (10^9).
struct Row {
    std::string_view name;
    std::array<std::string_view, 3> aliases;   // first is the canonical alias
    std::array<std::string_view, 4> cudaNames; // first is the profile DB key
    Rates rates;
    double bandwidthGBs, memoryGB;
    int sms;
    std::string_view source;
};

// Sources, all public:
//  NVIDIA H100 Tensor Core GPU datasheet and the NVIDIA H100 Tensor Core GPU Architecture whitepaper (dense
//  SXM5 / PCIe rates at boost clock); NVIDIA H200 Tensor Core GPU datasheet; NVIDIA A100 Tensor Core GPU
//  datasheet; NVIDIA L4, L40S and A10 datasheets (FP64 is not printed for these Ada / GA102 parts: they run
//  it at 1/64 of FP32, the architecture's ratio); NVIDIA V100 Tensor Core GPU datasheet (its tensor cores do
//  FP16 only); NVIDIA HGX B200 / DGX B200 datasheets (8-GPU totals / 8); NVIDIA GB200 NVL72 datasheet
//  (72-GPU totals / 72); AMD Instinct MI300X data sheet. SM counts from the architecture whitepapers.

// GH100 at SXM clocks: the H100 SXM5 and the H200, the same die with more, faster memory.
constexpr Rates kGh100Sxm{33.5, 66.9, 66.9, 494.7, 989.4, 989.4, 1978.9, 1978.9};
// GA100: the A100 datasheet prints one set of rates for every memory size and form factor.
constexpr Rates kGa100{9.7, 19.5, 19.5, 156, 312, 312, 0, 624};

constexpr std::array kRows = {
    Row{"NVIDIA H100 SXM5 80GB",
        {"h100", "h100-sxm", "h100-sxm5"},
        {"NVIDIA H100 80GB HBM3", "NVIDIA H100 SXM5 80GB"},
        kGh100Sxm,
        3350,
        80,
        132,
        "NVIDIA H100 datasheet / Hopper whitepaper (SXM5)"},
    Row{"NVIDIA H100 PCIe 80GB",
        {"h100-pcie"},
        {"NVIDIA H100 PCIe"},
        {25.6, 51.2, 51.2, 378, 756, 756, 1513, 1513},
        2000,
        80,
        114,
        "NVIDIA H100 datasheet / Hopper whitepaper (PCIe)"},
    Row{"NVIDIA H100 NVL 94GB",
        {"h100-nvl"},
        {"NVIDIA H100 NVL"},
        {30, 60, 60, 417.5, 835.5, 835.5, 1670.5, 1670.5},
        3900,
        94,
        132,
        "NVIDIA H100 datasheet (H100 NVL, per GPU)"},
    Row{"NVIDIA H200 SXM 141GB",
        {"h200", "h200-sxm"},
        {"NVIDIA H200"},
        kGh100Sxm,
        4800,
        141,
        132,
        "NVIDIA H200 datasheet (SXM)"},
    Row{"NVIDIA A100 SXM4 80GB",
        {"a100", "a100-sxm", "a100-80gb"},
        {"NVIDIA A100-SXM4-80GB"},
        kGa100,
        2039,
        80,
        108,
        "NVIDIA A100 datasheet (80GB SXM)"},
    Row{"NVIDIA A100 PCIe 80GB",
        {"a100-pcie", "a100-pcie-80gb"},
        {"NVIDIA A100 80GB PCIe"},
        kGa100,
        1935,
        80,
        108,
        "NVIDIA A100 datasheet (80GB PCIe)"},
    Row{"NVIDIA A100 40GB",
        {"a100-40gb", "a100-sxm-40gb"},
        {"NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"},
        kGa100,
        1555,
        40,
        108,
        "NVIDIA A100 datasheet (40GB)"},
    Row{"NVIDIA L4",
        {"l4"},
        {"NVIDIA L4"},
        {0.47, 0.47, 30.3, 60, 121, 121, 242.5, 242.5},
        300,
        24,
        58,
        "NVIDIA L4 datasheet"},
    Row{"NVIDIA L40S",
        {"l40s"},
        {"NVIDIA L40S"},
        {1.43, 1.43, 91.6, 183, 362.05, 362.05, 733, 733},
        864,
        48,
        142,
        "NVIDIA L40S datasheet"},
    Row{"NVIDIA A10",
        {"a10"},
        {"NVIDIA A10"},
        {0.49, 0.49, 31.2, 62.5, 125, 125, 0, 250},
        600,
        24,
        72,
        "NVIDIA A10 datasheet"},
    Row{"NVIDIA V100 SXM2",
        {"v100", "v100-sxm"},
        {"Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB"},
        {7.8, 7.8, 15.7, 0, 0, 125, 0, 0},
        900,
        32,
        80,
        "NVIDIA V100 datasheet (SXM2)"},
    Row{"NVIDIA V100 PCIe",
        {"v100-pcie"},
        {"Tesla V100-PCIE-16GB", "Tesla V100-PCIE-32GB"},
        {7, 7, 14, 0, 0, 112, 0, 0},
        900,
        32,
        80,
        "NVIDIA V100 datasheet (PCIe)"},
    Row{"NVIDIA B200",
        {"b200"},
        {"NVIDIA B200"},
        {37, 37, 75, 1125, 2250, 2250, 4500, 4500},
        8000,
        180,
        148,
        "NVIDIA HGX B200 / DGX B200 datasheets (per GPU)"},
    Row{"NVIDIA GB200 (per Blackwell GPU)",
        {"gb200"},
        {"NVIDIA GB200"},
        {45, 45, 90, 1250, 2500, 2500, 5000, 5000},
        8000,
        186,
        148,
        "NVIDIA GB200 NVL72 datasheet (rack totals / 72)"},
    Row{"AMD Instinct MI300X",
        {"mi300x"},
        {"AMD Instinct MI300X"},
        {81.7, 163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 2614.9},
        5300,
        192,
        304,
        "AMD Instinct MI300X data sheet"},
};

DeviceSpec toSpec(const Row& row) {
    DeviceSpec spec;
    spec.name = row.name;
    spec.alias = row.aliases[0];
    spec.cudaName = row.cudaNames[0];
    spec.source = row.source;
    spec.fp64 = row.rates.fp64 * kTera;
    spec.fp64Matmul = row.rates.fp64Matmul * kTera;
    spec.fp32 = row.rates.fp32 * kTera;
    spec.tf32 = row.rates.tf32 * kTera;
    spec.bf16 = row.rates.bf16 * kTera;
    spec.fp16 = row.rates.fp16 * kTera;
    spec.fp8 = row.rates.fp8 * kTera;
    spec.int8 = row.rates.int8 * kTera;
    spec.memoryBandwidth = row.bandwidthGBs * kGiga;
    spec.memoryBytes = row.memoryGB * kGiga;
    spec.smCount = row.sms;
    return spec;
}

// Lower case, with ' ' and '_' read as '-': "NVIDIA A100-SXM4-80GB" == "nvidia a100 sxm4 80gb".
std::string normalized(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text)
        out.push_back(c == ' ' || c == '_' ? '-' : char(std::tolower(static_cast<unsigned char>(c))));
    return out;
}

// The first non-zero rate, else 0.
double firstOf(std::initializer_list<double> rates) {
    for (double r : rates)
        if (r > 0)
            return r;
    return 0;
}

} // namespace

double peakFlops(const DeviceSpec& spec, DType dtype, Fp32Matmul fp32) {
    switch (dtype) {
    case DType::Float64:
    case DType::Complex128:
        return firstOf({spec.fp64Matmul, spec.fp64});
    case DType::Float32:
    case DType::Complex64:
        return fp32 == Fp32Matmul::Tf32 ? firstOf({spec.tf32, spec.fp32}) : spec.fp32;
    case DType::BFloat16:
        return firstOf({spec.bf16, spec.fp32});
    case DType::Float16:
    case DType::Complex32:
        return firstOf({spec.fp16, spec.fp32});
    case DType::Float8E4M3FN:
    case DType::Float8E5M2:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2FNUZ:
    case DType::Float8E8M0FNU:
    case DType::Float4E2M1FNx2:
        return firstOf({spec.fp8, spec.fp16, spec.bf16, spec.fp32});
    case DType::Int8:
    case DType::UInt8:
        return firstOf({spec.int8, spec.fp32});
    default:
        return spec.fp32;
    }
}

double vectorFlops(const DeviceSpec& spec, DType dtype) {
    if (dtype == DType::Float64 || dtype == DType::Complex128)
        return firstOf({spec.fp64, spec.fp64Matmul});
    return spec.fp32;
}

std::vector<DeviceSpec> knownDevices() {
    std::vector<DeviceSpec> specs;
    specs.reserve(kRows.size());
    for (const Row& row : kRows)
        specs.push_back(toSpec(row));
    return specs;
}

std::optional<DeviceSpec> findDevice(std::string_view name) {
    const std::string key = normalized(name);
    if (key.empty())
        return std::nullopt;
    for (const Row& row : kRows) {
        bool match = normalized(row.name) == key;
        for (std::string_view alias : row.aliases)
            match = match || (!alias.empty() && normalized(alias) == key);
        for (std::string_view cuda : row.cudaNames)
            match = match || (!cuda.empty() && normalized(cuda) == key);
        if (match) {
            DeviceSpec spec = toSpec(row);
            // A CUDA name the table lists keeps its exact spelling: it is the profile DB's key.
            for (std::string_view cuda : row.cudaNames)
                if (!cuda.empty() && normalized(cuda) == key)
                    spec.cudaName = cuda;
            return spec;
        }
    }
    return std::nullopt;
}

DeviceSpec cpuDevice(const CpuMeasurement& measured) {
    DeviceSpec spec;
    spec.name = measured.name;
    spec.alias = "cpu";
    spec.cudaName = measured.name;
    spec.source = "measured";
    const double fp32 = measured.gflops * kGiga;
    // SIMD registers hold half as many doubles as floats.
    const double fp64 = measured.fp64Gflops > 0 ? measured.fp64Gflops * kGiga : fp32 / 2;
    spec.fp64 = spec.fp64Matmul = fp64;
    spec.fp32 = spec.tf32 = spec.bf16 = spec.fp16 = spec.fp8 = spec.int8 = fp32;
    spec.memoryBandwidth = measured.gbPerSecond * kGiga;
    spec.memoryBytes = measured.memoryBytes;
    spec.smCount = measured.cores;
    spec.measured = true;
    return spec;
}

} // namespace jointscope::cost
