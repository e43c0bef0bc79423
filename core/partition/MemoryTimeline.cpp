#include "partition/MemoryTimeline.h"

#include "cost/OpTensors.h"
#include "ops/StorageAlias.h"
#include "partition/Extract.h"
#include "partition/Partitioner.h"
#include "partition/RngFunctionalization.h"
#include "support/Saturating.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace jointscope::partition {
namespace {

using StorageId = uint32_t;
using StorageList = std::vector<StorageId>; // one entry per tensor a value holds (a tuple holds several)

// Storages referenced by live values; a storage is live while one value still refers to it.
class StoragePool {
public:
    StorageId create(uint64_t bytes, bool input) {
        storages_.push_back({bytes, input, 0});
        return StorageId(storages_.size() - 1);
    }
    void acquire(const StorageList& list) {
        for (StorageId id : list)
            if (storages_[id].refs++ == 0 && !storages_[id].input)
                live_ += storages_[id].bytes;
    }
    uint64_t release(const StorageList& list) {
        uint64_t freed = 0;
        for (StorageId id : list)
            if (--storages_[id].refs == 0 && !storages_[id].input) {
                live_ -= storages_[id].bytes;
                freed += storages_[id].bytes;
            }
        return freed;
    }
    uint64_t live() const { return live_; }

private:
    struct Storage {
        uint64_t bytes;
        bool input;
        int64_t refs;
    };
    std::vector<Storage> storages_;
    uint64_t live_ = 0;
};

// One partitioned module as torch runs it: its inputs, its calls in order, what it returns.
struct Module {
    MemoryPhase phase;
    std::vector<NodeId> inputs;
    std::vector<NodeId> order;
    std::vector<NodeId> outputs;
};

bool isGetItemOf(const Node& node) {
    return node.target.isGetItem() && node.args.size() >= 2 && node.args[0].kind() == ValueKind::NodeRef &&
           node.args[1].kind() == ValueKind::Int;
}

bool isCall(const Node& node) {
    return node.op == NodeOp::CallFunction;
}

// raise_getitems (torch 2): each getitem right after the node it reads, in their original relative order.
std::vector<NodeId> raiseGetItems(const Graph& g, const std::vector<NodeId>& order) {
    std::vector<NodeId> raised;
    raised.reserve(order.size());
    std::vector<std::vector<NodeId>> getItemsOf(g.size());
    std::vector<bool> inOrder(g.size(), false);
    for (NodeId id : order)
        inOrder[id] = true;
    for (NodeId id : order)
        if (isGetItemOf(g.node(id)) && inOrder[g.node(id).args[0].asNode()])
            getItemsOf[g.node(id).args[0].asNode()].push_back(id);
    for (NodeId id : order) {
        const Node& n = g.node(id);
        if (isGetItemOf(n) && inOrder[n.args[0].asNode()])
            continue;
        raised.push_back(id);
        raised.insert(raised.end(), getItemsOf[id].begin(), getItemsOf[id].end());
    }
    return raised;
}

// reordering_to_mimic_autograd_engine: from the first node that reads a tangent on, each node runs right
// after the not-yet-run nodes it needs (in graph order); nodes before it run only when something needs them
// (copy_ excepted). Recomputed forward nodes thereby run at their first use.
std::vector<NodeId> mimicAutogradOrder(const Graph& g, const std::vector<NodeId>& order,
                                       const std::vector<NodeId>& outputs) {
    std::vector<int64_t> position(g.size(), -1);
    for (size_t i = 0; i < order.size(); ++i)
        position[order[i]] = int64_t(i);
    size_t first = order.size();
    for (size_t i = 0; i < order.size() && first == order.size(); ++i)
        g.node(order[i]).forEachInput([&](NodeId in) {
            if (g.node(in).op == NodeOp::Placeholder && isTangent(g.node(in)))
                first = std::min(first, i);
        });
    if (first == order.size())
        return order;
    std::vector<NodeId> result;
    std::vector<bool> placed(g.size(), false);
    auto place = [&](NodeId root) {
        std::vector<NodeId> needed, stack{root};
        while (!stack.empty()) {
            const NodeId id = stack.back();
            stack.pop_back();
            if (position[id] < 0 || placed[id])
                continue;
            placed[id] = true;
            needed.push_back(id);
            g.node(id).forEachInput([&](NodeId in) { stack.push_back(in); });
        }
        std::sort(needed.begin(), needed.end(),
                  [&](NodeId a, NodeId b) { return position[a] < position[b]; });
        result.insert(result.end(), needed.begin(), needed.end());
    };
    for (size_t i = 0; i < first; ++i)
        if (opKey(g.node(order[i]).target) == "aten.copy_")
            place(order[i]);
    for (size_t i = first; i < order.size(); ++i)
        place(order[i]);
    for (NodeId out : outputs)
        place(out);
    return result;
}

// The generator state the forward saves for a random op, on the device of its first output.
uint64_t rngStateBytes(const Node& node) {
    return *rngStateMeta(node.outputs.empty() ? Device{} : node.outputs[0].device).bytes();
}

class TimelineBuilder {
public:
    explicit TimelineBuilder(const Graph& g)
        : g_(g), refs_(g.size()), savesRngState_(g.size(), false), rngState_(g.size()) {
        for (NodeId id = 0; id < g.size(); ++id)
            if (g.node(id).op == NodeOp::Placeholder || g.node(id).op == NodeOp::GetAttr)
                refs_[id] = inputStorages(id);
        inputRefs_ = refs_;
    }

