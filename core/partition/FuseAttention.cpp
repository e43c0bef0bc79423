// inductor's fuse_attention, replayed from torch's own patterns (ops/AttentionPatterns.h): the pattern
// matcher of torch/_inductor/pattern_matcher.py over the joint graph, the extra checks of fuse_attention.py,
// and the replacement torch traces on a match, inserted as torch inserts it.
#include "ops/AttentionPatterns.h"
#include "partition/JointPassSupport.h"

#include <cmath>
#include <cstdio>
#include <set>

namespace jointscope::partition::passes {
namespace {

bool isTarget(const Node& n, const Target& t) {
    return n.op == NodeOp::CallFunction && n.target.kind == t.kind && n.target.ns == t.ns &&
           n.target.op == t.op && n.target.overload == t.overload;
}

bool isNumber(const Value& v) {
    return v.kind() == ValueKind::Int || v.kind() == ValueKind::Float || v.kind() == ValueKind::Bool;
}
double numberOf(const Value& v) {
    return v.kind() == ValueKind::Float ? v.asFloat() : static_cast<double>(v.asInt());
}

// Python's `==` between a graph's value and a pattern's literal (2 == 2.0 == True is not asked; a list is
// compared element by element, as pytree flattens it).
bool pythonEqual(const Value& a, const Value& b) {
    if (isNumber(a) || isNumber(b))
        return isNumber(a) && isNumber(b) && numberOf(a) == numberOf(b);
    if (a.isSequence() || b.isSequence()) {
        if (!a.isSequence() || !b.isSequence() || a.items().size() != b.items().size())
            return false;
        for (size_t i = 0; i < a.items().size(); ++i)
            if (!pythonEqual(a.items()[i], b.items()[i]))
                return false;
        return true;
    }
    return a == b;
}

// _has_undeclared_non_default_kwarg (torch 2.15): a keyword argument the pattern does not declare may only
// hold its default; of the schema defaults only the ones every schema shares are known here.
bool isDefaultKeyword(std::string_view key, const Value& v) {
    return v.isNone() || (key == "layout" && v.kind() == ValueKind::Layout && v.text() == "strided") ||
           (key == "pin_memory" && v.kind() == ValueKind::Bool && !v.asBool());
}

// What a match found (pattern_matcher's MatchContext and Match): the node each pattern node matched, the
// keyword arguments bound, and the matched nodes in the order torch appends them (inputs first).
struct MatchState {
    enum class Seen : uint8_t { No, Matched, Failed };
    std::vector<Seen> seen;
    std::vector<NodeId> node;
    std::vector<std::pair<std::string, Value>> kwargs;
    std::vector<NodeId> nodes;
    std::vector<Value> exclusive;

    const Value* kwarg(std::string_view name) const {
        for (const auto& [key, value] : kwargs)
            if (key == name)
                return &value;
        return nullptr;
    }
};

// MultiOutputPattern.match over a WorkGraph.
class PatternMatcher {
public:
    PatternMatcher(const WorkGraph& g, const AttentionPattern& p, bool strictKeywords)
        : g_(g), p_(p), strictKeywords_(strictKeywords) {}

    std::optional<MatchState> match(NodeId anchor) {
        s_ = MatchState{};
        s_.seen.assign(p_.nodes.size(), MatchState::Seen::No);
        s_.node.assign(p_.nodes.size(), kNoNode);
        conflict_ = false;
        if (p_.outputs.empty() || p_.outputs[0] < 0 || !matchNode(p_.outputs[0], Value::nodeRef(anchor)))
            return std::nullopt;
        for (size_t k = 1; k < p_.outputs.size(); ++k)
            if (p_.outputs[k] >= 0 && !matchFromAnchors(p_.outputs[k]))
                return std::nullopt;
        return s_;
    }

