#include "partition/HopPartition.h"

#include "graph/FxNamespace.h"
#include "graph/HopBody.h"
#include "io/FxAnnotation.h"
#include "partition/MinCut.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

namespace jointscope::partition {
namespace {

bool isInvokeSubgraph(const Node& n) {
    return n.op == NodeOp::CallFunction && n.target.kind == TargetKind::HigherOrder &&
           n.target.op == "invoke_subgraph";
}

// The identifier argument of an invoke_subgraph call: "fw_subgraph_0", "bw_subgraph_0_0".
std::string_view identifierOf(const Node& n) {
    return n.args.size() >= 2 && n.args[1].kind() == ValueKind::String ? std::string_view(n.args[1].text())
                                                                       : std::string_view();
}

std::string_view withoutPrefix(std::string_view text, std::string_view prefix) {
    return text.starts_with(prefix) ? text.substr(prefix.size()) : text;
}

size_t placeholderCount(const Graph& g) {
    return size_t(std::count_if(g.nodes().begin(), g.nodes().end(),
                                [](const Node& n) { return n.op == NodeOp::Placeholder; }));
}

// prepare_for_partitioner: the body's placeholders renamed primals_i / tangents_i (the partitioner tells them
// apart by name) and its outputs (*grads, *fw_outs) turned to (*fw_outs, *grads).
Expected<Graph> prepareForPartitioner(const Graph& body, size_t numPrimals, size_t numFwOutputs) {
    Graph g = body.withoutNodes();
    g.decisions.clear(); // the partitioner decides afresh
    size_t primals = 0, tangents = 0, index = 0;
    for (const Node& n : body.nodes()) {
        Node copy = n;
        copy.users.clear();
        if (n.op == NodeOp::Placeholder) {
            copy.name = index < numPrimals ? "primals_" + std::to_string(primals++)
                                           : "tangents_" + std::to_string(tangents++);
            copy.target = Target::name(copy.name);
            if (std::optional<NodeId> clash = body.find(copy.name);
                clash && body.node(*clash).op != NodeOp::Placeholder)
                return makeError({}, "invoke_subgraph body '" + body.name + "': node '" + copy.name +
                                         "' has the name its placeholder takes before partitioning");
        } else if (n.op == NodeOp::Output) {
            std::vector<Value> leaves;
            for (const Value* v : body.outputLeaves())
                leaves.push_back(*v);
            if (leaves.size() < numFwOutputs)
                return makeError({}, "invoke_subgraph body '" + body.name + "' returns " +
                                         std::to_string(leaves.size()) +
                                         " values, fewer than its forward's " + std::to_string(numFwOutputs));
            std::rotate(leaves.begin(), leaves.end() - ptrdiff_t(numFwOutputs), leaves.end());
            copy.args = {Value::tuple(std::move(leaves))};
            copy.meta.extra.clear();
        }
        ++index;
        g.addNode(std::move(copy));
    }
    g.numFwdOutputs = int64_t(numFwOutputs);
    g.computeUsers();
    return g;
}

// The outputs of an extracted module as a call of it returns them (propagate_meta_info).
void setCallOutputs(Node& call, const Graph& module) {
    call.outputKind = OutputKind::Tuple;
    call.outputs.clear();
    for (const Value* v : module.outputLeaves()) {
        const Node* n = v->kind() == ValueKind::NodeRef ? &module.node(v->asNode()) : nullptr;
        call.outputs.push_back(n && n->tensor() ? *n->tensor() : TensorMeta{});
    }
}

// getitem(call, index) typed as the module's output `index`, with the call's meta (torch copies it).
Node getItem(const NodeMeta& callMeta, NodeId callRef, const Graph& module, size_t index, std::string name) {
    Node g;
    g.name = std::move(name);
    g.op = NodeOp::CallFunction;
    g.target = Target::parseFunction("operator.getitem");
    g.args = {Value::nodeRef(callRef), Value::integer(int64_t(index))};
    g.meta = callMeta;
    const Value* leaf = module.outputLeaves()[index];
    if (leaf->kind() != ValueKind::NodeRef)
        return g;
    const Node& out = module.node(leaf->asNode());
    g.outputKind = out.outputKind;
    g.symValue = out.symValue;
    if (const TensorMeta* t = out.tensor())
        g.outputs = {*t};
    return g;
}

Node getAttr(std::string name, std::string attribute, int32_t subgraph, const NodeMeta& meta) {
    Node n;
    n.name = std::move(name);
    n.op = NodeOp::GetAttr;
    n.target = Target::name(attribute);
    n.subgraph = subgraph;
    n.meta = meta;
    return n;
}

// A graph rebuilt in order with nodes inserted after others, some erased and their readers redirected.
// References are "virtual": ids below the old graph's size are its nodes, the rest the inserted ones.
class Restitch {
public:
    explicit Restitch(const Graph& old) : old_(old), inserted_(old.size()), erased_(old.size(), false) {}

