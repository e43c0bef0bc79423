#include "runtime/Sandbox.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <optional>

#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace jointscope::runtime {
namespace {

// Landlock's rights as the kernel numbers them (linux/landlock.h). Debian bookworm's header stops at ABI 2;
// the later ones are spelled out here, each used only when the kernel's ABI has it.
constexpr uint64_t kFsWriteFile = 1ULL << 1;
constexpr uint64_t kFsChanges =
    kFsWriteFile | (1ULL << 4) /*REMOVE_DIR*/ | (1ULL << 5) /*REMOVE_FILE*/ | (1ULL << 6) /*MAKE_CHAR*/ |
    (1ULL << 7) /*MAKE_DIR*/ | (1ULL << 8) /*MAKE_REG*/ | (1ULL << 9) /*MAKE_SOCK*/ |
    (1ULL << 10) /*MAKE_FIFO*/ | (1ULL << 11) /*MAKE_BLOCK*/ | (1ULL << 12) /*MAKE_SYM*/;
constexpr uint64_t kFsRefer = 1ULL << 13;    // ABI 2: rename and link across directories
constexpr uint64_t kFsTruncate = 1ULL << 14; // ABI 3
constexpr uint64_t kFsIoctlDev = 1ULL << 15; // ABI 5: ioctl on device files
constexpr uint64_t kNetBindTcp = 1ULL << 0;  // ABI 4
constexpr uint64_t kNetConnectTcp = 1ULL << 1;
constexpr uint64_t kScopeAbstractUnixSocket = 1ULL << 0; // ABI 6
constexpr uint64_t kScopeSignal = 1ULL << 1;

// struct landlock_ruleset_attr of ABI 6; the kernel is given the prefix its ABI knows.
struct RulesetAttr {
    uint64_t handledAccessFs = 0;
    uint64_t handledAccessNet = 0;
    uint64_t scoped = 0;
};

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

Diagnostic sandboxError(const std::string& message) {
    return makeError({}, "cannot set up the sandbox: " + message);
}

// Device files programs open for writing: /dev/null, and the NVIDIA driver's (/dev/nvidiactl, /dev/nvidia0,
// /dev/nvidia-uvm, /dev/nvidia-caps/...), which CUDA opens read-write when it starts or creates a context.
std::vector<std::string> writableDevices() {
    std::vector<std::string> out{"/dev/null"};
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/dev", ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind("nvidia", 0) == 0)
            out.push_back(entry.path().string());
    }
    return out;
}

size_t threadCount() {
    std::error_code ec;
    size_t n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/task", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
        ++n;
    return n;
}

} // namespace

Expected<SandboxReport> applySandbox(const std::vector<std::string>& writable) {
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 0) {
        if (errno == ENOSYS)
            return sandboxError("this kernel has no Landlock (Linux 5.13 or later built with "
                                "CONFIG_SECURITY_LANDLOCK), or a seccomp filter hides it");
        if (errno == EOPNOTSUPP)
            return sandboxError("Landlock is disabled in this kernel (add 'landlock' to the lsm= boot "
                                "parameter)");
        return sandboxError(std::string("Landlock: ") + std::strerror(errno));
    }
    SandboxReport report;
    report.abi = static_cast<int>(abi);
    RulesetAttr attr;
    attr.handledAccessFs =
        kFsChanges | (abi >= 2 ? kFsRefer : 0) | (abi >= 3 ? kFsTruncate : 0) | (abi >= 5 ? kFsIoctlDev : 0);
    size_t attrSize = sizeof(uint64_t);
    if (abi >= 4) {
        attr.handledAccessNet = kNetBindTcp | kNetConnectTcp; // no rule allows a port: no TCP at all
        attrSize = 2 * sizeof(uint64_t);
        report.network = true;
    }
    if (abi >= 6) {
        attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
        attrSize = sizeof(RulesetAttr);
        report.scoped = true;
    }
    const Fd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attrSize, 0)));
    if (ruleset.get() < 0)
        return sandboxError(std::string("landlock_create_ruleset: ") + std::strerror(errno));

    // A file takes only file rights (writing, truncating, device ioctls); a directory every right beneath it.
    const uint64_t fileRights = kFsWriteFile | (attr.handledAccessFs & (kFsTruncate | kFsIoctlDev));
    auto allow = [&](const std::string& path, bool required) -> std::optional<Diagnostic> {
        const Fd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
        struct stat st {};
        if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) {
            if (!required)
                return std::nullopt;
            return sandboxError("cannot allow writing " + path + ": " + std::strerror(errno));
        }
        landlock_path_beneath_attr rule{};
        rule.allowed_access = S_ISDIR(st.st_mode) ? attr.handledAccessFs : fileRights;
        rule.parent_fd = fd.get();
        if (::syscall(SYS_landlock_add_rule, ruleset.get(), LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
            return sandboxError("landlock_add_rule " + path + ": " + std::strerror(errno));
        return std::nullopt;
    };
    for (const std::string& path : writable)
        if (std::optional<Diagnostic> d = allow(path, true))
            return *d;
    for (const std::string& path : writableDevices())
        if (std::optional<Diagnostic> d = allow(path, false))
            return *d;

    // Without no_new_privs an unprivileged process may not restrict itself (a setuid program it started could
    // be confused by the restrictions); it also keeps any program started later from gaining privileges.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return sandboxError(std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno));
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
        return sandboxError(std::string("landlock_restrict_self: ") + std::strerror(errno));
    const size_t threads = threadCount();
    report.otherThreads = threads > 0 ? threads - 1 : 0;
    return report;
}

