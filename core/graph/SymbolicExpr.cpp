#include "graph/SymbolicExpr.h"

#include <cstdlib>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace jointscope {
namespace {

constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

// A value during evaluation. Unknown when it depends on a symbol without a value, or on a function this
// evaluator does not know; only checkSymbolic lets such values through.
struct Num {
    int64_t value = 0;
    bool known = true;
};

constexpr Num kUnknown{0, false};

enum class Mode : uint8_t {
    Evaluate, // every symbol bound; anything not understood is an error
    Check,    // symbols unknown; only hard errors (overflow, division by zero, depth) matter
};

// Long expressions (20,000 nested parentheses) are quoted by their start, so messages stay one readable line.
std::string abbreviate(std::string_view text, size_t limit = 96) {
    if (text.size() <= limit)
        return std::string(text);
    return std::string(text.substr(0, limit)) + "... (" + std::to_string(text.size()) + " bytes)";
}

// Python's a // b for b != 0 and (a, b) != (INT64_MIN, -1), which the callers rule out first.
int64_t floorDiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return q;
}

// Python's a % b for b != 0: the sign of b. b == -1 is handled apart, as INT64_MIN % -1 traps in C++.
int64_t floorMod(int64_t a, int64_t b) {
    if (b == -1)
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}

// A float expression inside a rounding to int, as torch prints sizes computed from Python floats
// (TruncToInt(0.5*ToFloat(s0)) for int(b * 0.5)): evaluated in doubles at the symbols' values, as the
// hints' arithmetic does. Numbers, symbols, + - * /, parentheses, ToFloat, IntTrueDiv / FloatTrueDiv and
// nested roundings, Max / Min; anything else is not read (nullopt).
class FloatEvaluator {
public:
    FloatEvaluator(std::string_view text, const SymbolBindings& symbols,
                   const FloatSymbolBindings* floats = nullptr)
        : text_(text), symbols_(symbols), floats_(floats) {}

    std::optional<double> run() {
        std::optional<double> v = sum();
        skipSpace();
        return v && pos_ == text_.size() ? v : std::nullopt;
    }

private:
    void skipSpace() {
        while (pos_ < text_.size() && text_[pos_] == ' ')
            ++pos_;
    }
    bool eat(char ch) {
        skipSpace();
        if (pos_ < text_.size() && text_[pos_] == ch &&
            !(ch == '*' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') &&
            !(ch == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/')) {
            ++pos_;
            return true;
        }
        return false;
    }
    std::optional<double> sum() {
        std::optional<double> v = product();
        for (;;) {
            const bool plus = eat('+');
            if (!v || (!plus && !eat('-')))
                return v;
            const std::optional<double> r = product();
            v = r ? std::optional(plus ? *v + *r : *v - *r) : std::nullopt;
        }
    }
    std::optional<double> product() {
        std::optional<double> v = unary();
        for (;;) {
            const bool times = eat('*');
            if (!v || (!times && !eat('/')))
                return v;
            const std::optional<double> r = unary();
            v = r && (times || *r != 0) ? std::optional(times ? *v * *r : *v / *r) : std::nullopt;
        }
    }
    std::optional<double> unary() {
        if (eat('-')) {
            const std::optional<double> v = unary();
            return v ? std::optional(-*v) : std::nullopt;
        }
        return primary();
    }
    std::optional<double> primary() {
        skipSpace();
        if (++depth_ > kMaxSymbolicDepth)
            return std::nullopt;
        if (eat('(')) {
            const std::optional<double> v = sum();
            return v && eat(')') ? v : std::nullopt;
        }
        const size_t start = pos_;
        if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            const std::string number(
                text_.substr(pos_, text_.find_first_not_of("0123456789.e", pos_) - pos_));
            char* end = nullptr;
            const double v = std::strtod(number.c_str(), &end);
            pos_ += number.size();
            return end == number.c_str() + number.size() ? std::optional(v) : std::nullopt;
        }
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
            ++pos_;
        const std::string name(text_.substr(start, pos_ - start));
        if (name.empty())
            return std::nullopt;
        if (!eat('(')) {
            if (auto it = symbols_.find(name); it != symbols_.end())
                return double(it->second);
            if (floats_)
                if (auto it = floats_->find(name); it != floats_->end())
                    return it->second;
            return std::nullopt;
        }
        std::vector<double> args;
        do {
            const std::optional<double> a = sum();
            if (!a)
                return std::nullopt;
            args.push_back(*a);
        } while (eat(','));
        if (!eat(')'))
            return std::nullopt;
        if ((name == "ToFloat" || name == "TruncToInt") && args.size() == 1)
            return name == "ToFloat" ? args[0] : std::trunc(args[0]);
        if ((name == "FloorToInt" || name == "CeilToInt") && args.size() == 1)
            return name == "FloorToInt" ? std::floor(args[0]) : std::ceil(args[0]);
        if (name == "RoundToInt" && args.size() == 1)
            return std::nearbyint(args[0]); // Python's round: half to even, the default rounding mode's
        if ((name == "IntTrueDiv" || name == "FloatTrueDiv") && args.size() == 2 && args[1] != 0)
            return args[0] / args[1];
        if ((name == "Max" || name == "Min") && !args.empty())
            return name == "Max" ? *std::max_element(args.begin(), args.end())
                                 : *std::min_element(args.begin(), args.end());
        return std::nullopt;
    }

    std::string_view text_;
    const SymbolBindings& symbols_;
    const FloatSymbolBindings* floats_;
    size_t pos_ = 0;
    uint32_t depth_ = 0;
};

// The text from `open` (just past a call's '(') to its matching ')', or nullopt when it does not close.
std::optional<std::string_view> callArguments(std::string_view text, size_t open) {
    int depth = 1;
    for (size_t i = open; i < text.size(); ++i) {
        depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
        if (depth == 0)
            return text.substr(open, i - open);
    }
    return std::nullopt;
}

// Recursive descent over the expression text; the first problem is kept. Recursion is one frame group per
// parenthesis or call, bounded by kMaxSymbolicDepth; chains of unary minus are read in a loop.
class Evaluator {
public:
    Evaluator(std::string_view text, const SymbolBindings* symbols, Mode mode)
        : text_(text), symbols_(symbols), mode_(mode) {}