    NodeId virtualId(size_t insertedIndex) const { return NodeId(old_.size() + insertedIndex); }
    NodeId nextVirtualId() const { return virtualId(nodes_.size()); }

    // Inserts `n` right after `anchor` (an old node), before what was inserted there so far when `front`:
    // FX's inserting_after(anchor) puts each new node directly after the anchor.
    NodeId insertAfter(NodeId anchor, Node n, size_t position) {
        const NodeId id = nextVirtualId();
        nodes_.push_back(std::move(n));
        auto& list = inserted_[anchor];
        list.insert(list.begin() + ptrdiff_t(std::min(position, list.size())), id);
        return id;
    }
    size_t insertedAfter(NodeId anchor) const { return inserted_[anchor].size(); }

    void replace(NodeId oldNode, NodeId with) {
        erased_[oldNode] = true;
        replacement_[oldNode] = with;
    }
    void erase(NodeId oldNode) { erased_[oldNode] = true; }

    Graph build(Graph out) {
        std::vector<NodeId> finalId(old_.size() + nodes_.size(), kNoNode);
        auto emit = [&](NodeId virt, Node n) {
            redirect(n, finalId);
            n.users.clear();
            finalId[virt] = out.addNode(std::move(n));
        };
        for (NodeId id = 0; id < old_.size(); ++id) {
            if (!erased_[id])
                emit(id, old_.node(id));
            for (NodeId virt : inserted_[id])
                emit(virt, std::move(nodes_[virt - old_.size()]));
        }
        for (const auto& [from, to] : replacement_)
            finalId[from] = finalId[to];
        out.computeUsers();
        return out;
    }

private:
    void redirect(Node& n, const std::vector<NodeId>& finalId) {
        auto fix = [&](auto& self, Value& v) -> void {
            if (v.kind() == ValueKind::NodeRef) {
                NodeId target = v.asNode();
                for (auto it = replacement_.find(target); it != replacement_.end();
                     it = replacement_.find(target))
                    target = it->second;
                v = Value::nodeRef(finalId[target]);
            }
            for (Value& item : v.items())
                self(self, item);
        };
        for (Value& a : n.args)
            fix(fix, a);
        for (auto& kv : n.kwargs)
            fix(fix, kv.second);
    }

