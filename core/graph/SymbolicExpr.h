// Integer values of the symbolic size expressions FX prints ("s0", "4*s0 + 1", "(s0//2)", "Max(1, s1)").
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace jointscope {

// Integer sizes for the symbols of a graph with symbolic shapes ("s0" -> 128).
using SymbolBindings = std::map<std::string, int64_t>;

// Evaluates +, -, *, // (floor), %, parentheses, unary minus, and the sympy functions FloorDiv, Mod,
// CeilDiv, Max, Min that torch prints, over int64. An unbound symbol or anything else is an error that
// quotes the expression.
Expected<int64_t> evaluateSymbolic(std::string_view expr, const SymbolBindings& symbols);

} // namespace jointscope