    std::optional<Num> run() {
        std::optional<Num> v = sum();
        skipSpace();
        if (v && pos_ != text_.size())
            return fail("unexpected '" + std::string(1, text_[pos_]) + "'");
        return v;
    }

    std::string error;
    uint32_t errorOffset = 0;
    // Overflow, division by zero or nesting: wrong whatever the symbols are (checkSymbolic reports only
    // these).
    bool hardError = false;

private:
    std::optional<Num> fail(std::string message, bool hard = false, std::optional<size_t> at = std::nullopt) {
        if (error.empty()) {
            error = std::move(message);
            errorOffset = static_cast<uint32_t>(std::min(at.value_or(pos_), text_.size()));
            hardError = hard;
        }
        return std::nullopt;
    }
    std::optional<Num> overflow(int64_t a, std::string_view op, int64_t b, size_t at) {
        return fail("int64 overflow in " + std::to_string(a) + " " + std::string(op) + " " +
                        std::to_string(b),
                    true, at);
    }
    void skipSpace() {
        while (pos_ < text_.size() && text_[pos_] == ' ')
            ++pos_;
    }
    bool eat(std::string_view token) {
        skipSpace();
        if (text_.substr(pos_, token.size()) != token)
            return false;
        pos_ += token.size();
        return true;
    }
    bool enter(size_t at) {
        if (++depth_ <= kMaxSymbolicDepth)
            return true;
        fail("nesting deeper than " + std::to_string(kMaxSymbolicDepth) + " levels", true, at);
        return false;
    }

    std::optional<Num> add(Num a, Num b, bool subtract, size_t at) {
        if (!a.known || !b.known)
            return kUnknown;
        int64_t r = 0;
        if (subtract ? __builtin_sub_overflow(a.value, b.value, &r)
                     : __builtin_add_overflow(a.value, b.value, &r))
            return overflow(a.value, subtract ? "-" : "+", b.value, at);
        return Num{r};
    }
    std::optional<Num> multiply(Num a, Num b, size_t at) {
        if (!a.known || !b.known)
            return kUnknown;
        int64_t r = 0;
        if (__builtin_mul_overflow(a.value, b.value, &r))
            return overflow(a.value, "*", b.value, at);
        return Num{r};
    }
    // "//", "%" and CeilDiv: a zero divisor is an error even when the dividend is unknown.
    std::optional<Num> divide(Num a, Num b, std::string_view op, size_t at) {
        if (b.known && b.value == 0)
            return fail("division by zero", true, at);
        if (!a.known || !b.known)
            return kUnknown;
        if (op == "%")
            return Num{floorMod(a.value, b.value)};
        if (a.value == kInt64Min && b.value == -1)
            return overflow(a.value, op, b.value, at);
        if (op == "//")
            return Num{floorDiv(a.value, b.value)};
        int64_t q = a.value / b.value; // CeilDiv
        if (a.value % b.value != 0 && ((a.value < 0) == (b.value < 0)))
            ++q;
        return Num{q};
    }

