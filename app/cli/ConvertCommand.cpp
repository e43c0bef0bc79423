// jointscope-cli convert: one graph to jointscope JSON or FX text.
#include "Command.h"

#include "io/FxWriter.h"
#include "io/JsonFormat.h"

#include <cstdio>

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

    Graph graph;
    GraphOrigin origin;
    if (int code = loadOneGraph(convertCommand(), args, graph, &origin); code != kExitOk)
        return code;
    // A graph taken out of a log keeps where it came from.
    if (origin.format == FileFormat::TraceLog || origin.format == FileFormat::LogPaste) {
        setMissingAttribute(graph, "kind", origin.entry.kind);
        setMissingAttribute(graph, "compile_id", origin.entry.compileId);
    }

    const std::string text = to == "json" ? writeJsonGraph(graph) : writeFxText(graph);
    if (*outPath == "-") {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return kExitOk;
    }
    return writeOutputFile(*outPath, text) ? kExitOk : kExitBadInput;
}

} // namespace

const Command& convertCommand() {
    static const Command command{
        "convert",
        {"FILE"},
        "Write one graph as jointscope JSON (lossless, sidecars included) or FX text (OUT '-' is stdout).",
        {graphOption(),
         metaOption(),
         {"--to", "", "FORMAT", "output format: json or fx", true},
         {"--output", "-o", "OUT", "output file ('-' for stdout)", true}},
        1,
        1,
        &runConvert,
    };
    return command;
}

} // namespace jointscope::cli
