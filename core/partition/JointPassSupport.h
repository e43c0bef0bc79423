// What the joint-graph passes share (JointPasses.cpp, FuseAttention.cpp): the graph while they rewrite it,
// the context of a replay, and small queries on nodes.
#pragma once

#include "graph/FxNamespace.h"
#include "graph/Graph.h"
#include "graph/ShapeFacts.h"
#include "ops/AttentionPatterns.h"
#include "ops/Ruleset.h"
#include "partition/JointGraph.h"
#include "partition/JointPasses.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace jointscope::partition::passes {

// The joint graph while passes rewrite it: nodes keep their ids, new ones are appended, and `order` is the
// graph order (erased ids stay in it, skipped).
class WorkGraph {
public:
    explicit WorkGraph(Graph& graph) : nodes_(graph.nodes().begin(), graph.nodes().end()), names_(graph) {
        order_.resize(nodes_.size());
        for (NodeId id = 0; id < nodes_.size(); ++id)
            order_[id] = id;
        erased_.assign(nodes_.size(), false);
        recomputeUsers();
    }

    size_t size() const { return nodes_.size(); }
    Node& node(NodeId id) { return nodes_[id]; }
    const Node& node(NodeId id) const { return nodes_[id]; }
    bool erased(NodeId id) const { return erased_[id]; }
    const std::vector<NodeId>& users(NodeId id) const { return users_[id]; }

    // Live nodes in graph order (a copy: passes edit while they walk).
    std::vector<NodeId> liveOrder() const {
        std::vector<NodeId> out;
        out.reserve(order_.size());
        for (NodeId id : order_)
            if (!erased_[id])
                out.push_back(id);
        return out;
    }
    size_t position(NodeId id) const {
        return static_cast<size_t>(std::find(order_.begin(), order_.end(), id) - order_.begin());
    }

    // node.replace_all_uses_with(to)
    void replaceAllUses(NodeId from, NodeId to) {
        for (NodeId user : users_[from])
            if (std::find(users_[to].begin(), users_[to].end(), user) == users_[to].end())
                users_[to].push_back(user);
        replaceAllUsesWithValue(from, Value::nodeRef(to));
    }
    // node.replace_all_uses_with(value): another node, or a literal in its place (guard_scalar's value).
    void replaceAllUsesWithValue(NodeId from, const Value& value) {
        for (NodeId user : users_[from]) {
            Node& u = nodes_[user];
            for (Value& v : u.args)
                substitute(v, from, value);
            for (auto& kv : u.kwargs)
                substitute(kv.second, from, value);
        }
        users_[from].clear();
    }
    // graph.erase_node(id); it has no users left.
    void erase(NodeId id) {
        erased_[id] = true;
        nodes_[id].forEachInput([&](NodeId input) {
            auto& u = users_[input];
            u.erase(std::remove(u.begin(), u.end(), id), u.end());
        });
    }
    // graph.call_function under inserting_before(anchor) / inserting_after(anchor).
    NodeId insert(Node node, NodeId anchor, bool after) {
        const NodeId id = static_cast<NodeId>(nodes_.size());
        node.name = names_.create(FxNamespace::targetToName(targetName(node.target)));
        node.forEachInput([&](NodeId input) {
            auto& u = users_[input];
            if (std::find(u.begin(), u.end(), id) == u.end())
                u.push_back(id);
        });
        nodes_.push_back(std::move(node));
        erased_.push_back(false);
        users_.emplace_back();
        order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(position(anchor) + (after ? 1 : 0)), id);
        return id;
    }

    // stable_topological_sort (pattern_matcher.py): graph order kept, except that a node reading one that
    // comes later moves right after the last input it waited for (a replacement inserted before its inputs).
    void stableTopologicalSort() {
        std::vector<NodeId> pending = liveOrder();
        std::reverse(pending.begin(), pending.end());
        std::vector<bool> ready(nodes_.size(), false);
        std::unordered_map<NodeId, std::vector<NodeId>> waiting;
        std::vector<NodeId> sorted;
        sorted.reserve(pending.size());
        while (!pending.empty()) {
            const NodeId id = pending.back();
            pending.pop_back();
            // the last input not yet placed, inputs counted once in the order they first appear
            // (_input_nodes)
            std::optional<NodeId> waitingFor;
            std::vector<NodeId> inputs;
            nodes_[id].forEachInput([&](NodeId input) {
                if (std::find(inputs.begin(), inputs.end(), input) != inputs.end())
                    return;
                inputs.push_back(input);
                if (!ready[input])
                    waitingFor = input;
            });
            if (waitingFor) {
                waiting[*waitingFor].push_back(id);
                continue;
            }
            ready[id] = true;
            sorted.push_back(id);
            if (auto it = waiting.find(id); it != waiting.end()) {
                pending.insert(pending.end(), it->second.rbegin(), it->second.rend());
                waiting.erase(it);
            }
        }
        order_ = std::move(sorted);
    }

    void writeBack(Graph& graph) const {
        std::vector<NodeId> newId(nodes_.size(), kNoNode);
        NodeId next = 0;
        for (NodeId id : order_)
            if (!erased_[id])
                newId[id] = next++;
        std::vector<Node> out;
        out.reserve(next);
        for (NodeId id : order_) {
            if (erased_[id])
                continue;
            Node n = nodes_[id];
            for (Value& v : n.args)
                renumber(v, newId);
            for (auto& kv : n.kwargs)
                renumber(kv.second, newId);
            n.users.clear();
            out.push_back(std::move(n));
        }
        // A new graph with the same HOP bodies (same indices), then the nodes in their new order.
        Graph rebuilt = graph.withoutNodes();
        rebuilt.reserve(out.size());
        for (Node& n : out)
            rebuilt.addNode(std::move(n));
        rebuilt.computeUsers();
        graph = std::move(rebuilt);
    }

