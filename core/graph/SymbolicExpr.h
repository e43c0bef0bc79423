// Integer values of the symbolic size expressions FX prints ("s0", "4*s0 + 1", "(s0//2)", "Max(1, s1)").
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope {

// Integer sizes for the symbols of a graph with symbolic shapes ("s0" -> 128).
using SymbolBindings = std::map<std::string, int64_t>;

// Evaluates +, -, *, // (floor), %, parentheses, unary minus, and the sympy functions FloorDiv, Mod,
// CeilDiv, Max, Min that torch prints, over int64. An unbound symbol or anything else is an error that
// quotes the expression.
Expected<int64_t> evaluateSymbolic(std::string_view expr, const SymbolBindings& symbols);

// The graph attribute "symbol_hints" ({"s0": 2, ...}: the shape environment's example values, as export_joint
// records them), or empty.
SymbolBindings symbolHints(const std::vector<std::pair<std::string, std::string>>& attributes);

} // namespace jointscope
