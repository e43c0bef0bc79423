// TORCH_TRACE structured logs, as torch._logging writes them and tlparse reads them:
//   V1206 15:18:20.253000 1500233 torch/_dynamo/utils.py:1288] {"<kind>": {...}, "frame_id": 0, ...,
//   "has_payload": "<md5>"} \t<payload line 1> \t<payload line 2>
// The payload is the tab-stripped lines joined by '\n' (no trailing newline); `has_payload` is its md5 hex
// digest.
#include "io/TraceLog.h"

#include <charconv>
#include <cstdint>

#include "io/JsonSupport.h"
#include "io/LogSupport.h"
#include "io/Md5.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
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
    const auto autogradId = unsignedField(record, "compiled_autograd_id");
    const auto frameId = unsignedField(record, "frame_id");
    const auto frameCompileId = unsignedField(record, "frame_compile_id");
    const auto attempt = unsignedField(record, "attempt");
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

bool isGraphModuleText(std::string_view payload) {
    const size_t start = payload.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos)
        return false;
    size_t end = payload.find('\n', start);
    std::string_view first =
        payload.substr(start, end == std::string_view::npos ? payload.npos : end - start);
    return log_support::findGraphModuleClass(first) == 0;
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

// For a JSON payload whose md5 does not match: point at the JSON error, if there is one, so the damage is
// found.
void locateJsonDamage(const Payload& payload, ProblemSink& problems) {
    const size_t start = payload.text.find_first_not_of(" \t\r\n");
    if (start == std::string::npos || (payload.text[start] != '{' && payload.text[start] != '['))
        return;
    auto parsed = parseJson(payload.text);
    if (const auto* error = std::get_if<JsonError>(&parsed)) {
        auto [line, col] = payloadLocation(payload, error->offset);
        problems.add(Severity::Error, line, col, "corrupted JSON payload: " + error->message);
    }
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

class TraceIndexer {
public:
    TraceIndexer(std::string_view text, const std::string& fileName)
        : cursor_(text), problems_(index_, fileName) {}

    GraphIndex run() && {
        while (!cursor_.atEnd())
            readRecord();
        if (records_ == 0)
            problems_.add(Severity::Error, 1, 1,
                          "expected TORCH_TRACE records ('V1206 15:18:20.253000 PID file.py:LINE] {json}')");
        log_support::finishIndex(index_, problems_);
        return std::move(index_);
    }

private:
    void readRecord() {
        const uint32_t lineNo = cursor_.lineNumber();
        const std::string_view line = cursor_.next();
        if (line.empty())
            return;
        const auto prefix = log_support::parseGlogPrefix(line);
        if (!prefix) {
            skipJunk(lineNo, line);
            return;
        }
        size_t jsonStart = prefix->end;
        while (jsonStart < line.size() && line[jsonStart] == ' ')
            ++jsonStart;
        Payload payload = readPayload(cursor_);
        auto parsed = parseJson(line.substr(jsonStart));
        if (const auto* error = std::get_if<JsonError>(&parsed)) {
            problems_.add(Severity::Error, lineNo, static_cast<uint32_t>(jsonStart + error->offset + 1),
                          "corrupted record JSON (record skipped): " + error->message);
            return;
        }
        const Json& record = std::get<Json>(parsed);
        if (!record.is_object() || record.empty()) {
            problems_.add(
                Severity::Error, lineNo, static_cast<uint32_t>(jsonStart + 1),
                "expected a JSON object naming the record kind, e.g. {\"dynamo_output_graph\": {...}}");
            return;
        }
        ++records_;
        std::string kind;
        for (auto it = record.begin(); it != record.end(); ++it)
            if (!isEnvelopeKey(it.key())) {
                kind = it.key();
                break;
            }
        checkPayload(record, payload, lineNo);
        if (kind == "str") {
            internString(record.at("str"), lineNo);
            return;
        }
        addGraphIfAny(kind, record, std::move(payload), lineNo);
    }

    // A run of lines that are not records is reported once, at its first line.
    void skipJunk(uint32_t lineNo, std::string_view line) {
        const bool orphanPayload = line.front() == '\t';
        problems_.add(Severity::Error, lineNo, 1,
                      orphanPayload
                          ? "payload line without a record before it"
                          : "expected a glog prefix 'V1206 15:18:20.253000 PID file.py:LINE] {json}'");
        while (!cursor_.atEnd() && !log_support::parseGlogPrefix(cursor_.peek()))
            cursor_.next();
    }

    void checkPayload(const Json& record, const Payload& payload, uint32_t lineNo) {
        auto it = record.find("has_payload");
        if (it == record.end() || it->is_null()) {
            if (payload.firstLine)
                problems_.add(Severity::Warning, payload.firstLine, 1,
                              "payload lines after a record without \"has_payload\"");
            return;
        }
        if (!it->is_string()) {
            problems_.add(Severity::Warning, lineNo, 1, "\"has_payload\" is not an md5 hex string");
            return;
        }
        std::string expected = it->get<std::string>();
        for (char& c : expected)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const std::string actual = md5Hex(payload.text);
        if (expected == actual)
            return;
        problems_.add(Severity::Warning, lineNo, 1,
                      "payload md5 mismatch (has_payload " + expected + ", payload of " +
                          std::to_string(payload.lineCount) + " lines hashes to " + actual +
                          "): the payload was altered or truncated");
        locateJsonDamage(payload, problems_);
    }

    void internString(const Json& entry, uint32_t lineNo) {
        if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_number_unsigned()) {
            strings_[entry[1].get<uint64_t>()] = entry[0].get<std::string>();
            return;
        }
        problems_.add(Severity::Warning, lineNo, 1,
                      "expected {\"str\": [\"path\", N]} for an interned string");
    }

    void addGraphIfAny(const std::string& kind, const Json& record, Payload payload, uint32_t lineNo) {
        GraphEntry entry;
        entry.line = lineNo;
        entry.compileId = compileIdOf(record);
        if (const auto rank = unsignedField(record, "rank"); rank && *rank <= INT32_MAX)
            entry.rank = static_cast<int32_t>(*rank);
        entry.payloadColumn = 1;
        if (isGraphKind(kind)) {
            entry.kind = kind;
            if (kind == "optimize_ddp_split_child")
                if (std::string name = nameField(record.at(kind)); !name.empty())
                    entry.kind += ":" + name;
        } else if (kind == kArtifact || kind == kGraphDump) {
            const Json& metadata = record.at(kind);
            if (kind == kArtifact && nameField(metadata) == "aot_forward_graph_fw_metadata") {
                // It follows its joint graph; a compile id can repeat after torch._dynamo.reset().
                for (auto it = index_.graphs.rbegin(); it != index_.graphs.rend(); ++it)
                    if (it->kind == "aot_joint_graph" && it->compileId == entry.compileId) {
                        if (!it->staticInputIndices)
                            it->staticInputIndices = staticInputIndices(payload.text);
                        break;
                    }
                return;
            }
            if (kind == kArtifact && nameField(metadata) == "inductor_collective_schedule") {
                addCollectives(entry, payload, lineNo);
                return;
            }
            if (kind == kArtifact && metadata.is_object() && metadata.contains("encoding") &&
                metadata["encoding"] != "string")
                return;
            if (!isGraphModuleText(payload.text))
                return;
            entry.kind = std::string(kind) + ":" + nameField(metadata);
        } else if (kind == kExportedProgram) {
            std::string graph;
            uint32_t line = 0, column = 0;
            if (!extractExportedGraph(payload, graph, line, column))
                return;
            entry.kind = kind;
            entry.payload = std::move(graph);
            entry.payloadLine = line;
            entry.payloadColumn = column;
        } else {
            return;
        }
        if (entry.payload.empty()) {
            if (payload.firstLine == 0) {
                problems_.add(Severity::Warning, lineNo, 1, "graph record " + kind + " has no payload");
            }
            entry.payload = std::move(payload.text);
            entry.payloadLine = payload.firstLine ? payload.firstLine : lineNo + 1;
        }
        entry.index = static_cast<uint32_t>(index_.graphs.size());
        entry.title = entry.compileId.empty() ? entry.kind : "[" + entry.compileId + "] " + entry.kind;
        index_.graphs.push_back(std::move(entry));
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
            problems_.add(Severity::Warning, payload.firstLine ? payload.firstLine : lineNo, 2,
                          "inductor_collective_schedule: expected a JSON list of op names");
            return;
        }
        index_.collectives.push_back(std::move(schedule));
    }

    // "static_input_indices=[0, 1, 3]" in the printed ViewAndMutationMeta.
    static std::optional<std::vector<int64_t>> staticInputIndices(std::string_view text) {
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

    LineCursor cursor_;
    GraphIndex index_;
    ProblemSink problems_;
    size_t records_ = 0;
    std::unordered_map<uint64_t, std::string>
        strings_; // tlparse's intern table (stack frames name files by id)
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

GraphIndex indexTraceLog(std::string_view text, const std::string& fileName) {
    return TraceIndexer(text, fileName).run();
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
