#include "graph/SymbolicExpr.h"

#include <cstdint>
#include <cstdlib>

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

namespace jointscope {
namespace {

// Python's floor division, ceiling division and modulo over int64, b != 0. nullopt where the result does not
// fit: INT64_MIN / -1 (which also traps with SIGFPE on x86, as INT64_MIN % -1 does).
std::optional<int64_t> floorDiv(int64_t a, int64_t b) {
    if (b == -1)
        return a == INT64_MIN ? std::nullopt : std::optional<int64_t>(-a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        --q;
    return q;
}
std::optional<int64_t> ceilDiv(int64_t a, int64_t b) {
    if (b == -1)
        return a == INT64_MIN ? std::nullopt : std::optional<int64_t>(-a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0)))
        ++q;
    return q;
}
int64_t floorMod(int64_t a, int64_t b) {
    if (b == -1)
        return 0;
    const int64_t r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
}

// Recursive descent over the expression text; `error` holds the first problem.
class Evaluator {
public:
    Evaluator(std::string_view text, const SymbolBindings& symbols) : text_(text), symbols_(symbols) {}

    std::optional<int64_t> run() {
        std::optional<int64_t> v = sum();
        skipSpace();
        if (v && pos_ != text_.size())
            return fail("unexpected '" + std::string(1, text_[pos_]) + "'");
        return v;
    }
    std::string error;

private:
    std::optional<int64_t> overflow() { return fail("integer overflow (the value does not fit in 64 bits)"); }
    std::optional<int64_t> fail(std::string message) {
        if (error.empty())
            error = std::move(message);
        return std::nullopt;
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
    std::optional<int64_t> sum() {
        std::optional<int64_t> v = product();
        while (v) {
            if (eat("+")) {
                std::optional<int64_t> r = product();
                if (!r)
                    return r;
                if (__builtin_add_overflow(*v, *r, &*v))
                    return overflow();
            } else if (eat("-")) {
                std::optional<int64_t> r = product();
                if (!r)
                    return r;
                if (__builtin_sub_overflow(*v, *r, &*v))
                    return overflow();
            } else {
                break;
            }
        }
        return v;
    }
    std::optional<int64_t> product() {
        std::optional<int64_t> v = unary();
        while (v) {
            if (eat("//")) {
                std::optional<int64_t> r = unary();
                if (!r)
                    return r;
                if (*r == 0)
                    return fail("division by zero");
                v = floorDiv(*v, *r);
                if (!v)
                    return overflow();
            } else if (eat("*")) {
                std::optional<int64_t> r = unary();
                if (!r)
                    return r;
                if (__builtin_mul_overflow(*v, *r, &*v))
                    return overflow();
            } else if (eat("%")) {
                std::optional<int64_t> r = unary();
                if (!r)
                    return r;
                if (*r == 0)
                    return fail("division by zero");
                *v = floorMod(*v, *r);
            } else {
                break;
            }
        }
        return v;
    }
    std::optional<int64_t> unary() {
        if (eat("-")) {
            std::optional<int64_t> v = unary();
            if (v && *v == INT64_MIN)
                return overflow();
            return v ? std::optional<int64_t>(-*v) : v;
        }
        return primary();
    }
    std::optional<int64_t> primary() {
        skipSpace();
        if (eat("(")) {
            std::optional<int64_t> v = sum();
            if (v && !eat(")"))
                return fail("missing ')'");
            return v;
        }
        if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            int64_t v = 0;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
                if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_++] - '0', &v))
                    return overflow();
            }
            return v;
        }
        const size_t start = pos_;
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
            ++pos_;
        if (start == pos_)
            return fail(pos_ < text_.size() ? "unexpected '" + std::string(1, text_[pos_]) + "'"
                                            : "unexpected end");
        const std::string name(text_.substr(start, pos_ - start));
        if (eat("("))
            return call(name);
        auto it = symbols_.find(name);
        if (it == symbols_.end())
            return fail("symbol '" + name + "' has no value");
        return it->second;
    }
    std::optional<int64_t> call(const std::string& name) {
        std::vector<int64_t> args;
        if (!eat(")")) {
            do {
                std::optional<int64_t> v = sum();
                if (!v)
                    return v;
                args.push_back(*v);
            } while (eat(","));
            if (!eat(")"))
                return fail("missing ')' after the arguments of " + name);
        }
        if (args.empty())
            return fail(name + "() takes arguments");
        if ((name == "FloorDiv" || name == "Mod" || name == "CeilDiv") && args.size() == 2) {
            if (args[1] == 0)
                return fail("division by zero");
            if (name == "Mod")
                return floorMod(args[0], args[1]);
            std::optional<int64_t> v =
                name == "FloorDiv" ? floorDiv(args[0], args[1]) : ceilDiv(args[0], args[1]);
            return v ? v : overflow();
        }
        if (name == "Max" || name == "Min") {
            int64_t v = args[0];
            for (int64_t a : args)
                v = name == "Max" ? std::max(v, a) : std::min(v, a);
            return v;
        }
        return fail("function '" + name + "' is not supported");
    }

    std::string_view text_;
    const SymbolBindings& symbols_;
    size_t pos_ = 0;
};

} // namespace

Expected<int64_t> evaluateSymbolic(std::string_view expr, const SymbolBindings& symbols) {
    Evaluator e(expr, symbols);
    std::optional<int64_t> v = e.run();
    if (!v)
        return makeError({}, "cannot evaluate symbolic size '" + std::string(expr) + "': " + e.error);
    return *v;
}

SymbolBindings symbolHints(const std::vector<std::pair<std::string, std::string>>& attributes) {
    SymbolBindings hints;
    for (const auto& [key, text] : attributes) {
        if (key != "symbol_hints")
            continue;
        // {"s0": 2, "s1": 16}: flat, so a small scan reads it.
        size_t pos = 0;
        while ((pos = text.find('"', pos)) != std::string::npos) {
            const size_t end = text.find('"', pos + 1);
            const size_t colon = end == std::string::npos ? end : text.find(':', end);
            if (colon == std::string::npos)
                break;
            const std::string name = text.substr(pos + 1, end - pos - 1);
            char* stop = nullptr;
            const long long value = std::strtoll(text.c_str() + colon + 1, &stop, 10);
            if (stop != text.c_str() + colon + 1)
                hints[name] = value;
            pos = stop ? size_t(stop - text.c_str()) : colon + 1;
        }
    }
    return hints;
}

} // namespace jointscope
