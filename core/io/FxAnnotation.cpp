#include "io/FxAnnotation.h"

#include "graph/SymbolicExpr.h"
#include "graph/SymbolicType.h"
#include "io/GraphCheck.h"
#include "support/Text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace jointscope::fx {
namespace {

bool fail(AnnotationError& error, size_t column, std::string message) {
    error = AnnotationError{static_cast<uint32_t>(column), std::move(message)};
    return false;
}

SymInt parseDim(std::string_view text) {
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec == std::errc() && ptr == text.data() + text.size())
        return SymInt{value, {}};
    return SymInt{0, std::string(text)};
}

// Parses "[a, b]" starting at text[pos] == '['; sizes may be expressions with their own parentheses. Appends
// the offset of each item to `starts`.
bool parseDimList(std::string_view text, size_t& pos, std::vector<SymInt>& dims, std::vector<size_t>& starts,
                  AnnotationError& error) {
    const size_t open = pos++;
    const size_t close = text.find(']', pos);
    if (close != std::string_view::npos && close > pos)
        dims.reserve(static_cast<size_t>(std::count(text.begin() + static_cast<ptrdiff_t>(pos),
                                                    text.begin() + static_cast<ptrdiff_t>(close), ',')) +
                     1);
    size_t itemStart = pos;
    int depth = 0;
    for (; pos < text.size(); ++pos) {
        const char c = text[pos];
        if (c == '(' || c == '[') {
            ++depth;
        } else if ((c == ')' || c == ']') && depth > 0) {
            --depth;
        } else if (depth == 0 && (c == ',' || c == ']')) {
            const std::string_view item = trimSpaces(text.substr(itemStart, pos - itemStart));
            if (item.empty() && !(c == ']' && dims.empty() && itemStart == open + 1))
                return fail(error, itemStart, "expected a size in the tensor annotation");
            if (!item.empty()) {
                dims.push_back(parseDim(item));
                starts.push_back(static_cast<size_t>(item.data() - text.data()));
            }
            itemStart = pos + 1;
            if (c == ']') {
                ++pos;
                return true;
            }
        }
    }
    return fail(error, text.size(),
                "expected ']' closing the '[' at column " + std::to_string(open + 1) +
                    " of the tensor annotation");
}

bool isDeviceChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void appendDims(std::string& out, const std::vector<SymInt>& dims) {
    out += '[';
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i)
            out += ", ";
        out += dims[i].isSymbolic() ? dims[i].expr : std::to_string(dims[i].value);
    }
    out += ']';
}

} // namespace

