// One (value, name) table per enum serves both directions, so the name printed and the names parsed cannot
// drift apart. A value may be listed more than once: its first entry is the name it prints as, later entries
// are spellings a parser also accepts (old or alternative names).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace jointscope {

template <typename E> struct EnumName {
    E value;
    std::string_view name;
};

// The first name listed for `value`; `fallback` for a value the table lacks.
template <typename E, size_t N>
constexpr std::string_view nameOf(const EnumName<E> (&table)[N], E value, std::string_view fallback = "?") {
    for (const EnumName<E>& e : table)
        if (e.value == value)
            return e.name;
    return fallback;
}

// The value any entry spells as `name` exactly.
template <typename E, size_t N>
constexpr std::optional<E> valueNamed(const EnumName<E> (&table)[N], std::string_view name) {
    for (const EnumName<E>& e : table)
        if (e.name == name)
            return e.value;
    return std::nullopt;
}

} // namespace jointscope