    // match.output_nodes(): the node each output matched, kNoNode for None.
    std::vector<NodeId> outputNodes(const MatchState& m) const {
        std::vector<NodeId> out;
        for (int32_t o : p_.outputs)
            out.push_back(o < 0 ? kNoNode : m.node[static_cast<size_t>(o)]);
        return out;
    }

private:
    bool targetMatches(int32_t index, const Node& n) const {
        for (const Target& t : p_.nodes[static_cast<size_t>(index)].targets)
            if (isTarget(n, t))
                return true;
        return false;
    }
    bool isOutput(int32_t index) const {
        return std::find(p_.outputs.begin(), p_.outputs.end(), index) != p_.outputs.end();
    }

    // MatchContext.match: a pattern node matched once keeps its node.
    bool matchNode(int32_t index, const Value& v) {
        const size_t i = static_cast<size_t>(index);
        if (s_.seen[i] != MatchState::Seen::No)
            return s_.seen[i] == MatchState::Seen::Matched && v.kind() == ValueKind::NodeRef &&
                   v.asNode() == s_.node[i];
        const bool ok = matchFresh(index, v);
        s_.seen[i] = ok ? MatchState::Seen::Matched : MatchState::Seen::Failed;
        s_.node[i] = ok ? v.asNode() : kNoNode;
        return ok;
    }

    // _TargetArgsExpr._match
    bool matchFresh(int32_t index, const Value& v) {
        if (v.kind() != ValueKind::NodeRef)
            return false;
        const NodeId id = v.asNode();
        const Node& n = g_.node(id);
        const PatternNode& p = p_.nodes[static_cast<size_t>(index)];
        if (!targetMatches(index, n) || n.args.size() != p.args.size())
            return false;
        if (!isOutput(index) && p.users != PatternNode::kMultipleUsers &&
            g_.users(id).size() != static_cast<size_t>(p.users))
            return false;
        std::vector<const Value*> keywordValues;
        for (const auto& keyword : p.kwargs) {
            auto it = std::find_if(n.kwargs.begin(), n.kwargs.end(),
                                   [&](const auto& kv) { return kv.first == keyword.first; });
            if (it == n.kwargs.end())
                return false;
            keywordValues.push_back(&it->second);
        }
        if (strictKeywords_)
            for (const auto& keyword : n.kwargs)
                if (std::none_of(p.kwargs.begin(), p.kwargs.end(),
                                 [&](const auto& kv) { return kv.first == keyword.first; }) &&
                    !isDefaultKeyword(keyword.first, keyword.second))
                    return false;
        for (size_t a = 0; a < p.args.size(); ++a)
            if (!matchArg(p.args[a], n.args[a]))
                return false;
        for (size_t k = 0; k < p.kwargs.size(); ++k)
            if (!matchArg(p.kwargs[k].second, *keywordValues[k]))
                return false;
        s_.nodes.push_back(id);
        return true;
    }

    bool matchArg(const PatternArg& a, const Value& v) {
        switch (a.kind) {
        case PatternArg::Kind::Node:
            return matchNode(a.node, v);
        case PatternArg::Kind::ExclusiveKeyword:
            if (std::any_of(s_.exclusive.begin(), s_.exclusive.end(), [&](const Value& e) { return e == v; }))
                return false;
            s_.exclusive.push_back(v);
            return bind(a.name, v);
        case PatternArg::Kind::KeywordArg:
            return bind(a.name, v);
        case PatternArg::Kind::Ignored:
            return true;
        case PatternArg::Kind::Literal:
            return v.kind() != ValueKind::NodeRef && pythonEqual(v, a.literal);
        case PatternArg::Kind::List:
            if (!v.isSequence() || v.items().size() != a.items.size())
                return false;
            for (size_t i = 0; i < a.items.size(); ++i)
                if (!matchArg(a.items[i], v.items()[i]))
                    return false;
            return true;
        }
        return false;
    }

    // Match.extend: one name bound to two values fails the whole match.
    bool bind(const std::string& name, const Value& v) {
        if (const Value* bound = s_.kwarg(name)) {
            const bool same = bound->kind() == ValueKind::NodeRef || v.kind() == ValueKind::NodeRef
                                  ? *bound == v
                                  : pythonEqual(*bound, v);
            conflict_ = conflict_ || !same;
            return same;
        }
        s_.kwargs.emplace_back(name, v);
        return true;
    }

