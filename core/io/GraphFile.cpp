// The facade every front end opens files through: read safely, detect the format, list and load graphs.
#include "io/GraphFile.h"

#include "io/FxReader.h"
#include "io/JsonFormat.h"
#include "io/JsonSupport.h"
#include "io/Md5.h"
#include "io/RankLogs.h"
#include "io/TraceLog.h"
#include "support/EnumNames.h"
#include "support/Utf8.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <system_error>
#include <utility>

namespace jointscope {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxFileBytes = uint64_t(2) << 30; // 2 GiB
constexpr size_t kHeadBytes = 64 * 1024;              // what format detection looks at

Diagnostic fileError(const std::string& fileName, std::string message) {
    return makeError(SourceLocation{fileName, 0, 0}, std::move(message));
}

Diagnostic fileWarning(const std::string& fileName, std::string message) {
    return Diagnostic{Severity::Warning, SourceLocation{fileName, 0, 0}, std::move(message)};
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

// The first kHeadBytes of a file, cut after its last complete line (format detection and the text check look
// at it); an error for what is not a readable regular file.
Expected<std::string> readHead(const std::string& path) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
        return fileError(path, "not a regular file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return fileError(path, "cannot open file for reading");
    std::string head(kHeadBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    if (head.size() == kHeadBytes)
        head.resize(head.rfind('\n') == std::string::npos ? 0 : head.rfind('\n') + 1);
    return head;
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

struct GraphFile::ParsedJson {
    std::mutex mutex;
    std::optional<Graph> graph; // until the first load() takes it
};

Expected<GraphFile> GraphFile::open(const std::string& path, const OpenOptions& options) {
    std::error_code ec;
    if (fs::is_directory(path, ec))
        return openFolder(path, options);
    // A TORCH_TRACE log is indexed from the file, never held: logs grow with models and ranks.
    if (Expected<std::string> head = readHead(path); head && looksLikeTraceLog(*head))
        return openTraceLog(path, *head, options);
    Expected<std::string> text = readWholeFile(path);
    if (!text)
        return text.error();
    return fromText(text.take(), path, options);
}

Expected<GraphFile> GraphFile::openTraceLog(const std::string& path, std::string_view head,
                                            const OpenOptions& options) {
    if (auto problem = checkText(head, path))
        return *problem;
    TraceIndexOptions indexOptions;
    indexOptions.progress = options.progress;
    indexOptions.found = options.graphsFound;
    Expected<GraphIndex> index = indexTraceLogFile(path, indexOptions);
    if (!index)
        return index.error();
    if (index->cancelled)
        return fileError(path, "opening cancelled");
    GraphFile file;
    file.format_ = FileFormat::TraceLog;
    file.fileName_ = path;
    file.options_ = options;
    file.graphs_ = std::move(index->graphs);
    file.problems_ = std::move(index->problems);
    file.collectives_ = std::move(index->collectives);
    file.configRecords_ = std::move(index->configRecords);
    return file;
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
        // Held payloads: the text itself is not kept.
        file.graphs_ = std::move(index.graphs);
        file.problems_ = std::move(index.problems);
        file.collectives_ = std::move(index.collectives);
        if (file.format_ == FileFormat::TraceLog)
            file.configs_ = std::move(index.configs);
        file.graphs_.shiftRows(0, 0, 0);
        return file;
    }

    GraphEntry entry;
    entry.kind = formatName(file.format_);
    entry.line = 1;
    entry.payloadLine = 1;
    if (file.format_ == FileFormat::Json) {
        Expected<Graph> graph = file.readJson(text);
        if (graph) {
            for (const auto& [key, value] : graph->attributes) {
                if (key == "kind" && !value.empty())
                    entry.kind = value;
                else if (key == "compile_id")
                    entry.compileId = value;
            }
            entry.nodes = graph->size();
            file.parsedJson_ = std::make_shared<ParsedJson>();
            file.parsedJson_->graph.emplace(graph.take());
        } else {
            // A file that is not a jointscope graph at all fails at open; schema errors come with load(), as
            // for FX. Only this failing path reads the document a second time.
            Expected<json_support::JsonGraphSummary> summary =
                json_support::summarizeJsonGraph(text, file.fileName_);
            if (!summary)
                return summary.error();
            if (!summary->kind.empty())
                entry.kind = summary->kind;
            entry.compileId = summary->compileId;
            entry.nodes = summary->nodes;
        }
    }
    file.graphs_.push_back(std::move(entry));
    file.text_ = std::move(text);
    return file;
}

Expected<Graph> GraphFile::readJson(std::string_view text) const {
    if (options_.jsonParsed)
        options_.jsonParsed();
    return readJsonGraph(text, fileName_);
}

Expected<Graph> GraphFile::load(size_t index) const {
    if (index >= graphs_.size())
        return fileError(fileName_, "no graph " + std::to_string(index) + " (the file has " +
                                        std::to_string(graphs_.size()) + ")");
    const GraphEntry& entry = graphs_[index];
    Expected<Graph> graph = [&]() -> Expected<Graph> {
        if (format_ == FileFormat::Json) {
            if (parsedJson_) {
                const std::lock_guard<std::mutex> lock(parsedJson_->mutex);
                if (std::optional<Graph> parsed = std::exchange(parsedJson_->graph, std::nullopt))
                    return std::move(*parsed);
            }
            return readJson(text_);
        }
        FxReadOptions fx;
        fx.fileName = entry.file.empty() ? fileName_ : entry.file;
        if (isSingleGraph(format_))
            return readFxText(text_, fx);
        fx.firstLine = entry.payloadLine ? entry.payloadLine : 1;
        fx.columnOffset = entry.payloadColumn;
        if (!entry.payload.empty() || entry.payloadBytes == 0)
            return readFxText(entry.payload, fx);
        Expected<std::string> text = payload(index);
        if (!text)
            return text.error();
        return readFxText(*text, fx);
    }();
    if (!graph)
        return graph;
    // What the log calls the graph (aot_backward_graph, compiled_autograd_graph, ...): the roles follow it.
    const bool logged = format_ == FileFormat::TraceLog || format_ == FileFormat::LogPaste;
    if (logged && !entry.kind.empty() &&
        std::none_of(graph->attributes.begin(), graph->attributes.end(),
                     [](const auto& a) { return a.first == "kind"; }))
        graph->attributes.emplace_back("kind", entry.kind);
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

Expected<std::string> GraphFile::payload(size_t index) const {
    if (index >= graphs_.size())
        return fileError(fileName_, "no graph " + std::to_string(index));
    const GraphEntry& entry = graphs_[index];
    if (!entry.payload.empty() || entry.payloadBytes == 0)
        return entry.payload;
    const std::string& path = entry.file.empty() ? fileName_ : entry.file;
    std::ifstream in(path, std::ios::binary);
    const std::string raw = readLogSpan(in, entry.payloadOffset, entry.payloadOffset + entry.payloadBytes);
    const SourceLocation at{path, entry.payloadLine, 0};
    if (raw.size() != entry.payloadBytes)
        return makeError(at, "cannot read " + entry.title() + ": the log is shorter than when it was opened");
    std::string text = payloadFromLines(raw);
    if (entry.digest && md5Hex(text) != entry.digestHex())
        return makeError(at, "cannot read " + entry.title() + ": the log changed since it was opened");
    if (auto problem = checkText(text, path)) {
        // Located in the payload; the log holds it one line down per line and one tab to the right.
        problem->loc.line += entry.payloadLine ? entry.payloadLine - 1 : 0;
        problem->loc.col += entry.payloadColumn;
        return *problem;
    }
    return text;
}

std::pair<std::string, std::string> splitGraphReference(const std::string& argument) {
    std::error_code ec;
    const size_t hash = argument.rfind('#');
    if (hash == std::string::npos || std::filesystem::exists(argument, ec))
        return {argument, {}};
    return {argument.substr(0, hash), argument.substr(hash + 1)};
}

std::optional<size_t> GraphFile::select(std::string_view spec) const {
    std::optional<int32_t> rank;
    if (spec.starts_with("rank")) {
        const size_t colon = spec.find(':');
        const std::string_view digits = spec.substr(4, colon == std::string_view::npos ? 0 : colon - 4);
        if (digits.empty() || digits.size() > 9 ||
            digits.find_first_not_of("0123456789") != std::string_view::npos)
            return std::nullopt;
        rank = static_cast<int32_t>(std::stol(std::string(digits)));
        spec.remove_prefix(colon + 1);
    }
    if (spec.empty())
        return std::nullopt;
    std::vector<size_t> candidates;
    for (size_t i = 0; i < graphs_.size(); ++i)
        if (!rank || graphs_.rank(i) == *rank)
            candidates.push_back(i);
    if (spec.find_first_not_of("0123456789") == std::string_view::npos) {
        if (spec.size() > 9)
            return std::nullopt;
        const size_t index = std::stoul(std::string(spec));
        return index < candidates.size() ? std::optional<size_t>(candidates[index]) : std::nullopt;
    }
    const size_t at = spec.find('@');
    const std::string_view kind = spec.substr(0, at);
    const std::string_view compileId =
        at == std::string_view::npos ? std::string_view() : spec.substr(at + 1);
    for (size_t i : candidates) {
        if (graphs_.kind(i) != kind)
            continue;
        if (at == std::string_view::npos || graphs_.compileId(i) == compileId)
            return i;
    }
    return std::nullopt;
}

std::pair<const std::string*, const ConfigRecords*> GraphFile::configSource(const GraphEntry& entry) const {
    if (!entry.file.empty())
        for (const RankLog& log : ranks_)
            if (log.file == entry.file)
                return {&log.file, &log.configRecords};
    return {&fileName_, &configRecords_};
}

std::optional<CompileConfig> GraphFile::compileConfigFor(const GraphEntry& entry) const {
    if (configs_) {
        const CompileConfig* config = findCompileConfig(*configs_, entry.compileId, entry.line);
        return config ? std::optional<CompileConfig>(*config) : std::nullopt;
    }
    const auto [path, records] = configSource(entry);
    std::ifstream in(*path, std::ios::binary);
    return compileConfigFromRecords(
        *records, entry.compileId, entry.line,
        [&in](uint64_t begin, uint64_t end) { return readLogSpan(in, begin, end); });
}

std::vector<CompileConfig> GraphFile::compileConfigsOf(const GraphEntry& entry) const {
    if (configs_)
        return *configs_;
    const auto [path, records] = configSource(entry);
    std::ifstream in(*path, std::ios::binary);
    return scanCompileConfigRecords(
        *records, [&in](uint64_t begin, uint64_t end) { return readLogSpan(in, begin, end); });
}

Expected<GraphFile> GraphFile::openFolder(const std::string& path, const OpenOptions& options) {
    std::error_code ec;
    std::vector<fs::path> logs;
    for (const fs::directory_entry& item : fs::directory_iterator(path, ec))
        if (item.is_regular_file(ec))
            logs.push_back(item.path());
    if (ec)
        return fileError(path, "cannot list folder: " + ec.message());
    std::sort(logs.begin(), logs.end());

    GraphFile folder;
    folder.format_ = FileFormat::TraceLog;
    folder.fileName_ = path;
    folder.options_ = options;
    std::vector<std::pair<RankLog, GraphFile>> ranked;
    for (const fs::path& log : logs) {
        Expected<std::string> head = readHead(log.string());
        if (!head || !looksLikeTraceLog(*head))
            continue; // not a TORCH_TRACE log: other files may sit beside the logs
        OpenOptions rankOptions = options;
        rankOptions.graphsFound = nullptr; // a rank's own indices and titles are not the folder's
        Expected<GraphFile> file = openTraceLog(log.string(), *head, rankOptions);
        if (!file)
            return file.error();
        std::optional<int32_t> rank;
        for (const GraphEntry& entry : file->graphs())
            if (entry.rank >= 0) {
                rank = entry.rank;
                break;
            }
        if (!rank)
            rank = rankFromFileName(log.filename().string());
        if (!rank) {
            folder.problems_.push_back(
                fileWarning(log.string(), "log skipped: neither its records nor its name say its rank "
                                          "(name it rank_N.log)"));
            continue;
        }
        const auto same =
            std::find_if(ranked.begin(), ranked.end(), [&](const auto& r) { return r.first.rank == *rank; });
        if (same != ranked.end()) {
            folder.problems_.push_back(
                fileWarning(log.string(), "log skipped: rank " + std::to_string(*rank) +
                                              " is already read from " + same->first.file));
            continue;
        }
        ranked.push_back(
            {RankLog{*rank, log.string(), file->graphs().size(), std::move(file->configRecords_)},
             file.take()});
    }
    if (ranked.empty())
        return fileError(path, "folder holds no TORCH_TRACE log (expected per-rank logs such as "
                               "dedicated_log_torch_trace_rank_0_*.log)");
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& x, const auto& y) { return x.first.rank < y.first.rank; });
    for (auto& [log, file] : ranked) {
        const size_t from = folder.graphs_.size();
        folder.graphs_.append(std::move(file.graphs_)); // each rank's list freed as it joins
        folder.graphs_.shiftRows(from, 0, static_cast<uint32_t>(from));
        folder.graphs_.setOrigin(from, log.rank, log.file);
        for (CollectiveSchedule schedule : file.collectives_) {
            schedule.rank = log.rank;
            folder.collectives_.push_back(std::move(schedule));
        }
        folder.problems_.insert(folder.problems_.end(), file.problems_.begin(), file.problems_.end());
        folder.ranks_.push_back(std::move(log));
    }
    return folder;
}

} // namespace jointscope
