#include "graph/Graph.h"

#include "support/Saturating.h"

#include <array>
#include <limits>

namespace jointscope {
namespace {

constexpr std::array<std::string_view, 6> kNodeOpNames = {"placeholder", "get_attr",    "call_function",
                                                          "call_method", "call_module", "output"};

} // namespace

std::string_view nodeOpName(NodeOp op) {
    return kNodeOpNames[static_cast<size_t>(op)];
}

std::optional<NodeOp> parseNodeOp(std::string_view text) {
    for (size_t i = 0; i < kNodeOpNames.size(); ++i)
        if (kNodeOpNames[i] == text)
            return static_cast<NodeOp>(i);
    return std::nullopt;
}

std::string Device::str() const {
    if (index < 0)
        return type;
    return type + ":" + std::to_string(index);
}

std::optional<uint64_t> TensorMeta::bytes() const {
    if (!known())
        return std::nullopt;
    uint64_t numel = 1;
    for (const SymInt& d : sizes) {
        if (d.isSymbolic() || d.value < 0)
            return std::nullopt;
        numel = saturatingMul(numel, static_cast<uint64_t>(d.value));
    }
    const uint64_t bytes = saturatingMul(numel, itemSize(dtype));
    if (bytes > uint64_t(std::numeric_limits<int64_t>::max()))
        return std::nullopt; // no such tensor: readers refuse it (checkTensorMeta)
    return bytes;
}

Graph::Graph(const Graph& other)
    : name(other.name), numFwdOutputs(other.numFwdOutputs), decisions(other.decisions),
      attributes(other.attributes), nodes_(other.nodes_), nameSlots_(other.nameSlots_) {
    subgraphs_.reserve(other.subgraphs_.size());
    for (const auto& sub : other.subgraphs_)
        subgraphs_.push_back(std::make_unique<Graph>(*sub));
}

Graph& Graph::operator=(const Graph& other) {
    if (this != &other) {
        Graph copy(other);
        *this = std::move(copy);
    }
    return *this;
}

NodeId Graph::addNode(Node node) {
    const auto id = static_cast<NodeId>(nodes_.size());
    nodes_.push_back(std::move(node));
    if ((nodes_.size() + 1) * 2 > nameSlots_.size())
        rebuildNameIndex(nodes_.size() * 2);
    else
        indexName(id);
    return id;
}

std::optional<NodeId> Graph::find(std::string_view name) const {
    if (nameSlots_.empty())
        return std::nullopt;
    const size_t mask = nameSlots_.size() - 1;
    for (size_t slot = std::hash<std::string_view>{}(name)&mask;; slot = (slot + 1) & mask) {
        const NodeId id = nameSlots_[slot];
        if (id == kNoNode)
            return std::nullopt;
        if (nodes_[id].name == name)
            return id;
    }
}

void Graph::indexName(NodeId id) {
    const size_t mask = nameSlots_.size() - 1;
    const std::string& name = nodes_[id].name;
    for (size_t slot = std::hash<std::string_view>{}(name)&mask;; slot = (slot + 1) & mask) {
        NodeId& entry = nameSlots_[slot];
        if (entry == kNoNode) {
            entry = id;
            return;
        }
        if (nodes_[entry].name == name)
            return; // names are unique; the first node keeps the name
    }
}

void Graph::rebuildNameIndex(size_t capacity) {
    size_t size = 16;
    while (size < capacity * 2)
        size *= 2;
    nameSlots_.assign(size, kNoNode);
    for (NodeId id = 0; id < nodes_.size(); ++id)
        indexName(id);
}

namespace {

void redirect(Value& value, const std::vector<NodeId>& newId) {
    if (value.kind() == ValueKind::NodeRef) {
        value = Value::nodeRef(newId[value.asNode()]);
        return;
    }
    for (Value& item : value.items())
        redirect(item, newId);
}

} // namespace

std::vector<NodeId> Graph::eraseNodes(const std::vector<bool>& keep, const std::vector<NodeId>& replace) {
    std::vector<NodeId> newId(nodes_.size(), kNoNode);
    NodeId next = 0;
    for (NodeId id = 0; id < nodes_.size(); ++id) {
        if (!keep[id]) {
            if (replace[id] != id)
                newId[id] = newId[replace[id]]; // replacements come first in graph order
            continue;
        }
        newId[id] = next;
        if (next != id)
            nodes_[next] = std::move(nodes_[id]);
        Node& node = nodes_[next];
        for (Value& arg : node.args)
            redirect(arg, newId);
        for (auto& kv : node.kwargs)
            redirect(kv.second, newId);
        ++next;
    }
    nodes_.resize(next);
    rebuildNameIndex(nodes_.size());
    computeUsers();
    for (NodeId id = 0; id < newId.size(); ++id)
        if (!keep[id])
            newId[id] = kNoNode;
    return newId;
}

void Graph::computeUsers() {
    for (Node& n : nodes_)
        n.users.clear();
    for (NodeId id = 0; id < nodes_.size(); ++id) {
        nodes_[id].forEachInput([&](NodeId input) {
            if (input >= nodes_.size())
                return;
            auto& users = nodes_[input].users;
            if (users.empty() || users.back() != id)
                users.push_back(id);
        });
    }
}

void Graph::reserve(size_t n) {
    nodes_.reserve(n);
    if (n * 2 > nameSlots_.size())
        rebuildNameIndex(n);
}

Graph Graph::withoutNodes() const {
    Graph shell;
    shell.name = name;
    shell.numFwdOutputs = numFwdOutputs;
    shell.decisions = decisions;
    shell.attributes = attributes;
    for (const auto& body : subgraphs_)
        shell.addSubgraph(std::make_unique<Graph>(*body));
    return shell;
}

int32_t Graph::addSubgraph(std::unique_ptr<Graph> graph) {
    subgraphs_.push_back(std::move(graph));
    return static_cast<int32_t>(subgraphs_.size() - 1);
}

int32_t Graph::findSubgraph(std::string_view subName) const {
    for (size_t i = 0; i < subgraphs_.size(); ++i)
        if (subgraphs_[i]->name == subName)
            return static_cast<int32_t>(i);
    return -1;
}

std::optional<NodeId> Graph::outputNode() const {
    for (size_t i = nodes_.size(); i-- > 0;)
        if (nodes_[i].op == NodeOp::Output)
            return static_cast<NodeId>(i);
    return std::nullopt;
}

namespace {
void appendLeaves(const Value& v, std::vector<const Value*>& leaves) {
    if (v.isSequence() || v.kind() == ValueKind::Dict) {
        const auto& items = v.items();
        for (size_t i = 0; i < items.size(); ++i)
            if (v.kind() != ValueKind::Dict || i % 2 == 1) // a dict's items alternate key, value
                appendLeaves(items[i], leaves);
        return;
    }
    leaves.push_back(&v);
}
} // namespace

std::vector<const Value*> Graph::outputLeaves() const {
    std::vector<const Value*> leaves;
    if (const std::optional<NodeId> out = outputNode())
        for (const Value& arg : nodes_[*out].args)
            appendLeaves(arg, leaves);
    return leaves;
}

bool operator==(const Node& a, const Node& b) {
    return a.name == b.name && a.op == b.op && a.target == b.target && a.args == b.args &&
           a.kwargs == b.kwargs && a.outputKind == b.outputKind && a.outputs == b.outputs &&
           a.symValue == b.symValue && a.meta == b.meta && a.subgraph == b.subgraph;
}

bool operator==(const Graph& a, const Graph& b) {
    if (a.name != b.name || a.numFwdOutputs != b.numFwdOutputs || a.decisions != b.decisions ||
        a.attributes != b.attributes || a.nodes_ != b.nodes_ || a.subgraphs_.size() != b.subgraphs_.size())
        return false;
    for (size_t i = 0; i < a.subgraphs_.size(); ++i)
        if (!(*a.subgraphs_[i] == *b.subgraphs_[i]))
            return false;
    return true;
}

std::vector<bool> readByAny(const Graph& graph, std::vector<NodeId> roots) {
    std::vector<bool> read(graph.size(), false);
    while (!roots.empty()) {
        const NodeId id = roots.back();
        roots.pop_back();
        if (read[id])
            continue;
        read[id] = true;
        graph.node(id).forEachInput([&](NodeId in) { roots.push_back(in); });
    }
    return read;
}

bool isTangent(const Node& node) {
    return node.op == NodeOp::Placeholder && node.target.text.find("tangents") != std::string::npos;
}

bool isFwdSeedOffset(const Node& node) {
    const std::string& t = node.target.text;
    return node.op == NodeOp::Placeholder &&
           (t.find("fwd_seed") != std::string::npos || t.find("fwd_base_offset") != std::string::npos);
}

bool isBwdSeedOffset(const Node& node) {
    const std::string& t = node.target.text;
    return node.op == NodeOp::Placeholder &&
           (t.find("bwd_seed") != std::string::npos || t.find("bwd_base_offset") != std::string::npos);
}

bool isPrimal(const Node& node) {
    return node.op == NodeOp::Placeholder && !isTangent(node) && !isFwdSeedOffset(node) &&
           !isBwdSeedOffset(node);
}

bool mustBeInBackward(const Node& node) {
    return node.meta.partitionerTag == "must_be_in_backward" ||
           (node.meta.partitionerTag == "is_backward" && node.target.ns == "higher_order" &&
            node.target.op == "with_effects");
}

bool mustBeInForward(const Node& node) {
    if (node.meta.partitionerTag == "must_be_in_forward")
        return true;
    const Target& t = node.target;
    const bool mutates = node.op == NodeOp::CallFunction && t.kind == TargetKind::OpOverload &&
                         !t.op.empty() && t.op.back() == '_' && !t.op.starts_with("__");
    return mutates && node.meta.partitionerTag != "is_backward" &&
           node.meta.partitionerTag != "must_be_in_backward";
}

void inferTupleOutputs(Graph& graph) {
    for (NodeId id = 0; id < graph.size(); ++id) {
        Node& node = graph.node(id);
        if (node.outputKind != OutputKind::Unknown || node.op != NodeOp::CallFunction || node.users.empty())
            continue;
        std::vector<TensorMeta> elements;
        bool any = false;
        for (NodeId user : node.users) {
            const Node& u = graph.node(user);
            if (!u.target.isGetItem() || u.args.size() != 2 || u.args[1].kind() != ValueKind::Int ||
                u.args[1].asInt() < 0 || u.args[1].asInt() > 4096 || !u.tensor())
                continue;
            const size_t index = static_cast<size_t>(u.args[1].asInt());
            if (elements.size() <= index)
                elements.resize(index + 1);
            elements[index] = *u.tensor();
            any = true;
        }
        if (!any)
            continue;
        node.outputKind = OutputKind::Tuple;
        node.outputs = std::move(elements);
    }
}

} // namespace jointscope
