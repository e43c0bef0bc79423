#include "partition/JointGraph.h"

#include "graph/SymbolicExpr.h"
#include "io/FxAnnotation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_map>

namespace jointscope::partition {
namespace {

void appendInt(std::string& key, int64_t value) {
    char buffer[24];
    const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
    key.append(buffer, end);
}

// Python equality of flattened leaves: 1 == 1.0 == True, so they share one spelling.
void appendNumber(std::string& key, double number) {
    if (std::isnan(number)) {
        key += "nan!"; // nan != nan: made unique by the caller
        return;
    }
    if (number == std::floor(number) && std::fabs(number) < 9.2e18) {
        key += 'n';
        key += std::to_string(static_cast<int64_t>(number));
    } else {
        char buffer[40];
        std::snprintf(buffer, sizeof buffer, "f%.17g", number);
        key += buffer;
    }
}

// How a token is keyed: exactly (the token itself), or as fx_graph_cse's hash_val, where Python's hash(-1) is
// hash(-2) (-1 is CPython's error value). With floatsByBits (_normalize_cse_arg, torch 2.14 on) a float is
// keyed by its bit pattern: 0.0 is not 0 nor -0.0, and nan is nan.
enum class TokenKey { Exact, PythonHash };
struct TokenStyle {
    TokenKey keyed = TokenKey::Exact;
    bool floatsByBits = false;
    bool hashKeysTypes = false; // PythonHash: each leaf hashed with its type (1, 1.0 and True apart)
};

void appendFloatBits(std::string& key, double number) {
    uint64_t bits = 0;
    std::memcpy(&bits, &number, sizeof bits);
    char buffer[24];
    std::snprintf(buffer, sizeof buffer, "F%016llx", static_cast<unsigned long long>(bits));
    key += buffer;
}

// The CSE token of fx_graph_cse: the target, the flattened arguments (node references already substituted)
// and the pytree spec (structure) they came from.
void appendToken(std::string& key, const Value& value, const std::vector<NodeId>& replace, bool& unique,
                 TokenStyle style) {
    switch (value.kind()) {
    case ValueKind::None:
        key += 'N';
        return;
    case ValueKind::Bool:
        if (style.keyed == TokenKey::PythonHash && style.hashKeysTypes)
            key += 'b';
        appendNumber(key, value.asBool() ? 1 : 0);
        return;
    case ValueKind::Int:
        key += 'n';
        appendInt(key, style.keyed == TokenKey::PythonHash && value.asInt() == -1 ? -2 : value.asInt());
        return;
    case ValueKind::Float:
        if (style.floatsByBits) {
            appendFloatBits(key, value.asFloat());
            return;
        }
        if (std::isnan(value.asFloat()))
            unique = true;
        if (style.keyed == TokenKey::PythonHash && style.hashKeysTypes)
            key += 'f';
        appendNumber(key, value.asFloat());
        return;
    case ValueKind::NodeRef:
        key += '%';
        appendInt(key, replace[value.asNode()]);
        return;
    case ValueKind::List:
        key += '[';
        break;
    case ValueKind::Tuple:
        key += '(';
        break;
    case ValueKind::Dict:
        key += '{';
        break;
    case ValueKind::Slice:
        key += ':';
        break;
    default:
        key += char('a' + int(value.kind()));
        key += std::to_string(value.asInt());
        key += '\'';
        key += value.text();
        key += '\'';
        break;
    }
    for (const Value& item : value.items()) {
        appendToken(key, item, replace, unique, style);
        key += ',';
    }
    key += ']';
}

// Ops whose output shares its input's storage (get_node_storage() sees through them): the ruleset's aliasing
// ops and views.
bool aliasesFirstArgument(const Node& node, const Ruleset& rules) {
    if (node.op != NodeOp::CallFunction || node.args.empty() || node.args[0].kind() != ValueKind::NodeRef)
        return false;
    const std::string key = opKey(node.target);
    return rules.aliasing.contains(key) || rules.views.contains(key);
}

// min_cut_rematerialization_partition's partition_key: the backward outputs and everything they read.
std::vector<bool> backwardDependencies(const Graph& graph) {
    const std::vector<const Value*> leaves = graph.outputLeaves();
    std::vector<NodeId> outputs;
    for (size_t i = size_t(std::max<int64_t>(0, graph.numFwdOutputs.value_or(0))); i < leaves.size(); ++i)
        if (leaves[i]->kind() == ValueKind::NodeRef)
            outputs.push_back(leaves[i]->asNode());
    return readByAny(graph, std::move(outputs));
}

// Per node: whether its op aliases its first argument, and whether CSE leaves it alone (classified once per
// distinct target: a graph calls few).
struct CseClasses {
    std::vector<uint8_t> aliases, excluded;
};
CseClasses classifyForCse(const Graph& graph, const Ruleset& rules) {
    CseClasses c;
    c.aliases.assign(graph.size(), 0);
    c.excluded.assign(graph.size(), 0);
    std::unordered_map<std::string_view, std::pair<uint8_t, uint8_t>> byTarget;
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& node = graph.node(id);
        auto [it, inserted] = byTarget.emplace(node.target.text, std::pair<uint8_t, uint8_t>{0, 0});
        if (inserted && node.op == NodeOp::CallFunction) {
            const std::string key = opKey(node.target);
            it->second = {uint8_t(rules.aliasing.contains(key) || rules.views.contains(key)),
                          uint8_t(rules.cseExcluded.contains(key))};
        }
        c.aliases[id] = node.op == NodeOp::CallFunction && it->second.first && !node.args.empty() &&
                        node.args[0].kind() == ValueKind::NodeRef;
        c.excluded[id] =
            node.op != NodeOp::CallFunction || it->second.second || isImpure(node, rules.dceKeepsMutatingOps);
    }
    return c;
}

// fx_graph_cse's nodes_that_alias_outputs: nodes sharing storage with a value the graph returns.
std::vector<bool> aliasesOfOutputs(const Graph& graph, const std::vector<uint8_t>& aliases) {
    std::vector<NodeId> root(graph.size());
    for (NodeId id = 0; id < graph.size(); ++id) // graph order: a node's first argument has its root already
        root[id] = aliases[id] ? root[graph.node(id).args[0].asNode()] : id;
    std::vector<bool> outputRoot(graph.size(), false), result(graph.size(), false);
    for (const Value* leaf : graph.outputLeaves())
        if (leaf->kind() == ValueKind::NodeRef)
            outputRoot[root[leaf->asNode()]] = true;
    for (NodeId id = 0; id < graph.size(); ++id)
        result[id] = graph.node(id).outputKind == OutputKind::Tensor && outputRoot[root[id]];
    return result;
}

} // namespace