private:
    // _target_to_str: an op overload's __name__ ("mm.default"), a function's ("getitem")
    static std::string targetName(const Target& t) {
        return t.overload.empty() ? t.op : t.op + "." + t.overload;
    }
    static void substitute(Value& v, NodeId from, const Value& value) {
        if (v.kind() == ValueKind::NodeRef && v.asNode() == from)
            v = value;
        for (Value& item : v.items())
            substitute(item, from, value);
    }
    static void renumber(Value& v, const std::vector<NodeId>& newId) {
        if (v.kind() == ValueKind::NodeRef)
            v = Value::nodeRef(newId[v.asNode()]);
        for (Value& item : v.items())
            renumber(item, newId);
    }
    void recomputeUsers() {
        users_.assign(nodes_.size(), {});
        for (NodeId id = 0; id < nodes_.size(); ++id)
            nodes_[id].forEachInput([&](NodeId input) {
                auto& u = users_[input];
                if (u.empty() || u.back() != id)
                    u.push_back(id);
            });
    }

    // A deque: the passes hold `const Node&` of a node while they insert its replacement, and push_back on a
    // deque leaves references to the other nodes valid (a vector's reallocation left them dangling).
    std::deque<Node> nodes_;
    std::vector<bool> erased_;
    std::vector<NodeId> order_;
    std::vector<std::vector<NodeId>> users_;
    FxNamespace names_;
};

inline bool isAten(const Node& n, std::string_view op, std::string_view overload = {}) {
    return n.op == NodeOp::CallFunction && n.target.kind == TargetKind::OpOverload && n.target.ns == "aten" &&
           n.target.op == op && (overload.empty() || n.target.overload == overload);
}

inline bool isPrims(const Node& n, std::string_view op) {
    return n.op == NodeOp::CallFunction && n.target.kind == TargetKind::OpOverload &&
           n.target.ns == "prims" && n.target.op == op;
}

inline std::optional<NodeId> nodeArg(const Node& n, size_t index) {
    if (index >= n.args.size() || n.args[index].kind() != ValueKind::NodeRef)
        return std::nullopt;
    return n.args[index].asNode();
}

