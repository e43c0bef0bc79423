// TORCH_TRACE structured logs, as torch._logging writes them and tlparse reads them:
//   V1206 15:18:20.253000 1500233 torch/_dynamo/utils.py:1288] {"<kind>": {...}, "frame_id": 0, ...,
//   "has_payload": "<md5>"} \t<payload line 1> \t<payload line 2>
// The payload is the tab-stripped lines joined by '\n' (no trailing newline); `has_payload` is its md5 hex
// digest.
#include "io/TraceLog.h"

#include <charconv>
#include <cstdint>

#include "io/JsonScan.h"
#include "io/JsonSupport.h"
#include "io/LogSupport.h"
#include "io/Md5.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <variant>

namespace jointscope {

namespace {

using log_support::LineCursor;
using log_support::ProblemSink;
using Json = json_support::Json;

struct JsonError {
    size_t offset = 0; // byte offset of the offending character
    std::string message;
};

// Parses one JSON text; a syntax error (or too deep nesting) comes back with the offset of the offending
// byte.
std::variant<Json, JsonError> parseJson(std::string_view text) {
    if (size_t deep = json_support::findTooDeep(text, json_support::kMaxJsonDepth);
        deep != std::string_view::npos)
        return JsonError{deep, "JSON nested deeper than " + std::to_string(json_support::kMaxJsonDepth) +
                                   " levels"};
    try {
        return Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
        std::string what = e.what();
        const size_t colon = what.find(": ", what.find("parse error"));
        // e.byte counts the characters read: the offending token ends there. Point at a string token's start.
        size_t offset = std::min(e.byte > 0 ? e.byte - 1 : 0, text.size());
        if (offset < text.size() && text[offset] == '"') {
            const size_t open = text.rfind('"', offset == 0 ? 0 : offset - 1);
            if (open != std::string_view::npos &&
                text.substr(open, offset - open).find('\n') == std::string_view::npos)
                offset = open;
        }
        return JsonError{offset, colon == std::string::npos ? what : what.substr(colon + 2)};
    } catch (const Json::exception& e) {
        return JsonError{0, e.what()};
    }
}

// Records whose payload is always an FX GraphModule's print_readable() text (torch 2.x trace_structured
// names). Not graphs: inductor_output_code (Python/C++ wrapper code), dynamo_guards / dynamo_cpp_guards_str
// (guards), chromium_event / compilation_metrics / describe_* (JSON), and the artifact "fx_graph_runnable" (a
// repro script with imports, config and a Repro class wrapping the graph: not print_readable text).
constexpr std::array<std::string_view, 10> kGraphKinds = {
    "dynamo_output_graph",     "aot_joint_graph",          "aot_forward_graph",
    "aot_backward_graph",      "aot_inference_graph",      "compiled_autograd_graph",
    "inductor_pre_grad_graph", "inductor_post_grad_graph", "optimize_ddp_split_graph",
    "optimize_ddp_split_child"};
// Records that are graphs only when their payload is print_readable text: string artifacts (today
// before_pre_grad_graph, after_pre_grad_graph, before_post_grad_graph, after_post_grad_graph) and graph_dump
// (also used for C++ wrapper / kernel code). Deciding by content keeps new graph artifacts listed.
constexpr std::string_view kArtifact = "artifact";
constexpr std::string_view kGraphDump = "graph_dump";
// exported_program: str(ExportedProgram), whose GraphModule part (up to "Graph signature:") is listed.
constexpr std::string_view kExportedProgram = "exported_program";

// Envelope fields that accompany the record kind.
bool isEnvelopeKey(std::string_view key) {
    return key == "frame_id" || key == "frame_compile_id" || key == "attempt" ||
           key == "compiled_autograd_id" || key == "has_payload" || key == "rank";
}

bool isGraphKind(std::string_view kind) {
    for (std::string_view k : kGraphKinds)
        if (k == kind)
            return true;
    return false;
}

std::optional<uint64_t> unsignedField(const Json& record, const char* key) {
    auto it = record.find(key);
    if (it == record.end() || !it->is_number_integer() || it->get<int64_t>() < 0)
        return std::nullopt;
    return it->get<uint64_t>();
}

// tlparse's CompileId display without the brackets: "[!{compiled_autograd_id}/]{frame_id}/{frame_compile_id}
// [_{attempt}]", '-' for a missing frame id part, "" when the record has no compile id at all.
std::string compileIdOf(const Json& record) {
    return log_support::compileIdText(
        unsignedField(record, "compiled_autograd_id"), unsignedField(record, "frame_id"),
        unsignedField(record, "frame_compile_id"), unsignedField(record, "attempt"));
}

std::string nameField(const Json& metadata) {
    if (!metadata.is_object())
        return {};
    auto it = metadata.find("name");
    return it != metadata.end() && it->is_string() ? it->get<std::string>() : std::string();
}

struct Payload {
    std::string text;
    uint32_t firstLine = 0; // 0 = no payload lines
    uint32_t lineCount = 0;
};

// Consumes the tab-indented lines after a record. An empty line counts as an empty payload line when more
// payload follows: some logs in the wild lost the lone tab of blank payload lines to whitespace trimming.
Payload readPayload(LineCursor& cursor) {
    Payload payload;
    while (!cursor.atEnd()) {
        std::string_view line = cursor.peek();
        if (line.empty()) {
            LineCursor ahead = cursor;
            while (!ahead.atEnd() && ahead.peek().empty())
                ahead.next();
            if (ahead.atEnd() || ahead.peek().front() != '\t' || payload.firstLine == 0)
                break;
        } else if (line.front() != '\t') {
            break;
        }
        if (payload.firstLine == 0)
            payload.firstLine = cursor.lineNumber();
        else
            payload.text += '\n';
        if (!line.empty())
            payload.text.append(line.substr(1));
        ++payload.lineCount;
        cursor.next();
    }
    return payload;
}

// File location of a byte offset inside the payload (every payload line sits one tab to the right).
std::pair<uint32_t, uint32_t> payloadLocation(const Payload& payload, size_t offset) {
    offset = std::min(offset, payload.text.size());
    uint32_t line = payload.firstLine;
    size_t lineStart = 0;
    for (size_t i = 0; i < offset; ++i)
        if (payload.text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    return {line, static_cast<uint32_t>(offset - lineStart + 2)};
}

// The GraphModule part of str(ExportedProgram): from its class line up to "Graph signature:", un-indented.
bool extractExportedGraph(const Payload& payload, std::string& out, uint32_t& line, uint32_t& column) {
    std::string_view text = payload.text;
    size_t pos = 0;
    uint32_t lineNo = payload.firstLine;
    size_t indent = std::string_view::npos;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos)
            end = text.size();
        std::string_view current = text.substr(pos, end - pos);
        if (indent == std::string_view::npos) {
            const size_t classPos = log_support::findGraphModuleClass(current);
            if (classPos != std::string_view::npos && classPos == log_support::indentOf(current)) {
                indent = classPos;
                line = lineNo;
                column = static_cast<uint32_t>(indent + 1); // the tab and the indentation
                out.append(current.substr(indent));
            }
        } else {
            const size_t lineIndent = log_support::indentOf(current);
            if (log_support::trimRight(current).empty()) {
                out += '\n';
            } else if (lineIndent <= indent) {
                break;
            } else {
                out += '\n';
                out.append(current.substr(indent));
            }
        }
        pos = end + 1;
        ++lineNo;
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return indent != std::string_view::npos;
}

// "static_input_indices=[0, 1, 3]" in the printed ViewAndMutationMeta.
std::optional<std::vector<int64_t>> staticInputIndices(std::string_view text) {
    constexpr std::string_view key = "static_input_indices=[";
    const size_t start = text.find(key);
    if (start == std::string_view::npos)
        return std::nullopt;
    const size_t end = text.find(']', start);
    if (end == std::string_view::npos)
        return std::nullopt;
    std::vector<int64_t> indices;
    std::string_view list = text.substr(start + key.size(), end - start - key.size());
    while (!list.empty()) {
        const size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
            item.remove_prefix(1);
        while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())))
            item.remove_suffix(1);
        int64_t value = 0;
        const auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
        if (ec != std::errc() || ptr != item.data() + item.size() || value < 0)
            return std::nullopt;
        indices.push_back(value);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    return indices;
}

