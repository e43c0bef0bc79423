// The facade every front end opens files through: read safely, detect the format, list and load graphs.
#include "io/GraphFile.h"

#include "support/EnumNames.h"
#include "support/Utf8.h"
#include "io/FxReader.h"
#include "io/JsonFormat.h"
#include "io/JsonSupport.h"
#include "io/TraceLog.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace jointscope {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxFileBytes = uint64_t(2) << 30; // 2 GiB
constexpr size_t kHeadBytes = 64 * 1024;              // what format detection looks at

Diagnostic fileError(const std::string& fileName, std::string message) {
    return makeError(SourceLocation{fileName, 0, 0}, std::move(message));
}

Expected<std::string> readWholeFile(const std::string& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status))
        return fileError(path, "cannot open file: no such file");
    if (fs::is_directory(status))
        return fileError(path, "cannot open file: is a directory");
    const uintmax_t size = fs::is_regular_file(status) ? fs::file_size(path, ec) : 0;
    if (ec)
        return fileError(path, "cannot read file size: " + ec.message());
    if (size > kMaxFileBytes)
        return fileError(path, "file is " + std::to_string(size >> 20) +
                                   " MiB; jointscope opens files up to 2 GiB");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return fileError(path, "cannot open file for reading");
    std::string text;
    text.resize(static_cast<size_t>(size));
    in.read(text.data(), static_cast<std::streamsize>(size));
    text.resize(static_cast<size_t>(in.gcount()));
    // Special files report size 0: read them in chunks, still bounded.
    if (!fs::is_regular_file(status)) {
        char buffer[65536];
        while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
            text.append(buffer, static_cast<size_t>(in.gcount()));
            if (text.size() > kMaxFileBytes)
                return fileError(path, "input larger than 2 GiB");
        }
    }
    return text;
}

// A located error at the first byte that cannot be in a text file (NUL, other control bytes, invalid UTF-8).
std::optional<Diagnostic> checkText(std::string_view text, const std::string& fileName) {
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const bool control = c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v' &&
                             c != 0x1B && c != 0x07 && c != 0x08;
        const size_t length = control ? 0 : utf8SequenceLength(text, i);
        if (length == 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", c);
            return makeError(json_support::locationOf(text, i, fileName),
                             std::string("binary file: byte ") + hex +
                                 " is not text; expected FX text, a "
                                 "TORCH_TRACE log, a TORCH_LOGS paste or "
                                 "jointscope JSON");
        }
        i += length;
    }
    if (text.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos)
        return makeError(SourceLocation{fileName, 1, 1}, "empty file: expected a graph");
    return std::nullopt;
}

bool isSingleGraph(FileFormat format) {
    return format == FileFormat::FxText || format == FileFormat::Json;
}

std::optional<Diagnostic> applySidecarFile(Graph& graph, const std::string& path, bool reference) {
    Expected<std::string> text = readWholeFile(path);
    if (!text)
        return text.error();
    if (auto problem = checkText(*text, path))
        return problem;
    return reference ? applyReferenceDecisions(graph, *text, path) : applyMetaSidecar(graph, *text, path);
}

} // namespace

std::string_view formatName(FileFormat format) {
    static constexpr EnumName<FileFormat> kNames[] = {{FileFormat::FxText, "fx"},
                                                      {FileFormat::TraceLog, "trace-log"},
                                                      {FileFormat::LogPaste, "log-paste"},
                                                      {FileFormat::Json, "json"}};
    return nameOf(kNames, format, "fx");
}

Expected<GraphFile> GraphFile::open(const std::string& path, const OpenOptions& options) {
    Expected<std::string> text = readWholeFile(path);
    if (!text)
        return text.error();
    return fromText(text.take(), path, options);
}

