#include "graph/SymbolicType.h"

#include "graph/SymbolicExpr.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>

namespace jointscope {
namespace {

using Type = SymbolicType;

Type joined(Type a, Type b) {
    return a == Type::Float || b == Type::Float ? Type::Float : Type::Int; // bools add up as ints
}

// torch's sympy functions (torch/utils/_sympy/functions.py) and the sympy ones it prints, by result type;
// a function absent here (Max, Min, Abs, Piecewise, Identity, Where) has the type of its arguments.
std::optional<Type> functionType(std::string_view name) {
    static constexpr std::string_view kFloat[] = {
        "ToFloat", "FloatTrueDiv", "IntTrueDiv", "FloatPow", "TruncToFloat", "RoundDecimal", "sqrt",
        "exp",     "log",          "sin",        "cos",      "tan",          "asin",         "acos",
        "atan",    "sinh",         "cosh",       "tanh",     "log2",         "Float"};
    static constexpr std::string_view kInt[] = {
        "FloorDiv",  "CeilDiv",    "CleanDiv",     "ModularIndexing",
        "Mod",       "PythonMod",  "TruncToInt",   "FloorToInt",
        "CeilToInt", "RoundToInt", "PowByNatural", "LShift",
        "RShift",    "floor",      "ceiling",      "IsNonOverlappingAndDenseIndicator",
        "Integer"};
    static constexpr std::string_view kBool[] = {"Eq",
                                                 "Ne",
                                                 "Lt",
                                                 "Le",
                                                 "Gt",
                                                 "Ge",
                                                 "And",
                                                 "Or",
                                                 "Not",
                                                 "Xor",
                                                 "StrictLessThan",
                                                 "StrictGreaterThan",
                                                 "LessThan",
                                                 "GreaterThan",
                                                 "Unequality",
                                                 "Equality"};
    if (name.starts_with("OpaqueUnaryFn_"))
        return Type::Float;
    if (name.starts_with("BitwiseFn_"))
        return Type::Int;
    auto in = [&](const auto& names) {
        return std::find(std::begin(names), std::end(names), name) != std::end(names);
    };
    if (in(kFloat))
        return Type::Float;
    if (in(kInt))
        return Type::Int;
    if (in(kBool))
        return Type::Bool;
    return std::nullopt;
}

// Recursive descent over the printed expression, Python's precedence: | & ~ relations + - * / // % unary
// minus, **. Anything it does not expect makes it give up (std::nullopt).
class TypeReader {
public:
    explicit TypeReader(std::string_view text) : text_(text) {}

    std::optional<Type> read() {
        std::optional<Type> t = logical();
        skipSpaces();
        return t && pos_ == text_.size() ? t : std::nullopt;
    }

private:
    void skipSpaces() {
        while (pos_ < text_.size() && text_[pos_] == ' ')
            ++pos_;
    }
    bool eat(std::string_view token) {
        skipSpaces();
        if (text_.substr(pos_, token.size()) != token)
            return false;
        pos_ += token.size();
        return true;
    }
    bool peek(std::string_view token) {
        skipSpaces();
        return text_.substr(pos_, token.size()) == token;
    }

