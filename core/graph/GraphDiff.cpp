#include "graph/GraphDiff.h"

#include "support/EnumNames.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace jointscope {
namespace {

std::string symText(const SymInt& s) {
    return s.isSymbolic() ? s.expr : std::to_string(s.value);
}

std::string sizesText(const TensorMeta& meta) {
    std::string text = "[";
    for (size_t i = 0; i < meta.sizes.size(); ++i)
        text += (i ? ", " : "") + symText(meta.sizes[i]);
    return text + "]";
}

std::string dtypeText(const Node& node) {
    std::string text;
    for (const TensorMeta& meta : node.outputs)
        text += (text.empty() ? "" : ", ") + std::string(meta.known() ? abbreviation(meta.dtype) : "?");
    return node.outputKind == OutputKind::Tuple ? "(" + text + ")" : text;
}

// What a diff prints for a target: the op as torch names it, without the "torch.ops." prefix.
std::string targetText(const Node& node) {
    std::string_view text = node.target.text;
    if (text.starts_with("torch.ops."))
        text.remove_prefix(10);
    return std::string(text);
}

// Arguments as FX prints them, nodes by name; enough to see which argument moved.
std::string valueText(const Value& v, const Graph& graph) {
    auto items = [&](size_t first, std::string_view sep) {
        std::string text;
        for (size_t i = first; i < v.items().size(); ++i)
            text += std::string(i > first ? sep : "") + valueText(v.items()[i], graph);
        return text;
    };
    switch (v.kind()) {
    case ValueKind::None:
        return "None";
    case ValueKind::Bool:
        return v.asBool() ? "True" : "False";
    case ValueKind::Int:
        return std::to_string(v.asInt());
    case ValueKind::Float: {
        char buffer[32];
        std::snprintf(buffer, sizeof buffer, "%g", v.asFloat());
        return buffer;
    }
    case ValueKind::String:
        return "'" + v.text() + "'";
    case ValueKind::NodeRef:
        return v.asNode() < graph.size() ? graph.node(v.asNode()).name : "?";
    case ValueKind::List:
        return "[" + items(0, ", ") + "]";
    case ValueKind::Tuple:
        return "(" + items(0, ", ") + (v.items().size() == 1 ? ",)" : ")");
    case ValueKind::Dict: {
        std::string text;
        for (size_t i = 0; i + 1 < v.items().size(); i += 2)
            text +=
                (i ? ", " : "") + valueText(v.items()[i], graph) + ": " + valueText(v.items()[i + 1], graph);
        return "{" + text + "}";
    }
    case ValueKind::Slice:
        return "slice(" + items(0, ", ") + ")";
    case ValueKind::DType:
        return "torch." + std::string(torchName(v.asDType()));
    case ValueKind::Ellipsis:
        return "...";
    default:
        return v.text();
    }
}

std::string argsText(const Node& node, const Graph& graph) {
    std::string text;
    for (const Value& v : node.args)
        text += (text.empty() ? "" : ", ") + valueText(v, graph);
    return "(" + text + ")";
}

std::string kwargsText(const Node& node, const Graph& graph) {
    std::string text;
    for (const auto& [key, v] : node.kwargs)
        text += (text.empty() ? "" : ", ") + key + "=" + valueText(v, graph);
    return "{" + text + "}";
}

// The activation-checkpoint tag of a node as torch's node summary prints it: "PREFER_RECOMPUTE (ac_graph_id
// 1)", "none" when the node has none.
std::string checkpointText(const Node& node) {
    if (node.meta.recompute.empty() && node.meta.acGraphId < 0)
        return "none";
    std::string text = node.meta.recompute.empty() ? "untagged" : node.meta.recompute;
    if (node.meta.acGraphId >= 0)
        text += " (ac_graph_id " + std::to_string(node.meta.acGraphId) + ")";
    return text;
}

// What pass 3 matches besides op and shape: the target, except for placeholders, whose target is their name.
std::string positionTarget(const Node& node) {
    return node.op == NodeOp::Placeholder ? std::string() : node.target.text;
}

bool sameValue(const Value& x, const Value& y, const std::vector<NodeId>& partnerOfA);

// Element by element, as sameValue compares them: args, and the items of lists and tuples.
bool sameValues(const std::vector<Value>& x, const std::vector<Value>& y,
                const std::vector<NodeId>& partnerOfA) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(),
                      [&](const Value& u, const Value& v) { return sameValue(u, v, partnerOfA); });
}