// An aot_forward_graph_fw_metadata artifact: it follows its joint graph (a compile id can repeat after
// torch._dynamo.reset(), so the newest joint graph of the id before it).
struct StaticInputs {
    std::string compileId;
    std::optional<std::vector<int64_t>> indices;
    bool resolved = false;
};

// The newest aot_joint_graph of each compile id in a list: its position.
using NewestJoints = std::unordered_map<std::string, size_t>;

// An aot_forward_graph_fw_metadata artifact whose joint graph is not in its own part before it: the parts
// before may hold it. Most belong to an inference compile, which has no joint graph, so only where the
// artifact lies is kept (on the disk past a few thousand), and it is read again when it resolves.
struct PendingStaticInputs {
    static constexpr size_t kMaxCompileId = 32; // a longer id (a hostile log's) is kept as StaticInputs
    uint64_t begin = 0, end = 0;                // the payload's bytes
    std::array<char, kMaxCompileId> compileId{};
    uint8_t compileIdSize = 0;

    std::string_view id() const { return {compileId.data(), compileIdSize}; }
};

void resolveStaticInputs(GraphList& graphs, const NewestJoints& joints, StaticInputs& found) {
    const auto joint = joints.find(found.compileId);
    if (joint == joints.end())
        return;
    if (GraphEntry entry = graphs[joint->second]; !entry.staticInputIndices) {
        entry.staticInputIndices = found.indices;
        graphs.set(joint->second, entry);
    }
    found.resolved = true;
}

// What one part of a log (read on its own thread) found; lines count from the part's first line.
struct TracePartIndex {
    using SpanReader = std::function<std::string(uint64_t begin, uint64_t end)>;
    GraphIndex index;
    // Unresolved: they look into the parts before.
    SpillVector<PendingStaticInputs> pendingStaticInputs;
    std::vector<StaticInputs> staticInputs; // those of a compile id too long for PendingStaticInputs
    SpanReader reread;                      // the bytes of the part's file
    NewestJoints joints;
    ConfigRecords configRecords; // lines count from the file's start only once merged
    size_t records = 0;
    size_t droppedProblems = 0;
    uint32_t lines = 0;
};

// What the index needs of most records (chromium events, tensor descriptions, metrics): the kind and
// has_payload, read without building the JSON; the whole line is still checked to be JSON. Fed by the fast
// scan (json_scan, scanRecord) or, where it gives up, by nlohmann's SAX parser.
class RecordSummary final : public nlohmann::json_sax<Json> {
public:
    enum class HasPayload { Absent, Null, String, Other };

    bool object = false;
    size_t topKeys = 0;
    std::string kind;
    HasPayload hasPayload = HasPayload::Absent;
    std::string md5;
    // The envelope's compile ids (compileIdOf of the record, without building it) and a
    // compilation_metrics record's own compile_id.
    std::optional<uint64_t> autogradId, frameId, frameCompileId, attempt;
    std::string metricsCompileId;