void applySymbolHints(Graph& graph) {
    const SymbolBindings hints = symbolHints(graph.attributes);
    if (hints.empty())
        return;
    auto hint = [&](SymInt& dim) {
        if (!dim.isSymbolic())
            return;
        Expected<int64_t> value = evaluateSymbolic(dim.expr, hints);
        dim.value = value && *value > 0 ? *value : 0;
    };
    for (NodeId id = 0; id < graph.size(); ++id)
        for (TensorMeta& tensor : graph.node(id).outputs) {
            for (SymInt& d : tensor.sizes)
                hint(d);
            for (SymInt& d : tensor.strides)
                hint(d);
        }
}

NodeId storageRoot(const Graph& graph, NodeId id, const Ruleset& rules) {
    while (aliasesFirstArgument(graph.node(id), rules))
        id = graph.node(id).args[0].asNode();
    return id;
}

bool isImpure(const Node& node, bool mutatingOpsAreImpure) {
    if (node.op == NodeOp::Placeholder || node.op == NodeOp::Output)
        return true;
    if (node.op != NodeOp::CallFunction)
        return false;
    const Target& t = node.target;
    switch (t.kind) {
    case TargetKind::Operator:
    case TargetKind::Name:
        return false;
    case TargetKind::HigherOrder:
        return t.op == "with_effects";
    case TargetKind::Python:
        return t.text == "torch._assert" || t.text == "_assert";
    case TargetKind::OpOverload:
    case TargetKind::OpPacket:
        break;
    }
    // torch.fx.node._side_effectful_functions
    if (t.op.starts_with("_assert") || t.op.starts_with("sym_constrain_range") ||
        t.op.starts_with("record_function") || t.op == "print")
        return true;
    // torch >= 2.1: an OpOverload whose schema mutates an argument (in-place "foo_" ops, copy_).
    return mutatingOpsAreImpure && !t.op.empty() && t.op.back() == '_' && !t.op.starts_with("__");
}

namespace {

// "Wrapper(key=INNER)" -> INNER, the input descriptor an output descriptor names; empty when absent.
std::string_view describedInput(std::string_view descriptor, std::string_view wrapper, std::string_view key) {
    if (descriptor.substr(0, wrapper.size()) != wrapper)
        return {};
    const size_t at = descriptor.find(key);
    if (at == std::string_view::npos || descriptor.empty() || descriptor.back() != ')')
        return {};
    const size_t begin = at + key.size();
    return descriptor.substr(begin, descriptor.size() - 1 - begin);
}

} // namespace

