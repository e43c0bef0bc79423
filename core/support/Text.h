// Small helpers for the text the readers take apart.
#pragma once

#include <string_view>

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

} // namespace jointscope
