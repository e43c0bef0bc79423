#include "graph/ShapeFacts.h"

#include "support/Text.h"

#include <algorithm>
#include <initializer_list>
#include <iterator>

namespace jointscope {
namespace {

// Values the expressions of a comparison are tried on: distinct per symbol and per trial, above 1 (torch
// specializes 0 and 1, so symbols are at least 2).
constexpr int kTrials = 6;
SymbolBindings trialValues(const std::vector<std::string>& names, int trial) {
    constexpr int64_t kPrimes[] = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53};
    SymbolBindings values;
    for (size_t k = 0; k < names.size(); ++k)
        values[names[k]] = kPrimes[(k * 3 + size_t(trial) * 5) % std::size(kPrimes)] + 2 * trial;
    return values;
}

std::optional<__int128> difference(const std::string& a, const std::string& b, const SymbolBindings& at) {
    Expected<int64_t> x = evaluateSymbolic(a, at);
    Expected<int64_t> y = evaluateSymbolic(b, at);
    if (!x || !y)
        return std::nullopt;
    return __int128(*x) - __int128(*y);
}

std::string text(const SymInt& s) {
    return s.isSymbolic() ? s.expr : std::to_string(s.value);
}

// The symbols the expressions name, sorted, each once: what trialValues binds.
std::vector<std::string> symbolsOf(std::initializer_list<const std::string*> expressions) {
    std::vector<std::string> names;
    for (const std::string* e : expressions)
        for (std::string& n : symbolNames(*e))
            names.push_back(std::move(n));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

} // namespace

std::optional<std::pair<std::string, std::string>> equalityGuardSides(std::string_view guard) {
    guard = trimSpaces(guard);
    if (guard.size() < 6 || guard.substr(0, 3) != "Eq(" || guard.back() != ')')
        return std::nullopt;
    // "Eq(a, b) | Eq(c, d)" does not balance inside the first call: not one equality
    const auto parts = splitTopLevel(guard.substr(3, guard.size() - 4));
    if (!parts || parts->size() != 2)
        return std::nullopt;
    const std::string_view lhs = trimSpaces((*parts)[0]), rhs = trimSpaces((*parts)[1]);
    if (lhs.empty() || rhs.empty())
        return std::nullopt;
    return std::pair{std::string(lhs), std::string(rhs)};
}

ShapeFacts::ShapeFacts(SymbolBindings hints, std::vector<std::string> equalityGuards)
    : hints_(std::move(hints)) {
    for (const std::string& guard : equalityGuards)
        if (auto sides = equalityGuardSides(guard))
            equalities_.push_back(std::move(*sides));
}

ShapeFacts ShapeFacts::of(const std::vector<std::pair<std::string, std::string>>& attributes) {
    std::vector<std::string> guards;
    for (const auto& [key, value] : attributes) {
        if (key != "symbol_equalities")
            continue;
        for (std::string_view guard : nonEmptyLines(value))
            guards.emplace_back(guard);
    }
    return ShapeFacts(symbolHints(attributes), std::move(guards));
}

bool ShapeFacts::knownEqual(const SymInt& a, const SymInt& b) const {
    if (!a.isSymbolic() && !b.isSymbolic())
        return a.value == b.value;
    if (a.isSymbolic() && b.isSymbolic() && a.expr == b.expr)
        return true;
    return followsFromGuard(text(a), text(b));
}

bool ShapeFacts::knownEqual(const std::vector<SymInt>& a, const std::vector<SymInt>& b) const {
    if (a.size() != b.size())
        return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!knownEqual(a[i], b[i]))
            return false;
    return true;
}

bool ShapeFacts::knownDifferent(const SymInt& a, const SymInt& b) const {
    if (!a.isSymbolic() && !b.isSymbolic())
        return a.value != b.value;
    const std::string x = text(a), y = text(b);
    const std::vector<std::string> names = symbolsOf({&x, &y});
    std::optional<__int128> first;
    for (int trial = 0; trial < kTrials; ++trial) {
        const std::optional<__int128> d = difference(x, y, trialValues(names, trial));
        if (!d || *d == 0 || (first && *d != *first))
            return false;
        first = d;
    }
    return true;
}

std::optional<int64_t> ShapeFacts::guarded(const SymInt& a) const {
    if (!a.isSymbolic())
        return a.value;
    Expected<int64_t> v = evaluateSymbolic(a.expr, hints_);
    return v ? std::optional<int64_t>(*v) : std::nullopt;
}

bool ShapeFacts::guardEqual(const SymInt& a, const SymInt& b) const {
    const std::optional<int64_t> x = guarded(a), y = guarded(b);
    if (x && y)
        return *x == *y;
    return knownEqual(a, b);
}

// canonicalize_bool_expr turns Eq(a, b) into b - a reduced to lowest terms with its negative terms on the
// left, and get_implications adds both orders: a guard Eq(l, r) answers Eq(a, b) when a - b is a rational
// multiple of l - r. Tried on sample values; a - b that is zero everywhere is left to the caller (sympy
// decides those by the printed form, which the callers compare).
bool ShapeFacts::followsFromGuard(const std::string& a, const std::string& b) const {
    if (equalities_.empty())
        return false;
    for (const auto& [l, r] : equalities_) {
        const std::vector<std::string> names = symbolsOf({&a, &b, &l, &r});
        std::vector<std::pair<__int128, __int128>> samples;
        for (int trial = 0; trial < kTrials; ++trial) {
            const SymbolBindings at = trialValues(names, trial);
            const std::optional<__int128> d = difference(a, b, at), e = difference(l, r, at);
            if (!d || !e)
                break;
            samples.emplace_back(*d, *e);
        }
        if (samples.size() != size_t(kTrials))
            continue;
        const bool dZero = std::all_of(samples.begin(), samples.end(), [](auto& s) { return s.first == 0; });
        const bool eZero = std::all_of(samples.begin(), samples.end(), [](auto& s) { return s.second == 0; });
        // a - b the same nonzero number everywhere: sympy decides Eq(a, b) False before any guard is asked
        // (Eq(s0, s0 + 1)); a guard whose sides differ by a constant on every sample (floor divisions that
        // hold at the hint alone) says nothing proportional.
        auto constant = [&](auto side) {
            return std::all_of(samples.begin(), samples.end(),
                               [&](auto& s) { return side(s) != 0 && side(s) == side(samples.front()); });
        };
        if (constant([](auto& s) { return s.first; }))
            return false;
        if (dZero || eZero || constant([](auto& s) { return s.second; }))
            continue;
        bool proportional = true;
        for (size_t i = 0; proportional && i < samples.size(); ++i)
            for (size_t j = i + 1; proportional && j < samples.size(); ++j)
                proportional = samples[i].first * samples[j].second == samples[j].first * samples[i].second;
        if (proportional)
            return true;
    }
    return false;
}

} // namespace jointscope