    // The compile a record of `recordKind` (this record's kind, moved out of it) belongs to: the envelope's,
    // which a compilation_metrics record's own compile_id may not be (torch 2.11 writes "0/0" for attempt
    // 1; older logs repeat "0/1" for 0/2 and 0/3), unless the envelope names none.
    std::string compileId(std::string_view recordKind) const {
        std::string id = log_support::compileIdText(autogradId, frameId, frameCompileId, attempt);
        return recordKind == "compilation_metrics" && id.empty() ? metricsCompileId : id;
    }

    // The events, as both parsers report them.
    bool key(std::string_view name) {
        if (depth_ == 1) {
            ++topKeys;
            if (kind.empty() && !isEnvelopeKey(name))
                kind = name;
            nextIsHasPayload_ = name == "has_payload";
            nextId_ = name == "frame_id"               ? &frameId
                      : name == "frame_compile_id"     ? &frameCompileId
                      : name == "attempt"              ? &attempt
                      : name == "compiled_autograd_id" ? &autogradId
                                                       : nullptr;
            inMetrics_ = name == "compilation_metrics";
        } else if (depth_ == 2) {
            nextIsMetricsId_ = inMetrics_ && name == "compile_id";
        }
        return true;
    }
    bool string(std::string_view value) { return scalar(HasPayload::String, &value); }
    bool unsignedNumber(uint64_t value) {
        if (depth_ == 1 && nextId_)
            *nextId_ = value;
        return scalar(HasPayload::Other, nullptr);
    }
    bool otherNumber() { return scalar(HasPayload::Other, nullptr); }
    bool boolean() { return scalar(HasPayload::Other, nullptr); }
    bool null() override { return scalar(HasPayload::Null, nullptr); }
    bool startObject() { return open(true); }
    bool startArray() { return open(false); }
    bool end() {
        --depth_;
        return true;
    }

    // nlohmann's SAX interface.
    bool boolean(bool) override { return boolean(); }
    bool number_integer(number_integer_t value) override {
        return value >= 0 ? unsignedNumber(uint64_t(value)) : otherNumber();
    }
    bool number_unsigned(number_unsigned_t value) override { return unsignedNumber(value); }
    bool number_float(number_float_t, const string_t&) override { return otherNumber(); }
    bool string(string_t& value) override { return string(std::string_view(value)); }
    bool binary(binary_t&) override { return otherNumber(); }
    bool start_object(std::size_t) override { return startObject(); }
    bool end_object() override { return end(); }
    bool start_array(std::size_t) override { return startArray(); }
    bool end_array() override { return end(); }
    bool key(string_t& name) override { return key(std::string_view(name)); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
        return false;
    }

private:
    bool scalar(HasPayload type, const std::string_view* value) {
        if (depth_ == 2 && nextIsMetricsId_ && value)
            metricsCompileId = *value;
        nextIsMetricsId_ = false;
        if (depth_ == 1)
            nextId_ = nullptr;
        if (depth_ == 1 && nextIsHasPayload_) {
            hasPayload = type;
            if (value)
                md5 = *value;
        }
        nextIsHasPayload_ = false;
        return true;
    }
    bool open(bool isObject) {
        if (depth_ == 0)
            object = isObject;
        scalar(HasPayload::Other, nullptr);
        return ++depth_ <= json_support::kMaxJsonDepth; // deeper: the full parse says so
    }

    size_t depth_ = 0;
    bool nextIsHasPayload_ = false;
    std::optional<uint64_t>* nextId_ = nullptr;
    bool inMetrics_ = false;
    bool nextIsMetricsId_ = false;
};

// The summary of a record's JSON, or nothing when it is not JSON: the fast scan, else nlohmann's SAX parser
// (non-ASCII strings, the numbers json_scan leaves to it, or not JSON at all).
std::optional<RecordSummary> scanRecord(std::string_view jsonText) {
    std::optional<RecordSummary> summary(std::in_place);
    if (json_scan::scan(jsonText, *summary, json_support::kMaxJsonDepth))
        return summary;
    summary.emplace();
    if (Json::sax_parse(jsonText.begin(), jsonText.end(), &*summary))
        return summary;
    return std::nullopt;
}

// The records whose JSON the index reads beyond kind and has_payload.
bool needsRecordJson(std::string_view kind) {
    return isGraphKind(kind) || kind == kArtifact || kind == kGraphDump || kind == kExportedProgram ||
           kind == "str";
}

// A record whose header line was read; its payload lines follow.
struct OpenRecord {
    uint32_t line = 0;
    bool valid = false;       // false: the header did not read (reported), the payload is skipped
    std::optional<Json> json; // for the kinds that needsRecordJson
    std::string kind;
    RecordSummary::HasPayload hasPayload = RecordSummary::HasPayload::Absent;
    std::string expectedMd5;
    bool keepText = false; // the payload text is needed whole (held payloads, artifacts read here)
    Md5 md5;
    uint32_t firstPayloadLine = 0;
    uint32_t payloadLines = 0;
    uint32_t pendingBlanks = 0;
    uint64_t spanBegin = 0; // file offsets of the raw payload lines
    uint64_t spanEnd = 0;
    bool config = false; // may carry compile configuration (mayCarryCompileConfig)
    std::string configCompileId;
    uint64_t headerBegin = 0, headerEnd = 0;
    std::string firstText; // the payload from its first non-blank character to that line's end
    std::string text;      // the payload, when keepText
};