    std::optional<Num> sum() {
        std::optional<Num> v = product();
        while (v) {
            skipSpace();
            const size_t at = pos_;
            const bool plus = eat("+");
            if (!plus && !eat("-"))
                break;
            std::optional<Num> r = product();
            if (!r)
                return r;
            v = add(*v, *r, !plus, at);
        }
        return v;
    }
    std::optional<Num> product() {
        std::optional<Num> v = unary();
        while (v) {
            skipSpace();
            const size_t at = pos_;
            std::string_view op;
            if (eat("//"))
                op = "//";
            else if (eat("*"))
                op = "*";
            else if (eat("%"))
                op = "%";
            else
                break;
            std::optional<Num> r = unary();
            if (!r)
                return r;
            v = op == "*" ? multiply(*v, *r, at) : divide(*v, *r, op, at);
        }
        return v;
    }
    std::optional<Num> unary() {
        bool negate = false;
        size_t signAt = 0;
        while (true) {
            skipSpace();
            if (eat("-")) {
                negate = !negate;
                signAt = pos_ - 1;
            } else if (!eat("+")) {
                break;
            }
        }
        skipSpace();
        std::optional<Num> v;
        if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            const size_t start = pos_;
            v = literal(negate); // -9223372036854775808 is a literal, not the negation of one
            skipSpace();
            if (!v || text_.substr(pos_, 2) != "**")
                return v;
            if (negate) { // -2**2 is -(2**2)
                pos_ = start;
                v = literal(false);
            }
        } else {
            v = primary();
        }
        v = power(v);
        if (!v || !negate || !v->known)
            return v;
        if (v->value == kInt64Min)
            return fail("int64 overflow in -(" + std::to_string(v->value) + ")", true, signAt);
        return Num{-v->value};
    }
    // base ** exponent, right to left (2**3**2 is 2**9), binding tighter than a unary minus on its left.
    std::optional<Num> power(std::optional<Num> base) {
        skipSpace();
        const size_t at = pos_;
        if (!base || !eat("**"))
            return base;
        if (!enter(at))
            return std::nullopt;
        std::optional<Num> exponent = unary();
        --depth_;
        if (!exponent || !base->known || !exponent->known)
            return exponent ? std::optional<Num>(kUnknown) : exponent;
        if (exponent->value < 0)
            return fail("negative exponent in " + std::to_string(base->value) + "**" +
                            std::to_string(exponent->value),
                        false, at);
        if (base->value == 0 || base->value == 1)
            return Num{exponent->value == 0 ? 1 : base->value};
        if (base->value == -1)
            return Num{exponent->value % 2 == 0 ? 1 : -1};
        int64_t r = 1;
        for (int64_t i = 0; i < exponent->value; ++i) // |base| >= 2: overflows within 63 steps
            if (__builtin_mul_overflow(r, base->value, &r))
                return overflow(base->value, "**", exponent->value, at);
        return Num{r};
    }
    std::optional<Num> literal(bool negative) {
        const size_t start = pos_;
        uint64_t magnitude = 0;
        bool tooLarge = false;
        while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            const auto digit = static_cast<uint64_t>(text_[pos_++] - '0');
            tooLarge = tooLarge || __builtin_mul_overflow(magnitude, uint64_t(10), &magnitude) ||
                       __builtin_add_overflow(magnitude, digit, &magnitude);
        }
        const uint64_t limit = negative ? uint64_t(1) << 63 : uint64_t(std::numeric_limits<int64_t>::max());
        if (tooLarge || magnitude > limit)
            return fail("integer " + std::string(negative ? "-" : "") +
                            abbreviate(text_.substr(start, pos_ - start), 40) + " does not fit in int64",
                        true, start);
        if (!negative)
            return Num{static_cast<int64_t>(magnitude)};
        return Num{magnitude == uint64_t(1) << 63 ? kInt64Min : -static_cast<int64_t>(magnitude)};
    }
    std::optional<Num> primary() {
        skipSpace();
        const size_t at = pos_;
        if (eat("(")) {
            if (!enter(at))
                return std::nullopt;
            std::optional<Num> v = sum();
            if (v && !eat(")"))
                return fail("missing ')'");
            --depth_;
            return v;
        }
        const size_t start = pos_;
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
            ++pos_;
        if (start == pos_)
            return fail(pos_ < text_.size() ? "unexpected '" + std::string(1, text_[pos_]) + "'"
                                            : "unexpected end");
        const std::string_view name = text_.substr(start, pos_ - start);
        if (eat("("))
            return call(name, start);
        if (mode_ == Mode::Check)
            return kUnknown;
        auto it = symbols_->find(std::string(name));
        if (it == symbols_->end())
            return fail("symbol '" + std::string(name) + "' has no value", false, start);
        return Num{it->second};
    }
    // CeilToInt / FloorToInt / TruncToInt of IntTrueDiv(a, b): a float quotient rounded back to an int,
    // which torch prints for sizes such as efficient attention's logsumexp (32*CeilToInt(IntTrueDiv(s0,
    // 32))). Integer arithmetic gives it exactly.
    std::optional<Num> roundedQuotient(std::string_view rounding, size_t at) {
        const size_t start = pos_;
        if (!eat("IntTrueDiv") || !eat("(")) {
            pos_ = start;
            return std::nullopt;
        }
        std::optional<Num> a = sum();
        if (!a)
            return a;
        if (!eat(","))
            return fail("IntTrueDiv takes two arguments", false, at);
        std::optional<Num> b = sum();
        if (!b)
            return b;
        if (!eat(")") || !eat(")"))
            return fail("missing ')' after the arguments of " + std::string(rounding));
        if (rounding == "TruncToInt" && a->known && b->known && b->value != 0 &&
            !(a->value == kInt64Min && b->value == -1))
            return Num{a->value / b->value};
        return divide(*a, *b, rounding == "CeilToInt" ? "CeilDiv" : "//", at);
    }

    // A rounding of a float expression (TruncToInt(0.5*ToFloat(s0))), evaluated at the symbols' values; pos_
    // moves past its ')' when read.
    std::optional<Num> roundedFloat(std::string_view rounding) {
        if (mode_ != Mode::Evaluate)
            return std::nullopt;
        const std::optional<std::string_view> inner = callArguments(text_, pos_);
        if (!inner ||
            (inner->find('.') == std::string_view::npos && inner->find("ToFloat") == std::string_view::npos &&
             inner->find("TrueDiv") == std::string_view::npos))
            return std::nullopt; // an int argument: read by the integer rules
        const std::optional<double> v = FloatEvaluator(*inner, *symbols_).run();
        if (!v || !std::isfinite(*v) || std::fabs(*v) > 9.0e18)
            return std::nullopt;
        const double r = rounding == "TruncToInt"   ? std::trunc(*v)
                         : rounding == "FloorToInt" ? std::floor(*v)
                         : rounding == "CeilToInt"  ? std::ceil(*v)
                                                    : std::nearbyint(*v);
        pos_ += inner->size() + 1;
        return Num{static_cast<int64_t>(r)};
    }

    std::optional<Num> call(std::string_view name, size_t at) {
        if (!enter(at))
            return std::nullopt;
        if (name == "CeilToInt" || name == "FloorToInt" || name == "TruncToInt" || name == "RoundToInt") {
            const size_t start = pos_;
            std::optional<Num> v = name == "RoundToInt" ? std::nullopt : roundedQuotient(name, at);
            if (v || !error.empty()) {
                --depth_;
                return v;
            }
            pos_ = start;
            if (std::optional<Num> f = roundedFloat(name)) {
                --depth_;
                return f;
            }
            // an int argument: rounding it changes nothing (below)
        }
        std::vector<Num> args;
        if (!eat(")")) {
            do {
                std::optional<Num> v = sum();
                if (!v)
                    return v;
                args.push_back(*v);
            } while (eat(","));
            if (!eat(")"))
                return fail("missing ')' after the arguments of " + std::string(name));
        }
        --depth_;
        if (args.empty())
            return fail(std::string(name) + "() takes arguments", false, at);
        if ((name == "FloorDiv" || name == "Mod" || name == "CeilDiv") && args.size() == 2)
            return divide(args[0], args[1], name == "FloorDiv" ? "//" : name == "Mod" ? "%" : "CeilDiv", at);
        if ((name == "CeilToInt" || name == "FloorToInt" || name == "TruncToInt" || name == "RoundToInt") &&
            args.size() == 1)
            return args[0];
        if (name == "Max" || name == "Min") {
            if (std::any_of(args.begin(), args.end(), [](Num a) { return !a.known; }))
                return kUnknown;
            int64_t v = args[0].value;
            for (Num a : args)
                v = name == "Max" ? std::max(v, a.value) : std::min(v, a.value);
            return Num{v};
        }
        if (mode_ == Mode::Check)
            return kUnknown; // PythonMod, Piecewise, ...: evaluateSymbolic says so if it is ever needed
        return fail("function '" + std::string(name) + "' is not supported", false, at);
    }

    std::string_view text_;
    const SymbolBindings* symbols_;
    Mode mode_;
    size_t pos_ = 0;
    uint32_t depth_ = 0;
};

} // namespace