bool parseAnnotation(std::string_view text, Node& node, AnnotationError& error) {
    const std::string_view untrimmed = text;
    text = trimSpaces(text);
    const auto lead = static_cast<size_t>(text.data() - untrimmed.data());
    auto failAt = [&](size_t column, std::string message) {
        return fail(error, lead + column, std::move(message));
    };
    if (text.substr(0, 4) == "Sym(" && text.back() == ')') {
        const std::string_view expr = text.substr(4, text.size() - 5);
        if (SymbolicCheck check = checkSymbolic(expr); check.issue)
            return failAt(4 + check.issue->offset, "symbolic value: " + check.issue->message);
        switch (symbolicValueType(expr)) {
        case SymbolicType::Int:
            node.outputKind = OutputKind::SymInt;
            break;
        case SymbolicType::Float:
            node.outputKind = OutputKind::SymFloat;
            break;
        case SymbolicType::Bool:
            node.outputKind = OutputKind::SymBool;
            break;
        }
        node.symValue = std::string(expr);
        return true;
    }
    const size_t bracket = text.find('[');
    if (bracket == std::string_view::npos)
        return true;
    const auto dtype = parseDType(text.substr(0, bracket));
    if (!dtype)
        return true; // List[int] and other Python types
    TensorMeta meta;
    meta.dtype = *dtype;
    size_t pos = bracket;
    std::vector<size_t> sizeStarts;
    std::vector<size_t> strideStarts;
    if (!parseDimList(text, pos, meta.sizes, sizeStarts, error) ||
        (pos < text.size() && text[pos] == '[' &&
         !parseDimList(text, pos, meta.strides, strideStarts, error))) {
        error.column += static_cast<uint32_t>(lead);
        return false;
    }
    const std::string_view device = text.substr(pos);
    if (!device.empty()) {
        const size_t colon = device.find(':');
        const std::string_view type = device.substr(0, colon);
        for (size_t i = 0; i < type.size(); ++i)
            if (!isDeviceChar(type[i]))
                return failAt(pos + i, "expected a device such as 'cuda:0' after the tensor annotation");
        if (type.empty())
            return failAt(pos, "expected a device type before ':'");
        meta.device.type = std::string(type);
        if (colon != std::string_view::npos) {
            const std::string_view index = device.substr(colon + 1);
            auto [ptr, ec] = std::from_chars(index.data(), index.data() + index.size(), meta.device.index);
            if (ec != std::errc() || ptr != index.data() + index.size() || meta.device.index < 0)
                return failAt(pos + colon + 1, "expected a device index after ':'");
        }
    }
    // Sizes no tensor can have are refused here, where the column of the offending size is known.
    if (std::optional<TensorMetaIssue> issue = checkTensorMeta(meta)) {
        const std::vector<size_t>& starts = issue->stride ? strideStarts : sizeStarts;
        return failAt(starts[issue->dim] + issue->exprOffset, issue->message);
    }
    node.outputKind = OutputKind::Tensor;
    node.outputs.clear();
    node.outputs.push_back(std::move(meta));
    return true;
}

std::string formatAnnotation(const Node& node) {
    switch (node.outputKind) {
    case OutputKind::SymInt:
    case OutputKind::SymFloat:
    case OutputKind::SymBool:
        return "Sym(" + node.symValue + ")";
    case OutputKind::Tensor:
        break;
    default:
        return {};
    }
    if (node.outputs.empty() || !node.outputs[0].known())
        return {};
    const TensorMeta& meta = node.outputs[0];
    std::string out(abbreviation(meta.dtype));
    appendDims(out, meta.sizes);
    // A 0-d tensor prints "[]" strides too ("f32[][]cuda:0"); without a device it is just "i64[]".
    if (!meta.strides.empty() || (meta.sizes.empty() && !meta.device.type.empty()))
        appendDims(out, meta.strides);
    out += meta.device.str();
    return out;
}

std::string toJsonStringArray(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) {
        if (i)
            out += ", ";
        out += '"';
        for (char c : items[i]) {
            if (c == '"' || c == '\\') {
                out += '\\';
                out += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                out += buf;
            } else {
                out += c;
            }
        }
        out += '"';
    }
    return out + "]";
}

bool fromJsonStringArray(std::string_view text, std::vector<std::string>& items) {
    items.clear();
    size_t i = 0;
    auto skipSpace = [&] {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
            ++i;
    };
    skipSpace();
    if (i >= text.size() || text[i++] != '[')
        return false;
    skipSpace();
    if (i < text.size() && text[i] == ']')
        return true;
    while (true) {
        skipSpace();
        if (i >= text.size() || text[i++] != '"')
            return false;
        std::string item;
        while (i < text.size() && text[i] != '"') {
            if (text[i] == '\\') {
                if (++i >= text.size())
                    return false;
                if (text[i] == 'u') {
                    unsigned code = 0;
                    if (i + 4 >= text.size() ||
                        std::sscanf(std::string(text.substr(i + 1, 4)).c_str(), "%4x", &code) != 1)
                        return false;
                    item += static_cast<char>(code); // only control characters are written this way
                    i += 5;
                    continue;
                }
                item += text[i] == 'n' ? '\n' : text[i] == 't' ? '\t' : text[i];
                ++i;
                continue;
            }
            item += text[i++];
        }
        if (i++ >= text.size())
            return false;
        items.push_back(std::move(item));
        skipSpace();
        if (i < text.size() && text[i] == ',') {
            ++i;
            continue;
        }
        return i < text.size() && text[i] == ']';
    }
}

} // namespace jointscope::fx
