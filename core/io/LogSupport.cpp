#include "io/LogSupport.h"

#include "io/FxReader.h"

namespace jointscope::log_support {
namespace {

void countNodes(GraphEntry& entry, ProblemSink& problems) {
    FxReadOptions options;
    options.fileName = problems.fileName();
    options.firstLine = entry.payloadLine ? entry.payloadLine : 1;
    options.columnOffset = entry.payloadColumn;
    Expected<Graph> graph = readFxText(entry.payload, options);
    if (!graph) {
        Diagnostic error = graph.error();
        error.message = "graph " + entry.title() + ": " + error.message;
        entry.error = error.format();
        problems.add(std::move(error));
        entry.nodes = 0;
        return;
    }
    entry.nodes = graph->size();
    entry.error.clear();
}

} // namespace

void finishIndex(GraphIndex& index, ProblemSink& problems) {
    for (size_t i = 0; i < index.graphs.size(); ++i) {
        GraphEntry entry = index.graphs[i];
        countNodes(entry, problems);
        index.graphs.set(i, entry);
    }
    problems.finish();
}

std::optional<std::string> notPrintedGraphReason(std::string_view payload) {
    LineCursor cursor(payload);
    cursor.next(); // "class NAME(torch.nn.Module):"
    size_t methodIndent = std::string_view::npos;
    bool forward = false;
    while (!cursor.atEnd()) {
        const std::string_view line = trimRight(cursor.next());
        const size_t indent = indentOf(line);
        if (indent == line.size() || line[indent] == '#')
            continue;
        if (methodIndent == std::string_view::npos)
            methodIndent = indent;
        if (indent != methodIndent)
            continue;
        const std::string_view statement = line.substr(indent);
        // print_readable's class body: one "def forward(self, ...)" and the submodules' nested classes.
        if (statement.substr(0, 12) == "def forward(" && !forward) {
            forward = true;
            continue;
        }
        // Nested submodule classes; "):" closing print_readable(expanded_def=True)'s one-argument-a-line
        // signature.
        if (forward && (findGraphModuleClass(statement) == 0 || statement.front() == ')'))
            continue;
        std::string_view shown = statement.substr(0, statement.find_first_of("(:="));
        return "it has '" + std::string(trimRight(shown.substr(0, 60))) + "'" +
               (forward ? "" : " before 'def forward'");
    }
    if (!forward)
        return std::string("it has no 'def forward'");
    return std::nullopt;
}

size_t findGraphModuleClass(std::string_view line) {
    line = trimRight(line);
    static constexpr std::string_view kSuffix = "(torch.nn.Module):";
    if (line.size() < kSuffix.size() || line.substr(line.size() - kSuffix.size()) != kSuffix)
        return std::string_view::npos;
    // The class name has no blanks: "class" is the last word before the name.
    const std::string_view head = line.substr(0, line.size() - kSuffix.size());
    const size_t nameStart = head.find_last_of(" \t");
    if (nameStart == std::string_view::npos || nameStart + 1 == head.size() || nameStart < 5)
        return std::string_view::npos;
    const size_t classPos = nameStart - 5;
    if (head.substr(classPos, 5) != "class" ||
        (classPos > 0 && head[classPos - 1] != ' ' && head[classPos - 1] != '\t'))
        return std::string_view::npos;
    return classPos;
}

std::string compileIdText(std::optional<uint64_t> autogradId, std::optional<uint64_t> frameId,
                          std::optional<uint64_t> frameCompileId, std::optional<uint64_t> attempt) {
    if (!autogradId && !frameId && !frameCompileId)
        return {};
    std::string id;
    if (autogradId)
        id += "!" + std::to_string(*autogradId) + "/";
    id += frameId ? std::to_string(*frameId) : "-";
    id += "/";
    id += frameCompileId ? std::to_string(*frameCompileId) : "-";
    if (attempt && *attempt != 0)
        id += "_" + std::to_string(*attempt);
    return id;
}

std::string stripAnsi(std::string_view line) {
    std::string out;
    out.reserve(line.size());
    for (size_t i = 0; i < line.size(); ++i) {
        if (line[i] != '\x1b') {
            out += line[i];
            continue;
        }
        if (i + 1 < line.size() && line[i + 1] == '[') {
            // CSI: parameters and intermediates (0x20-0x3f), then one final byte (0x40-0x7e).
            size_t j = i + 2;
            while (j < line.size() && static_cast<unsigned char>(line[j]) >= 0x20 &&
                   static_cast<unsigned char>(line[j]) <= 0x3f)
                ++j;
            if (j < line.size() && static_cast<unsigned char>(line[j]) >= 0x40 &&
                static_cast<unsigned char>(line[j]) <= 0x7e)
                ++j;
            i = j - 1;
        }
        // A lone ESC is dropped.
    }
    return out;
}

std::string_view trimRight(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

size_t indentOf(std::string_view line) {
    size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
        ++i;
    return i;
}

} // namespace jointscope::log_support