    // Runs `m`; returns the storages its outputs still hold (released by the caller once the next module
    // holds what it needs).
    // `handOver` (storages the caller holds for this module's inputs) is let go once the inputs are held.
    StorageList run(const Module& m, const std::vector<bool>& recomputed, MemoryTimeline& timeline,
                    const StorageList& handOver = {}) {
        std::vector<int64_t> position(g_.size(), -1);
        for (size_t i = 0; i < m.order.size(); ++i)
            position[m.order[i]] = int64_t(i);
        const int64_t end = int64_t(m.order.size());
        std::vector<bool> isInput(g_.size(), false), isOutput(g_.size(), false);
        for (NodeId id : m.inputs)
            isInput[id] = true;
        for (NodeId id : m.outputs)
            isOutput[id] = true;
        // Last reader of each value inside the module; -1: nobody (an input freed at once).
        std::vector<std::vector<NodeId>> releaseAfter(m.order.size());
        std::vector<NodeId> releaseFirst;
        auto lastUse = [&](NodeId v) {
            if (isOutput[v])
                return end;
            int64_t last = isInput[v] ? -1 : position[v];
            for (NodeId user : g_.node(v).users)
                if (position[user] >= 0)
                    last = std::max(last, position[user]);
            return last;
        };
        auto schedule = [&](NodeId v) {
            const int64_t last = lastUse(v);
            if (last < 0)
                releaseFirst.push_back(v);
            else if (last < end)
                releaseAfter[size_t(last)].push_back(v);
        };
        for (NodeId id : m.inputs) {
            pool_.acquire(refs_[id]);
            schedule(id);
        }
        pool_.release(handOver);
        for (NodeId id : releaseFirst)
            pool_.release(refs_[id]);
        for (size_t i = 0; i < m.order.size(); ++i) {
            const NodeId id = m.order[i];
            refs_[id] = storagesOf(id);
            const uint64_t before = pool_.live();
            pool_.acquire(refs_[id]);
            schedule(id);
            if (m.phase == MemoryPhase::Forward && savesRngState_[id]) {
                rngState_[id] = {pool_.create(rngStateBytes(g_.node(id)), false)};
                pool_.acquire(rngState_[id]);
            }
            MemoryStep step;
            step.node = id;
            step.phase = m.phase;
            step.recomputed = m.phase == MemoryPhase::Backward && recomputed[id];
            step.liveBytes = pool_.live();
            step.allocatedBytes = step.liveBytes - before;
            for (NodeId v : releaseAfter[i])
                step.freedBytes += pool_.release(refs_[v]);
            if (m.phase == MemoryPhase::Backward &&
                !rngState_[id].empty()) // its replay was the state's last use
                step.freedBytes += pool_.release(std::exchange(rngState_[id], {}));
            timeline.steps.push_back(step);
        }
        // One release per value: a value returned twice (a mutated buffer's new value that is also saved)
        // still holds its storages once.
        StorageList held;
        std::vector<bool> returned(g_.size(), false);
        for (NodeId id : m.outputs) {
            if (returned[id])
                continue;
            returned[id] = true;
            held.insert(held.end(), refs_[id].begin(), refs_[id].end());
        }
        return held;
    }

    // Recomputed random ops whose RNG state the forward saves (functionalize_rng_ops): the forward runs them
    // as run_and_save_rng_state, which also returns the generator's state, held until the backward's replay.
    void savesRngState(std::span<const NodeId> ids) {
        for (NodeId id : ids)
            savesRngState_[id] = true;
    }

    void acquire(const StorageList& list) { pool_.acquire(list); }
    void release(const StorageList& list) { pool_.release(list); }
    uint64_t live() const { return pool_.live(); }
    // A new module computes its own values again: placeholders keep their input storages.
    void resetCalls() { refs_ = inputRefs_; }
    void keep(NodeId id, StorageList list) { refs_[id] = std::move(list); }
    const StorageList& refs(NodeId id) const { return refs_[id]; }

private:
    StorageList inputStorages(NodeId id) {
        const cost::OpTensors tensors = cost::gatherTensors(g_, id);
        StorageList list;
        for (size_t i = 0; i < std::max<size_t>(tensors.outputs.size(), 1); ++i)
            list.push_back(pool_.create(0, /*input=*/true));
        return list;
    }