// x (of A) and y (of B) are the same argument when constants are equal and node references are partners.
bool sameValue(const Value& x, const Value& y, const std::vector<NodeId>& partnerOfA) {
    if (x.kind() != y.kind())
        return false;
    if (x.kind() == ValueKind::NodeRef)
        return x.asNode() < partnerOfA.size() && partnerOfA[x.asNode()] == y.asNode();
    if (x.items().empty() && y.items().empty())
        return x == y;
    return sameValues(x.items(), y.items(), partnerOfA);
}

bool sameKwargs(const Node& a, const Node& b, const std::vector<NodeId>& partnerOfA) {
    using Kwarg = std::pair<std::string, Value>;
    return std::equal(a.kwargs.begin(), a.kwargs.end(), b.kwargs.begin(), b.kwargs.end(),
                      [&](const Kwarg& u, const Kwarg& v) {
                          return u.first == v.first && sameValue(u.second, v.second, partnerOfA);
                      });
}

class Differ {
public:
    Differ(const Graph& a, const Graph& b) : a_(a), b_(b) {
        diff_.partnerOfA.assign(a.size(), kNoNode);
        diff_.partnerOfB.assign(b.size(), kNoNode);
    }

    GraphDiff run() && {
        pairByName(true);
        pairByName(false);
        pairByPosition();
        collectEntries();
        collectEdges();
        return std::move(diff_);
    }

private:
    void pair(NodeId a, NodeId b) {
        diff_.partnerOfA[a] = b;
        diff_.partnerOfB[b] = a;
    }

    // Pass 1 (sameKey: target and shape must agree too) and pass 2 (the name alone).
    void pairByName(bool sameKey) {
        for (NodeId ia = 0; ia < a_.size(); ++ia) {
            if (diff_.partnerOfA[ia] != kNoNode)
                continue;
            const Node& na = a_.node(ia);
            const std::optional<NodeId> ib = b_.find(na.name);
            if (!ib || diff_.partnerOfB[*ib] != kNoNode)
                continue;
            const Node& nb = b_.node(*ib);
            if (sameKey && (na.op != nb.op || na.target != nb.target || shapeText(na) != shapeText(nb)))
                continue;
            pair(ia, *ib);
        }
    }

    // Pass 3: the k-th unpaired node of A with a given (op, target, shape) pairs with the k-th of B.
    void pairByPosition() {
        using Key = std::tuple<NodeOp, std::string, std::string>;
        std::map<Key, std::vector<NodeId>> unpairedB;
        for (NodeId ib = 0; ib < b_.size(); ++ib)
            if (diff_.partnerOfB[ib] == kNoNode) {
                const Node& n = b_.node(ib);
                unpairedB[{n.op, positionTarget(n), shapeText(n)}].push_back(ib);
            }
        std::map<Key, size_t> taken;
        for (NodeId ia = 0; ia < a_.size(); ++ia) {
            if (diff_.partnerOfA[ia] != kNoNode)
                continue;
            const Node& n = a_.node(ia);
            const Key key{n.op, positionTarget(n), shapeText(n)};
            auto it = unpairedB.find(key);
            size_t& next = taken[key];
            if (it == unpairedB.end() || next >= it->second.size())
                continue;
            pair(ia, it->second[next++]);
            ++diff_.renamed;
        }
    }

    std::vector<NodeChange> changesOf(NodeId ia, NodeId ib) const {
        const Node& na = a_.node(ia);
        const Node& nb = b_.node(ib);
        std::vector<NodeChange> changes;
        auto add = [&](std::string field, std::string before, std::string after) {
            if (before != after)
                changes.push_back({std::move(field), std::move(before), std::move(after)});
        };
        add("name", na.name, nb.name);
        add("op", std::string(nodeOpName(na.op)), std::string(nodeOpName(nb.op)));
        add("target", targetText(na), targetText(nb));
        add("shape", shapeText(na), shapeText(nb));
        add("dtype", dtypeText(na), dtypeText(nb));
        if (!sameValues(na.args, nb.args, diff_.partnerOfA))
            changes.push_back({"args", argsText(na, a_), argsText(nb, b_)});
        if (!sameKwargs(na, nb, diff_.partnerOfA))
            changes.push_back({"kwargs", kwargsText(na, a_), kwargsText(nb, b_)});
        add("checkpoint", checkpointText(na), checkpointText(nb));
        return changes;
    }