// Reads the lines of a TORCH_TRACE log (or of one part of it) pushed one at a time, so that a log is indexed
// from a file read in blocks or from a string alike. Payloads are hashed as they stream past and held only
// where asked or needed (artifacts read at index time); graphs keep the byte span of their payload instead.
class TraceIndexer {
public:
    TraceIndexer(std::string fileName, bool holdPayloads, TracePartIndex::SpanReader reread)
        : fileName_(std::move(fileName)), holdPayloads_(holdPayloads), reread_(std::move(reread)) {}

    // One line without its '\n' (and '\r'); `offset` is its first byte in the file.
    void line(std::string_view text, uint64_t offset) {
        ++lineNo_;
        if (!text.empty() && text.front() == '\t') {
            payloadLine(text, offset);
            return;
        }
        if (text.empty()) {
            if (record_ && record_->firstPayloadLine)
                ++record_->pendingBlanks; // payload when more payload follows
            else
                closeRecord();
            return;
        }
        closeRecord();
        header(text, offset);
    }

    size_t graphs() const { return part_.index.graphs.size(); }
    const GraphList& entries() const { return part_.index.graphs; }

    TracePartIndex finish() && {
        closeRecord();
        part_.lines = lineNo_;
        part_.reread = reread_;
        return std::move(part_);
    }

private:
    void payloadLine(std::string_view text, uint64_t offset) {
        if (record_ && !record_->firstPayloadLine && record_->pendingBlanks == 0) {
            record_->firstPayloadLine = lineNo_;
            record_->spanBegin = offset;
        } else if (record_ && record_->firstPayloadLine) {
            for (; record_->pendingBlanks > 0; --record_->pendingBlanks)
                appendPayload({}, false);
        } else {
            closeRecord();
            if (!inJunk_)
                addProblem(Severity::Error, lineNo_, 1, "payload line without a record before it");
            inJunk_ = true;
            return;
        }
        appendPayload(text.substr(1), record_->payloadLines == 0);
        record_->spanEnd = offset + text.size();
    }

    void appendPayload(std::string_view content, bool first) {
        OpenRecord& r = *record_;
        ++r.payloadLines;
        if (!r.valid)
            return;
        if (!first)
            r.md5.update("\n");
        r.md5.update(content);
        if (r.keepText) {
            if (!first)
                r.text += '\n';
            r.text.append(content);
        }
        if (r.firstText.empty()) {
            const size_t start = content.find_first_not_of(" \t\r");
            if (start != std::string_view::npos)
                r.firstText = content.substr(start);
        }
    }

    void header(std::string_view text, uint64_t offset) {
        const auto prefix = log_support::parseGlogPrefix(text);
        if (!prefix) {
            // A run of lines that are not records is reported once, at its first line.
            if (!inJunk_)
                addProblem(Severity::Error, lineNo_, 1,
                           "expected a glog prefix 'V1206 15:18:20.253000 PID file.py:LINE] {json}'");
            inJunk_ = true;
            return;
        }
        inJunk_ = false;
        OpenRecord& r = record_.emplace();
        r.line = lineNo_;
        size_t jsonStart = prefix->end;
        while (jsonStart < text.size() && text[jsonStart] == ' ')
            ++jsonStart;
        const std::string_view jsonText = text.substr(jsonStart);
        std::optional<RecordSummary> scanned = scanRecord(jsonText);
        if (!scanned) {
            // The full parse says where and why.
            auto parsed = parseJson(jsonText);
            const auto* error = std::get_if<JsonError>(&parsed);
            addProblem(Severity::Error, lineNo_,
                       static_cast<uint32_t>(jsonStart + (error ? error->offset : 0) + 1),
                       "corrupted record JSON (record skipped): " + (error ? error->message : "not JSON"));
            return;
        }
        RecordSummary& summary = *scanned;
        if (!summary.object || summary.topKeys == 0) {
            addProblem(
                Severity::Error, lineNo_, static_cast<uint32_t>(jsonStart + 1),
                "expected a JSON object naming the record kind, e.g. {\"dynamo_output_graph\": {...}}");
            return;
        }
        ++part_.records;
        r.valid = true;
        r.kind = std::move(summary.kind);
        r.hasPayload = summary.hasPayload;
        r.expectedMd5 = std::move(summary.md5);
        if (needsRecordJson(r.kind)) {
            r.json = Json::parse(jsonText.begin(), jsonText.end());
            r.keepText = needsWholePayload(r.kind, *r.json);
        }
        r.config = mayCarryConfig(r.kind) && mayCarryCompileConfig(text);
        if (r.config) {
            r.headerBegin = offset;
            r.headerEnd = offset + text.size();
            // The torch version counts for every compile: a record of none.
            const bool version = r.kind == kArtifact && nameField(r.json->at(r.kind)) == "torch_version";
            r.configCompileId = version ? std::string() : summary.compileId(r.kind);
        }
    }

    // The kinds of record scanCompileConfigs reads (its text test then runs on these lines only).
    static bool mayCarryConfig(std::string_view kind) {
        return kind == kArtifact || kind == "compilation_metrics" || kind == "create_symbol" ||
               kind == "guard_added_fast" || kind == "inductor_post_grad_graph" ||
               kind == "inductor_output_code";
    }

    // The payloads read at index time, and, when payloads are held, every one that may be a graph.
    bool needsWholePayload(const std::string& kind, const Json& json) const {
        if (kind == kExportedProgram)
            return true;
        if (kind == kArtifact) {
            const std::string name = nameField(json.at(kind));
            if (name == "aot_forward_graph_fw_metadata" || name == "inductor_collective_schedule")
                return true;
        }
        return holdPayloads_ && (isGraphKind(kind) || kind == kArtifact || kind == kGraphDump);
    }

