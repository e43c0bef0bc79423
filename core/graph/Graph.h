// The graph IR: ordered FX nodes with typed arguments, tensor metadata and nested HOP bodies.
#pragma once

#include "graph/DType.h"
#include "graph/Target.h"
#include "graph/Value.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jointscope {

enum class NodeOp : uint8_t { Placeholder, GetAttr, CallFunction, CallMethod, CallModule, Output };

std::string_view nodeOpName(NodeOp op); // "placeholder", "call_function", ...
std::optional<NodeOp> parseNodeOp(std::string_view text);

// One dimension or stride: a concrete int, or a symbolic expression ("s0", "4*s0").
struct SymInt {
    int64_t value = 0;
    std::string expr; // empty when concrete

    bool isSymbolic() const { return !expr.empty(); }
    friend bool operator==(const SymInt&, const SymInt&) = default;
};

struct Device {
    std::string type; // "cpu", "cuda", "meta"; empty when unknown
    int64_t index = -1;

    std::string str() const; // "cuda:0", "cpu"
    friend bool operator==(const Device&, const Device&) = default;
};

struct TensorMeta {
    DType dtype = DType::Undefined;
    std::vector<SymInt> sizes;
    std::vector<SymInt> strides; // empty when the source did not print strides
    Device device;

    bool known() const { return dtype != DType::Undefined; }
    // numel * itemsize; nullopt when a size is symbolic or negative, the dtype unknown, or the product beyond
    // int64 (a tensor no reader accepts).
    std::optional<uint64_t> bytes() const;
    friend bool operator==(const TensorMeta&, const TensorMeta&) = default;
};

enum class OutputKind : uint8_t {
    Unknown,
    Tensor, // outputs[0]
    Tuple,  // outputs[i] per element (elements may be unknown)
    SymInt, // symValue holds the expression, e.g. "s0" (printed Sym(s0))
    SymFloat,
    SymBool,
    None,
};

// One entry of nn_module_stack: key -> (qualified path, module type).
struct ModuleFrame {
    std::string key;
    std::string path;
    std::string type;
    friend bool operator==(const ModuleFrame&, const ModuleFrame&) = default;
};

struct NodeMeta {
    std::vector<std::string> stackTrace; // "File: a.py:12 in fn, code: x = y" lines, without "# "
    std::vector<ModuleFrame> nnModuleStack;
    std::string recompute;      // CheckpointPolicy: MUST_SAVE, PREFER_SAVE, MUST_RECOMPUTE, PREFER_RECOMPUTE
    int64_t acGraphId = -1;     // ac_graph_id of the checkpoint region, -1 when none
    std::string partitionerTag; // "is_backward", "must_be_in_backward", ...
    std::string descriptor;     // AOT descriptor: "PlainAOTInput(idx=0)", "TangentAOTInput(...)"
    std::vector<std::pair<std::string, std::string>> extra; // other meta: key -> JSON text
    uint32_t sourceLine = 0; // line in the file the node was read from (0 = unknown)

    friend bool operator==(const NodeMeta&, const NodeMeta&) = default;
};

struct Node {
    std::string name;
    NodeOp op = NodeOp::CallFunction;
    Target target;
    std::vector<Value> args;
    std::vector<std::pair<std::string, Value>> kwargs;

    OutputKind outputKind = OutputKind::Unknown;
    std::vector<TensorMeta> outputs; // see OutputKind
    std::string symValue;            // for SymInt / SymFloat / SymBool outputs

    NodeMeta meta;
    std::vector<NodeId> users; // filled by Graph::computeUsers(), in graph order
    int32_t subgraph = -1;     // get_attr of a HOP body: index into Graph::subgraphs()

    const TensorMeta* tensor() const {
        return outputKind == OutputKind::Tensor && !outputs.empty() ? &outputs[0] : nullptr;
    }
    // Calls fn(NodeId) for every node this node reads (args then kwargs, with repeats).
    template <typename Fn> void forEachInput(Fn&& fn) const {
        for (const Value& v : args)
            v.forEachNode(fn);
        for (const auto& kv : kwargs)
            kv.second.forEachNode(fn);
    }
};

