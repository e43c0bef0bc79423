// Integer values of the symbolic size expressions FX prints ("s0", "4*s0 + 1", "(s0//2)", "Max(1, s1)").
#pragma once

#include "support/Diagnostic.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope {

// Integer sizes for the symbols of a graph with symbolic shapes ("s0" -> 128).
using SymbolBindings = std::map<std::string, int64_t>;

// Deepest nesting of parentheses and calls in a size expression. The evaluator recurses once per level, so an
// expression from a file (20,000 nested parentheses) must not decide how deep the stack goes.
inline constexpr uint32_t kMaxSymbolicDepth = 256;

// Evaluates +, -, *, // (floor), %, ** (a non-negative exponent), parentheses, unary minus, and the sympy
// functions FloorDiv, Mod, CeilDiv, Max, Min that torch prints, and CeilToInt / FloorToInt / TruncToInt of an
// int or of IntTrueDiv(a, b), over int64. An unbound symbol, an int64 overflow (INT64_MIN // -1 included), a
// division by zero, nesting deeper than kMaxSymbolicDepth or anything else is an error that quotes the
// expression.
Expected<int64_t> evaluateSymbolic(std::string_view expr, const SymbolBindings& symbols);

// The symbols an expression names (identifiers that are not called), sorted, each once.
std::vector<std::string> symbolNames(std::string_view expr);

// A problem a reader can see in a size expression before any symbol has a value.
struct SymbolicIssue {
    uint32_t offset = 0; // byte offset into the expression of the offending part
    std::string message;
};

struct SymbolicCheck {
    std::optional<SymbolicIssue> issue;
    std::optional<int64_t> constant; // the value, when the expression has no symbols and evaluates
};

// What readers check in the size expressions of a file: nesting deeper than kMaxSymbolicDepth, and int64
// overflow or division by zero among its constants (s0 + (-9223372036854775808)//(-1)) are issues. Symbols
// stay unknown, and text this evaluator does not understand (Piecewise(...)) is no issue:
// evaluateSymbolic reports it if a size of it is ever needed.
SymbolicCheck checkSymbolic(std::string_view expr);

// Values of float symbols ("zf5" -> 0.1).
using FloatSymbolBindings = std::map<std::string, double>;

// A float expression of symbols (zf5, 0.5*zf5, FloatTrueDiv(1.0, zf5), TruncToInt(zf5)) at the given values,
// int symbols from `ints`; nullopt for what it does not read (numbers, symbols, + - * /, parentheses,
// ToFloat, FloatTrueDiv / IntTrueDiv, the roundings, Max, Min).
std::optional<double> evaluateFloatSymbolic(std::string_view expr, const SymbolBindings& ints,
                                            const FloatSymbolBindings& floats);

// The graph attribute "float_symbol_hints" ({"zf5": 0.1, ...}: float symbols' values, as a log's
// create_symbol records them), or empty.
FloatSymbolBindings floatSymbolHints(const std::vector<std::pair<std::string, std::string>>& attributes);

// The graph attribute "symbol_hints" ({"s0": 2, ...}: the shape environment's example values, as export_joint
// records them), or empty.
SymbolBindings symbolHints(const std::vector<std::pair<std::string, std::string>>& attributes);

} // namespace jointscope
