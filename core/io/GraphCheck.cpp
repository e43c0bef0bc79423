#include "io/GraphCheck.h"

#include "graph/SymbolicExpr.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <unordered_map>

namespace jointscope {
namespace {

constexpr uint64_t kInt64Max = uint64_t(std::numeric_limits<int64_t>::max());

std::string sizesText(const std::vector<SymInt>& sizes) {
    std::string out = "[";
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (i)
            out += ", ";
        if (out.size() > 80) {
            out += "...";
            break;
        }
        out += sizes[i].isSymbolic() ? sizes[i].expr : std::to_string(sizes[i].value);
    }
    return out + "]";
}

// The entries of sizes or strides: negative values and refused expressions. Fills `known` (for sizes) with
// the value of each entry, or nullopt when it depends on symbols.
std::optional<TensorMetaIssue> checkEntries(const std::vector<SymInt>& entries, bool stride,
                                            std::vector<std::optional<int64_t>>* known) {
    const char* what = stride ? "stride" : "size";
    for (size_t i = 0; i < entries.size(); ++i) {
        const SymInt& e = entries[i];
        std::optional<int64_t> value;
        if (e.isSymbolic()) {
            SymbolicCheck check = checkSymbolic(e.expr);
            if (check.issue)
                return TensorMetaIssue{stride, i, check.issue->offset,
                                       std::string(what) + " " + std::to_string(i) + ": " +
                                           check.issue->message};
            value = check.constant;
        } else {
            value = e.value;
        }
        if (value && *value < 0)
            return TensorMetaIssue{stride, i, 0,
                                   "negative " + std::string(what) + " " + std::to_string(*value) +
                                       " in dimension " + std::to_string(i)};
        if (known)
            known->push_back(value);
    }
    return std::nullopt;
}

// Is `to` reachable from `from` through node inputs? Fills path (from ... to) when it is. Iterative: graphs
// are deep chains.
bool findUsePath(const Graph& graph, NodeId from, NodeId to, std::vector<NodeId>& path) {
    std::vector<NodeId> parent(graph.size(), kNoNode);
    std::vector<NodeId> stack{from};
    parent[from] = from;
    while (!stack.empty()) {
        const NodeId id = stack.back();
        stack.pop_back();
        if (id == to) {
            for (NodeId at = to; at != from; at = parent[at])
                path.push_back(at);
            path.push_back(from);
            std::reverse(path.begin(), path.end());
            return true;
        }
        graph.node(id).forEachInput([&](NodeId input) {
            if (input < graph.size() && parent[input] == kNoNode) {
                parent[input] = id;
                stack.push_back(input);
            }
        });
    }
    return false;
}

std::string describe(const Node& node) {
    std::string out = "node '" + node.name + "'";
    if (node.op == NodeOp::CallFunction)
        out += " (" + node.target.text + ")";
    return out;
}

std::optional<std::string> checkReferences(const Graph& graph, NodeId id) {
    const Node& node = graph.node(id);
    std::optional<NodeId> bad;
    node.forEachInput([&](NodeId input) {
        if (!bad && (input >= id))
            bad = input;
    });
    if (!bad)
        return std::nullopt;
    if (*bad >= graph.size())
        return describe(node) + ": an argument refers to no node (dangling reference)";
    const Node& used = graph.node(*bad);
    if (*bad == id)
        return describe(node) + " uses itself: cycle '" + node.name + "' -> '" + node.name + "'";
    std::vector<NodeId> path;
    if (findUsePath(graph, *bad, id, path)) {
        // A long cycle is named by its ends: the message stays one line.
        std::string cycle = "'" + node.name + "'";
        for (size_t i = 0; i < path.size(); ++i) {
            if (path.size() > 8 && i == 4) {
                cycle += " -> ... (" + std::to_string(path.size() - 7) + " more)";
                i = path.size() - 3;
            }
            cycle += " -> '" + graph.node(path[i]).name + "'";
        }
        return describe(node) + " is on a cycle: " + cycle + " (each node uses the next)";
    }
    return describe(node) + " uses '" + used.name +
           "', which is defined after it (forward reference: a node must come after the nodes it uses)";
}

} // namespace