// A saved-values decision attached to a graph, e.g. torch's own min-cut result.
struct PartitionDecision {
    std::string name;   // "torch_min_cut", "torch_default_partition", ...
    std::string origin; // free text: "functorch min_cut_rematerialization_partition (torch 1.13.0a0)"
    std::vector<std::string> saved;    // node names, in torch's order
    std::vector<std::string> savedSym; // saved symbolic ints, in torch's order
    std::optional<double> seconds;     // time torch took

    friend bool operator==(const PartitionDecision&, const PartitionDecision&) = default;
};

class Graph {
public:
    Graph() = default;
    Graph(const Graph& other);
    Graph& operator=(const Graph& other);
    Graph(Graph&&) noexcept = default;
    Graph& operator=(Graph&&) noexcept = default;

    std::string name; // class / function name, or the attribute name of a HOP body
    std::optional<int64_t> numFwdOutputs;
    std::vector<PartitionDecision> decisions;
    std::vector<std::pair<std::string, std::string>> attributes; // "torch_version", "source_kind", ...

    // A graph with this one's name, outputs count, decisions, attributes and HOP bodies (same indices), and
    // no nodes: what a pass that rebuilds the node list starts from.
    Graph withoutNodes() const;

    // Appends a node; its name must be new. Returns its id.
    NodeId addNode(Node node);
    size_t size() const { return nodes_.size(); }
    const std::vector<Node>& nodes() const { return nodes_; }
    const Node& node(NodeId id) const { return nodes_[id]; }
    Node& node(NodeId id) { return nodes_[id]; }
    std::optional<NodeId> find(std::string_view name) const;
    // Rebuilds users from args / kwargs (call after building or editing).
    void computeUsers();
    // Removes the nodes where keep[id] is false, in place. Readers of a removed node read replace[id] instead
    // (a kept, earlier node; replace[id] == id for nodes nobody reads). Returns old id -> new id (kNoNode
    // when removed); users and the name index are rebuilt.
    std::vector<NodeId> eraseNodes(const std::vector<bool>& keep, const std::vector<NodeId>& replace);
    void reserve(size_t n);

    // Nested graphs (HOP bodies), owned here; names are attribute names.
    int32_t addSubgraph(std::unique_ptr<Graph> graph);
    const std::vector<std::unique_ptr<Graph>>& subgraphs() const { return subgraphs_; }
    Graph* subgraph(int32_t index) { return subgraphs_[index].get(); }
    const Graph* subgraph(int32_t index) const { return subgraphs_[index].get(); }
    int32_t findSubgraph(std::string_view name) const;

    std::optional<NodeId> outputNode() const;
    // The leaves of the output node's arguments in order (pytree.arg_tree_leaves: tuples, lists and dict
    // values flattened; None and constants kept as leaves). Empty without an output node.
    std::vector<const Value*> outputLeaves() const;

    friend bool operator==(const Graph& a, const Graph& b);

private:
    // Name index: open addressing over node ids (kNoNode = empty), sized to a power of two at most half full.
    // Ids rather than string keys: no second copy of every name, and no allocation per lookup.
    void indexName(NodeId id);
    void rebuildNameIndex(size_t capacity);

    std::vector<Node> nodes_;
    std::vector<NodeId> nameSlots_;
    std::vector<std::unique_ptr<Graph>> subgraphs_;
};

bool operator==(const Node& a, const Node& b);
bool operator==(const Graph& a, const Graph& b);

// Per node: whether it is one of `roots` or read by one, directly or through others.
std::vector<bool> readByAny(const Graph& graph, std::vector<NodeId> roots);

// torch's _is_primal / _is_tangent / seed-offset predicates on placeholders.
bool isTangent(const Node& node);
bool isPrimal(const Node& node);
bool isFwdSeedOffset(const Node& node);
bool isBwdSeedOffset(const Node& node);
// torch's _must_be_in_backward: tagged so, or an effectful op (with_effects) tagged is_backward.
bool mustBeInBackward(const Node& node);
// torch's _must_be_in_forward: tagged so, or an op whose schema mutates an argument (in-place "foo_" ops,
// copy_) not tagged for the backward.
bool mustBeInForward(const Node& node);

// Tuple-valued call_functions with no type of their own (native_layer_norm, SDPA in print_readable text, a
// torch 1.13 meta sidecar) take their elements' types from the getitems that read them: torch's _size_of
// weighs the whole tuple.
void inferTupleOutputs(Graph& graph);

} // namespace jointscope
