// OS-level guards of the program that runs graph files on real kernels (jointscope-cli-runtime): Linux
// Landlock keeps it from writing anything but the outputs it was asked for, and a fault guard turns a
// kernel's fatal signal into one located line. docs/runtime.md, "The sandbox", says what each command may
// write.
//
// Linux only, free of LibTorch.
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <string>
#include <vector>

namespace jointscope::runtime {

struct SandboxReport {
    int abi = 0;             // the Landlock ABI version in force
    bool network = false;    // TCP bind and connect are forbidden (ABI >= 4)
    bool scoped = false;     // abstract UNIX sockets and signals to other processes are forbidden (ABI >= 6)
    size_t otherThreads = 0; // threads that existed before and stay unrestricted (CUDA's driver threads)
};

// Forbids this thread, and every thread and process it starts from now on, to change the filesystem (create,
// write, truncate, remove, rename or link anything) except:
//   - `writable`: a file may be opened for writing and truncated; anything beneath a directory may change;
//   - /dev/null and the NVIDIA driver's device files (/dev/nvidia*), which CUDA opens for writing.
// Reading is not restricted: LibTorch and the CUDA libraries load code lazily. With Landlock ABI >= 4 TCP
// bind and connect are forbidden as well; with ABI >= 6 connecting to abstract UNIX sockets and signalling
// other processes. Threads that exist already keep their freedom, so call this before LibTorch starts its
// thread pools. Cannot be undone. Fails, with nothing restricted, when the kernel has no Landlock or has it
// disabled, or a writable path does not exist; the message says which.
Expected<SandboxReport> applySandbox(const std::vector<std::string>& writable);

// From now on a fatal signal (SIGFPE: LibTorch's integer division kernels do not check INT64_MIN / -1;
// SIGSEGV, SIGBUS) ends the program with `exitCode` and one line on stderr: `file:LINE: error: node 'x' (op):
// ...` naming the node whose kernel was running (FaultScope), instead of a death by signal. Installed once,
// by the program (a signal handler is process-wide state).
void installFaultGuard(const std::string& file, int exitCode);

// While alive, the fault guard names this node. The strings are the graph's and must outlive the scope.
// Scopes nest (a higher-order op's body); the inner one names the node.
class FaultScope {
public:
    FaultScope(uint32_t line, const std::string& node, const std::string& op);
    ~FaultScope();
    FaultScope(const FaultScope&) = delete;
    FaultScope& operator=(const FaultScope&) = delete;

private:
    uint32_t line_;
    const char* node_;
    const char* op_;
};

} // namespace jointscope::runtime