Expected<int64_t> evaluateSymbolic(std::string_view expr, const SymbolBindings& symbols) {
    Evaluator e(expr, &symbols, Mode::Evaluate);
    std::optional<Num> v = e.run();
    if (!v)
        return makeError({}, "cannot evaluate symbolic size '" + abbreviate(expr) + "': " + e.error);
    return v->value;
}

std::vector<std::string> symbolNames(std::string_view expr) {
    std::vector<std::string> names;
    size_t i = 0;
    while (i < expr.size()) {
        const auto c = static_cast<unsigned char>(expr[i]);
        if (std::isdigit(c)) { // a literal, including its digits after a letter-free start
            while (i < expr.size() && std::isalnum(static_cast<unsigned char>(expr[i])))
                ++i;
            continue;
        }
        if (!std::isalpha(c) && expr[i] != '_') {
            ++i;
            continue;
        }
        const size_t start = i;
        while (i < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[i])) || expr[i] == '_'))
            ++i;
        size_t next = i;
        while (next < expr.size() && expr[next] == ' ')
            ++next;
        if (next >= expr.size() || expr[next] != '(')
            names.emplace_back(expr.substr(start, i - start));
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

SymbolicCheck checkSymbolic(std::string_view expr) {
    SymbolicCheck check;
    // Bracket depth first, whatever the grammar: text the evaluator gives up on early is still kept in the
    // graph.
    uint32_t depth = 0;
    for (size_t i = 0; i < expr.size(); ++i) {
        const char c = expr[i];
        if (c == '(' || c == '[') {
            if (++depth > kMaxSymbolicDepth) {
                check.issue =
                    SymbolicIssue{static_cast<uint32_t>(i),
                                  "nesting deeper than " + std::to_string(kMaxSymbolicDepth) + " levels"};
                return check;
            }
        } else if ((c == ')' || c == ']') && depth > 0) {
            --depth;
        }
    }
    Evaluator e(expr, nullptr, Mode::Check);
    std::optional<Num> v = e.run();
    if (!v) {
        if (e.hardError)
            check.issue = SymbolicIssue{e.errorOffset, e.error};
        return check;
    }
    if (v->known)
        check.constant = v->value;
    return check;
}

