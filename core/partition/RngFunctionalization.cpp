#include "partition/RngFunctionalization.h"

#include "partition/JointGraph.h"

#include <optional>
#include <utility>

namespace jointscope::partition {
namespace {

// The new nodes of one op, named in the order torch creates them (forward and backward namespaces apart).
struct WrappedOp {
    const RngOpToWrap* op = nullptr;
    std::string forwardInput, backwardInput; // graphsafe: fwd_rng_state_K / bwd_rng_state_K
    std::string run, state, value;           // forward: the wrapper; saved state: its two getitems
    std::string backwardRun;                 // backward: the wrapper
    std::string savedStateInput;             // saved state: rng_state_output_N
};

std::vector<WrappedOp> nameWrappedOps(const std::vector<RngOpToWrap>& ops, FxNamespace& fw, FxNamespace& bw) {
    std::vector<WrappedOp> out;
    out.reserve(ops.size());
    size_t savedCount = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
        WrappedOp w;
        w.op = &ops[k];
        if (ops[k].stateSaved) {
            w.run = fw.create("run_and_save_rng_state");
            w.state = fw.create("getitem");
            w.value = fw.create("getitem");
            w.savedStateInput = bw.create("rng_state_output_" + std::to_string(savedCount++));
            w.backwardRun = bw.create("run_with_rng_state");
        } else {
            w.forwardInput = fw.create("fwd_rng_state_" + std::to_string(k));
            w.backwardInput = bw.create("bwd_rng_state_" + std::to_string(k));
            w.run = fw.create("graphsafe_run_with_rng_state");
            w.backwardRun = bw.create("graphsafe_run_with_rng_state");
        }
        out.push_back(std::move(w));
    }
    return out;
}

// A graph copied node by node into a new one, some nodes replaced by others; readers follow the replacement.
class Rebuild {
public:
    explicit Rebuild(const Graph& from)
        : from_(from), out_(from.withoutNodes()), newId_(from.size(), kNoNode) {
        out_.reserve(from.size() + 16);
    }