namespace {

// The fault guard's state. A signal handler reaches no object but a global; the main thread writes it (the
// file once, the node around each kernel call) and the handler reads it on whichever thread faulted.
struct FaultState {
    char file[4096] = {};
    int exitCode = 0;
    std::atomic<uint32_t> line{0};
    std::atomic<const char*> node{nullptr};
    std::atomic<const char*> op{nullptr};
};
constinit FaultState gFault;
// Set by the first thread that faults: a kernel's worker threads may trap together, and one line is enough.
constinit std::atomic<bool> gFaulted{false};

// A stack for the handler, so that a stack overflow (SIGSEGV with no stack left) is reported too.
alignas(16) char gAltStack[64 * 1024];

// Only async-signal-safe calls from here on: write, strlen, pause, _exit.
void writeText(const char* s) {
    size_t n = std::strlen(s);
    while (n > 0) {
        const ssize_t w = ::write(STDERR_FILENO, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        s += w;
        n -= static_cast<size_t>(w);
    }
}

void writeNumber(uint32_t v) {
    char digits[12];
    char* p = digits + sizeof digits;
    *--p = '\0';
    do {
        *--p = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v);
    writeText(p);
}

void onFault(int signal) {
    if (gFaulted.exchange(true))
        for (;;)
            ::pause(); // the first thread is reporting and ends the process
    const char* what =
        signal == SIGFPE   ? "the kernel raised SIGFPE (an integer division by zero or overflow, such as "
                             "INT64_MIN / -1, that LibTorch does not check)"
        : signal == SIGBUS ? "the kernel raised SIGBUS (a bad memory access)"
                           : "the kernel raised SIGSEGV (a memory access out of bounds, such as an "
                             "index no kernel checks)";
    writeText(gFault.file[0] ? gFault.file : "<input>");
    const char* node = gFault.node.load(std::memory_order_relaxed);
    const char* op = gFault.op.load(std::memory_order_relaxed);
    if (const uint32_t line = gFault.line.load(std::memory_order_relaxed); node && line) {
        writeText(":");
        writeNumber(line);
    }
    writeText(": error: ");
    if (node) {
        writeText("node '");
        writeText(node);
        writeText("' (");
        writeText(op ? op : "?");
        writeText("): ");
        writeText(what);
    } else {
        writeText(signal == SIGFPE   ? "fatal signal SIGFPE"
                  : signal == SIGBUS ? "fatal signal SIGBUS"
                                     : "fatal signal SIGSEGV");
        writeText(" outside any kernel (a bug in jointscope: please report it)");
    }
    writeText("\n");
    ::_exit(gFault.exitCode);
}

} // namespace

void installFaultGuard(const std::string& file, int exitCode) {
    std::strncpy(gFault.file, file.c_str(), sizeof gFault.file - 1);
    gFault.exitCode = exitCode;
    stack_t stack{};
    stack.ss_sp = gAltStack;
    stack.ss_size = sizeof gAltStack;
    ::sigaltstack(&stack, nullptr);
    struct sigaction action {};
    action.sa_handler = &onFault;
    action.sa_flags = SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    for (int signal : {SIGFPE, SIGSEGV, SIGBUS})
        ::sigaction(signal, &action, nullptr);
}

FaultScope::FaultScope(uint32_t line, const std::string& node, const std::string& op)
    : line_(gFault.line.load(std::memory_order_relaxed)), node_(gFault.node.load(std::memory_order_relaxed)),
      op_(gFault.op.load(std::memory_order_relaxed)) {
    gFault.node.store(nullptr, std::memory_order_relaxed); // never a node with another node's op
    gFault.line.store(line, std::memory_order_relaxed);
    gFault.op.store(op.c_str(), std::memory_order_relaxed);
    gFault.node.store(node.c_str(), std::memory_order_release);
}

FaultScope::~FaultScope() {
    gFault.node.store(nullptr, std::memory_order_relaxed);
    gFault.line.store(line_, std::memory_order_relaxed);
    gFault.op.store(op_, std::memory_order_relaxed);
    gFault.node.store(node_, std::memory_order_release);
}

} // namespace jointscope::runtime