std::optional<double> evaluateFloatSymbolic(std::string_view expr, const SymbolBindings& ints,
                                            const FloatSymbolBindings& floats) {
    return FloatEvaluator(expr, ints, &floats).run();
}

namespace {

// The flat object {"s0": 2, "zf5": 0.1} of graph attribute `key` (a small scan reads it), each value read by
// `parse(text, &stop)` (strtoll, strtod), which leaves `stop` where it stopped.
template <typename Number, typename Parse>
std::map<std::string, Number> flatNumbers(const std::vector<std::pair<std::string, std::string>>& attributes,
                                          std::string_view key, Parse parse) {
    std::map<std::string, Number> out;
    for (const auto& [name, text] : attributes) {
        if (name != key)
            continue;
        size_t pos = 0;
        while ((pos = text.find('"', pos)) != std::string::npos) {
            const size_t end = text.find('"', pos + 1);
            const size_t colon = end == std::string::npos ? end : text.find(':', end);
            if (colon == std::string::npos)
                break;
            char* stop = nullptr;
            const Number value = parse(text.c_str() + colon + 1, &stop);
            if (stop != text.c_str() + colon + 1)
                out[text.substr(pos + 1, end - pos - 1)] = value;
            pos = stop ? size_t(stop - text.c_str()) : colon + 1;
        }
    }
    return out;
}

} // namespace

FloatSymbolBindings floatSymbolHints(const std::vector<std::pair<std::string, std::string>>& attributes) {
    return flatNumbers<double>(attributes, "float_symbol_hints",
                               [](const char* text, char** stop) { return std::strtod(text, stop); });
}

SymbolBindings symbolHints(const std::vector<std::pair<std::string, std::string>>& attributes) {
    return flatNumbers<int64_t>(attributes, "symbol_hints",
                                [](const char* text, char** stop) { return std::strtoll(text, stop, 10); });
}

} // namespace jointscope
