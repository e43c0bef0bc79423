// jointscope-cli convert: one graph to jointscope JSON or FX text.
#include "Command.h"

#include "io/FxWriter.h"
#include "io/JsonFormat.h"

#include <cstdio>
#include <fstream>

namespace jointscope::cli {
namespace {

void setMissingAttribute(Graph& graph, const std::string& key, const std::string& value) {
    if (value.empty())
        return;
    for (const auto& [k, v] : graph.attributes)
        if (k == key)
            return;
    graph.attributes.emplace_back(key, value);
}

int runConvert(const ParsedArgs& args) {
    const std::string to = args.valueOr("--to", "");
    if (to != "json" && to != "fx")
        return usageError(convertCommand(),
                          to.empty() ? "missing --to json|fx" : "unknown --to '" + to + "'");
    const std::optional<std::string> outPath = args.value("--output");
    if (!outPath || outPath->empty())
        return usageError(convertCommand(), "missing -o OUT");

    Expected<GraphFile> file = openGraphFile(args);
    if (!file)
        return inputError(file.error());
    std::string error;
    std::optional<size_t> index = chooseGraph(*file, args, error);
    if (!error.empty())
        return usageError(convertCommand(), error);
    if (!index)
        return usageError(convertCommand(), file->fileName() + " holds " +
                                                std::to_string(file->graphs().size()) +
                                                " graphs: choose one with --graph");
    Expected<Graph> graph = file->load(*index);
    if (!graph)
        return inputError(graph.error());
    // A graph taken out of a log keeps where it came from.
    if (file->format() == FileFormat::TraceLog || file->format() == FileFormat::LogPaste) {
        setMissingAttribute(*graph, "kind", file->graphs()[*index].kind);
        setMissingAttribute(*graph, "compile_id", file->graphs()[*index].compileId);
    }

    const std::string text = to == "json" ? writeJsonGraph(*graph) : writeFxText(*graph);
    if (*outPath == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return kExitOk;
    }
    std::ofstream out(*outPath, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
        std::fprintf(stderr, "%s: error: cannot write file\n", outPath->c_str());
        return kExitBadInput;
    }
    return kExitOk;
}

} // namespace

const Command& convertCommand() {
    static const Command command{
        "convert",
        "convert FILE [--graph G] [--meta F] --to json|fx -o OUT",
        "Write one graph as jointscope JSON (lossless, sidecars included) or FX text (OUT '-' is stdout).",
        {graphOption(),
         metaOption(),
         {"--to", "", "FORMAT", "output format: json or fx"},
         {"--output", "-o", "OUT", "output file ('-' for stdout)"}},
        1,
        1,
        &runConvert,
    };
    return command;
}

} // namespace jointscope::cli
