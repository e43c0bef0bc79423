#include "Command.h"

#include "partition/CompileSettings.h"

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
std::vector<OptionSpec> withRuntimeOptions(std::vector<OptionSpec> own) {
    own.insert(
        own.end(),
        {{"--device", "", "D", "cpu (default), cuda or cuda:N"},
         {"--seed", "", "N", "seed of the generated inputs and of random ops (default 0)"},
         {"--bind", "", "S=N", "size of a symbolic dimension (repeatable; default 16)"},
         {"--no-sandbox", "", "",
          "run without the OS guard (Landlock: no writes but the outputs, no TCP); only for graphs you "
          "trust, on kernels without Landlock"},
         {"--no-op-allowlist", "", "",
          "run ops the allowlist refuses (file, storage and process-wide ops), still inside the OS guard "
          "(for testing it; not with --no-sandbox)"},
         {"--debug", "", "", "LibTorch errors with their C++ backtrace; no fault guard"}});
    return own;
}

std::string synopsis(const Command& command) {
    std::string out;
    const std::vector<std::string_view> forms =
        command.forms.empty() ? std::vector<std::string_view>{""} : command.forms;
    constexpr size_t kWidth = 110; // a terminal line, "usage: jointscope-cli " included
    const std::string indent(std::string_view("usage: jointscope-cli ").size() + command.name.size() + 1,
                             ' ');
    for (std::string_view form : forms) {
        std::string line = std::string(command.name);
        if (!form.empty())
            line += " " + std::string(form);
        size_t width = indent.size() + line.size() - command.name.size() - 1;
        for (const OptionSpec& o : command.options) {
            if (form.find(o.name) != std::string_view::npos)
                continue; // the form names it (profile-db export --out FILE.json)
            std::string text = std::string(o.name);
            if (!o.valueName.empty())
                text += " " + std::string(o.valueName);
            text = o.required ? text : "[" + text + "]";
            if (width + 1 + text.size() > kWidth) {
                line += "\n" + indent;
                width = indent.size();
            } else {
                line += " ";
                ++width;
            }
            line += text;
            width += text.size();
        }
        out += (out.empty() ? "" : "\n       jointscope-cli ") + line;
    }
    return out;
}

int usageError(const Command& command, const std::string& message) {
    std::fprintf(stderr, "jointscope-cli: error: %s\nusage: jointscope-cli %s\n", message.c_str(),
                 synopsis(command).c_str());
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
    std::fprintf(out, "usage: jointscope-cli %s\n\n%.*s\n", synopsis(command).c_str(),
                 int(command.summary.size()), command.summary.data());
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

Diagnostic atInputFile(const ParsedArgs& args, Diagnostic diagnostic) {
    if (diagnostic.loc.file.empty() && !args.positional.empty())
        diagnostic.loc.file = args.positional[0];
    return diagnostic;
}

int readIntOption(const Command& command, const ParsedArgs& args, std::string_view option, int low, int high,
                  int& into) {
    const TypedOption<int64_t> n = integerOption(args, option, low, high);
    if (!n.error.empty())
        return usageError(command, n.error);
    if (n.value)
        into = static_cast<int>(*n.value);
    return kExitOk;
}

bool writeOutputFile(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out)
        std::fprintf(stderr, "%s: error: cannot write file\n", path.c_str());
    return bool(out);
}

int openChosenGraph(const Command& command, const ParsedArgs& args, std::optional<GraphFile>& file,
                    std::optional<size_t>& index) {
    Expected<GraphFile> opened = openGraphFile(args);
    if (!opened)
        return inputError(opened.error());
    std::string error;
    index = chooseGraph(*opened, args, error);
    if (!error.empty())
        return usageError(command, error);
    file.emplace(opened.take());
    return kExitOk;
}

int loadOneGraph(const Command& command, const ParsedArgs& args, Graph& graph, GraphOrigin* origin) {
    std::optional<GraphFile> file;
    std::optional<size_t> index;
    if (int code = openChosenGraph(command, args, file, index); code != kExitOk)
        return code;
    if (!index)
        return usageError(command, file->fileName() + " holds " + std::to_string(file->graphs().size()) +
                                       " graphs: choose one with --graph");
    Expected<Graph> loaded = file->load(*index);
    if (!loaded)
        return inputError(loaded.error());
    graph = loaded.take();
    if (origin)
        *origin =
            GraphOrigin{file->graphs()[*index], file->format(), partition::loggedConfigFor(*file, *index)};
    return kExitOk;
}

// Loads the joint graph and settles how many of its outputs are forward outputs (--num-fwd-outputs, else what
// the file says).
int loadJointGraph(const Command& command, const ParsedArgs& args, Graph& graph, GraphOrigin* origin) {
    if (int code = loadOneGraph(command, args, graph, origin); code != kExitOk)
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