    StorageList storagesOf(NodeId id) {
        const Node& n = g_.node(id);
        if (isGetItemOf(n)) {
            const StorageList& from = refs_[n.args[0].asNode()];
            const int64_t index = n.args[1].asInt();
            if (index >= 0 && size_t(index) < from.size())
                return {from[size_t(index)]};
            return {};
        }
        const cost::OpTensors tensors = cost::gatherTensors(g_, id);
        if (const Graph* body = invokedBody(n))
            return hopStorages(n, *body, tensors);
        if (!n.args.empty() && n.args[0].kind() == ValueKind::NodeRef) {
            const NodeId base = n.args[0].asNode();
            const TensorMeta* in = tensors.input(base);
            const TensorMeta* out = tensors.outputs.empty() ? nullptr : &tensors.outputs[0];
            if (!refs_[base].empty() && sharesFirstArgumentStorage(n, in, out))
                return StorageList(std::max<size_t>(tensors.outputs.size(), 1), refs_[base][0]);
        }
        StorageList list;
        for (const TensorMeta& t : tensors.outputs)
            list.push_back(pool_.create(freshBytes(n, tensors, t), false));
        return list;
    }

    // What a fresh output's storage occupies: its own extent, or a reduced loss's elementwise buffer.
    static uint64_t freshBytes(const Node& n, const cost::OpTensors& tensors, const TensorMeta& out) {
        if (!out.known())
            return 0;
        const uint64_t own = storageBytes(out);
        if (tensors.outputs.size() != 1 || n.args.empty() || n.args[0].kind() != ValueKind::NodeRef ||
            !keepsElementwiseLossStorage(opKey(n.target)))
            return own;
        const TensorMeta* input = tensors.input(n.args[0].asNode());
        if (!input || !input->known())
            return own;
        TensorMeta elementwise = *input; // contiguous, of the loss's dtype
        elementwise.dtype = out.dtype;
        elementwise.strides.clear();
        return std::max(own, storageBytes(elementwise));
    }

    // invoke_subgraph(body, identifier, *operands): the body graph, when the graph holds it.
    const Graph* invokedBody(const Node& n) const {
        if (n.target.kind != TargetKind::HigherOrder || n.target.op != "invoke_subgraph" ||
            n.args.size() < 2 || n.args[0].kind() != ValueKind::NodeRef)
            return nullptr;
        const int32_t index = g_.node(n.args[0].asNode()).subgraph;
        return index >= 0 ? g_.subgraph(index) : nullptr;
    }

    // A body output that is (a view of) one of its inputs hands back that operand's storage, as a partitioned
    // region returns the weights and inputs its backward needs; the others are fresh.
    StorageList hopStorages(const Node& n, const Graph& body, const cost::OpTensors& tensors) {
        std::vector<int64_t> operandOf(body.size(), -1);
        int64_t placeholders = 0;
        for (NodeId id = 0; id < body.size(); ++id) {
            const Node& b = body.node(id);
            if (b.op == NodeOp::Placeholder) {
                operandOf[id] = placeholders++;
            } else if (isCall(b) && !b.args.empty() && b.args[0].kind() == ValueKind::NodeRef) {
                const cost::OpTensors t = cost::gatherTensors(body, id);
                const NodeId base = b.args[0].asNode();
                if (sharesFirstArgumentStorage(b, t.input(base), t.outputs.empty() ? nullptr : &t.outputs[0]))
                    operandOf[id] = operandOf[base];
            }
        }
        const std::vector<const Value*> leaves = body.outputLeaves();
        StorageList list;
        for (size_t i = 0; i < tensors.outputs.size(); ++i) {
            int64_t operand = -1;
            if (i < leaves.size() && leaves[i]->kind() == ValueKind::NodeRef)
                operand = operandOf[leaves[i]->asNode()];
            const size_t arg = size_t(operand) + 2;
            if (operand >= 0 && arg < n.args.size() && n.args[arg].kind() == ValueKind::NodeRef &&
                !refs_[n.args[arg].asNode()].empty()) {
                list.push_back(refs_[n.args[arg].asNode()][0]);
                continue;
            }
            const TensorMeta& t = tensors.outputs[i];
            list.push_back(pool_.create(t.known() ? storageBytes(t) : 0, false));
        }
        return list;
    }

