// Per-op timing on real kernels, deduplicated by op signature and cached in the profile DB.
#include "runtime/Interpreter.h"
#include "runtime/Runtime.h"
#include "runtime/Sandbox.h"

#include "cost/DeviceInfo.h"
#include "cost/OpSignature.h"

#include <ATen/ATen.h>
#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <numeric>
#include <unordered_map>

namespace jointscope::runtime {
namespace {

using Clock = std::chrono::steady_clock;

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

cost::OpStats statistics(std::vector<double> us) {
    cost::OpStats s;
    std::sort(us.begin(), us.end());
    const size_t n = us.size();
    s.reps = static_cast<int>(n);
    s.minUs = us.front();
    s.maxUs = us.back();
    s.medianUs = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
    s.meanUs = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(n);
    s.measuredAt = utcNow();
    return s;
}

// Why a node is not timed, or empty when it is. Views are recognised from the schema: a result that aliases
// an argument without writing it (Tensor(a)) moves no data.
std::string skipReason(const Node& node, const std::optional<PreparedCall>& call) {
    switch (node.op) {
    case NodeOp::Placeholder:
        return "placeholder";
    case NodeOp::Output:
        return "output";
    case NodeOp::GetAttr:
        return "get_attr";
    case NodeOp::CallFunction:
        break;
    default:
        return "not a call_function";
    }
    if (node.target.isGetItem())
        return "getitem";
    if (node.target.kind == TargetKind::Operator || node.target.kind == TargetKind::Python)
        return "symbolic arithmetic";
    if (node.target.kind == TargetKind::HigherOrder)
        return "higher-order op (runs a nested graph)";
    if (!call)
        return "size query";
    // _unsafe_view returns a view although its schema does not say so (it exists to hide the alias).
    if (node.target.ns == "aten" && node.target.op == "_unsafe_view")
        return "view";
    const auto& returns = call->op.schema().returns();
    if (!returns.empty() && std::all_of(returns.begin(), returns.end(), [](const c10::Argument& r) {
            return r.alias_info() && !r.alias_info()->isWrite();
        }))
        return "view";
    return {};
}

// Times one callable on the run device: steady_clock on the CPU, CUDA events on a GPU.
class Timer {
public:
    Timer(c10::Device device, bool flushL2) : device_(device) {
        if (device_.is_cuda() && flushL2)
            flush_ = at::empty({kFlushBytes / 4}, at::TensorOptions().dtype(at::kFloat).device(device_));
    }

