// jointscope-cli run: one run of a graph on generated inputs, its inputs and outputs written as safetensors.
#include "Command.h"

#include "runtime/Runtime.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

namespace jointscope::cli {
#ifdef JOINTSCOPE_CLI_RUNTIME
namespace {

int runRun(const ParsedArgs& args) {
    const Command& command = runCommand();
    runtime::RunOptions run;
    if (int code = readRuntimeOptions(command, args, run); code != kExitOk)
        return code;
    const std::optional<std::string> out = args.value("--save");
    if (!out)
        return usageError(command, "missing --save OUT.safetensors");
    Graph graph;
    if (int code = loadOneGraph(command, args, graph); code != kExitOk)
        return code;
    if (int code = refuseUnsafeOps(args, {&graph}, run); code != kExitOk)
        return code;
    // The sandbox allows writing OUT alone, and Landlock's rules name existing files: create OUT now (empty;
    // an existing one is kept as it is until the run has succeeded).
    if (!args.has("--no-sandbox")) {
        const int fd = ::open(out->c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            std::fprintf(stderr, "%s: error: cannot write file: %s\n", out->c_str(), std::strerror(errno));
            return kExitBadInput;
        }
        ::close(fd);
    }
    if (int code = enterSandbox(args, {*out}, kExitBadInput, run); code != kExitOk)
        return code;
    Expected<size_t> outputs = runtime::runToSafetensors(graph, run, *out);
    if (!outputs)
        return inputError(atInputFile(args, outputs.error()));
    std::printf("%s: ran %zu nodes on %s (seed %llu), %zu outputs; inputs and outputs written to %s\n",
                args.positional[0].c_str(), graph.size(), run.device.c_str(),
                static_cast<unsigned long long>(run.seed), *outputs, out->c_str());
    return kExitOk;
}

} // namespace
#endif

const Command& runCommand() {
    static const Command command{
        "run",
        {"FILE"},
        "Run a graph once on generated inputs; write its inputs and outputs (safetensors) for comparison.",
        withRuntimeOptions(
            {graphOption(),
             metaOption(),
             {"--save", "-o", "OUT", "safetensors file: input:NAME and output:I tensors", true}}),
        1,
        1,
        JOINTSCOPE_RUNTIME_RUN(&runRun),
    };
    return command;
}

} // namespace jointscope::cli