    const Graph& g_;
    StoragePool pool_;
    std::vector<StorageList> refs_, inputRefs_;
    std::vector<bool> savesRngState_;
    std::vector<StorageList> rngState_;
};

std::vector<NodeId> callsIn(const Graph& g, const std::vector<bool>& kept) {
    std::vector<NodeId> order;
    for (NodeId id = 0; id < g.size(); ++id)
        if (kept[id] && isCall(g.node(id)))
            order.push_back(id);
    return order;
}

void appendNodes(const std::vector<Value>& leaves, std::vector<NodeId>& into) {
    for (const Value& v : leaves)
        if (v.kind() == ValueKind::NodeRef)
            into.push_back(v.asNode());
}

} // namespace

uint64_t storageBytes(const TensorMeta& tensor) {
    const uint64_t item = itemSize(tensor.dtype);
    if (tensor.strides.size() != tensor.sizes.size())
        return saturatingMul(cost::numel(tensor), item);
    uint64_t extent = 1;
    for (size_t i = 0; i < tensor.sizes.size(); ++i) {
        const uint64_t size = cost::concreteSize(tensor.sizes[i]);
        if (size == 0)
            return 0;
        const SymInt& s = tensor.strides[i];
        const uint64_t stride = s.isSymbolic() ? cost::concreteSize(s) : uint64_t(std::llabs(s.value));
        extent = saturatingAdd(extent, saturatingMul(size - 1, stride));
    }
    return saturatingMul(extent, item);
}

Expected<MemoryTimeline> memoryTimeline(const Graph& joint, std::span<const NodeId> saved,
                                        std::span<const NodeId> savedSym, const Ruleset& rules,
                                        std::span<const NodeId> rngStates) {
    Expected<FwdBwdGraphs> parts = extractForwardBackward(
        joint, std::vector<NodeId>(saved.begin(), saved.end()),
        std::vector<NodeId>(savedSym.begin(), savedSym.end()), joint.numFwdOutputs.value_or(0),
        ExtractOptions{/*buildGraphs=*/false, rules.bindsSpecializedSymbols});
    if (!parts)
        return parts.error();
    const FwdBwdOutputs leaves = splitOutputs(joint, joint.numFwdOutputs.value_or(0));
    Module forward{MemoryPhase::Forward, {}, callsIn(joint, parts->inForward), {}};
    Module backward{MemoryPhase::Backward, {}, callsIn(joint, parts->inBackward), {}};
    for (NodeId id = 0; id < joint.size(); ++id) {
        const Node& n = joint.node(id);
        if (n.op != NodeOp::Placeholder)
            continue;
        (isTangent(n) || isBwdSeedOffset(n) ? backward.inputs : forward.inputs).push_back(id);
    }
    appendNodes(leaves.forward, forward.outputs);
    forward.outputs.insert(forward.outputs.end(), parts->saved.begin(), parts->saved.end());
    appendNodes(leaves.backward, backward.outputs);
    std::vector<NodeId> backwardInputs = parts->savedSym;
    backwardInputs.insert(backwardInputs.end(), parts->saved.begin(), parts->saved.end());
    backward.inputs.insert(backward.inputs.begin(), backwardInputs.begin(), backwardInputs.end());
    if (rules.backwardMimicsAutogradOrder) {
        backward.order = raiseGetItems(joint, mimicAutogradOrder(joint, backward.order, backward.outputs));
        forward.order = raiseGetItems(joint, forward.order);
    }
    std::vector<bool> recomputed(joint.size(), false);
    for (NodeId id : backward.order)
        recomputed[id] = parts->inForward[id];

    MemoryTimeline timeline;
    TimelineBuilder builder(joint);
    builder.savesRngState(rngStates);
    const StorageList held = builder.run(forward, recomputed, timeline);
    timeline.forwardSteps = timeline.steps.size();
    // The saved values cross into the backward as its inputs; everything else the forward returns is the
    // caller's from here on.
    std::vector<StorageList> savedStorages;
    for (NodeId id : parts->saved)
        savedStorages.push_back(builder.refs(id));
    builder.resetCalls();
    for (size_t i = 0; i < parts->saved.size(); ++i)
        builder.keep(parts->saved[i], savedStorages[i]);
    StorageList handOver;
    for (const StorageList& list : savedStorages)
        handOver.insert(handOver.end(), list.begin(), list.end());
    builder.acquire(handOver);
    builder.release(held);
    timeline.savedBytes = builder.live();
    builder.run(backward, recomputed, timeline, handOver);
    for (size_t i = 0; i < timeline.steps.size(); ++i)
        if (timeline.steps[i].liveBytes > timeline.peakBytes) {
            timeline.peakBytes = timeline.steps[i].liveBytes;
            timeline.peakStep = i;
        }
    return timeline;
}

Expected<MemoryTimeline> memoryTimeline(const Partition& partition, const Ruleset& rules) {
    return memoryTimeline(partition.graph, partition.saved, partition.savedSym, rules, partition.rngStates);
}

} // namespace jointscope::partition