    // _TargetArgsExpr.find_anchor_nodes: readers of nodes already matched that call this pattern node's
    // target.
    void findAnchors(int32_t index, std::set<NodeId>& searched, std::vector<NodeId>& out) const {
        const size_t i = static_cast<size_t>(index);
        if (s_.seen[i] != MatchState::Seen::No) {
            if (s_.seen[i] == MatchState::Seen::Matched)
                out.push_back(s_.node[i]);
            return;
        }
        const PatternNode& p = p_.nodes[i];
        auto visit = [&](const PatternArg& a, auto&& self) -> void {
            if (a.kind == PatternArg::Kind::List) {
                for (const PatternArg& item : a.items)
                    self(item, self);
                return;
            }
            if (a.kind != PatternArg::Kind::Node)
                return;
            std::vector<NodeId> others;
            findAnchors(a.node, searched, others);
            for (NodeId other : others)
                for (NodeId user : g_.users(other))
                    if (!searched.count(user) && targetMatches(index, g_.node(user))) {
                        out.push_back(user);
                        searched.insert(user);
                    }
        };
        for (const PatternArg& a : p.args)
            visit(a, visit);
        for (const auto& kv : p.kwargs)
            visit(kv.second, visit);
    }

    // MultiOutputPattern._match_from_anchors: each candidate tried from the state before it.
    bool matchFromAnchors(int32_t index) {
        std::set<NodeId> searched;
        std::vector<NodeId> candidates;
        findAnchors(index, searched, candidates);
        const MatchState prior = s_;
        for (NodeId candidate : candidates) {
            if (matchNode(index, Value::nodeRef(candidate)))
                return true;
            if (conflict_)
                return false;
            s_ = prior;
        }
        return false;
    }

