// jointscope-cli: the command-line front end (no Qt). One file per subcommand; see Command.h.
#include "Command.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#ifndef JOINTSCOPE_VERSION
#define JOINTSCOPE_VERSION "unknown"
#endif

namespace jointscope::cli {
namespace {

using CommandFn = const Command& (*)();
constexpr CommandFn kCommands[] = {
    &infoCommand,     &convertCommand,   &partitionCommand, &paretoCommand, &checkCommand, &splitDwCommand,
    &devicesCommand,  &profileDbCommand, &costCommand,      &shardCommand,  &diffCommand,
#ifdef JOINTSCOPE_HAVE_TORCH
    &validateCommand, &profileCommand,   &runCommand,
#endif
};

const Command* findCommand(std::string_view name) {
    for (CommandFn fn : kCommands)
        if (fn().name == name)
            return &fn();
    return nullptr;
}

#if defined(JOINTSCOPE_HAVE_TORCH) && !defined(JOINTSCOPE_CLI_RUNTIME)
// Runs the command line in jointscope-cli-runtime, next to this program (Command.h). Returns only on failure.
int handOver(const std::vector<std::string>& argv) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
    const std::filesystem::path helper = self.parent_path() / "jointscope-cli-runtime";
    std::vector<std::string> all{helper.string()};
    all.insert(all.end(), argv.begin(), argv.end());
    std::vector<char*> raw;
    for (std::string& a : all)
        raw.push_back(a.data());
    raw.push_back(nullptr);
    std::fflush(stdout);
    ::execv(helper.c_str(), raw.data());
    std::fprintf(stderr, "jointscope-cli: error: %s runs in %s, which cannot be started: %s\n",
                 argv[0].c_str(), helper.c_str(), std::strerror(errno));
    return kExitUsage;
}
#endif

void printUsage(std::FILE* out) {
    std::fprintf(out,
                 "usage: jointscope-cli COMMAND [ARGS...]\n       jointscope-cli help COMMAND | --help | "
                 "--version\n\ncommands:\n");
    for (CommandFn fn : kCommands) {
        const Command& c = fn();
        std::fprintf(out, "  %-10.*s %.*s\n", int(c.name.size()), c.name.data(), int(c.summary.size()),
                     c.summary.data());
    }
    std::fprintf(out, "\nFILE is FX text, a TORCH_TRACE log, a TORCH_LOGS paste or jointscope JSON "
                      "(docs/formats.md).\nExit status: 0 ok, 1 the result differs (check, validate), 2 bad "
                      "input, 64 usage error.\n");
}

int run(const std::vector<std::string>& argv) {
    if (argv.empty()) {
        printUsage(stderr);
        return kExitUsage;
    }
    const std::string& first = argv[0];
    if (first == "--help" || first == "-h" || first == "help") {
        if (first == "help" && argv.size() > 1) {
            const Command* command = findCommand(argv[1]);
            if (!command) {
                std::fprintf(stderr, "jointscope-cli: error: unknown command '%s'\n", argv[1].c_str());
                return kExitUsage;
            }
            printHelp(*command, stdout);
            return kExitOk;
        }
        printUsage(stdout);
        return kExitOk;
    }
    if (first == "--version" || first == "-V") {
        std::printf("jointscope-cli %s\n", JOINTSCOPE_VERSION);
        return kExitOk;
    }
    const Command* command = findCommand(first);
    if (!command) {
        std::fprintf(stderr, "jointscope-cli: error: unknown command '%s'\n", first.c_str());
        printUsage(stderr);
        return kExitUsage;
    }
#if defined(JOINTSCOPE_HAVE_TORCH) && !defined(JOINTSCOPE_CLI_RUNTIME)
    bool measure = false, help = false;
    for (const std::string& arg : argv) {
        measure = measure || arg == "--measure";
        help = help || arg == "--help" || arg == "-h";
    }
    if (!help && (!command->run || (command->name == "devices" && measure)))
        return handOver(argv);
#endif
    const std::span<const std::string> rest(argv.begin() + 1, argv.end());
    for (const std::string& arg : rest) {
        if (arg == "--help" || arg == "-h") {
            printHelp(*command, stdout);
            return kExitOk;
        }
    }
    auto [args, error] = parseArgs(rest, command->options);
    if (!args)
        return usageError(*command, error);
    if (args->positional.size() < command->minPositional)
        return usageError(*command, "missing arguments");
    if (args->positional.size() > command->maxPositional)
        return usageError(*command, "unexpected argument '" + args->positional[command->maxPositional] + "'");
    return command->run(*args);
}

} // namespace
} // namespace jointscope::cli

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    try {
        return jointscope::cli::run(args);
    } catch (const std::exception& e) {
        // Readers report problems as diagnostics; this is the last line of defence against a crash.
        // LibTorch's messages go on with a C++ backtrace: its first line says what went wrong (--debug keeps
        // the rest).
        std::string what = e.what();
        if (std::find(args.begin(), args.end(), "--debug") == args.end())
            what = what.substr(0, what.find('\n'));
        std::fprintf(stderr, "jointscope-cli: internal error: %s\n", what.c_str());
        return jointscope::kExitBadInput;
    }
}
