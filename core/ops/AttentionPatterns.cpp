#include "ops/AttentionPatterns.h"

#include "graph/DType.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>

namespace jointscope {
namespace detail {
struct BuiltinAttentionPatterns {
    std::string_view name;
    std::string_view json;
};
extern const BuiltinAttentionPatterns kBuiltinAttentionPatterns[];
extern const size_t kBuiltinAttentionPatternCount;
} // namespace detail

namespace {

using Json = nlohmann::json;

// A literal as the generator writes it: JSON scalars and lists, {"float": "-inf"}, {"dtype": "float32"},
// {"device": "cpu"}, {"enum": "contiguous_format"}.
Value literalOf(const Json& j) {
    if (j.is_null())
        return Value::none();
    if (j.is_boolean())
        return Value::boolean(j.get<bool>());
    if (j.is_number_integer())
        return Value::integer(j.get<int64_t>());
    if (j.is_number())
        return Value::real(j.get<double>());
    if (j.is_string())
        return Value::string(j.get<std::string>());
    if (j.is_array()) {
        std::vector<Value> items;
        for (const Json& item : j)
            items.push_back(literalOf(item));
        return Value::list(std::move(items));
    }
    if (j.contains("float")) {
        const std::string text = j.at("float").get<std::string>();
        const double inf = std::numeric_limits<double>::infinity();
        return Value::real(text == "inf"    ? inf
                           : text == "-inf" ? -inf
                                            : std::numeric_limits<double>::quiet_NaN());
    }
    if (j.contains("dtype")) {
        const std::optional<DType> d = parseDType(j.at("dtype").get<std::string>());
        if (!d)
            throw std::runtime_error("unknown dtype " + j.at("dtype").dump());
        return Value::dtype(*d);
    }
    if (j.contains("device")) {
        const std::string text = j.at("device").get<std::string>();
        const size_t colon = text.find(':');
        return colon == std::string::npos
                   ? Value::device(text)
                   : Value::device(text.substr(0, colon), std::stoll(text.substr(colon + 1)));
    }
    if (j.contains("enum")) {
        const std::string text = j.at("enum").get<std::string>();
        return text.ends_with("_format") ? Value::memoryFormat(text) : Value::layout(text);
    }
    throw std::runtime_error("unknown literal " + j.dump());
}

PatternArg patternArgOf(const Json& j) {
    PatternArg a;
    if (j.is_array()) {
        a.kind = PatternArg::Kind::List;
        for (const Json& item : j)
            a.items.push_back(patternArgOf(item));
    } else if (j.is_object() && j.contains("node")) {
        a.kind = PatternArg::Kind::Node;
        a.node = j.at("node").get<int32_t>();
    } else if (j.is_object() && j.contains("kwarg")) {
        a.kind = PatternArg::Kind::KeywordArg;
        a.name = j.at("kwarg").get<std::string>();
    } else if (j.is_object() && j.contains("exclusive")) {
        a.kind = PatternArg::Kind::ExclusiveKeyword;
        a.name = j.at("exclusive").get<std::string>();
    } else if (j.is_object() && (j.contains("ignored") || j.contains("arg"))) {
        a.kind = PatternArg::Kind::Ignored;
    } else {
        a.kind = PatternArg::Kind::Literal;
        a.literal = literalOf(j);
    }
    return a;
}

SizeFormula sizeFormulaOf(const Json& j) {
    SizeFormula f;
    if (j.is_object())
        f.classes = j.at("dims").get<std::vector<int32_t>>();
    else
        f.literal = j.get<int64_t>();
    return f;
}

ReplacementArg::ScalarFn scalarFnOf(const std::string& fn) {
    using Fn = ReplacementArg::ScalarFn;
    static const std::pair<const char*, Fn> names[] = {{"identity", Fn::Identity},
                                                       {"reciprocal", Fn::Reciprocal},
                                                       {"square", Fn::Square},
                                                       {"sqrt", Fn::Sqrt},
                                                       {"sqrt_reciprocal", Fn::SqrtReciprocal},
                                                       {"dropout_scale", Fn::DropoutScale}};
    for (const auto& [name, value] : names)
        if (fn == name)
            return value;
    throw std::runtime_error("unknown scalar function " + fn);
}

std::optional<TensorFormula> tensorFormulaOf(const Json& j) {
    if (j.is_null())
        return std::nullopt;
    TensorFormula t;
    const Json& dtype = j.at("dtype");
    t.queryDType = dtype.is_string() && dtype.get<std::string>() == "query";
    if (!t.queryDType)
        t.dtype = literalOf(dtype).asDType();
    for (const Json& s : j.at("sizes"))
        t.sizes.push_back(sizeFormulaOf(s));
    for (const Json& s : j.at("strides"))
        t.strides.push_back(sizeFormulaOf(s));
    return t;
}

ReplacementArg replacementArgOf(const Json& j) {
    ReplacementArg a;
    if (j.is_array()) {
        a.kind = ReplacementArg::Kind::List;
        for (const Json& item : j)
            a.items.push_back(replacementArgOf(item));
    } else if (j.is_object() && j.contains("input")) {
        a.kind = ReplacementArg::Kind::Input;
        a.index = j.at("input").get<int32_t>();
    } else if (j.is_object() && j.contains("node")) {
        a.kind = ReplacementArg::Kind::Node;
        a.index = j.at("node").get<int32_t>();
    } else if (j.is_object() && j.contains("scalar")) {
        a.kind = ReplacementArg::Kind::Scalar;
        a.scalar = j.at("scalar").get<std::string>();
        a.fn = scalarFnOf(j.value("fn", "identity"));
    } else if (j.is_object() && j.contains("dims")) {
        a.kind = ReplacementArg::Kind::Size;
        a.size = sizeFormulaOf(j);
    } else if (j.is_object() && j.contains("dtype_of")) {
        a.kind = ReplacementArg::Kind::QueryDType;
    } else {
        a.kind = ReplacementArg::Kind::Literal;
        a.literal = literalOf(j);
    }
    return a;
}

template <typename Arg, typename Read>
std::vector<std::pair<std::string, Arg>> keywordsOf(const Json& j, Read read) {
    std::vector<std::pair<std::string, Arg>> out;
    for (const auto& [key, value] : j.items())
        out.emplace_back(key, read(value));
    return out;
}

AttentionPattern patternOf(const Json& j) {
    AttentionPattern p;
    p.name = j.at("name").get<std::string>();
    p.anchor = Target::parseFunction(j.at("anchor").get<std::string>());
    p.argnames = j.at("argnames").get<std::vector<std::string>>();
    p.training = j.at("training").get<bool>();
    const Json& check = j.at("check");
    p.checkParams = check.value("params", false);
    if (check.contains("scale_op") && !check.at("scale_op").is_null())
        p.scaleOp = Target::parseFunction(check.at("scale_op").get<std::string>());
    p.disableCuda = check.value("disable_cuda", false);
    for (const Json& n : j.at("nodes")) {
        PatternNode node;
        for (const Json& t : n.at("targets"))
            node.targets.push_back(Target::parseFunction(t.get<std::string>()));
        for (const Json& a : n.at("args"))
            node.args.push_back(patternArgOf(a));
        node.kwargs = keywordsOf<PatternArg>(n.at("kwargs"), patternArgOf);
        const Json& users = n.at("users");
        node.users = users.is_string() ? PatternNode::kMultipleUsers : users.get<int32_t>();
        p.nodes.push_back(std::move(node));
    }
    for (const Json& o : j.at("outputs"))
        p.outputs.push_back(o.is_null() ? -1 : o.get<int32_t>());
    const Json& r = j.at("replacement");
    if (r.contains("not_replayed")) {
        p.notReplayed = r.at("not_replayed").get<std::string>();
        return p;
    }
    p.inputs = r.at("inputs").get<std::vector<std::string>>();
    for (const Json& layout : r.at("layouts"))
        p.inputLayouts.push_back(layout.is_null() ? std::vector<int32_t>{}
                                                  : layout.get<std::vector<int32_t>>());
    for (const Json& c : r.at("dims")) {
        std::vector<std::pair<int32_t, int32_t>> positions;
        for (const Json& at : c)
            positions.emplace_back(at.at(0).get<int32_t>(), at.at(1).get<int32_t>());
        p.sizeClasses.push_back(std::move(positions));
    }
    for (const Json& n : r.at("nodes")) {
        ReplacementNode node;
        node.target = Target::parseFunction(n.at("target").get<std::string>());
        for (const Json& a : n.at("args"))
            node.args.push_back(replacementArgOf(a));
        node.kwargs = keywordsOf<ReplacementArg>(n.at("kwargs"), replacementArgOf);
        const Json& meta = n.at("meta");
        node.tuple = meta.at("tuple").get<bool>();
        for (const Json& t : meta.at("tensors"))
            node.outputs.push_back(tensorFormulaOf(t));
        p.replacement.push_back(std::move(node));
    }
    for (const Json& o : r.at("outputs"))
        p.replacementOutputs.push_back(replacementArgOf(o));
    return p;
}

// "fuse-attention-torch-2.15" or "torch-2.15" -> {2, 15}; {-1, -1} otherwise.
std::pair<int, int> torchVersionOf(std::string_view name) {
    const size_t at = name.rfind("torch-");
    int major = -1, minor = -1;
    if (at == std::string_view::npos ||
        std::sscanf(std::string(name.substr(at + 6)).c_str(), "%d.%d", &major, &minor) != 2)
        return {-1, -1};
    return {major, minor};
}

} // namespace

Expected<AttentionPatternSet> parseAttentionPatterns(std::string_view jsonText, std::string_view fileName) {
    const Json doc = Json::parse(jsonText, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("patterns"))
        return makeError({std::string(fileName), 1, 1}, "not a JSON object of attention patterns");
    AttentionPatternSet set;
    try {
        set.torchVersion = doc.value("torch", "");
        for (const Json& p : doc.at("patterns"))
            set.patterns.push_back(patternOf(p));
    } catch (const std::exception& e) {
        return makeError({std::string(fileName), 1, 1},
                         "pattern " + std::to_string(set.patterns.size()) + ": " + e.what());
    }
    return set;
}

const AttentionPatternSet* builtinAttentionPatterns(std::string_view rulesetName) {
    const std::pair<int, int> version = torchVersionOf(rulesetName);
    if (version.first < 0)
        return nullptr;
    // the newest built-in file not newer than the ruleset's torch, of its major version
    const detail::BuiltinAttentionPatterns* chosen = nullptr;
    std::pair<int, int> chosenVersion{-1, -1};
    for (size_t i = 0; i < detail::kBuiltinAttentionPatternCount; ++i) {
        const std::pair<int, int> v = torchVersionOf(detail::kBuiltinAttentionPatterns[i].name);
        if (v.first == version.first && v <= version && v > chosenVersion) {
            chosen = &detail::kBuiltinAttentionPatterns[i];
            chosenVersion = v;
        }
    }
    if (!chosen)
        return nullptr;
    // Parsed on first use, kept for the process: built-in data, read-only once made (a megabyte of JSON: only
    // the version asked for).
    static std::mutex mutex;
    static std::map<std::pair<int, int>, std::optional<AttentionPatternSet>> parsed;
    const std::lock_guard<std::mutex> lock(mutex);
    auto [it, inserted] = parsed.try_emplace(chosenVersion);
    if (inserted) {
        Expected<AttentionPatternSet> set = parseAttentionPatterns(chosen->json, chosen->name);
        if (set)
            it->second = std::move(*set);
    }
    return it->second ? &*it->second : nullptr;
}

} // namespace jointscope