    const WorkGraph& g_;
    const AttentionPattern& p_;
    bool strictKeywords_;
    MatchState s_;
    bool conflict_ = false;
};

const TensorMeta* tensorOf(const WorkGraph& g, const Value& v) {
    return v.kind() == ValueKind::NodeRef ? g.node(v.asNode()).tensor() : nullptr;
}

// _is_supported_scale: a Python number, or a node holding a SymInt.
bool isSupportedScale(const WorkGraph& g, const Value& v) {
    if (v.kind() == ValueKind::NodeRef)
        return g.node(v.asNode()).outputKind == OutputKind::SymInt;
    return v.kind() == ValueKind::Int || v.kind() == ValueKind::Float || v.kind() == ValueKind::Bool;
}

// The first matched node calling `op` (filter_nodes(match.nodes, op)[0]).
const Node* firstMatched(const WorkGraph& g, const MatchState& m, const Target& op) {
    for (NodeId id : m.nodes)
        if (isTarget(g.node(id), op))
            return &g.node(id);
    return nullptr;
}

// _sfdp_params_check
bool paramsCheck(const WorkGraph& g, const MatchState& m) {
    const Value *q = m.kwarg("query"), *k = m.kwarg("key"), *v = m.kwarg("value");
    if (!q || !k || !v)
        return false;
    if (const Value* scale = m.kwarg("inv_scale"); scale && !isSupportedScale(g, *scale))
        return false;
    const TensorMeta *qm = tensorOf(g, *q), *km = tensorOf(g, *k), *vm = tensorOf(g, *v);
    if (!qm || !km || !vm || qm->dtype != km->dtype || km->dtype != vm->dtype ||
        !(qm->device == km->device) || !(km->device == vm->device))
        return false;
    // fused CUDA kernels want TF32 matmuls, off by default (torch.backends.cuda.matmul.fp32_precision)
    if (qm->device.type == "cuda" && qm->dtype == DType::Float32)
        return false;
    static const Target add = Target::parseFunction("aten.add.Tensor");
    if (const Node* addMask = firstMatched(g, m, add)) {
        const TensorMeta* mask = addMask->args.size() > 1 ? tensorOf(g, addMask->args[1]) : nullptr;
        if (!mask ||
            !(mask->dtype == qm->dtype || mask->dtype == DType::Bool || mask->dtype == DType::Float32) ||
            !(mask->device == qm->device) || mask->sizes.empty())
            return false;
    }
    return true;
}

// The pattern's extra check (_sfdp_extra_check / _sfdp_params_check).
bool extraCheck(const WorkGraph& g, const AttentionPattern& p, const MatchState& m) {
    if (p.disableCuda)
        if (const Value* q = m.kwarg("query"); q && tensorOf(g, *q) && tensorOf(g, *q)->device.type == "cuda")
            return false;
    if (p.scaleOp) {
        const Node* scale = firstMatched(g, m, *p.scaleOp);
        if (!scale || scale->args.size() < 2 || !isSupportedScale(g, scale->args[1]))
            return false;
    }
    return !p.checkParams || paramsCheck(g, m);
}

// The sizes of the replacement's size classes on this match: each class's positions must agree (torch's
// example inputs had them equal; the replacement was traced so).
std::optional<std::vector<SymInt>> sizeClassValues(const WorkGraph& g, const AttentionPattern& p,
                                                   const std::vector<Value>& inputs, std::string& why) {
    std::vector<SymInt> values;
    for (const auto& positions : p.sizeClasses) {
        std::optional<SymInt> value;
        for (const auto& [input, dim] : positions) {
            const TensorMeta* t = static_cast<size_t>(input) < inputs.size()
                                      ? tensorOf(g, inputs[static_cast<size_t>(input)])
                                      : nullptr;
            if (!t || static_cast<size_t>(dim) >= t->sizes.size()) {
                why = "the sizes of " + p.inputs[static_cast<size_t>(input)] + " are not known";
                return std::nullopt;
            }
            const SymInt& size = t->sizes[static_cast<size_t>(dim)];
            if (value && (value->isSymbolic() != size.isSymbolic() ||
                          (size.isSymbolic() ? value->expr != size.expr : value->value != size.value))) {
                why = "its replacement was traced for " + p.inputs[static_cast<size_t>(positions[0].first)] +
                      " and " + p.inputs[static_cast<size_t>(input)] +
                      " of one size along a dim where they differ here";
                return std::nullopt;
            }
            value = size;
        }
        values.push_back(value.value_or(SymInt{1, {}}));
    }
    return values;
}

// Whether a tensor is dense in the order of `layout` (its dims, outermost first), size-1 dims aside.
bool denseInOrder(const TensorMeta& t, const std::vector<int32_t>& layout) {
    if (t.strides.size() != t.sizes.size() || layout.size() != t.sizes.size())
        return false;
    int64_t expected = 1;
    for (auto it = layout.rbegin(); it != layout.rend(); ++it) {
        const SymInt& size = t.sizes[static_cast<size_t>(*it)];
        const SymInt& stride = t.strides[static_cast<size_t>(*it)];
        if (size.isSymbolic() || stride.isSymbolic())
            return false;
        if (size.value == 1)
            continue;
        if (stride.value != expected)
            return false;
        expected *= size.value;
    }
    return true;
}

int64_t evaluate(const SizeFormula& f, const std::vector<int64_t>& classes) {
    if (f.classes.empty())
        return f.literal;
    int64_t product = 1;
    for (int32_t c : f.classes)
        product *= classes[static_cast<size_t>(c)];
    return product;
}

TensorMeta evaluate(const TensorFormula& f, const std::vector<int64_t>& classes, const TensorMeta& query) {
    TensorMeta t;
    t.dtype = f.queryDType ? query.dtype : f.dtype;
    t.device = query.device;
    for (const SizeFormula& s : f.sizes)
        t.sizes.push_back(SymInt{evaluate(s, classes), {}});
    for (const SizeFormula& s : f.strides)
        t.strides.push_back(SymInt{evaluate(s, classes), {}});
    return t;
}

double scalarOf(ReplacementArg::ScalarFn fn, double x) {
    switch (fn) {
    case ReplacementArg::ScalarFn::Identity:
        return x;
    case ReplacementArg::ScalarFn::Reciprocal:
        return 1.0 / x;
    case ReplacementArg::ScalarFn::Square:
        return x * x;
    case ReplacementArg::ScalarFn::Sqrt:
        return std::sqrt(x);
    case ReplacementArg::ScalarFn::SqrtReciprocal:
        return std::sqrt(1.0 / x);
    case ReplacementArg::ScalarFn::DropoutScale:
        return 1.0 / (1.0 - x);
    }
    return x;
}

// A replacement argument with the match's values: inputs bound, scalars computed (scale = 1 / inv_scale),
// sizes multiplied out.
struct Instantiation {
    const std::vector<Value>& inputs;
    const std::vector<NodeId>& made;
    const MatchState& match;
    const std::vector<int64_t>& classes;
    DType queryDType;
};

std::optional<Value> instantiate(const ReplacementArg& a, const Instantiation& in) {
    switch (a.kind) {
    case ReplacementArg::Kind::Input:
        return static_cast<size_t>(a.index) < in.inputs.size()
                   ? std::optional(in.inputs[static_cast<size_t>(a.index)])
                   : std::nullopt;
    case ReplacementArg::Kind::Node:
        return static_cast<size_t>(a.index) < in.made.size()
                   ? std::optional(Value::nodeRef(in.made[static_cast<size_t>(a.index)]))
                   : std::nullopt;
    case ReplacementArg::Kind::Scalar: {
        const Value* v = in.match.kwarg(a.scalar);
        if (!v || !isNumber(*v))
            return std::nullopt; // a SymInt scale: its value is not known here
        if (a.fn == ReplacementArg::ScalarFn::Identity)
            return *v;
        if (a.fn == ReplacementArg::ScalarFn::Square && v->kind() != ValueKind::Float)
            return Value::integer(v->asInt() * v->asInt()); // Python's int * int
        return Value::real(scalarOf(a.fn, numberOf(*v)));
    }
    case ReplacementArg::Kind::Size:
        return Value::integer(evaluate(a.size, in.classes));
    case ReplacementArg::Kind::QueryDType:
        return Value::dtype(in.queryDType);
    case ReplacementArg::Kind::Literal:
        return a.literal;
    case ReplacementArg::Kind::List: {
        std::vector<Value> items;
        for (const ReplacementArg& item : a.items) {
            std::optional<Value> v = instantiate(item, in);
            if (!v)
                return std::nullopt;
            items.push_back(std::move(*v));
        }
        return Value::list(std::move(items));
    }
    }
    return std::nullopt;
}

// The replacement's nodes with their arguments and metadata, before any is inserted; nullopt with `why`
// when one cannot be made here.
struct Replacement {
    std::vector<Node> nodes;
    std::vector<int32_t> outputs; // replacement node per pattern output; -1 for None
};

std::optional<Replacement> traceReplacement(const WorkGraph& g, const AttentionPattern& p,
                                            const MatchState& m, std::string& why) {
    const Value* q = m.kwarg("query");
    const TensorMeta* query = q ? tensorOf(g, *q) : nullptr;
    if (!query) {
        why = "the query's metadata is not known";
        return std::nullopt;
    }
    // the recorded replacements are the CPU's (a GPU's calls its flash / efficient attention kernels)
    if (query->device.type != "cpu") {
        why = "its replacement on " + query->device.str() +
              " is not recorded (scripts/gen-attention-patterns traces the CPU's)";
        return std::nullopt;
    }
    std::vector<Value> inputs;
    for (const std::string& name : p.inputs) {
        const Value* v = m.kwarg(name);
        inputs.push_back(v ? *v : Value::none());
    }
    const std::optional<std::vector<SymInt>> classSizes = sizeClassValues(g, p, inputs, why);
    if (!classSizes)
        return std::nullopt;
    // With symbolic sizes torch's check_fn re-traces the pattern with the sizes' own sym nodes (sym_args),
    // and whether that specific pattern matches the graph's size arithmetic decides; jointscope does not
    // re-trace (seen live: a (B, H, L, E) attention on graph inputs not fused, BERT's fused).
    std::vector<int64_t> classes;
    for (const SymInt& size : *classSizes) {
        if (size.isSymbolic()) {
            why = "torch re-traces the pattern for symbolic sizes (" + size.expr +
                  ") before it replaces, which jointscope does not";
            return std::nullopt;
        }
        classes.push_back(size.value);
    }
    // sdpa's math form decomposes its matmuls by the inputs' strides and sizes: traced for dense inputs of
    // the recorded layouts and sizes above 1
    const bool fused = std::any_of(p.replacement.begin(), p.replacement.end(), [](const ReplacementNode& n) {
        return n.target.ns == "aten" && n.target.op.starts_with("_scaled_dot_product_");
    });
    if (!fused) {
        for (size_t i = 0; i < inputs.size() && i < p.inputLayouts.size(); ++i)
            if (!p.inputLayouts[i].empty())
                if (const TensorMeta* t = tensorOf(g, inputs[i]);
                    !t || !denseInOrder(*t, p.inputLayouts[i])) {
                    why = "its replacement (sdpa's math form) was traced for a " + p.inputs[i] +
                          " laid out otherwise";
                    return std::nullopt;
                }
        if (std::find(classes.begin(), classes.end(), 1) != classes.end()) {
            why = "its replacement (sdpa's math form) was traced for sizes above 1";
            return std::nullopt;
        }
    }
    // `made` stands in for node ids while nothing is inserted: insert() hands out these, in order
    std::vector<NodeId> made;
    const NodeId firstMade = static_cast<NodeId>(g.size());
    const Instantiation in{inputs, made, m, classes, query->dtype};
    Replacement r;
    for (size_t i = 0; i < p.replacement.size(); ++i) {
        const ReplacementNode& rn = p.replacement[i];
        Node n = callNode(rn.target.text, {}, {}, TensorMeta{}, NodeMeta{});
        n.target = rn.target;
        for (const ReplacementArg& a : rn.args) {
            std::optional<Value> v = instantiate(a, in);
            if (!v) {
                why = "an argument of " + rn.target.text + " is not known here (a symbolic scale)";
                return std::nullopt;
            }
            n.args.push_back(std::move(*v));
        }
        for (const auto& [key, a] : rn.kwargs) {
            std::optional<Value> v = instantiate(a, in);
            if (!v) {
                why = "the " + key + " of " + rn.target.text + " is not known here (a symbolic scale)";
                return std::nullopt;
            }
            n.kwargs.emplace_back(key, std::move(*v));
        }
        n.outputKind = rn.tuple ? OutputKind::Tuple : OutputKind::Tensor;
        n.outputs.clear();
        for (const std::optional<TensorFormula>& t : rn.outputs)
            n.outputs.push_back(t ? evaluate(*t, classes, *query) : TensorMeta{});
        if (!rn.tuple && (rn.outputs.empty() || !rn.outputs[0]))
            n.outputKind = OutputKind::Unknown;
        made.push_back(firstMade + static_cast<NodeId>(i));
        r.nodes.push_back(std::move(n));
    }
    for (const ReplacementArg& o : p.replacementOutputs) {
        if (o.kind == ReplacementArg::Kind::Node)
            r.outputs.push_back(o.index);
        else if (o.kind == ReplacementArg::Kind::Literal && o.literal.isNone())
            r.outputs.push_back(-1);
        else {
            why = "its replacement returns an input";
            return std::nullopt;
        }
    }
    return r;
}

// percolate_tags: a replaced output's checkpoint tags go to the new node and the replacement nodes it reads,
// up to the match's arguments.
void percolateTags(WorkGraph& g, NodeId from, const NodeMeta& old, const std::set<NodeId>& stops) {
    if (old.recompute.empty() && old.acGraphId < 0)
        return;
    std::vector<NodeId> queue = {from};
    std::set<NodeId> visited;
    while (!queue.empty()) {
        const NodeId id = queue.back();
        queue.pop_back();
        if (visited.count(id) || stops.count(id))
            continue;
        visited.insert(id);
        NodeMeta& meta = g.node(id).meta;
        if (!old.recompute.empty())
            meta.recompute = old.recompute;
        if (old.acGraphId >= 0)
            meta.acGraphId = old.acGraphId;
        g.node(id).forEachInput([&](NodeId input) { queue.push_back(input); });
    }
}

// ReplacementPatternEntry.replace_with_graph, then match.erase_nodes.
void replaceMatch(PassContext& c, const MatchState& m, const std::vector<NodeId>& outputs, Replacement r) {
    WorkGraph& g = c.g;
    NodeId first = kNoNode;
    for (NodeId o : outputs)
        if (o != kNoNode && (first == kNoNode || g.position(o) < g.position(first)))
            first = o;
    // the replacement's arguments name its nodes by the ids insert() hands out, in order
    std::vector<NodeId> made;
    for (Node& n : r.nodes) {
        if (n.target.ns == "aten" && n.target.op.starts_with("_scaled_dot_product_") &&
            !n.target.op.ends_with("_backward"))
            c.attentionOpsMade.push_back("aten." + n.target.op);
        made.push_back(g.insert(std::move(n), first, false));
    }
    PassChange& change = c.change("fuse_attention");
    std::set<NodeId> stops;
    for (const auto& kv : m.kwargs)
        kv.second.forEachNode([&](NodeId id) { stops.insert(id); });
    std::set<NodeId> replacing;
    for (size_t k = 0; k < outputs.size() && k < r.outputs.size(); ++k) {
        if (outputs[k] == kNoNode || r.outputs[k] < 0)
            continue;
        const NodeId old = outputs[k], now = made[static_cast<size_t>(r.outputs[k])];
        updateMeta(g.node(now).meta, g.node(old).meta);
        percolateTags(g, now, g.node(old).meta, stops);
        change.replaced.emplace_back(g.node(old).name, g.node(now).name);
        replacing.insert(now);
        g.replaceAllUses(old, now);
        if (g.users(old).empty())
            g.erase(old);
    }
    for (NodeId id : made)
        if (!replacing.count(id))
            change.added.push_back(g.node(id).name);
    for (auto it = m.nodes.rbegin(); it != m.nodes.rend(); ++it)
        if (!g.erased(*it) && g.users(*it).empty()) {
            change.removed.push_back(g.node(*it).name);
            g.erase(*it);
        }
}

// "2.15.0" -> {2, 15}
std::pair<int, int> versionOf(const std::string& text) {
    int major = 0, minor = 0;
    std::sscanf(text.c_str(), "%d.%d", &major, &minor);
    return {major, minor};
}

} // namespace

bool fuseAttention(PassContext& c, const AttentionPatternSet& patterns, NodeId id) {
    const bool strictKeywords = versionOf(patterns.torchVersion) >= std::pair(2, 15);
    for (const AttentionPattern& p : patterns.patterns) {
        if (c.g.erased(id))
            return true;
        if (!isTarget(c.g.node(id), p.anchor))
            continue;
        PatternMatcher matcher(c.g, p, strictKeywords);
        std::optional<MatchState> m = matcher.match(id);
        if (!m || !extraCheck(c.g, p, *m))
            continue;
        const std::string where = c.g.node(id).name + " (" + p.name + ")";
        std::string why = p.notReplayed;
        std::optional<Replacement> r;
        if (why.empty())
            r = traceReplacement(c.g, p, *m, why);
        if (!r) {
            c.report.notReplayed.push_back("fuse_attention: " + where + ": " + why);
            return true;
        }
        replaceMatch(c, *m, matcher.outputNodes(*m), std::move(*r));
        return true;
    }
    return false;
}

} // namespace jointscope::partition::passes