    void closeRecord() {
        if (!record_)
            return;
        OpenRecord r = std::move(*record_);
        record_.reset();
        if (!r.valid)
            return;
        if (r.config)
            part_.configRecords.push_back({r.headerBegin, r.firstPayloadLine ? r.spanEnd : r.headerEnd,
                                           r.line, compileKeyOf(r.configCompileId)});
        const std::optional<std::array<uint8_t, 16>> digest = checkPayload(r);
        if (!r.json)
            return;
        if (r.kind == "str") {
            internString(r.json->at("str"), r.line);
            return;
        }
        addGraphIfAny(r, digest);
    }

    // The payload's md5 against has_payload; returns the payload's digest (none without payload lines and
    // has_payload).
    std::optional<std::array<uint8_t, 16>> checkPayload(OpenRecord& r) {
        const std::array<uint8_t, 16> digest = r.firstPayloadLine ? r.md5.finish() : Md5().finish();
        const std::string actual = md5HexOf(digest);
        using HasPayload = RecordSummary::HasPayload;
        if (r.hasPayload == HasPayload::Absent || r.hasPayload == HasPayload::Null) {
            if (r.firstPayloadLine)
                addProblem(Severity::Warning, r.firstPayloadLine, 1,
                           "payload lines after a record without \"has_payload\"");
            return r.firstPayloadLine ? std::optional(digest) : std::nullopt;
        }
        if (r.hasPayload != HasPayload::String) {
            addProblem(Severity::Warning, r.line, 1, "\"has_payload\" is not an md5 hex string");
            return digest;
        }
        std::string expected = r.expectedMd5;
        for (char& c : expected)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (expected == actual)
            return digest;
        addProblem(Severity::Warning, r.line, 1,
                   "payload md5 mismatch (has_payload " + expected + ", payload of " +
                       std::to_string(r.payloadLines) + " lines hashes to " + actual +
                       "): the payload was altered or truncated");
        // Point at the JSON damage, if the payload is JSON, so that it is found.
        if (r.firstPayloadLine) {
            const std::string text = r.keepText ? r.text : payloadFromLines(reread_(r.spanBegin, r.spanEnd));
            locateJsonDamage(Payload{text, r.firstPayloadLine, r.payloadLines});
        }
        return digest;
    }

    void locateJsonDamage(const Payload& payload) {
        const size_t start = payload.text.find_first_not_of(" \t\r\n");
        if (start == std::string::npos || (payload.text[start] != '{' && payload.text[start] != '['))
            return;
        auto parsed = parseJson(payload.text);
        if (const auto* error = std::get_if<JsonError>(&parsed)) {
            auto [line, col] = payloadLocation(payload, error->offset);
            addProblem(Severity::Error, line, col, "corrupted JSON payload: " + error->message);
        }
    }

    void internString(const Json& entry, uint32_t lineNo) {
        if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_number_unsigned())
            return; // tlparse's intern table (stack frames name files by id): nothing here reads it
        addProblem(Severity::Warning, lineNo, 1, "expected {\"str\": [\"path\", N]} for an interned string");
    }

    void addGraphIfAny(OpenRecord& r, const std::optional<std::array<uint8_t, 16>>& digest) {
        const std::string& kind = r.kind;
        const Json& record = *r.json;
        GraphEntry entry;
        entry.line = r.line;
        entry.compileId = compileIdOf(record);
        if (const auto rank = unsignedField(record, "rank"); rank && *rank <= INT32_MAX)
            entry.rank = static_cast<int32_t>(*rank);
        entry.payloadColumn = 1;
        bool extracted = false;
        if (isGraphKind(kind)) {
            entry.kind = kind;
            if (kind == "optimize_ddp_split_child")
                if (std::string name = nameField(record.at(kind)); !name.empty())
                    entry.kind += ":" + name;
        } else if (kind == kArtifact || kind == kGraphDump) {
            const Json& metadata = record.at(kind);
            if (kind == kArtifact && nameField(metadata) == "aot_forward_graph_fw_metadata") {
                StaticInputs found{entry.compileId, staticInputIndices(r.text)};
                resolveStaticInputs(part_.index.graphs, part_.joints, found);
                if (found.resolved || !found.indices)
                    return;
                if (found.compileId.size() > PendingStaticInputs::kMaxCompileId) {
                    part_.staticInputs.push_back(std::move(found));
                    return;
                }
                PendingStaticInputs pending{r.spanBegin, r.spanEnd};
                std::copy(found.compileId.begin(), found.compileId.end(), pending.compileId.begin());
                pending.compileIdSize = uint8_t(found.compileId.size());
                part_.pendingStaticInputs.push_back(pending);
                return;
            }
            if (kind == kArtifact && nameField(metadata) == "inductor_collective_schedule") {
                addCollectives(entry, Payload{r.text, r.firstPayloadLine, r.payloadLines}, r.line);
                return;
            }
            if (kind == kArtifact && metadata.is_object() && metadata.contains("encoding") &&
                metadata["encoding"] != "string")
                return;
            if (log_support::findGraphModuleClass(r.firstText) != 0)
                return;
            entry.kind = std::string(kind) + ":" + nameField(metadata);
        } else if (kind == kExportedProgram) {
            uint32_t line = 0, column = 0;
            if (!extractExportedGraph(Payload{r.text, r.firstPayloadLine, r.payloadLines}, entry.payload,
                                      line, column))
                return;
            entry.kind = kind;
            entry.payloadLine = line;
            entry.payloadColumn = column;
            Md5 md5;
            md5.update(entry.payload);
            entry.digest = md5.finish();
            extracted = true;
        } else {
            return;
        }
        if (!extracted) {
            if (r.firstPayloadLine == 0)
                addProblem(Severity::Warning, r.line, 1, "graph record " + kind + " has no payload");
            if (r.keepText)
                entry.payload = std::move(r.text);
            entry.payloadOffset = r.spanBegin;
            entry.payloadBytes = r.spanEnd - r.spanBegin;
            entry.payloadLine = r.firstPayloadLine ? r.firstPayloadLine : r.line + 1;
            entry.digest = digest;
        }
        entry.index = static_cast<uint32_t>(part_.index.graphs.size());
        if (entry.kind == "aot_joint_graph")
            part_.joints[entry.compileId] = entry.index;
        part_.index.graphs.push_back(entry);
    }

    // A JSON list of op names; anything else is reported and skipped.
    void addCollectives(const GraphEntry& entry, const Payload& payload, uint32_t lineNo) {
        auto parsed = parseJson(payload.text);
        const Json* list = std::get_if<Json>(&parsed);
        CollectiveSchedule schedule{entry.compileId, entry.rank, lineNo, {}};
        if (list && list->is_array())
            for (const Json& op : *list)
                if (op.is_string())
                    schedule.ops.push_back(op.get<std::string>());
        if (!list || !list->is_array() || schedule.ops.size() != list->size()) {
            addProblem(Severity::Warning, payload.firstLine ? payload.firstLine : lineNo, 2,
                       "inductor_collective_schedule: expected a JSON list of op names");
            return;
        }
        part_.index.collectives.push_back(std::move(schedule));
    }

    void addProblem(Severity severity, uint32_t line, uint32_t col, std::string message) {
        if (part_.index.problems.size() >= log_support::ProblemSink::kMaxProblems) {
            ++part_.droppedProblems;
            return;
        }
        part_.index.problems.push_back(
            Diagnostic{severity, SourceLocation{fileName_, line, col}, std::move(message)});
    }

    std::string fileName_;
    bool holdPayloads_ = false;
    TracePartIndex::SpanReader reread_;
    TracePartIndex part_;
    std::optional<OpenRecord> record_;
    uint32_t lineNo_ = 0;
    bool inJunk_ = false;
};

} // namespace

