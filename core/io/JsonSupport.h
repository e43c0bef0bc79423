// Helpers shared by the JSON readers: parse with located errors, find the line of a parsed object.
#pragma once

#include "support/Diagnostic.h"

#include <nlohmann/json.hpp>

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jointscope::json_support {

// Ordered, so that documents keep their key order and objects appear in text order.
using Json = nlohmann::ordered_json;

// 1-based line and column of a byte offset.
inline SourceLocation locationOf(std::string_view text, size_t offset, const std::string& fileName) {
    if (offset > text.size())
        offset = text.size();
    uint32_t line = 1;
    size_t lineStart = 0;
    for (size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++line;
            lineStart = i + 1;
        }
    }
    return SourceLocation{fileName, line, static_cast<uint32_t>(offset - lineStart + 1)};
}

// Deeper documents are refused before parsing, so that every recursive walk stays bounded.
inline constexpr size_t kMaxJsonDepth = 256;

// Offset of the first character outside JSON strings for which `stop(c)` holds, or npos.
template <typename Stop> size_t findOutsideStrings(std::string_view text, Stop stop) {
    bool inString = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (inString) {
            if (c == '\\')
                ++i;
            else if (c == '"')
                inString = false;
        } else if (c == '"') {
            inString = true;
        } else if (stop(c)) {
            return i;
        }
    }
    return std::string_view::npos;
}

// Offset of the first bracket nested deeper than maxDepth, or npos.
inline size_t findTooDeep(std::string_view text, size_t maxDepth) {
    size_t depth = 0;
    return findOutsideStrings(text, [&](char c) {
        if (c == '{' || c == '[')
            return ++depth > maxDepth;
        if ((c == '}' || c == ']') && depth > 0)
            --depth;
        return false;
    });
}

// Offset of the `ordinal`-th '{' outside strings (0 is the first; ordinals from detail::objectOrdinal), or
// npos.
inline size_t findObject(std::string_view text, size_t ordinal) {
    return findOutsideStrings(text, [&](char c) { return c == '{' && ordinal-- == 0; });
}

// nlohmann reports the last character it read, often the end of the offending token: find where that token
// starts, so the location points at it as a compiler would. A control character is reported where it is.
inline size_t tokenStart(std::string_view text, size_t offset) {
    if (offset < text.size() && static_cast<unsigned char>(text[offset]) < 0x20 && text[offset] != ' ' &&
        text[offset] != '\n' && text[offset] != '\t' && text[offset] != '\r')
        return offset;
    auto isWordChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
            ++i;
        if (i >= text.size() || i > offset)
            break;
        const size_t start = i;
        const char c = text[i];
        if (c == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\')
                    ++i;
            ++i; // the closing quote, or one past the end of an unterminated string
        } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
            while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
                                       text[i] == 'e' || text[i] == 'E' || text[i] == '+' || text[i] == '-'))
                ++i;
            if (i == start + 1 && c == '-')
                ++i;
        } else if (isWordChar(c)) {
            while (i < text.size() && isWordChar(text[i]))
                ++i;
        } else {
            ++i;
        }
        if (offset < i)
            return start;
    }
    return offset;
}

namespace detail {

// Builds the ordered document from nlohmann's SAX events. Json::parse inserts every key with a linear search
// of its object (ordered_map), quadratic in the object's size: a hostile file with 300,000 keys in one object
// took minutes. Here each open object keeps a hash index of its keys; a repeated key replaces the value, as
// Json::parse does.
class OrderedDomBuilder {
public:
    explicit OrderedDomBuilder(Json& root) : root_(root) {}

    bool null() { return put(Json(nullptr)) != nullptr; }
    bool boolean(bool v) { return put(Json(v)) != nullptr; }
    bool number_integer(Json::number_integer_t v) { return put(Json(v)) != nullptr; }
    bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)) != nullptr; }
    bool number_float(Json::number_float_t v, const Json::string_t&) { return put(Json(v)) != nullptr; }
    bool string(Json::string_t& v) { return put(Json(std::move(v))) != nullptr; }
    bool binary(Json::binary_t& v) { return put(Json::binary(std::move(v))) != nullptr; }
    bool start_object(std::size_t) {
        frames_.push_back(Frame{put(Json::object()), {}, nullptr});
        return true;
    }
    bool key(Json::string_t& key) {
        Frame& f = frames_.back();
        auto& members = static_cast<Json::object_t::Container&>(f.value->get_ref<Json::object_t&>());
        const auto [at, added] = f.index.try_emplace(key, members.size());
        if (added)
            members.emplace_back(std::move(key), nullptr);
        f.slot = &members[at->second].second;
        return true;
    }
    bool end_object() {
        frames_.pop_back();
        return true;
    }
    bool start_array(std::size_t) {
        frames_.push_back(Frame{put(Json::array()), {}, nullptr});
        return true;
    }
    bool end_array() {
        frames_.pop_back();
        return true;
    }
    // Rethrown as the exception Json::parse throws, for parseLocated's handlers.
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
        if (const auto* p = dynamic_cast<const Json::parse_error*>(&e))
            throw *p;
        if (const auto* o = dynamic_cast<const Json::out_of_range*>(&e))
            throw *o;
        throw Json::other_error::create(501, e.what(), static_cast<const Json*>(nullptr));
    }

