// Small helpers for the text the readers take apart.
#pragma once

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

namespace jointscope {

// `s` without the spaces (only ' ') around it: what FX prints between the parts of an annotation or a sympy
// expression.
inline std::string_view trimSpaces(std::string_view s) {
    while (!s.empty() && s.front() == ' ')
        s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ')
        s.remove_suffix(1);
    return s;
}

// The comma-separated parts of `inside` at parenthesis depth 0 ("a, Max(1, b)" -> "a", " Max(1, b)"),
// untrimmed; nullopt when its parentheses do not balance ("a, b) | Eq(c, d": not one argument list).
inline std::optional<std::vector<std::string_view>> splitTopLevel(std::string_view inside) {
    std::vector<std::string_view> parts;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i < inside.size(); ++i) {
        if (inside[i] == '(') {
            ++depth;
        } else if (inside[i] == ')') {
            if (--depth < 0)
                return std::nullopt;
        } else if (inside[i] == ',' && depth == 0) {
            parts.push_back(inside.substr(start, i - start));
            start = i + 1;
        }
    }
    if (depth != 0)
        return std::nullopt;
    parts.push_back(inside.substr(start));
    return parts;
}

// The non-empty '\n'-separated lines of `text`: a graph attribute that holds a list, one item per line.
inline std::vector<std::string_view> nonEmptyLines(std::string_view text) {
    std::vector<std::string_view> lines;
    size_t pos = 0;
    while (pos <= text.size()) {
        const size_t end = std::min(text.find('\n', pos), text.size());
        if (end > pos)
            lines.push_back(text.substr(pos, end - pos));
        pos = end + 1;
    }
    return lines;
}

} // namespace jointscope