bool looksLikeTraceLog(std::string_view head) {
    LineCursor cursor(head);
    while (!cursor.atEnd()) {
        std::string_view line = cursor.next();
        if (line.empty())
            continue;
        const auto prefix = log_support::parseGlogPrefix(line);
        if (!prefix)
            return false;
        const size_t json = line.find_first_not_of(' ', prefix->end);
        return json != std::string_view::npos && line.substr(json, 2) == "{\"";
    }
    return false;
}

namespace {

constexpr size_t kBlockBytes = size_t(4) << 20;

// Progress shared by the threads reading parts of one log.
struct SharedProgress {
    std::atomic<uint64_t> bytes{0};
    std::atomic<size_t> graphs{0};
    std::atomic<bool> cancel{false};
    // The first part's graphs as it finds them (their indices and lines are final), for
    // TraceIndexOptions::found; only when asked.
    bool publish = false;
    std::mutex mutex;
    GraphList published;
};

// Pushes the lines of bytes [begin, end) of `in` to `indexer`, reading blocks; false when cancelled.
bool streamLines(std::istream& in, uint64_t begin, uint64_t end, TraceIndexer& indexer,
                 SharedProgress& shared, bool firstPart) {
    std::string buffer(kBlockBytes, '\0');
    in.seekg(static_cast<std::streamoff>(begin));
    uint64_t base = begin; // file offset of buffer[0]
    size_t used = 0;
    while (true) {
        const size_t want =
            static_cast<size_t>(std::min<uint64_t>(buffer.size() - used, end - (base + used)));
        in.read(buffer.data() + used, static_cast<std::streamsize>(want));
        const size_t got = static_cast<size_t>(in.gcount());
        used += got;
        const bool last = base + used >= end || got == 0;
        size_t start = 0;
        const size_t graphsBefore = indexer.graphs();
        while (const void* found = std::memchr(buffer.data() + start, '\n', used - start)) {
            const size_t stop = static_cast<size_t>(static_cast<const char*>(found) - buffer.data());
            std::string_view line(buffer.data() + start, stop - start);
            if (!line.empty() && line.back() == '\r')
                line.remove_suffix(1);
            indexer.line(line, base + start);
            start = stop + 1;
        }
        shared.graphs += indexer.graphs() - graphsBefore;
        if (firstPart && shared.publish && indexer.graphs() > graphsBefore) {
            const std::lock_guard<std::mutex> lock(shared.mutex);
            shared.published.append(indexer.entries(), graphsBefore);
        }
        if (last) {
            if (start < used) {
                std::string_view line(buffer.data() + start, used - start);
                if (line.back() == '\r')
                    line.remove_suffix(1);
                indexer.line(line, base + start);
            }
            shared.bytes += used;
            return true;
        }
        shared.bytes += start;
        std::memmove(buffer.data(), buffer.data() + start, used - start);
        base += start;
        used -= start;
        if (used == buffer.size()) // one line longer than the block
            buffer.resize(buffer.size() * 2);
        if (shared.cancel)
            return false;
    }
}

// Offsets where parts of the log may start: a record's header line at or after each even share of the file,
// so that no payload or run of junk lines is split.
std::vector<uint64_t> partStarts(std::istream& in, uint64_t size, size_t parts) {
    std::vector<uint64_t> starts{0};
    std::string window(size_t(1) << 20, '\0');
    for (size_t i = 1; i < parts; ++i) {
        const uint64_t target = size * i / parts;
        in.clear();
        in.seekg(static_cast<std::streamoff>(target));
        in.read(window.data(), static_cast<std::streamsize>(window.size()));
        const std::string_view text(window.data(), static_cast<size_t>(in.gcount()));
        size_t pos = text.find('\n');
        while (pos != std::string_view::npos && pos + 1 < text.size()) {
            const size_t lineEnd = text.find('\n', pos + 1);
            if (lineEnd == std::string_view::npos)
                break; // the line may go on past the window: do not judge it
            if (log_support::parseGlogPrefix(text.substr(pos + 1, lineEnd - pos - 1))) {
                if (target + pos + 1 > starts.back())
                    starts.push_back(target + pos + 1);
                break;
            }
            pos = lineEnd;
        }
    }
    in.clear();
    return starts;
}

// The parts' findings as one index, lines counted from the file's start.
// The parts' lists joined in order, their lines counted from the file's start.
GraphIndex mergeParts(std::vector<TracePartIndex> parts, const std::string& fileName) {
    GraphIndex merged;
    uint32_t lineBase = 0;
    size_t records = 0;
    size_t dropped = 0;
    // The first part's entries stay where they are; each later part's are moved in and its list freed as
    // they go, so that a log of many graphs never holds two copies of the list.
    NewestJoints joints; // of the parts merged
    for (TracePartIndex& part : parts) {
        for (StaticInputs& found : part.staticInputs)
            resolveStaticInputs(merged.graphs, joints, found);
        for (const PendingStaticInputs pending : part.pendingStaticInputs)
            if (joints.count(std::string(pending.id()))) {
                const std::string payload = payloadFromLines(part.reread(pending.begin, pending.end));
                StaticInputs found{std::string(pending.id()), staticInputIndices(payload)};
                resolveStaticInputs(merged.graphs, joints, found);
            }
        const size_t from = merged.graphs.size();
        if (&part == &parts.front()) { // its lines count from the file's start already
            merged.graphs = std::move(part.index.graphs);
        } else {
            merged.graphs.append(std::move(part.index.graphs));
            merged.graphs.shiftRows(from, lineBase, uint32_t(from));
        }
        for (const auto& [compileId, position] : part.joints)
            joints[compileId] = from + position;
        for (Diagnostic& problem : part.index.problems) {
            if (problem.loc.line)
                problem.loc.line += lineBase;
            if (merged.problems.size() < log_support::ProblemSink::kMaxProblems)
                merged.problems.push_back(std::move(problem));
            else
                ++dropped;
        }
        for (CollectiveSchedule& schedule : part.index.collectives) {
            schedule.line += lineBase;
            merged.collectives.push_back(std::move(schedule));
        }
        for (ConfigRecordSpan record : part.configRecords) {
            record.line += lineBase;
            merged.configRecords.push_back(record);
        }
        part.configRecords.clear();
        records += part.records;
        dropped += part.droppedProblems;
        lineBase += part.lines;
    }
    if (records == 0)
        merged.problems.push_back(
            makeError(SourceLocation{fileName, 1, 1},
                      "expected TORCH_TRACE records ('V1206 15:18:20.253000 PID file.py:LINE] {json}')"));
    if (dropped)
        merged.problems.push_back(Diagnostic{Severity::Note, SourceLocation{fileName, 0, 0},
                                             std::to_string(dropped) + " more problems not listed"});
    return merged;
}

} // namespace

