// What torch's ShapeEnv knows of a graph's size symbols while passes rewrite it: each backed symbol's example
// value (its hint) and the equalities guarded so far. Torch's passes compare sizes two ways, and the answers
// differ: a plain `a == b` guards (it is decided on the hints, and then holds for the compile), while
// statically_known_true(Eq(a, b)) must hold without hints: the same expression, or one an earlier guard
// made an axiom (ShapeEnv.axioms, keyed by canonicalize_bool_expr, so `Eq(64*s11, 64*s11 + 64*s55)` also
// answers `Eq(s11, s11 + s55)`).
#pragma once

#include "graph/Graph.h"
#include "graph/SymbolicExpr.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope {

class ShapeFacts {
public:
    ShapeFacts() = default;
    ShapeFacts(SymbolBindings hints, std::vector<std::string> equalityGuards);
    // From a graph's attributes "symbol_hints" and "symbol_equalities" (what a log recorded; see
    // addLogGraphFacts).
    static ShapeFacts of(const std::vector<std::pair<std::string, std::string>>& attributes);

    // statically_known_true(Eq(a, b)).
    bool knownEqual(const SymInt& a, const SymInt& b) const;
    bool knownEqual(const std::vector<SymInt>& a, const std::vector<SymInt>& b) const;
    // statically_known_true(Ne(a, b)) as sympy decides it before any range is asked: different numbers, or
    // expressions whose difference is the same nonzero number everywhere (Ne(s0 - 1, s0)). Differences only
    // value ranges bound away from zero are not proved here.
    bool knownDifferent(const SymInt& a, const SymInt& b) const;
    // The value a guard on `a` decides with (the hints); nullopt when a symbol of it has none.
    std::optional<int64_t> guarded(const SymInt& a) const;
    // bool(a == b) as a guard: on the hints, else statically.
    bool guardEqual(const SymInt& a, const SymInt& b) const;

private:
    bool followsFromGuard(const std::string& a, const std::string& b) const;

    SymbolBindings hints_;
    std::vector<std::pair<std::string, std::string>> equalities_; // both sides of each Eq guard
};

// The sides of "Eq(lhs, rhs)", a guard as torch records it; nullopt for any other guard (Ne, <, Or, ...).
std::optional<std::pair<std::string, std::string>> equalityGuardSides(std::string_view guard);

} // namespace jointscope