std::vector<bool> epilogueMutatedInputs(const Graph& graph) {
    std::vector<bool> marked(graph.size(), false);
    const std::optional<NodeId> output = graph.outputNode();
    if (!output)
        return marked;
    std::vector<std::string> descriptors;
    for (const auto& [key, json] : graph.node(*output).meta.extra)
        if (key == fx::kOutputDescriptorsKey && !fx::fromJsonStringArray(json, descriptors))
            descriptors.clear();
    std::vector<std::string_view> mutated, withGrad;
    for (const std::string& d : descriptors) {
        if (std::string_view in = describedInput(d, "InputMutationAOTOutput(", "mutated_input="); !in.empty())
            mutated.push_back(in);
        if (std::string_view in = describedInput(d, "GradAOTOutput(", "grad_of="); !in.empty())
            withGrad.push_back(in);
    }
    auto holds = [](const std::vector<std::string_view>& list, std::string_view d) {
        return std::find(list.begin(), list.end(), d) != list.end();
    };
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& node = graph.node(id);
        const std::string& d = node.meta.descriptor;
        marked[id] = node.op == NodeOp::Placeholder && !d.empty() && holds(mutated, d) && holds(withGrad, d);
    }
    return marked;
}

PreparedJoint prepareJoint(Graph joint, const Ruleset& rules) {
    PreparedJoint prepared;
    const size_t n = joint.size();
    std::vector<bool> keep(n, true);
    std::vector<NodeId> replace(n);
    for (NodeId id = 0; id < n; ++id)
        replace[id] = id;

    // eliminate_dead_code: reverse order, so chains of dead nodes fall together.
    std::vector<uint32_t> liveUsers(n, 0);
    for (NodeId id = 0; id < n; ++id)
        liveUsers[id] = uint32_t(joint.node(id).users.size());
    for (NodeId id = NodeId(n); id-- > 0;) {
        const Node& node = joint.node(id);
        if (liveUsers[id] != 0 || isImpure(node, rules.dceKeepsMutatingOps))
            continue;
        keep[id] = false;
        prepared.deadNodes.push_back(node.name);
        std::vector<NodeId> inputs;
        node.forEachInput([&](NodeId in) { inputs.push_back(in); });
        std::sort(inputs.begin(), inputs.end());
        inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
        for (NodeId in : inputs)
            --liveUsers[in];
    }
    std::reverse(prepared.deadNodes.begin(), prepared.deadNodes.end());

    // fx_graph_cse: the first node with a given token stands for every later one.
    if (rules.cse) {
        // torch >= 2.14 keys each node by "is a backward dependency" too; values that share storage with a
        // graph output are left alone (nodes_that_alias_outputs).
        const CseClasses classes = classifyForCse(joint, rules);
        std::vector<bool> backwardDep, outputAlias;
        if (rules.cseKeepsBackwardDependenciesApart)
            backwardDep = backwardDependencies(joint);
        if (rules.cseSkipsOutputAliases)
            outputAlias = aliasesOfOutputs(joint, classes.aliases);
        // fx_graph_cse keys its table by the hash of the token and merges a node only when the token
        // registered under that hash is its own; a node whose hash is taken by another token is kept and not
        // registered (so unsqueeze(x, -1) after unsqueeze(x, -2) is never merged with its twin: hash(-1) ==
        // hash(-2)).
        struct Registered {
            std::string token;
            NodeId id;
        };
        std::unordered_map<std::string, Registered> byHash;
        byHash.reserve(n);
        std::string key, hashKey;
        auto appendArgs = [&](std::string& out, NodeId id, TokenKey keyed, bool& unique) {
            const TokenStyle style{keyed, rules.cseKeysFloatsByBits, rules.cseHashKeysTypes};
            const Node& node = joint.node(id);
            out.assign(node.target.text);
            out += !backwardDep.empty() && backwardDep[id] ? "|b|" : "|";
            for (const Value& arg : node.args) {
                appendToken(out, arg, replace, unique, style);
                out += ';';
            }
            out += '|';
            for (const auto& [name, value] : node.kwargs) {
                out += name;
                out += '=';
                appendToken(out, value, replace, unique, style);
                out += ';';
            }
        };
        for (NodeId id = 0; id < n; ++id) {
            const Node& node = joint.node(id);
            if (!keep[id] || classes.excluded[id] || (!outputAlias.empty() && outputAlias[id]))
                continue;
            bool unique = false;
            appendArgs(key, id, TokenKey::Exact, unique);
            if (unique)
                continue;
            appendArgs(hashKey, id, TokenKey::PythonHash, unique);
            auto [it, inserted] = byHash.try_emplace(hashKey, Registered{key, id});
            if (inserted || it->second.token != key)
                continue;
            replace[id] = it->second.id;
            keep[id] = false;
            prepared.merged.emplace_back(node.name, joint.node(it->second.id).name);
        }
    }
    if (!prepared.deadNodes.empty() || !prepared.merged.empty())
        joint.eraseNodes(keep, replace);
    prepared.graph = std::move(joint);
    return prepared;
}

} // namespace jointscope::partition