    NodeId copy(NodeId id) {
        Node n = from_.node(id);
        renumber(n);
        return newId_[id] = add(std::move(n));
    }
    NodeId add(Node n) {
        n.users.clear();
        return out_.addNode(std::move(n));
    }
    void replace(NodeId old, NodeId now) { newId_[old] = now; }
    Value renumbered(const Value& v) const {
        if (v.kind() == ValueKind::NodeRef)
            return Value::nodeRef(newId_[v.asNode()]);
        Value copy = v;
        for (Value& item : copy.items())
            item = renumbered(item);
        return copy;
    }
    void renumber(Node& n) const {
        for (Value& a : n.args)
            a = renumbered(a);
        for (auto& kv : n.kwargs)
            kv.second = renumbered(kv.second);
    }
    Graph finish() {
        out_.computeUsers();
        return std::move(out_);
    }

private:
    const Graph& from_;
    Graph out_;
    std::vector<NodeId> newId_;
};

Node placeholder(std::string name, std::optional<TensorMeta> meta, uint32_t line) {
    Node n;
    n.op = NodeOp::Placeholder;
    n.target = Target::name(name);
    n.name = std::move(name);
    if (meta) {
        n.outputKind = OutputKind::Tensor;
        n.outputs.push_back(std::move(*meta));
    }
    n.meta.sourceLine = line;
    return n;
}

// The wrapper call_function: `hop`(extra args..., op, op's args..., op's kwargs [, rng_state=...]).
Node wrapper(const Rebuild& r, const Node& op, std::string name, std::string_view hop,
             std::vector<Value> first, std::optional<NodeId> rngState) {
    Node n;
    n.name = std::move(name);
    n.target = Target::parseFunction(std::string("torch.ops.higher_order.") + std::string(hop));
    n.args = std::move(first);
    n.args.push_back(Value::opaque(op.target.text));
    for (const Value& a : op.args)
        n.args.push_back(r.renumbered(a));
    for (const auto& [key, value] : op.kwargs)
        n.kwargs.emplace_back(key, r.renumbered(value));
    if (rngState)
        n.kwargs.emplace_back("rng_state", Value::nodeRef(*rngState));
    n.outputKind = op.outputKind;
    n.outputs = op.outputs;
    n.meta = op.meta;
    return n;
}

Node getItem(std::string name, NodeId of, int64_t index, const Node& like) {
    Node n;
    n.name = std::move(name);
    n.target = Target::parseFunction("operator.getitem");
    n.args = {Value::nodeRef(of), Value::integer(index)};
    n.outputKind = like.outputKind;
    n.outputs = like.outputs;
    n.meta = like.meta;
    return n;
}

std::optional<NodeId> lastPlaceholder(const Graph& g) {
    std::optional<NodeId> last;
    for (NodeId id = 0; id < g.size(); ++id)
        if (g.node(id).op == NodeOp::Placeholder)
            last = id;
    return last;
}

// The wrapped ops of a graph by node id (null: copied as it is).
std::vector<const WrappedOp*> wrappedNodes(const Graph& g, const std::vector<WrappedOp>& ops) {
    std::vector<const WrappedOp*> out(g.size(), nullptr);
    for (const WrappedOp& w : ops)
        if (std::optional<NodeId> id = g.find(w.op->name); id && g.node(*id).op == NodeOp::CallFunction)
            out[*id] = &w;
    return out;
}

Graph wrapForward(const Graph& forward, const std::vector<WrappedOp>& ops, size_t numSavedSym) {
    Rebuild r(forward);
    const std::optional<NodeId> last = lastPlaceholder(forward);
    std::vector<NodeId> inputOf(ops.size(), kNoNode);
    auto addInputs = [&] {
        for (size_t k = 0; k < ops.size(); ++k)
            if (!ops[k].forwardInput.empty())
                inputOf[k] = r.add(placeholder(ops[k].forwardInput, std::nullopt, 0));
    };
    if (!last)
        addInputs();
    const std::vector<const WrappedOp*> wrappedAt = wrappedNodes(forward, ops);
    std::vector<NodeId> states;
    for (NodeId id = 0; id < forward.size(); ++id) {
        const Node& node = forward.node(id);
        const WrappedOp* w = wrappedAt[id];
        if (node.op == NodeOp::Output) {
            Node out = node;
            r.renumber(out);
            if (!states.empty() && out.args.size() == 1 && out.args[0].isSequence()) {
                std::vector<Value>& leaves = out.args[0].items();
                const size_t at = leaves.size() - std::min(numSavedSym, leaves.size());
                std::vector<Value> stateValues;
                for (NodeId s : states)
                    stateValues.push_back(Value::nodeRef(s));
                leaves.insert(leaves.begin() + long(at), stateValues.begin(), stateValues.end());
            }
            r.add(std::move(out));
        } else if (!w) {
            r.copy(id);
        } else if (w->op->stateSaved) {
            const NodeId run = r.add(wrapper(r, node, w->run, "run_and_save_rng_state", {}, std::nullopt));
            Node state = getItem(w->state, run, 0, Node{});
            state.outputKind = OutputKind::Tensor;
            state.outputs = {rngStateMeta(w->op->device)};
            state.meta.sourceLine = node.meta.sourceLine;
            states.push_back(r.add(std::move(state)));
            r.replace(id, r.add(getItem(w->value, run, 1, node)));
        } else {
            const size_t k = size_t(w - ops.data());
            r.replace(id, r.add(wrapper(r, node, w->run, "graphsafe_run_with_rng_state", {}, inputOf[k])));
        }
        if (last && id == *last)
            addInputs();
    }
    return r.finish();
}

Graph wrapBackward(const Graph& backward, const std::vector<WrappedOp>& ops) {
    Rebuild r(backward);
    const std::optional<NodeId> last = lastPlaceholder(backward);
    std::optional<NodeId> firstTangent;
    for (NodeId id = 0; id < backward.size() && !firstTangent; ++id)
        if (backward.node(id).op == NodeOp::Placeholder &&
            backward.node(id).name.find("tangent") != std::string::npos)
            firstTangent = id;
    std::vector<NodeId> inputOf(ops.size(), kNoNode);
    auto addSavedStates = [&] {
        for (size_t k = 0; k < ops.size(); ++k)
            if (ops[k].op->stateSaved)
                inputOf[k] = r.add(placeholder(ops[k].savedStateInput, rngStateMeta(ops[k].op->device), 0));
    };
    auto addGeneratorStates = [&] {
        for (size_t k = 0; k < ops.size(); ++k)
            if (!ops[k].op->stateSaved)
                inputOf[k] = r.add(placeholder(ops[k].backwardInput, std::nullopt, 0));
    };
    if (!last) {
        addSavedStates();
        addGeneratorStates();
    }
    const std::vector<const WrappedOp*> wrappedAt = wrappedNodes(backward, ops);
    for (NodeId id = 0; id < backward.size(); ++id) {
        const Node& node = backward.node(id);
        if (firstTangent && id == *firstTangent)
            addSavedStates();
        const WrappedOp* w = wrappedAt[id];
        if (!w) {
            r.copy(id);
        } else {
            const size_t k = size_t(w - ops.data());
            Node run = w->op->stateSaved
                           ? wrapper(r, node, w->backwardRun, "run_with_rng_state",
                                     {Value::nodeRef(inputOf[k])}, std::nullopt)
                           : wrapper(r, node, w->backwardRun, "graphsafe_run_with_rng_state", {}, inputOf[k]);
            r.replace(id, r.add(std::move(run)));
        }
        if (last && id == *last) {
            if (!firstTangent) // torch refuses a backward without tangents; the states go with the inputs
                addSavedStates();
            addGeneratorStates();
        }
    }
    return r.finish();
}

} // namespace

TensorMeta rngStateMeta(const Device& device) {
    TensorMeta t;
    t.dtype = DType::UInt8;
    t.sizes = {SymInt{device.type == "cuda" ? 16 : 5056, {}}};
    t.strides = {SymInt{1, {}}};
    t.device = Device{"cpu", -1};
    return t;
}

void functionalizeRngOps(Graph& forward, Graph& backward, const std::vector<RngOpToWrap>& ops,
                         FxNamespace forwardNames, FxNamespace backwardNames, size_t numSavedSym) {
    if (ops.empty())
        return;
    const std::vector<WrappedOp> wrappedOps = nameWrappedOps(ops, forwardNames, backwardNames);
    forward = wrapForward(forward, wrappedOps, numSavedSym);
    backward = wrapBackward(backward, wrappedOps);
}

} // namespace jointscope::partition
