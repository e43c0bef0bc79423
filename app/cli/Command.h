// A jointscope-cli subcommand, and the helpers they share (opening a file, choosing a graph, exit codes).
//
// Adding a subcommand: write FooCommand.cpp defining `const Command& fooCommand()` (name, synopsis, options,
// run function), declare it below, list it in kCommands in main.cpp, and add the file to app/CMakeLists.txt.
#pragma once

#include "CliArgs.h"
#include "support/ExitCodes.h"

#include "graph/Graph.h"
#include "io/GraphFile.h"

#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace jointscope::runtime {
struct RunOptions;
}
namespace jointscope::partition {
struct PartitionOptions;
}

namespace jointscope::cli {

struct Command {
    std::string_view name;
    // What each way of calling it takes besides its options: {"FILE"}, {"A B", "DIR"}, {"list", "import F"}.
    // The synopsis adds the options from `options` (synopsis()), so that it never tells another story.
    std::vector<std::string_view> forms;
    std::string_view summary; // one line for the command list
    std::vector<OptionSpec> options;
    size_t minPositional = 0;
    size_t maxPositional = 0;
    int (*run)(const ParsedArgs& args) = nullptr;
};

const Command& infoCommand();
const Command& convertCommand();
const Command& partitionCommand();
const Command& paretoCommand();
const Command& checkCommand();
const Command& splitDwCommand();
const Command& devicesCommand();
const Command& profileDbCommand();
const Command& costCommand();
const Command& shardCommand();
const Command& diffCommand();
// The LibTorch commands. Loading LibTorch takes about 0.65 s, so they run in jointscope-cli-runtime, built
// with it (JOINTSCOPE_CLI_RUNTIME); jointscope-cli lists them (their run is null there) and hands them over,
// and every other command starts at once.
#ifdef JOINTSCOPE_CLI_RUNTIME
#define JOINTSCOPE_RUNTIME_RUN(fn) (fn)
#else
#define JOINTSCOPE_RUNTIME_RUN(fn) nullptr
#endif
#ifdef JOINTSCOPE_HAVE_TORCH
const Command& validateCommand();
const Command& profileCommand();
const Command& runCommand();
#endif

// "partition FILE [--graph G] ... [--json]": each form, then every option of the table the form does not
// name itself, required ones without brackets; forms on lines of their own.
std::string synopsis(const Command& command);

// Options every graph-reading command accepts.
OptionSpec graphOption();
OptionSpec metaOption();
OptionSpec jsonOption();
// A command's own options, then those every command that runs graphs on LibTorch (validate, profile, run)
// accepts: what readRuntimeOptions reads, and the guard's (docs/runtime.md, "Safety").
std::vector<OptionSpec> withRuntimeOptions(std::vector<OptionSpec> own);

// Prints "jointscope-cli: error: message" and the synopsis of command; returns kExitUsage.
int usageError(const Command& command, const std::string& message);
// Prints a located diagnostic (file:line:col: error: ...) to stderr; returns kExitBadInput.
int inputError(const Diagnostic& diagnostic);
// `diagnostic` located at FILE (the first positional) when it names no file: what the engine says about the
// graph it was given.
Diagnostic atInputFile(const ParsedArgs& args, Diagnostic diagnostic);

// A whole-number option in [low, high] into `into`, which keeps its value when the option is absent; kExitOk
// or the usage error's code.
int readIntOption(const Command& command, const ParsedArgs& args, std::string_view option, int low, int high,
                  int& into);

// Opens FILE with --meta applied.
Expected<GraphFile> openGraphFile(const ParsedArgs& args);

// The graph index chosen by --graph, or the only graph of the file; nullopt when the file holds several and
// none was chosen. An unknown --graph spec sets `error`.
std::optional<size_t> chooseGraph(const GraphFile& file, const ParsedArgs& args, std::string& error);

// openGraphFile, then chooseGraph; kExitOk, or the code after printing the input / usage error.
int openChosenGraph(const Command& command, const ParsedArgs& args, std::optional<GraphFile>& file,
                    std::optional<size_t>& index);

void printHelp(const Command& command, std::FILE* out);

// Writes text to path (binary, truncating); prints "path: error: cannot write file" and returns false on
// failure.
bool writeOutputFile(const std::string& path, const std::string& text);

// Where a loaded graph came from.
struct GraphOrigin {
    GraphEntry entry; // its listing (kind and compile id for graphs taken out of logs)
    FileFormat format = FileFormat::FxText;
    std::optional<CompileConfig>
        logged; // torch's joint graph in a TORCH_TRACE log: what its compile ran with
};

// Opens FILE, chooses the graph (--graph, or the only one) and loads it into `graph`. Returns kExitOk, or the
// exit code after printing the usage / located input error. `origin`, when given, receives where it came
// from.
int loadOneGraph(const Command& command, const ParsedArgs& args, Graph& graph, GraphOrigin* origin = nullptr);

// loadOneGraph, then settles how many outputs are forward outputs (--num-fwd-outputs, else what the file
// says; an error when neither does).
int loadJointGraph(const Command& command, const ParsedArgs& args, Graph& graph,
                   GraphOrigin* origin = nullptr);

// The saved values of a decision JSON (what `partition --json` prints, or an edited copy): "saved", then
// "saved_sym".
Expected<std::vector<std::string>> readSavedNames(const std::string& path);

// --memory-budget and --solver (partition, pareto, check) into `options`; kExitOk or the usage error's code.
int readBudgetOptions(const Command& command, const ParsedArgs& args, partition::PartitionOptions& options);

// --device, --seed, --bind, --debug and --no-op-allowlist of the commands that run graphs (validate, profile,
// run).
int readRuntimeOptions(const Command& command, const ParsedArgs& args, runtime::RunOptions& run);

// Before a LibTorch command runs anything: refuses graphs that call an op outside the allowlist (a located
// error naming the node, exit 2). Then the caller creates its outputs and calls enterSandbox.
int refuseUnsafeOps(const ParsedArgs& args, const std::vector<const Graph*>& graphs,
                    const runtime::RunOptions& run);
// Starts the device, installs the fault guard (a kernel's fatal signal becomes a located line and exit
// `faultExit`) and, unless --no-sandbox, forbids writing anything but `writable` (existing files or
// directories) from here on; exit 5 with the reason when the kernel cannot do that.
int enterSandbox(const ParsedArgs& args, const std::vector<std::string>& writable, int faultExit,
                 const runtime::RunOptions& run);

} // namespace jointscope::cli