    // Ordered along B, removed nodes right after the B node that their closest paired predecessor in A maps
    // to, so that stepping through the list walks both graphs top to bottom.
    void collectEntries() {
        std::vector<std::pair<int64_t, DiffEntry>> keyed;
        int64_t lastB = -1;
        for (NodeId ia = 0; ia < a_.size(); ++ia) {
            const NodeId ib = diff_.partnerOfA[ia];
            if (ib == kNoNode) {
                keyed.push_back({2 * lastB + 1, DiffEntry{DiffKind::Removed, ia, kNoNode, {}}});
                ++diff_.removed;
                continue;
            }
            lastB = ib;
            std::vector<NodeChange> changes = changesOf(ia, ib);
            diff_.checkpoint += size_t(std::any_of(
                changes.begin(), changes.end(), [](const NodeChange& c) { return c.field == "checkpoint"; }));
            if (!changes.empty()) {
                keyed.push_back({2 * int64_t(ib), DiffEntry{DiffKind::Changed, ia, ib, std::move(changes)}});
                ++diff_.changed;
            }
        }
        for (NodeId ib = 0; ib < b_.size(); ++ib)
            if (diff_.partnerOfB[ib] == kNoNode) {
                keyed.push_back({2 * int64_t(ib), DiffEntry{DiffKind::Added, kNoNode, ib, {}}});
                ++diff_.added;
            }
        std::stable_sort(keyed.begin(), keyed.end(),
                         [](const auto& x, const auto& y) { return x.first < y.first; });
        for (auto& [key, entry] : keyed)
            diff_.entries.push_back(std::move(entry));
    }

    // Input edges of paired consumers whose producer is paired but not an input of the partner.
    void collectEdges() {
        for (NodeId ia = 0; ia < a_.size(); ++ia) {
            const NodeId ib = diff_.partnerOfA[ia];
            if (ib == kNoNode)
                continue;
            const std::vector<NodeId> inA = inputs(a_.node(ia));
            const std::vector<NodeId> inB = inputs(b_.node(ib));
            for (NodeId p : inA)
                if (diff_.partnerOfA[p] != kNoNode && !contains(inB, diff_.partnerOfA[p]))
                    diff_.edges.push_back({false, p, ia});
            for (NodeId q : inB)
                if (diff_.partnerOfB[q] != kNoNode && !contains(inA, diff_.partnerOfB[q]))
                    diff_.edges.push_back({true, q, ib});
        }
    }

    static std::vector<NodeId> inputs(const Node& node) {
        std::vector<NodeId> ids;
        node.forEachInput([&](NodeId id) {
            if (!contains(ids, id))
                ids.push_back(id);
        });
        return ids;
    }

    static bool contains(const std::vector<NodeId>& ids, NodeId id) {
        return std::find(ids.begin(), ids.end(), id) != ids.end();
    }

    const Graph& a_;
    const Graph& b_;
    GraphDiff diff_;
};

} // namespace

std::string_view diffKindName(DiffKind kind) {
    static constexpr EnumName<DiffKind> kNames[] = {
        {DiffKind::Added, "added"}, {DiffKind::Removed, "removed"}, {DiffKind::Changed, "changed"}};
    return nameOf(kNames, kind, "changed");
}

GraphDiff diffGraphs(const Graph& a, const Graph& b) {
    return Differ(a, b).run();
}

std::string shapeText(const Node& node) {
    switch (node.outputKind) {
    case OutputKind::Tensor:
        return node.outputs.empty() ? std::string() : sizesText(node.outputs[0]);
    case OutputKind::Tuple: {
        std::string text;
        for (size_t i = 0; i < node.outputs.size(); ++i)
            text += (i ? ", " : "") + (node.outputs[i].known() ? sizesText(node.outputs[i]) : "?");
        return "(" + text + ")";
    }
    case OutputKind::SymInt:
    case OutputKind::SymFloat:
    case OutputKind::SymBool:
        return node.symValue;
    default:
        return {};
    }
}

std::string DiffEntry::describe(const Graph& graphA, const Graph& graphB) const {
    const Node& node = kind == DiffKind::Added ? graphB.node(b) : graphA.node(a);
    std::string text = std::string(diffKindName(kind)) + " " + node.name;
    if (kind != DiffKind::Changed)
        return text + " (" +
               (node.op == NodeOp::CallFunction ? targetText(node) : std::string(nodeOpName(node.op))) + ")";
    for (size_t i = 0; i < changes.size(); ++i)
        text += (i ? "; " : ": ") + changes[i].field + " " + changes[i].before + " -> " + changes[i].after;
    return text;
}

} // namespace jointscope