private:
    struct Frame {
        Json* value;
        std::unordered_map<std::string, size_t> index; // objects: key -> position
        Json* slot;                                    // objects: the value of the last key
    };

    // Places `v` where the document expects the next value; ancestors are not touched while a child is open,
    // so the frames' pointers stay valid.
    Json* put(Json&& v) {
        if (frames_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        Frame& f = frames_.back();
        if (f.value->is_array()) {
            auto& items = f.value->get_ref<Json::array_t&>();
            items.push_back(std::move(v));
            return &items.back();
        }
        *f.slot = std::move(v);
        return f.slot;
    }

    Json& root_;
    std::vector<Frame> frames_;
};

} // namespace detail

// Parses text; a syntax error becomes "file:line:col: error: ..." at the offending byte.
inline Expected<Json> parseLocated(std::string_view text, const std::string& fileName) {
    if (size_t deep = findTooDeep(text, kMaxJsonDepth); deep != std::string_view::npos)
        return makeError(locationOf(text, deep, fileName),
                         "JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    try {
        Json root;
        detail::OrderedDomBuilder builder(root);
        Json::sax_parse(text.begin(), text.end(), &builder);
        return root;
    } catch (const Json::parse_error& e) {
        // e.byte counts the characters read, the last one being the offending one.
        size_t offset = e.byte > 0 ? e.byte - 1 : 0;
        std::string what = e.what();
        offset = tokenStart(text, offset);
        // Keep only nlohmann's explanation, our location replaces its own.
        const size_t colon = what.find(": ", what.find("parse error"));
        std::string message = colon == std::string::npos ? what : what.substr(colon + 2);
        // nlohmann's "last read" echo of the buffer is noise once the location points at the token.
        if (const size_t echo = message.find("; last read: '"); echo != std::string::npos) {
            const size_t close = message.find("'; ", echo + 14);
            message.erase(echo, close == std::string::npos ? std::string::npos : close + 1 - echo);
        }
        return makeError(locationOf(text, offset, fileName), "invalid JSON: " + message);
    } catch (const Json::exception& e) {
        // Number overflow ("number overflow parsing '1e999'") carries no offset: point at the literal it
        // names.
        std::string what = e.what();
        size_t offset = 0;
        if (const size_t q = what.find("parsing '"); q != std::string::npos) {
            const size_t end = what.find('\'', q + 9);
            if (end != std::string::npos)
                offset = text.find(std::string_view(what).substr(q + 9, end - q - 9));
        }
        if (offset == std::string_view::npos)
            offset = 0;
        const size_t colon = what.find("] ");
        return makeError(locationOf(text, offset, fileName),
                         "invalid JSON: " + (colon == std::string::npos ? what : what.substr(colon + 2)));
    }
}

namespace detail {

// Pre-order position of `target` among all objects of `root`; true when found.
inline bool objectOrdinal(const Json& root, const Json* target, size_t& ordinal) {
    if (root.is_object()) {
        if (&root == target)
            return true;
        ++ordinal;
        for (const auto& item : root.items())
            if (objectOrdinal(item.value(), target, ordinal))
                return true;
    } else if (root.is_array()) {
        for (const Json& item : root)
            if (objectOrdinal(item, target, ordinal))
                return true;
    }
    return false;
}

} // namespace detail

// Location of the '{' that opened `object` inside `root`, parsed from `text`. Objects appear in the text in
// the same order as in a pre-order walk of the ordered DOM, so the n-th '{' outside strings is the n-th
// object. Computed only when reporting an error: costs one scan of the text.
inline SourceLocation locateObject(std::string_view text, const Json& root, const Json* object,
                                   const std::string& fileName) {
    size_t ordinal = 0;
    if (object == nullptr || !detail::objectOrdinal(root, object, ordinal))
        return SourceLocation{fileName, 1, 1};
    const size_t offset = findObject(text, ordinal);
    if (offset != std::string_view::npos)
        return locationOf(text, offset, fileName);
    return SourceLocation{fileName, 1, 1};
}

// What GraphFile lists for a jointscope JSON file, read without building the graph (defined in
// JsonFormat.cpp). Fails like readJsonGraph on syntax errors and on a wrong "format" / "version".
struct JsonGraphSummary {
    std::string kind;      // attribute "kind", or empty
    std::string compileId; // attribute "compile_id", or empty
    uint64_t nodes = 0;
};
Expected<JsonGraphSummary> summarizeJsonGraph(std::string_view text, const std::string& fileName);

} // namespace jointscope::json_support