std::string readLogSpan(std::ifstream& in, uint64_t begin, uint64_t end) {
    std::string bytes(static_cast<size_t>(end - begin), '\0');
    in.clear();
    in.seekg(static_cast<std::streamoff>(begin));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
    return bytes;
}

namespace {

std::string readSpan(const std::string& path, uint64_t begin, uint64_t end) {
    std::ifstream in(path, std::ios::binary);
    return readLogSpan(in, begin, end);
}

} // namespace

std::string payloadFromLines(std::string_view raw) {
    std::string payload;
    payload.reserve(raw.size());
    LineCursor cursor(raw);
    bool first = true;
    while (!cursor.atEnd()) {
        std::string_view line = cursor.next();
        if (!first)
            payload += '\n';
        first = false;
        if (!line.empty() && line.front() == '\t')
            line.remove_prefix(1);
        payload.append(line);
    }
    return payload;
}

GraphIndex indexTraceLog(std::string_view text, const std::string& fileName) {
    const TracePartIndex::SpanReader read = [text](uint64_t begin, uint64_t end) {
        return std::string(text.substr(begin, end - begin));
    };
    TraceIndexer indexer(fileName, /*holdPayloads=*/true, read);
    LineCursor cursor(text);
    while (!cursor.atEnd()) {
        const uint64_t offset = cursor.offset();
        indexer.line(cursor.next(), offset);
    }
    std::vector<TracePartIndex> parts;
    parts.push_back(std::move(indexer).finish());
    GraphIndex index = mergeParts(std::move(parts), fileName);
    index.configs = scanCompileConfigRecords(index.configRecords, read); // held: the text is at hand
    return index;
}