    std::optional<Type> logical() {
        std::optional<Type> t = negation();
        while (t && (eat("|") || eat("&"))) {
            if (!negation())
                return std::nullopt;
            t = Type::Bool;
        }
        return t;
    }
    std::optional<Type> negation() {
        if (eat("~"))
            return negation() ? std::optional(Type::Bool) : std::nullopt;
        return relation();
    }
    std::optional<Type> relation() {
        std::optional<Type> t = sum();
        for (std::string_view op : {"<=", ">=", "==", "!=", "<", ">"})
            if (t && eat(op))
                return sum() ? std::optional(Type::Bool) : std::nullopt;
        return t;
    }
    std::optional<Type> sum() {
        std::optional<Type> t = product();
        while (t && (eat("+") || eat("-"))) {
            const std::optional<Type> r = product();
            t = r ? std::optional(joined(*t, *r)) : std::nullopt;
        }
        return t;
    }
    std::optional<Type> product() {
        std::optional<Type> t = unary();
        for (;;) {
            if (!t || peek("**"))
                return t;
            if (eat("//") || eat("%")) {
                const std::optional<Type> r = unary();
                t = r ? std::optional(joined(*t, *r)) : std::nullopt;
            } else if (eat("*")) {
                const std::optional<Type> r = unary();
                t = r ? std::optional(joined(*t, *r)) : std::nullopt;
            } else if (eat("/")) { // a Rational: sympy prints int expressions' quotients with //
                t = unary() ? std::optional(Type::Float) : std::nullopt;
            } else {
                return t;
            }
        }
    }
    std::optional<Type> unary() {
        if (eat("-"))
            return unary();
        std::optional<Type> base = atom();
        if (!base || !eat("**"))
            return base;
        // PowByNatural prints as a ** n: an int to a natural power stays an int.
        skipSpaces();
        const bool natural = pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]));
        const std::optional<Type> exponent = unary();
        if (!exponent)
            return std::nullopt;
        return *base == Type::Float || *exponent == Type::Float || !natural ? Type::Float : Type::Int;
    }
    std::optional<Type> atom() {
        if (++depth_ > kMaxSymbolicDepth)
            return std::nullopt;
        std::optional<Type> t = atomBody();
        --depth_;
        return t;
    }
    std::optional<Type> atomBody() {
        skipSpaces();
        if (eat("("))
            return group(std::nullopt);
        const size_t begin = pos_;
        if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
            bool real = false;
            while (pos_ < text_.size() &&
                   (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
                    ((text_[pos_] == '-' || text_[pos_] == '+') && (text_[pos_ - 1] == 'e')))) {
                real = real || text_[pos_] == '.' || text_[pos_] == 'e';
                ++pos_;
            }
            return real ? Type::Float : Type::Int;
        }
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
            ++pos_;
        const std::string_view word = text_.substr(begin, pos_ - begin);
        if (word.empty())
            return std::nullopt;
        if (eat("("))
            return group(functionType(word));
        if (word == "True" || word == "False")
            return Type::Bool;
        if (word == "oo" || word == "zoo" || word == "nan")
            return Type::Float;
        // torch's SymT prefixes: zf (backed float), zuf (unbacked float); every other symbol is an int.
        return word.starts_with("zf") || word.starts_with("zuf") ? Type::Float : Type::Int;
    }
    // The arguments of a call (or a parenthesized expression / tuple) after '('. A call's own type wins;
    // else the arguments' join, conditions (bools among others) aside.
    std::optional<Type> group(std::optional<Type> callType) {
        std::optional<Type> values;
        bool anyBool = false;
        if (!eat(")")) {
            do {
                const std::optional<Type> t = logical();
                if (!t)
                    return std::nullopt;
                if (*t == Type::Bool)
                    anyBool = true;
                else
                    values = values ? joined(*values, *t) : *t;
            } while (eat(","));
            if (!eat(")"))
                return std::nullopt;
        }
        if (callType)
            return callType;
        if (values)
            return values;
        return anyBool ? std::optional(Type::Bool) : std::nullopt;
    }

    std::string_view text_;
    size_t pos_ = 0;
    uint32_t depth_ = 0;
};

// What the reader cannot parse: a float if it names a float symbol or holds a float literal.
Type guessedType(std::string_view expr) {
    for (const std::string& name : symbolNames(expr))
        if (name.starts_with("zf") || name.starts_with("zuf"))
            return Type::Float;
    for (size_t i = 1; i + 1 < expr.size(); ++i)
        if (expr[i] == '.' && std::isdigit(static_cast<unsigned char>(expr[i - 1])) &&
            std::isdigit(static_cast<unsigned char>(expr[i + 1])))
            return Type::Float;
    return Type::Int;
}

} // namespace

SymbolicType symbolicValueType(std::string_view expr) {
    return TypeReader(expr).read().value_or(guessedType(expr));
}

} // namespace jointscope