Expected<GraphFile> GraphFile::fromText(std::string text, std::string fileName, const OpenOptions& options) {
    if (text.size() > kMaxFileBytes)
        return fileError(fileName, "input larger than 2 GiB");
    if (auto problem = checkText(text, fileName))
        return *problem;
    GraphFile file;
    file.fileName_ = std::move(fileName);
    file.options_ = options;
    const std::string_view head = std::string_view(text).substr(0, kHeadBytes);
    if (looksLikeJsonGraph(head))
        file.format_ = FileFormat::Json;
    else if (looksLikeTraceLog(head))
        file.format_ = FileFormat::TraceLog;
    else if (looksLikeLogPaste(head))
        file.format_ = FileFormat::LogPaste;
    else if (head.find_first_not_of(" \t\r\n") != std::string_view::npos &&
             head[head.find_first_not_of(" \t\r\n")] == '{')
        file.format_ = FileFormat::Json; // some other JSON: readJsonGraph explains what is missing
    else
        file.format_ = FileFormat::FxText;

    if (file.format_ == FileFormat::TraceLog || file.format_ == FileFormat::LogPaste) {
        GraphIndex index = file.format_ == FileFormat::TraceLog ? indexTraceLog(text, file.fileName_)
                                                                : indexLogPaste(text, file.fileName_);
        file.graphs_ = std::move(index.graphs);
        file.problems_ = std::move(index.problems);
        for (size_t i = 0; i < file.graphs_.size(); ++i)
            file.graphs_[i].index = static_cast<uint32_t>(i);
        return file;
    }

    GraphEntry entry;
    entry.kind = formatName(file.format_);
    entry.line = 1;
    entry.payloadLine = 1;
    if (file.format_ == FileFormat::Json) {
        // A file that is not a jointscope graph at all fails at open; schema errors come with load(), as for
        // FX.
        Expected<json_support::JsonGraphSummary> summary =
            json_support::summarizeJsonGraph(text, file.fileName_);
        if (!summary)
            return summary.error();
        if (!summary->kind.empty())
            entry.kind = summary->kind;
        entry.compileId = summary->compileId;
        entry.nodes = summary->nodes;
    }
    entry.title = entry.compileId.empty() ? entry.kind : "[" + entry.compileId + "] " + entry.kind;
    file.graphs_.push_back(std::move(entry));
    file.text_ = std::move(text);
    return file;
}

Expected<Graph> GraphFile::load(size_t index) const {
    if (index >= graphs_.size())
        return fileError(fileName_, "no graph " + std::to_string(index) + " (the file has " +
                                        std::to_string(graphs_.size()) + ")");
    const GraphEntry& entry = graphs_[index];
    Expected<Graph> graph = [&]() -> Expected<Graph> {
        if (format_ == FileFormat::Json)
            return readJsonGraph(text_, fileName_);
        FxReadOptions fx;
        fx.fileName = fileName_;
        if (isSingleGraph(format_))
            return readFxText(text_, fx);
        fx.firstLine = entry.payloadLine ? entry.payloadLine : 1;
        fx.columnOffset = entry.payloadColumn;
        return readFxText(entry.payload, fx);
    }();
    if (!graph)
        return graph;
    if (entry.staticInputIndices) { // as export_joint records it: the primals torch treats as static
        std::string list;
        for (int64_t i : *entry.staticInputIndices)
            list += (list.empty() ? "" : ", ") + std::to_string(i);
        graph->attributes.emplace_back("static_lifetime_input_indices", "[" + list + "]");
    }

    // Sidecars: an explicit --meta applies to any graph; automatic ones only beside single-graph FX files.
    std::string metaPath = options_.metaPath;
    std::string referencePath;
    if (format_ == FileFormat::FxText && options_.autoSidecars && !fileName_.empty()) {
        const fs::path path(fileName_);
        if (metaPath.empty()) {
            fs::path candidate = path.parent_path() / (path.stem().string() + ".meta.json");
            std::error_code ec;
            if (fs::is_regular_file(candidate, ec))
                metaPath = candidate.string();
        }
        if (path.filename() == "joint.txt") {
            fs::path candidate = path.parent_path() / "reference.json";
            std::error_code ec;
            if (fs::is_regular_file(candidate, ec))
                referencePath = candidate.string();
        }
    }
    if (!metaPath.empty())
        if (auto problem = applySidecarFile(*graph, metaPath, false))
            return *problem;
    if (!referencePath.empty())
        if (auto problem = applySidecarFile(*graph, referencePath, true))
            return *problem;
    return graph;
}

std::optional<size_t> GraphFile::select(std::string_view spec) const {
    if (spec.empty())
        return std::nullopt;
    if (spec.find_first_not_of("0123456789") == std::string_view::npos) {
        if (spec.size() > 9)
            return std::nullopt;
        const size_t index = std::stoul(std::string(spec));
        return index < graphs_.size() ? std::optional<size_t>(index) : std::nullopt;
    }
    const size_t at = spec.find('@');
    const std::string_view kind = spec.substr(0, at);
    const std::string_view compileId =
        at == std::string_view::npos ? std::string_view() : spec.substr(at + 1);
    for (size_t i = 0; i < graphs_.size(); ++i) {
        if (graphs_[i].kind != kind)
            continue;
        if (at == std::string_view::npos || graphs_[i].compileId == compileId)
            return i;
    }
    return std::nullopt;
}

} // namespace jointscope