std::optional<TensorMetaIssue> checkTensorMeta(const TensorMeta& tensor) {
    std::vector<std::optional<int64_t>> sizes;
    sizes.reserve(tensor.sizes.size());
    if (auto issue = checkEntries(tensor.sizes, false, &sizes))
        return issue;
    if (auto issue = checkEntries(tensor.strides, true, nullptr))
        return issue;
    // A zero size makes any other size possible; symbolic sizes are at least 1 for this bound.
    if (std::find(sizes.begin(), sizes.end(), std::optional<int64_t>(0)) != sizes.end())
        return std::nullopt;
    uint64_t numel = 1;
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (!sizes[i])
            continue;
        if (__builtin_mul_overflow(numel, uint64_t(*sizes[i]), &numel) || numel > kInt64Max)
            return TensorMetaIssue{false, i, 0,
                                   "sizes " + sizesText(tensor.sizes) +
                                       ": the element count overflows int64 at dimension " +
                                       std::to_string(i)};
    }
    const uint64_t item = tensor.known() ? itemSize(tensor.dtype) : 1;
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(numel, item, &bytes) || bytes > kInt64Max)
        return TensorMetaIssue{false, sizes.empty() ? 0 : sizes.size() - 1, 0,
                               "sizes " + sizesText(tensor.sizes) + ": " + std::to_string(numel) +
                                   " elements of " + std::to_string(item) + " bytes (" +
                                   std::string(torchName(tensor.dtype)) + "): the byte size overflows int64"};
    return std::nullopt;
}

namespace {

// Integer arithmetic on literals (operator.floordiv(-9223372036854775808, -1)): tracing folds such calls, so
// only a crafted file has them, and their value is no int64 (SymInt arithmetic) or a ZeroDivisionError.
std::optional<std::string> checkConstantArithmetic(const Node& node) {
    if (node.target.kind != TargetKind::Operator || !node.kwargs.empty() || node.args.empty() ||
        node.args.size() > 2 || std::any_of(node.args.begin(), node.args.end(), [](const Value& v) {
            return v.kind() != ValueKind::Int;
        }))
        return std::nullopt;
    const std::string& op = node.target.op;
    const std::string a = "(" + std::to_string(node.args[0].asInt()) + ")";
    const std::string b = node.args.size() == 2 ? "(" + std::to_string(node.args[1].asInt()) + ")" : "";
    std::string expr;
    if (op == "neg" && b.empty())
        expr = "-" + a;
    else if (b.empty())
        return std::nullopt;
    else if (op == "floordiv")
        expr = a + " // " + b;
    else if (op == "mod")
        expr = a + " % " + b;
    else if (op == "add")
        expr = a + " + " + b;
    else if (op == "sub")
        expr = a + " - " + b;
    else if (op == "mul")
        expr = a + " * " + b;
    else if (op == "truediv" && node.args[1].asInt() == 0)
        return describe(node) + ": division by zero";
    else
        return std::nullopt;
    if (SymbolicCheck check = checkSymbolic(expr); check.issue)
        return describe(node) + ": " + check.issue->message;
    return std::nullopt;
}

} // namespace

std::optional<std::string> checkCall(const Node& node, const OpSchema& schema) {
    if (std::optional<std::string> problem = checkCallArguments(schema, node.args, node.kwargs))
        return describe(node) + ": " + *problem + "; schema " + schema.signature();
    return checkConstantArithmetic(node);
}

std::vector<NodeIssue> validateGraph(const Graph& graph, size_t limit) {
    std::vector<NodeIssue> issues;
    // A graph calls few distinct targets: look each schema up once.
    std::unordered_map<std::string_view, std::optional<OpSchema>> schemas;
    for (NodeId id = 0; id < graph.size() && issues.size() < limit; ++id) {
        const Node& node = graph.node(id);
        if (std::optional<std::string> problem = checkReferences(graph, id)) {
            issues.push_back({id, std::move(*problem)});
            continue;
        }
        if (node.op == NodeOp::Output && node.args.size() != 1) {
            issues.push_back({id, "node '" + node.name +
                                      "': the output node takes one argument (the returned "
                                      "value), got " +
                                      std::to_string(node.args.size())});
            continue;
        }
        if (node.op != NodeOp::CallFunction ||
            (node.target.kind != TargetKind::OpOverload && node.target.kind != TargetKind::Operator))
            continue;
        auto it = schemas.find(node.target.text);
        if (it == schemas.end())
            it = schemas.emplace(node.target.text, findOpSchema(node.target)).first;
        if (!it->second)
            continue;
        if (std::optional<std::string> problem = checkCall(node, *it->second))
            issues.push_back({id, std::move(*problem)});
    }
    return issues;
}

} // namespace jointscope
