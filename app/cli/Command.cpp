#include "Command.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

namespace jointscope::cli {

OptionSpec graphOption() {
    return {"--graph", "-g", "G", "graph to use: INDEX, KIND or KIND@COMPILE_ID (e.g. aot_joint_graph@0/0)"};
}
OptionSpec metaOption() {
    return {"--meta", "", "F", "torch 1.13 meta sidecar (default: <stem>.meta.json beside FILE)"};
}
OptionSpec jsonOption() {
    return {"--json", "", "", "machine-readable JSON output"};
}
OptionSpec noSandboxOption() {
    return {
        "--no-sandbox", "", "",
        "run without the OS guard (Landlock: no writes but the outputs, no TCP); only for graphs you trust, "
        "on kernels without Landlock"};
}
OptionSpec noOpAllowlistOption() {
    return {"--no-op-allowlist", "", "",
            "run ops the allowlist refuses (file, storage and process-wide ops), still inside the OS guard "
            "(for testing it; not with --no-sandbox)"};
}
OptionSpec debugOption() {
    return {"--debug", "", "", "LibTorch errors with their C++ backtrace; no fault guard"};
}

int usageError(const Command& command, const std::string& message) {
    std::fprintf(stderr, "jointscope-cli: error: %s\nusage: jointscope-cli %.*s\n", message.c_str(),
                 int(command.synopsis.size()), command.synopsis.data());
    return kExitUsage;
}

int inputError(const Diagnostic& diagnostic) {
    std::fprintf(stderr, "%s\n", diagnostic.format().c_str());
    return kExitBadInput;
}

Expected<GraphFile> openGraphFile(const ParsedArgs& args) {
    OpenOptions options;
    options.metaPath = args.valueOr("--meta", "");
    return GraphFile::open(args.positional.at(0), options);
}

std::optional<size_t> chooseGraph(const GraphFile& file, const ParsedArgs& args, std::string& error) {
    if (std::optional<std::string> spec = args.value("--graph")) {
        std::optional<size_t> index = file.select(*spec);
        if (!index)
            error = "no graph '" + *spec + "' in " + file.fileName() + " (it has " +
                    std::to_string(file.graphs().size()) + "; `jointscope-cli info " + file.fileName() +
                    "` lists them)";
        return index;
    }
    if (file.graphs().size() == 1)
        return 0;
    return std::nullopt;
}

void printHelp(const Command& command, std::FILE* out) {
    std::fprintf(out, "usage: jointscope-cli %.*s\n\n%.*s\n", int(command.synopsis.size()),
                 command.synopsis.data(), int(command.summary.size()), command.summary.data());
    if (!command.options.empty())
        std::fprintf(out, "\noptions:\n");
    for (const OptionSpec& o : command.options) {
        std::string left = std::string(o.name);
        if (!o.shortName.empty())
            left = std::string(o.shortName) + ", " + left;
        if (!o.valueName.empty())
            left += " " + std::string(o.valueName);
        std::fprintf(out, "  %-22s %.*s\n", left.c_str(), int(o.help.size()), o.help.data());
    }
}

bool writeOutputFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out)
        std::fprintf(stderr, "%s: error: cannot write file\n", path.c_str());
    return bool(out);
}

int loadOneGraph(const Command& command, const ParsedArgs& args, Graph& graph, GraphEntry* entry,
                 FileFormat* format) {
    Expected<GraphFile> file = openGraphFile(args);
    if (!file)
        return inputError(file.error());
    std::string error;
    std::optional<size_t> index = chooseGraph(*file, args, error);
    if (!error.empty())
        return usageError(command, error);
    if (!index)
        return usageError(command, file->fileName() + " holds " + std::to_string(file->graphs().size()) +
                                       " graphs: choose one with --graph");
    Expected<Graph> loaded = file->load(*index);
    if (!loaded)
        return inputError(loaded.error());
    graph = loaded.take();
    if (entry)
        *entry = file->graphs()[*index];
    if (format)
        *format = file->format();
    return kExitOk;
}

// Loads the joint graph and settles how many of its outputs are forward outputs (--num-fwd-outputs, else what
// the file says).
int loadJointGraph(const Command& command, const ParsedArgs& args, Graph& graph) {
    if (int code = loadOneGraph(command, args, graph); code != kExitOk)
        return code;
    const TypedOption<int64_t> count = integerOption(args, "--num-fwd-outputs", 0, int64_t(1) << 40);
    if (!count.error.empty())
        return usageError(command, count.error);
    if (count.value)
        graph.numFwdOutputs = *count.value;
    if (!graph.numFwdOutputs)
        return inputError(
            makeError({args.positional[0], 0, 0},
                      "graph '" + graph.name +
                          "': how many outputs are forward outputs is unknown; pass --num-fwd-outputs N "
                          "(torch 1.13 graphs carry it in their .meta.json sidecar, torch >= 2.3 in "
                          "output descriptors)"));
    return kExitOk;
}

// The saved values of an edited decision.json (saved, then saved_sym).
Expected<std::vector<std::string>> readSavedNames(const std::string& path) {
    std::ifstream in(path);
    if (!in)
        return makeError({path, 0, 0}, "cannot open decision file");
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("saved") || !doc.at("saved").is_array())
        return makeError({path, 1, 1},
                         "a decision file is a JSON object with a \"saved\" list of node names");
    std::vector<std::string> names;
    for (const char* key : {"saved", "saved_sym"})
        if (doc.contains(key) && doc.at(key).is_array())
            for (const nlohmann::json& name : doc.at(key)) {
                if (!name.is_string())
                    return makeError({path, 1, 1}, std::string("\"") + key + "\" must list node names");
                names.push_back(name.get<std::string>());
            }
    return names;
}

} // namespace jointscope::cli