    template <typename Fn> double timeUs(Fn&& fn) {
        if (flush_.defined())
            flush_.zero_();
        if (!device_.is_cuda()) {
            const Clock::time_point start = Clock::now();
            fn();
            return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
        }
        return cudaTimeUs(fn);
    }

private:
    template <typename Fn> double cudaTimeUs(Fn&& fn) {
        const c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
        const c10::Stream stream = impl.getStream(device_);
#if TORCH_VERSION_MAJOR >= 2
        c10::Event start(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
        c10::Event stop(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
        start.record(stream);
        fn();
        stop.record(stream);
        stop.synchronize();
        return start.elapsedTime(stop) * 1000.0; // ms -> µs
#else
        // LibTorch 1.x has no event timing through c10: synchronize around the call instead.
        auto drain = [&] {
            c10::Event done(c10::DeviceType::CUDA);
            done.record(stream);
            while (!done.query()) {
            }
        };
        drain();
        const Clock::time_point begin = Clock::now();
        fn();
        drain();
        return std::chrono::duration<double, std::micro>(Clock::now() - begin).count();
#endif
    }

    static constexpr int64_t kFlushBytes = 256LL << 20; // larger than any GPU's L2 (H100: 50 MiB)
    c10::Device device_;
    at::Tensor flush_;
};

// Each timed rep gets its own copy of the argument stack (the call consumes it); the copies share tensors.
std::vector<double> timeCall(const PreparedCall& call, Timer& timer, int warmup, int reps) {
    for (int i = 0; i < warmup; ++i) {
        std::vector<c10::IValue> stack = call.stack;
        call.op.callBoxed(&stack);
    }
    std::vector<double> us;
    us.reserve(static_cast<size_t>(reps));
    for (int i = 0; i < reps; ++i) {
        std::vector<c10::IValue> stack = call.stack;
        us.push_back(timer.timeUs([&] { call.op.callBoxed(&stack); }));
    }
    return us;
}

} // namespace

std::string torchVersion() {
    return TORCH_VERSION;
}

Expected<RunDevice> openDevice(const std::string& spec) {
    RunDevice d;
    if (spec.empty() || spec == "cpu") {
        d.spec = "cpu";
        d.name = cost::cpuName();
        if (d.name.empty())
            d.name = "cpu";
        return d;
    }
    c10::Device device(c10::kCPU);
    try {
        device = c10::Device(spec);
    } catch (const std::exception&) {
        return makeError({}, "unknown device '" + spec + "' (expected cpu, cuda or cuda:N)");
    }
    if (!device.is_cuda())
        return makeError({}, "device '" + spec + "' is not supported (expected cpu, cuda or cuda:N)");
    if (!at::hasCUDA()) {
        // libtorch_cuda registers the CUDA guard when it loads: with it present, the machine lacks the
        // device.
        if (c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA))
            return makeError({}, "no CUDA device is visible to LibTorch (" TORCH_VERSION
                                 ", built with CUDA): no GPU or no NVIDIA driver on this machine, so '" +
                                     spec + "' cannot run");
        return makeError({}, "this build's LibTorch (" TORCH_VERSION ") has no CUDA; build with "
                             "scripts/build-headless against a CUDA torch to use '" +
                                 spec + "'");
    }
    const c10::impl::VirtualGuardImpl impl(c10::DeviceType::CUDA);
    const int64_t count = impl.deviceCount();
    const int64_t index = device.has_index() ? device.index() : 0;
    if (index >= count)
        return makeError({}, "device '" + spec + "' does not exist: " + std::to_string(count) +
                                 " CUDA device(s)");
    d.spec = "cuda:" + std::to_string(index);
    d.cuda = true;
    std::string note;
    for (const cost::DeviceInfo& info : cost::listDevices(&note))
        if (info.kind == "cuda" && info.index == index)
            d.name = info.name;
    if (d.name.empty())
        d.name = "CUDA device " + std::to_string(index);
    return d;
}

Expected<RunDevice> initializeDevice(const std::string& spec) {
    Expected<RunDevice> device = openDevice(spec);
    if (!device || !device->cuda)
        return device;
    try {
        // The context, the caching allocator and the driver's device files, which a run would open lazily.
        const c10::Device where(device->spec);
        at::Tensor probe = at::zeros({1}, at::TensorOptions().device(where));
        (void)probe.cpu();
    } catch (const std::exception& e) {
        return makeError({}, "cannot start " + device->spec + ": " + exceptionText(e));
    }
    return device;
}

namespace {

Expected<ProfileReport> profileUnguarded(const Graph& graph, const ProfileOptions& options, bool replay) {
    Expected<RunStart> start = startRun({&graph}, graph, options.run);
    if (!start)
        return start.error();
    const RunDevice& device = start->device;
    const c10::Device where = start->where;
    SymbolBindings& symbols = start->symbols;
    const InputMap& inputs = start->inputs;

    ProfileReport report;
    report.device = device.name;
    report.torchVersion = torchVersion();
    at::manual_seed(options.run.seed);
    Interpreter interp(graph, where, symbols, options.run.flags);
    std::vector<std::string> runErrors;
    (void)interp.run(inputs, /*keepValues=*/true, &runErrors);

    Timer timer(where, options.flushL2);
    const int reps = std::max(1, options.reps);
    const int warmup = std::max(0, options.warmup);
    struct Known {
        std::optional<double> us;
        std::string error;
        bool cached = false;
    };
    std::unordered_map<std::string, Known> bySignature;
    // Each measurement is stored at once in its own short transaction: the database's write lock is never
    // held across a profile run, so other profiles and readers of the same file go on.
    at::NoGradGuard noGrad;
    report.nodes.reserve(graph.size());
    for (NodeId id = 0; id < graph.size(); ++id) {
        if (options.progress && !options.progress(id, graph.size())) {
            report.cancelled = true;
            break;
        }
        const Node& node = graph.node(id);
        NodeTiming t;
        t.name = node.name;
        t.op = node.op == NodeOp::CallFunction ? node.target.text : std::string(nodeOpName(node.op));
        if (!runErrors[id].empty()) {
            t.error = runErrors[id];
            report.nodes.push_back(std::move(t));
            continue;
        }
        Expected<std::optional<PreparedCall>> call = interp.prepare(id);
        if (!call) {
            t.error = call.error().message;
            report.nodes.push_back(std::move(t));
            continue;
        }
        t.skipped = skipReason(node, *call);
        if (!t.skipped.empty()) {
            report.nodes.push_back(std::move(t));
            continue;
        }
        t.signature = cost::opSignature(graph, id);
        auto [it, fresh] = bySignature.try_emplace(t.signature);
        Known& known = it->second;
        if (fresh) {
            const cost::ProfileKey key{device.name, report.torchVersion, t.signature};
            std::optional<cost::OpStats> hit =
                options.db && !options.remeasure ? options.db->lookup(key) : std::nullopt;
            if (hit && hit->reps >= reps) {
                known.us = hit->medianUs;
                known.cached = true;
                ++report.cached;
            } else {
                try {
                    const FaultScope scope(node.meta.sourceLine, node.name, node.target.text);
                    const cost::OpStats stats = statistics(timeCall(**call, timer, warmup, reps));
                    known.us = stats.medianUs;
                    ++report.measured;
                    t.measuredHere = true;
                    if (options.db && !options.db->store(key, stats))
                        report.storeErrors.push_back(t.signature + ": " + options.db->lastError());
                } catch (const std::exception& e) {
                    known.error = exceptionText(e, options.run.flags.debug);
                }
            }
        }
        t.timeUs = known.us;
        t.error = known.error;
        t.cached = known.cached;
        if (t.timeUs)
            report.sumUs += *t.timeUs;
        report.nodes.push_back(std::move(t));
    }
    if (replay && !report.cancelled) {
        // The whole graph end to end, interpreter included: what Σ per-op should approach.
        std::vector<double> us;
        bool failed = false;
        for (int i = 0; i < warmup + reps && !failed; ++i) {
            Interpreter again(graph, where, symbols, options.run.flags);
            const double t = timer.timeUs([&] { failed = !again.run(inputs); });
            if (i >= warmup)
                us.push_back(t);
        }
        if (!failed && !us.empty())
            report.replayUs = statistics(us).medianUs;
    }
    return report;
}

} // namespace

Expected<ProfileReport> profileGraph(const Graph& graph, const ProfileOptions& options, bool replay) {
    return catchLibTorch(options.run.flags.debug, [&] { return profileUnguarded(graph, options, replay); });
}

Expected<cost::DevicePeaks> measurePeaks(const std::string& spec) {
    Expected<RunDevice> device = openDevice(spec);
    if (!device)
        return device.error();
    const c10::Device where(device->spec);
    Timer timer(where, false);
    const at::NoGradGuard noGrad;
    auto medianUs = [&](auto&& fn) {
        std::vector<double> us;
        for (int i = 0; i < 7; ++i) {
            const double t = timer.timeUs(fn);
            if (i >= 2) // warm-up: page faults, thread pool start, cuBLAS handles
                us.push_back(t);
        }
        return statistics(std::move(us)).medianUs;
    };
    // Sizes large enough to reach the plateau, small enough to take well under a second on a laptop.
    auto matmulGflops = [&](at::ScalarType dtype) {
        const int64_t n = device->cuda ? 8192 : 1024;
        const auto options = at::TensorOptions().dtype(dtype).device(where);
        const at::Tensor a = at::rand({n, n}, options), b = at::rand({n, n}, options);
        at::Tensor c = at::empty({n, n}, options);
        const double us = medianUs([&] { at::mm_out(c, a, b); });
        return 2.0 * double(n) * double(n) * double(n) / us / 1e3; // FLOP per µs / 1e3 = GFLOP/s
    };
    cost::DevicePeaks peaks;
    peaks.device = device->name;
    try {
        peaks.fp32Gflops = matmulGflops(at::kFloat);
        peaks.fp64Gflops = matmulGflops(at::kDouble);
        const int64_t elements = (device->cuda ? 1024LL : 64LL) << 20; // 4 GiB / 256 MiB of fp32
        const auto options = at::TensorOptions().dtype(at::kFloat).device(where);
        const at::Tensor src = at::rand({elements}, options);
        at::Tensor dst = at::empty({elements}, options);
        const double us = medianUs([&] { dst.copy_(src); });
        peaks.gbPerSecond = 2.0 * 4.0 * double(elements) / us / 1e3; // read + write
    } catch (const std::exception& e) {
        return makeError({}, "measuring " + device->name + " failed: " + exceptionText(e));
    }
    peaks.measuredAt = utcNow();
    return peaks;
}

} // namespace jointscope::runtime
