#include "graph/ColourRefinement.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>
#include <unordered_map>

namespace jointscope {

namespace {

// Appends without a temporary string: a 100k-node graph builds a key per node while the user waits.
void appendInteger(std::string& key, int64_t value) {
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    key.append(buf, result.ptr);
}

} // namespace

void appendTensorKey(std::string& key, const TensorMeta& t) {
    appendInteger(key, static_cast<int>(t.dtype));
    key += '[';
    for (const SymInt& s : t.sizes) {
        if (s.isSymbolic())
            key += s.expr;
        else
            appendInteger(key, s.value);
        key += ',';
    }
    key += ']';
}

void appendValueKey(std::string& key, const Value& v) {
    appendInteger(key, static_cast<int>(v.kind()));
    key += ':';
    switch (v.kind()) {
    case ValueKind::NodeRef:
        key += '%';
        break;
    case ValueKind::Bool:
    case ValueKind::Int:
    case ValueKind::DType:
        appendInteger(key, v.asInt());
        break;
    case ValueKind::Float: {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v.asFloat());
        key += buf;
        break;
    }
    default:
        key += v.text();
        key += '/';
        appendInteger(key, v.deviceIndex());
        break;
    }
    if (!v.items().empty()) {
        key += '(';
        for (const Value& item : v.items())
            appendValueKey(key, item), key += ',';
        key += ')';
    }
}

std::string structuralKey(const Node& n) {
    std::string key;
    key.reserve(128);
    appendInteger(key, static_cast<int>(n.op));
    key += '|';
    if (n.op != NodeOp::Placeholder)
        key += n.target.text;
    key += '|';
    appendInteger(key, static_cast<int>(n.outputKind));
    key += '|';
    for (const TensorMeta& t : n.outputs)
        appendTensorKey(key, t);
    key += '|';
    for (const Value& v : n.args)
        appendValueKey(key, v);
    for (const auto& [name, v] : n.kwargs) {
        key += name;
        key += '=';
        appendValueKey(key, v);
    }
    return key;
}

std::vector<int32_t> coloursOfKeys(const std::vector<std::string>& keys) {
    std::vector<int32_t> colour(keys.size(), -1);
    std::unordered_map<std::string_view, int32_t> ids;
    for (size_t i = 0; i < keys.size(); ++i)
        if (!keys[i].empty())
            colour[i] = ids.emplace(keys[i], static_cast<int32_t>(ids.size())).first->second;
    return colour;
}

std::vector<int32_t> refineColours(std::vector<int32_t> colour,
                                   const std::vector<std::vector<NodeId>>& inputs,
                                   const RefineOptions& options) {
    const size_t n = colour.size();
    struct Use {
        NodeId consumer;
        int32_t position;
    };
    std::vector<std::vector<Use>> uses(options.consumers ? n : 0);
    if (options.consumers)
        for (NodeId v = 0; v < n; ++v) {
            if (colour[v] < 0)
                continue;
            for (size_t k = 0; k < inputs[v].size(); ++k)
                if (inputs[v][k] < n && colour[inputs[v][k]] >= 0)
                    uses[inputs[v][k]].push_back({v, static_cast<int32_t>(k)});
        }
    size_t count = 0;
    for (int round = 0; round < options.rounds; ++round) {
        std::map<std::vector<int32_t>, int32_t> ids;
        std::vector<int32_t> next(n, -1);
        std::vector<std::pair<int32_t, int32_t>> users;
        for (NodeId v = 0; v < n; ++v) {
            if (colour[v] < 0)
                continue;
            std::vector<int32_t> signature{colour[v]};
            for (NodeId u : inputs[v])
                signature.push_back(u < n ? colour[u] : -1);
            if (options.consumers) {
                users.clear();
                for (const Use& use : uses[v])
                    users.push_back({colour[use.consumer], use.position});
                std::sort(users.begin(), users.end());
                for (const auto& [c, k] : users)
                    signature.push_back(c), signature.push_back(k);
            }
            next[v] = ids.emplace(std::move(signature), static_cast<int32_t>(ids.size())).first->second;
        }
        colour = std::move(next);
        if (ids.size() == count)
            break;
        count = ids.size();
    }
    return colour;
}

} // namespace jointscope