    const Graph& old_;
    std::vector<Node> nodes_;
    std::vector<std::vector<NodeId>> inserted_;
    std::vector<bool> erased_;
    std::map<NodeId, NodeId> replacement_;
};

struct BodyResult {
    HopBodyPartition report;
    Graph forward, backward;
    size_t numFwInputs = 0, numFwOutputs = 0;
    // The tensors the forward body returns after its outputs: the saved values, then the RNG states of the
    // random ops it recomputes (functionalize_rng_ops; torch's restitch counts them as saved nodes).
    size_t numSavedTensors = 0;
    int32_t forwardIndex = -1, backwardIndex = -1;
};

// Pairs each backward call with its forward call: by call_id, as torch does; without call ids, by the
// autograd order (the last forward call's backward runs first).
Expected<std::vector<std::pair<NodeId, NodeId>>> pairCalls(const Graph& g, const std::vector<NodeId>& fws,
                                                           const std::vector<NodeId>& bws,
                                                           std::vector<std::string>& notes) {
    std::vector<std::pair<NodeId, NodeId>> pairs; // (bw, fw)
    const bool haveIds = std::all_of(bws.begin(), bws.end(),
                                     [&](NodeId b) { return invokeSubgraphCallId(g.node(b)).has_value(); });
    if (haveIds) {
        std::map<int64_t, NodeId> fwById;
        for (NodeId f : fws)
            if (std::optional<int64_t> id = invokeSubgraphCallId(g.node(f)))
                fwById.emplace(*id, f);
        for (NodeId b : bws) {
            auto it = fwById.find(*invokeSubgraphCallId(g.node(b)));
            if (it == fwById.end())
                return makeError({"", g.node(b).meta.sourceLine, 1},
                                 "invoke_subgraph call '" + g.node(b).name + "' (" +
                                     std::string(identifierOf(g.node(b))) + ", call_id " +
                                     std::to_string(*invokeSubgraphCallId(g.node(b))) +
                                     "): no forward call has its call_id");
            pairs.emplace_back(b, it->second);
        }
        return pairs;
    }
    if (fws.size() < bws.size())
        return makeError({}, "invoke_subgraph: " + std::to_string(bws.size()) + " backward calls but only " +
                                 std::to_string(fws.size()) + " forward calls, and no call_id to pair them");
    for (size_t i = 0; i < bws.size(); ++i)
        pairs.emplace_back(bws[i], fws[bws.size() - 1 - i]);
    notes.push_back("invoke_subgraph calls carry no call_id: backward calls paired with forward calls in "
                    "reverse order");
    return pairs;
}

} // namespace

std::optional<int64_t> invokeSubgraphCallId(const Node& node) {
    for (const auto& [key, text] : node.meta.extra) {
        if (key != fx::kCustomAnnotationKey)
            continue;
        const std::string_view t = text;
        const size_t at = t.find("'call_id': ");
        if (at == t.npos)
            return std::nullopt;
        const char* first = t.data() + at + 11;
        int64_t id = 0;
        if (std::from_chars(first, t.data() + t.size(), id).ec != std::errc())
            return std::nullopt;
        return id;
    }
    return std::nullopt;
}

// run_joint_graph_passes_on_hops
Expected<HopPartitionReport> partitionInvokeSubgraphBodies(Graph& joint,
                                                           const BodyPartitioner& partitionBody) {
    HopPartitionReport report;
    report.change.pass = "run_joint_graph_passes_on_hops";
    std::vector<NodeId> fws, bws;
    for (NodeId id = 0; id < joint.size(); ++id) {
        const Node& n = joint.node(id);
        if (!isInvokeSubgraph(n))
            continue;
        const bool forward = identifierOf(n).starts_with("fw"), backward = identifierOf(n).starts_with("bw");
        if (!forward && !backward)
            continue;
        // invoke_subgraph(body, identifier, *operands): the rewrite replaces the body argument.
        if (bodyArgument(joint, n) != std::optional<size_t>(0))
            return makeError({"", n.meta.sourceLine, 1},
                             "invoke_subgraph call '" + n.name +
                                 "': its first argument is not a body in the file");
        (forward ? fws : bws).push_back(id);
    }
    if (bws.empty())
        return report;
    Expected<std::vector<std::pair<NodeId, NodeId>>> paired = pairCalls(joint, fws, bws, report.notes);
    if (!paired)
        return paired.error();
    std::map<NodeId, NodeId> fwOf(paired->begin(), paired->end());

    // Step 2: each body partitioned once, by its backward identifier.
    std::map<std::string, BodyResult> bodies;
    std::vector<std::string> order;
    for (NodeId b : bws) {
        const std::string identifier(withoutPrefix(identifierOf(joint.node(b)), "bw"));
        if (bodies.count(identifier))
            continue;
        const Node& fw = joint.node(fwOf[b]);
        const Graph* fwBody = bodyOf(joint, fwOf[b]);
        const Graph* jointBody = bodyOf(joint, b);
        if (!fwBody || !jointBody)
            return makeError({"", fw.meta.sourceLine, 1}, "invoke_subgraph call '" +
                                                              (fwBody ? joint.node(b).name : fw.name) +
                                                              "': its body is not in the file");
        BodyResult r;
        r.numFwInputs = placeholderCount(*fwBody);
        r.numFwOutputs = fwBody->outputLeaves().size();
        Expected<Graph> prepared = prepareForPartitioner(*jointBody, r.numFwInputs, r.numFwOutputs);
        if (!prepared)
            return prepared.error();
        // The body's sizes are in the symbols of the graph that calls it: its hints and guards hold there
        // (the other facts, static inputs by index, are the caller's own).
        for (const auto& attribute : joint.attributes)
            if ((attribute.first == "symbol_hints" || attribute.first == "symbol_equalities") &&
                std::none_of(prepared->attributes.begin(), prepared->attributes.end(),
                             [&](const auto& kv) { return kv.first == attribute.first; }))
                prepared->attributes.push_back(attribute);
        Expected<Partition> p = partitionBody(prepared.take(), "partitioned_fw" + identifier);
        if (!p) {
            Diagnostic d = p.error();
            d.message = "invoke_subgraph body '" + jointBody->name + "': " + d.message;
            return d;
        }
        r.numSavedTensors = p->saved.size() + p->rngStates.size();
        for (NodeId id : p->saved)
            r.report.saved.push_back(p->graph.node(id).name);
        for (NodeId id : p->savedSym)
            r.report.savedSym.push_back(p->graph.node(id).name);
        r.report.escalation = p->escalation;
        r.report.forwardOutputs = r.numFwOutputs;
        r.report.jointBody = jointBody->name;
        r.report.forwardBody = "partitioned_fw" + identifier; // as partitionBody was told
        r.report.backwardBody = "partitioned_" + std::string(identifierOf(joint.node(b)));
        r.forward = std::move(p->forward);
        r.backward = std::move(p->backward);
        r.forward.name = r.report.forwardBody;
        r.backward.name = r.report.backwardBody;
        bodies.emplace(identifier, std::move(r));
        order.push_back(identifier);
    }

    // Step 3: restitch, in the order torch does (its names count up in that order).
    Graph out = joint.withoutNodes();
    for (const std::string& identifier : order) {
        BodyResult& r = bodies.at(identifier);
        r.forwardIndex = out.addSubgraph(std::make_unique<Graph>(r.forward));
        r.backwardIndex = out.addSubgraph(std::make_unique<Graph>(r.backward));
    }

    FxNamespace names(joint);
    Restitch stitch(joint);
    std::vector<bool> rewritten(joint.size(), false);
    struct RewrittenCall {
        NodeId call;       // the new call (a virtual id of `stitch`)
        size_t getitemsAt; // where inserting_after(call) puts a node among those after the old call
    };
    // The new body's get_attr goes after the old call, then the call is copied under a fresh name, reading
    // it.
    auto callOfNewBody = [&](NodeId oldCall, const std::string& body, int32_t bodyIndex) {
        const Node& old = joint.node(oldCall);
        const NodeId attr = stitch.insertAfter(
            oldCall, getAttr(names.create(body), body, bodyIndex, joint.node(old.args[0].asNode()).meta),
            stitch.insertedAfter(oldCall));
        Node call = old;
        call.name = names.create("invoke_subgraph");
        call.args[0] = Value::nodeRef(attr);
        call.args[1] = Value::string(body);
        call.users.clear();
        return call;
    };
    auto rewriteForward = [&](NodeId fwId, BodyResult& r) -> RewrittenCall {
        const Node& fw = joint.node(fwId);
        Node call = callOfNewBody(fwId, r.report.forwardBody, r.forwardIndex);
        setCallOutputs(call, r.forward);
        const size_t position = stitch.insertedAfter(fwId);
        report.change.replaced.emplace_back(fw.name, call.name);
        const NodeId callId = stitch.insertAfter(fwId, std::move(call), position);
        stitch.replace(fwId, callId);
        rewritten[fwId] = true;
        ++r.report.calls;
        return {callId, position + 1};
    };

    for (auto it = bws.rbegin(); it != bws.rend(); ++it) {
        const NodeId bwId = *it;
        const Node& bw = joint.node(bwId);
        const std::string identifier(withoutPrefix(identifierOf(bw), "bw"));
        BodyResult& r = bodies.at(identifier);
        const NodeId fwId = fwOf[bwId];

        const RewrittenCall forward = rewriteForward(fwId, r);
        const size_t numSaved = r.numSavedTensors, numSym = r.report.savedSym.size();
        std::vector<NodeId> extra; // (*saved, *sym) getitems
        for (size_t index = r.numFwOutputs; index < r.numFwOutputs + numSaved + numSym; ++index) {
            Node g = getItem(joint.node(fwId).meta, forward.call, r.forward, index, names.create("getitem"));
            report.change.added.push_back(g.name);
            extra.push_back(stitch.insertAfter(fwId, std::move(g), forward.getitemsAt));
        }

        // The backward call reads (*sym, *saved, *tangents) instead of (*primals, *tangents).
        Node call = callOfNewBody(bwId, r.report.backwardBody, r.backwardIndex);
        std::vector<Value> args = {call.args[0], call.args[1]};
        for (size_t i = numSaved; i < extra.size(); ++i)
            args.push_back(Value::nodeRef(extra[i]));
        for (size_t i = 0; i < numSaved; ++i)
            args.push_back(Value::nodeRef(extra[i]));
        for (size_t i = 2 + r.numFwInputs; i < bw.args.size(); ++i)
            args.push_back(bw.args[i]);
        call.args = std::move(args);
        setCallOutputs(call, r.backward);
        report.change.replaced.emplace_back(bw.name, call.name);
        const NodeId newBw = stitch.insertAfter(bwId, std::move(call), stitch.insertedAfter(bwId));
        stitch.replace(bwId, newBw);
    }
    // Forward calls whose backward autograd dropped run the partitioned body too; their saved outputs die.
    for (NodeId f : fws) {
        if (rewritten[f])
            continue;
        for (const auto& [b, fw] : fwOf) {
            if (identifierOf(joint.node(fw)) != identifierOf(joint.node(f)))
                continue;
            rewriteForward(f, bodies.at(std::string(withoutPrefix(identifierOf(joint.node(b)), "bw"))));
            break;
        }
    }
    Graph stitched = stitch.build(std::move(out));

    // eliminate_dead_code, for what the rewrite left unread: the old bodies' get_attr nodes.
    std::vector<bool> keep(stitched.size(), true);
    std::vector<NodeId> replace(stitched.size());
    for (NodeId id = 0; id < stitched.size(); ++id) {
        replace[id] = id;
        const Node& n = stitched.node(id);
        keep[id] = !(n.op == NodeOp::GetAttr && n.users.empty());
    }
    stitched.eraseNodes(keep, replace);
    joint = std::move(stitched);
    for (const std::string& identifier : order)
        report.bodies.push_back(std::move(bodies.at(identifier).report));
    return report;
}

} // namespace jointscope::partition
