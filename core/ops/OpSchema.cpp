#include "ops/OpSchema.h"

#include <algorithm>
#include <cstring>

namespace jointscope {
namespace detail {
extern const OpSchemaEntry kOpSchemaEntries[];
extern const size_t kOpSchemaEntryCount;
extern const char kOpSchemaTorchVersion[];
} // namespace detail

namespace {

// A parameter kind: its one-letter code in the generated schema table, and how torch spells its type.
struct KindSpelling {
    char code;
    ParamKind kind;
    std::string_view name;
    std::string_view optionalName;
};
constexpr KindSpelling kKindSpellings[] = {
    {'T', ParamKind::Tensor, "Tensor", "Tensor?"}, {'L', ParamKind::TensorList, "Tensor[]", "Tensor[]?"},
    {'I', ParamKind::Int, "int", "int?"},          {'J', ParamKind::IntList, "int[]", "int[]?"},
    {'S', ParamKind::Scalar, "Scalar", "Scalar?"}, {'F', ParamKind::Float, "float", "float?"},
    {'B', ParamKind::Bool, "bool", "bool?"},       {'s', ParamKind::String, "str", "str?"},
};

ParamKind kindOf(char code) {
    for (const KindSpelling& k : kKindSpellings)
        if (k.code == code)
            return k.kind;
    return ParamKind::Other;
}

std::string_view kindName(const OpParam& p) {
    for (const KindSpelling& k : kKindSpellings)
        if (k.kind == p.kind)
            return p.optional ? k.optionalName : k.name;
    return "Any";
}

OpSchema parseEntry(const detail::OpSchemaEntry& entry) {
    OpSchema schema;
    schema.key = entry.key;
    bool keywordOnly = false;
    std::string_view rest = entry.params;
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        if (item == "*") {
            keywordOnly = true;
            continue;
        }
        const size_t colon = item.find(':');
        OpParam p;
        p.name = item.substr(0, colon);
        const std::string_view type =
            colon == std::string_view::npos ? std::string_view() : item.substr(colon + 1);
        p.kind = type.empty() ? ParamKind::Other : kindOf(type[0]);
        p.optional = type.find('?') != std::string_view::npos;
        p.hasDefault = type.find('=') != std::string_view::npos;
        p.keywordOnly = keywordOnly;
        schema.params.push_back(p);
        if (!keywordOnly)
            ++schema.positional;
    }
    return schema;
}

// Python binds None to an Optional parameter, and to a plain Tensor one as an undefined tensor (torch's
// toIValue: CUDA's _scaled_dot_product_efficient_attention_backward gets attn_bias=None); a Tensor parameter
// otherwise takes a node, or a number torch wraps into a tensor (aten.mul.Tensor(x, 0.5)); a Tensor[]
// parameter takes a list, or a node that is one.
std::optional<std::string> checkKind(const OpParam& p, const Value& v) {
    const ValueKind k = v.kind();
    if (k == ValueKind::Opaque || (k == ValueKind::None && (p.optional || p.kind == ParamKind::Tensor)))
        return std::nullopt;
    bool fits = true;
    switch (p.kind) {
    case ParamKind::Tensor:
        fits = k == ValueKind::NodeRef || k == ValueKind::Int || k == ValueKind::Float ||
               k == ValueKind::Bool || k == ValueKind::SymExpr;
        break;
    case ParamKind::TensorList:
        fits = k == ValueKind::List || k == ValueKind::Tuple || k == ValueKind::NodeRef;
        break;
    default:
        break;
    }
    if (fits)
        return std::nullopt;
    static constexpr std::string_view kValueNames[] = {
        "None",     "a bool",          "an int",         "a float", "a string",     "a node",
        "a list",   "a tuple",         "a dict",         "a slice", "a dtype",      "a device",
        "a layout", "a memory format", "a symbolic int", "...",     "an expression"};
    return "argument '" + std::string(p.name) + "' is " + std::string(kindName(p)) + ", got " +
           std::string(kValueNames[static_cast<size_t>(k)]);
}

} // namespace

std::string OpSchema::signature() const {
    std::string out(key);
    out += '(';
    for (size_t i = 0; i < params.size(); ++i) {
        if (i)
            out += ", ";
        if (i == positional && params[i].keywordOnly)
            out += "*, ";
        out += params[i].name;
        out += ": ";
        out += kindName(params[i]);
        if (params[i].hasDefault)
            out += " = ...";
    }
    return out + ')';
}

std::optional<OpSchema> findOpSchema(const Target& target) {
    std::string key;
    if (target.kind == TargetKind::OpOverload)
        key = target.ns + "." + target.op + "." + target.overload;
    else if (target.kind == TargetKind::Operator)
        key = "operator." + target.op;
    else
        return std::nullopt;
    const detail::OpSchemaEntry* begin = detail::kOpSchemaEntries;
    const detail::OpSchemaEntry* end = begin + detail::kOpSchemaEntryCount;
    const detail::OpSchemaEntry* it =
        std::lower_bound(begin, end, key, [](const detail::OpSchemaEntry& e, const std::string& k) {
            return std::strcmp(e.key, k.c_str()) < 0;
        });
    if (it == end || key != it->key)
        return std::nullopt;
    return parseEntry(*it);
}

std::optional<std::string> checkCallArguments(const OpSchema& schema, const std::vector<Value>& args,
                                              const std::vector<std::pair<std::string, Value>>& kwargs) {
    auto names = [&](size_t count) {
        std::string out;
        for (size_t i = 0; i < count; ++i)
            out += (i ? ", " : "") + std::string(schema.params[i].name);
        return out;
    };
    if (args.size() > schema.positional)
        return "takes at most " + std::to_string(schema.positional) + " positional argument" +
               (schema.positional == 1 ? "" : "s") +
               (schema.positional ? " (" + names(schema.positional) + ")" : "") + ", got " +
               std::to_string(args.size());
    // Bound values per parameter; on the stack for all but the longest schemas (this runs once per call
    // node).
    constexpr size_t kInline = 48;
    const Value* inlineBound[kInline] = {};
    std::vector<const Value*> heapBound(schema.params.size() > kInline ? schema.params.size() : 0, nullptr);
    const Value** bound = schema.params.size() > kInline ? heapBound.data() : inlineBound;
    for (size_t i = 0; i < args.size(); ++i)
        bound[i] = &args[i];
    for (const auto& kwarg : kwargs) {
        const std::string& name = kwarg.first;
        auto it = std::find_if(schema.params.begin(), schema.params.end(),
                               [&](const OpParam& p) { return p.name == name; });
        if (it == schema.params.end())
            return "has no parameter '" + name + "'";
        const size_t index = static_cast<size_t>(it - schema.params.begin());
        if (bound[index])
            return "got argument '" + name + "' twice (by position and by keyword)";
        bound[index] = &kwarg.second;
    }
    for (size_t i = 0; i < schema.params.size(); ++i) {
        const OpParam& p = schema.params[i];
        if (!bound[i]) {
            // Optional parameters without a default are left out by some torch versions' printers: not an
            // error.
            if (p.hasDefault || p.optional)
                continue;
            return "missing required argument '" + std::string(p.name) + "' (" + std::to_string(args.size()) +
                   " positional argument" + (args.size() == 1 ? "" : "s") + " given)";
        }
        if (std::optional<std::string> problem = checkKind(p, *bound[i]))
            return problem;
    }
    return std::nullopt;
}

std::string_view opSchemaTorchVersion() {
    return detail::kOpSchemaTorchVersion;
}

} // namespace jointscope