struct PassContext {
    WorkGraph& g;
    const Ruleset& rules;
    const Graph& original; // the logged graph, for storage roots
    JointPassReport& report;
    ShapeFacts facts = ShapeFacts::of(original.attributes);
    size_t paddedReplayed = 0; // pad_mm replacements made
    std::vector<std::string> attentionOpsMade =
        {}; // fuse_attention's kernels inserted ("aten._scaled_dot_...")

    PassChange& change(std::string_view pass) {
        if (report.changes.empty() || report.changes.back().pass != pass)
            report.changes.push_back(PassChange{std::string(pass), {}, {}, {}});
        return report.changes.back();
    }
    void removed(std::string_view pass, NodeId id) { change(pass).removed.push_back(g.node(id).name); }
    // get_node_storage: the node whose storage a value has (views and aliases see through to their base).
    NodeId storage(NodeId id) const { return id < original.size() ? storageRoot(original, id, rules) : id; }
};

inline Node callNode(std::string_view target, std::vector<Value> args,
                     std::vector<std::pair<std::string, Value>> kwargs, TensorMeta out,
                     const NodeMeta& meta) {
    Node n;
    n.op = NodeOp::CallFunction;
    n.target = Target::parseFunction(target);
    n.args = std::move(args);
    n.kwargs = std::move(kwargs);
    n.outputKind = OutputKind::Tensor;
    n.outputs = {std::move(out)};
    n.meta = meta;
    return n;
}

// replacement.meta.update(node.meta): the keys a node's meta holds overwrite the other's (the checkpoint tags
// included); absent keys leave it as it was.
inline void updateMeta(NodeMeta& into, const NodeMeta& from) {
    if (!from.stackTrace.empty())
        into.stackTrace = from.stackTrace;
    if (!from.nnModuleStack.empty())
        into.nnModuleStack = from.nnModuleStack;
    if (!from.recompute.empty())
        into.recompute = from.recompute;
    if (from.acGraphId >= 0)
        into.acGraphId = from.acGraphId;
    if (!from.partitionerTag.empty())
        into.partitionerTag = from.partitionerTag;
    if (!from.descriptor.empty())
        into.descriptor = from.descriptor;
    for (const auto& extra : from.extra) {
        auto it = std::find_if(into.extra.begin(), into.extra.end(),
                               [&](const auto& e) { return e.first == extra.first; });
        if (it != into.extra.end())
            it->second = extra.second;
        else
            into.extra.push_back(extra);
    }
}

// A contiguous tensor's metadata. Symbolic strides are products of the sizes after them, as expressions
// (torch prints Max(1, s) where we print s: the same value for the sizes symbols take).
inline TensorMeta contiguousMeta(DType dtype, std::vector<SymInt> sizes, const Device& device) {
    TensorMeta m;
    m.dtype = dtype;
    m.device = device;
    m.strides.resize(sizes.size());
    SymInt stride{1, {}};
    for (size_t i = sizes.size(); i-- > 0;) {
        m.strides[i] = stride;
        const SymInt& size = sizes[i];
        if (!size.isSymbolic() && !stride.isSymbolic())
            stride.value *= std::max<int64_t>(size.value, 1);
        else if (!size.isSymbolic() && size.value <= 1)
            continue;
        else if (!stride.isSymbolic() && stride.value == 1)
            stride = size;
        else
            stride = SymInt{0, "(" + (size.isSymbolic() ? size.expr : std::to_string(size.value)) + ")*(" +
                                   (stride.isSymbolic() ? stride.expr : std::to_string(stride.value)) + ")"};
    }
    m.sizes = std::move(sizes);
    return m;
}

// inductor's fuse_attention (torch/_inductor/fx_passes/fuse_attention.py: register_replacement into
// joint_graph's `patterns`): the scaled-dot-product-attention patterns anchored at `id`, tried in torch's
// order; the first that matches is replaced (FuseAttention.cpp). True when a pattern matched.
bool fuseAttention(PassContext& c, const AttentionPatternSet& patterns, NodeId id);

} // namespace jointscope::partition::passes