Expected<GraphIndex> indexTraceLogFile(const std::string& path, const TraceIndexOptions& options) {
    std::ifstream probe(path, std::ios::binary | std::ios::ate);
    if (!probe)
        return makeError(SourceLocation{path, 0, 0}, "cannot open file for reading");
    const auto size = static_cast<uint64_t>(std::max<std::streamoff>(probe.tellg(), 0));
    const size_t threads =
        options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
    // For a list that fills in (options.found), more parts than threads, taken in file order: a part's graphs
    // are handed over once the parts before it are read, so the list grows across the whole log, not only
    // through the first part. Without one, a part per thread (fewer buffers: 33 MB instead of 49 MB of RSS
    // for `info` on the 1 GB log).
    const uint64_t partsPerThread = options.found ? 4 : 1;
    const std::vector<uint64_t> starts =
        partStarts(probe, size,
                   static_cast<size_t>(std::clamp<uint64_t>(
                       size / std::max<uint64_t>(options.bytesPerThread, 1), 1, threads * partsPerThread)));
    const size_t count = starts.size();

    SharedProgress shared;
    shared.publish = bool(options.found);
    std::vector<std::optional<TracePartIndex>> done(count);
    std::vector<std::atomic<bool>> ready(count); // done[i] is written
    std::atomic<size_t> next{0};
    std::vector<std::future<void>> workers;
    for (size_t w = 0; w < std::min(threads, count); ++w)
        workers.push_back(std::async(std::launch::async, [&] {
            for (size_t i = next++; i < count && !shared.cancel; i = next++) {
                const uint64_t begin = starts[i];
                const uint64_t end = i + 1 < count ? starts[i + 1] : size;
                TraceIndexer indexer(path, /*holdPayloads=*/false,
                                     [&path](uint64_t b, uint64_t e) { return readSpan(path, b, e); });
                std::ifstream in(path, std::ios::binary);
                streamLines(in, begin, end, indexer, shared, /*firstPart=*/i == 0);
                done[i] = std::move(indexer).finish();
                ready[i].store(true, std::memory_order_release);
            }
        }));
    size_t delivered = 0; // graphs handed to options.found
    auto deliverPublished = [&] {
        GraphList batch;
        {
            const std::lock_guard<std::mutex> lock(shared.mutex);
            std::swap(batch, shared.published);
        }
        if (!batch.empty() && !shared.cancel) {
            delivered += batch.size();
            options.found(std::move(batch));
        }
    };
    // The first part publishes as it goes (its lines and indices are final); each later part whole, once it
    // and the parts before it are read, its lines and indices counted from the file's start.
    size_t listed = 0, indexBase = 0;
    uint32_t lineBase = 0;
    auto deliverReadParts = [&] {
        for (; listed < count && ready[listed].load(std::memory_order_acquire); ++listed) {
            const TracePartIndex& part = *done[listed];
            if (listed == 0) {
                deliverPublished();
                // the graph its end completed (finish) was never published
                if (delivered < part.index.graphs.size() && !shared.cancel) {
                    options.found(part.index.graphs.slice(delivered, part.index.graphs.size()));
                    delivered = part.index.graphs.size();
                }
            } else if (!part.index.graphs.empty() && !shared.cancel) {
                GraphList batch = part.index.graphs;
                batch.shiftRows(0, lineBase, static_cast<uint32_t>(indexBase));
                delivered += batch.size();
                options.found(std::move(batch));
            }
            lineBase += part.lines;
            indexBase += part.index.graphs.size();
        }
    };
    for (std::future<void>& worker : workers)
        do {
            if (options.progress && !shared.cancel && !options.progress(shared.bytes, size, shared.graphs))
                shared.cancel = true;
            if (options.found) {
                deliverPublished();
                deliverReadParts();
            }
        } while (worker.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready);
    for (std::future<void>& worker : workers)
        worker.get();
    if (options.found) {
        deliverPublished();
        deliverReadParts();
    }
    std::vector<TracePartIndex> parts;
    for (std::optional<TracePartIndex>& part : done) {
        if (!part) // cancelled before it was read
            break;
        parts.push_back(std::move(*part));
    }
    GraphIndex index = mergeParts(std::move(parts), path);
    index.cancelled = shared.cancel;
    if (options.found && !index.cancelled && delivered < index.graphs.size())
        options.found(index.graphs.slice(delivered, index.graphs.size()));
    if (options.progress && !index.cancelled)
        options.progress(size, size, index.graphs.size());
    return index;
}

std::vector<TraceArtifact> traceArtifacts(std::string_view text, std::string_view name) {
    std::vector<TraceArtifact> found;
    LineCursor cursor(text);
    while (!cursor.atEnd()) {
        const uint32_t lineNo = cursor.lineNumber();
        const std::string_view line = cursor.next();
        const auto prefix = log_support::parseGlogPrefix(line);
        if (!prefix)
            continue;
        Payload payload = readPayload(cursor);
        // Cheap filter first: most records of a long log are not the artifact asked for.
        if (line.find(kArtifact) == std::string_view::npos || line.find(name) == std::string_view::npos)
            continue;
        auto parsed = parseJson(line.substr(prefix->end));
        const Json* record = std::get_if<Json>(&parsed);
        if (!record || !record->is_object() || !record->contains(kArtifact))
            continue;
        const Json& metadata = record->at(kArtifact);
        if (nameField(metadata) != name)
            continue;
        TraceArtifact artifact;
        artifact.name = std::string(name);
        if (auto it = metadata.find("encoding"); it != metadata.end() && it->is_string())
            artifact.encoding = it->get<std::string>();
        artifact.payload = std::move(payload.text);
        artifact.line = lineNo;
        artifact.payloadLine = payload.firstLine;
        found.push_back(std::move(artifact));
    }
    return found;
}

} // namespace jointscope
