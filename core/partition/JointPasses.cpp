#include "partition/JointPasses.h"

#include "partition/JointPassSupport.h"

#include "graph/FxNamespace.h"
#include "graph/ShapeFacts.h"
#include "graph/SymbolicExpr.h"
#include "partition/JointGraph.h"
#include "support/Text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace jointscope::partition {
using namespace passes;
namespace {

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

std::string describe(const Node& n) {
    return "'" + n.name + "' (" + n.target.ns + "." + n.target.op + "." + n.target.overload + ")";
}

// An argument by position or keyword.
const Value* argument(const Node& n, size_t index, std::string_view keyword) {
    if (index < n.args.size())
        return &n.args[index];
    for (const auto& [k, v] : n.kwargs)
        if (k == keyword)
            return &v;
    return nullptr;
}
std::optional<int64_t> intArg(const Node& n, size_t index, std::string_view keyword) {
    const Value* v = argument(n, index, keyword);
    if (!v || v->kind() != ValueKind::Int)
        return std::nullopt;
    return v->asInt();
}

// statically_known_true(sym_eq(a, b)) for one dimension: equal values, or the same symbolic expression.
bool sameSymInt(const SymInt& a, const SymInt& b) {
    if (a.isSymbolic() || b.isSymbolic())
        return a.expr == b.expr;
    return a.value == b.value;
}
bool sameSizes(const std::vector<SymInt>& a, const std::vector<SymInt>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), sameSymInt);
}
// A shape argument ([2, s0, 8] as ints, symbolic expressions or size nodes) equal to `sizes`.
// With `oneWildcard` (joint_graph.definitely_equal) a single -1 in the shape matches any size.
bool shapeArgEquals(const WorkGraph& g, const Value& shape, const std::vector<SymInt>& sizes,
                    bool oneWildcard = false) {
    if (!shape.isSequence() || shape.items().size() != sizes.size())
        return false;
    int wildcards = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
        const Value& v = shape.items()[i];
        if (v.kind() == ValueKind::Int) {
            if (oneWildcard && v.asInt() == -1 && !(!sizes[i].isSymbolic() && sizes[i].value == -1)) {
                if (++wildcards > 1)
                    return false;
                continue;
            }
            if (sizes[i].isSymbolic() || sizes[i].value != v.asInt())
                return false;
        } else if (v.kind() == ValueKind::SymExpr) {
            if (v.text() != sizes[i].expr)
                return false;
        } else if (v.kind() == ValueKind::NodeRef) {
            const Node& s = g.node(v.asNode());
            if (s.symValue.empty() || s.symValue != sizes[i].expr)
                return false;
        } else {
            return false;
        }
    }
    return true;
}

// post_grad.same_meta: both values tensors with the same sizes, dtype, device and (strided) strides, the
// sizes and strides statically known equal.
bool sameMeta(const ShapeFacts& facts, const Node& a, const Node& b) {
    const TensorMeta* x = a.tensor();
    const TensorMeta* y = b.tensor();
    if (!x || !y || !x->known() || !y->known())
        return false;
    if (!facts.knownEqual(x->sizes, y->sizes) || x->dtype != y->dtype || !(x->device == y->device))
        return false;
    if (x->strides.size() != x->sizes.size() || y->strides.size() != y->sizes.size())
        return false; // strides not recorded: not provably the same (a 0-d tensor has none)
    return facts.knownEqual(x->strides, y->strides);
}

// An int argument as a size: a number, a printed expression, or a node holding a symbolic int.
std::optional<SymInt> symIntOf(const WorkGraph& g, const Value& v) {
    if (v.kind() == ValueKind::Int)
        return SymInt{v.asInt(), {}};
    if (v.kind() == ValueKind::SymExpr)
        return SymInt{0, v.text()};
    if (v.kind() == ValueKind::NodeRef && !g.node(v.asNode()).symValue.empty())
        return SymInt{0, g.node(v.asNode()).symValue};
    return std::nullopt;
}

bool isIntegral(DType d) {
    switch (d) {
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32:
    case DType::UInt64:
    case DType::Bool:
        return true;
    default:
        return false;
    }
}

std::vector<NodeId> outputArgs(const WorkGraph& g) {
    std::vector<NodeId> out;
    for (NodeId id : g.liveOrder())
        if (g.node(id).op == NodeOp::Output) {
            for (const Value& v : g.node(id).args)
                v.forEachNode([&](NodeId n) { out.push_back(n); });
        }
    return out;
}

// ---- remove_noop_ops (torch/_inductor/fx_passes/post_grad.py) ----

// noop_registry: the ops that may be a no-op, the condition, and which argument they return.
struct NoopRule {
    std::optional<NodeId> source;
    bool noop = false;
};

// statically_known_true(end >= size) for a slice's end: INT64_MAX (no end), a number past a concrete size,
// or the very symbol of a symbolic one.
bool reachesEnd(const WorkGraph& g, const Value& end, const SymInt& size) {
    if (end.kind() == ValueKind::Int)
        return end.asInt() >= kInt64Max || (!size.isSymbolic() && end.asInt() >= size.value);
    if (end.kind() == ValueKind::SymExpr)
        return size.isSymbolic() && end.text() == size.expr;
    if (end.kind() == ValueKind::NodeRef)
        return size.isSymbolic() && g.node(end.asNode()).symValue == size.expr;
    return false;
}

// _slice_scatter_noop_replacement: `self` when `src` is getitem(split_with_sizes(self, sizes, dim), i) and
// the scatter writes exactly that piece back; else `src`.
NodeId sliceScatterReplacement(const WorkGraph& g, const Node& n, NodeId self, NodeId src, int64_t dim,
                               int64_t ndim) {
    const Node& piece = g.node(src);
    const std::optional<NodeId> split = nodeArg(piece, 0);
    if (!piece.target.isGetItem() || !split || piece.args.size() < 2 ||
        piece.args[1].kind() != ValueKind::Int)
        return src;
    const Node& s = g.node(*split);
    if (!isAten(s, "split_with_sizes", "default") || nodeArg(s, 0) != std::optional<NodeId>(self))
        return src;
    const Value* sizes = argument(s, 1, "split_sizes");
    if (!sizes || !sizes->isSequence())
        return src;
    std::vector<int64_t> parts;
    for (const Value& v : sizes->items()) {
        if (v.kind() != ValueKind::Int)
            return src;
        parts.push_back(v.asInt());
    }
    int64_t splitDim = intArg(s, 2, "dim").value_or(0);
    const int64_t index = piece.args[1].asInt();
    const int64_t step = intArg(n, 5, "step").value_or(1);
    splitDim = ((splitDim % ndim) + ndim) % ndim;
    if (splitDim != dim || step != 1 || index < 0 || index >= int64_t(parts.size()))
        return src;
    int64_t expectedStart = 0;
    for (int64_t i = 0; i < index; ++i)
        expectedStart += parts[size_t(i)];
    const int64_t expectedEnd = expectedStart + parts[size_t(index)];
    const Value* start = argument(n, 3, "start");
    const Value* end = argument(n, 4, "end");
    const int64_t startValue = !start || start->isNone()         ? 0
                               : start->kind() == ValueKind::Int ? start->asInt()
                                                                 : -1;
    const int64_t endValue = !end || end->isNone()           ? kInt64Max
                             : end->kind() == ValueKind::Int ? end->asInt()
                                                             : -1;
    return startValue == expectedStart && endValue == expectedEnd ? self : src;
}

// slice_scatter_noop: the scatter overwrites all of `self` (src has its shape, from 0 to past the end: plain
// `==`, guards decided on the hints), or `src` is statically exactly the range [start, end) of dim.
NoopRule sliceScatterRule(const WorkGraph& g, const ShapeFacts& facts, const Node& n) {
    const std::optional<NodeId> self = nodeArg(n, 0), src = nodeArg(n, 1);
    if (!self || !src)
        return {};
    const TensorMeta* a = g.node(*self).tensor();
    const TensorMeta* b = g.node(*src).tensor();
    const int64_t ndim = a ? int64_t(a->sizes.size()) : 0;
    if (!a || !b || ndim == 0)
        return {src, false};
    int64_t dim = intArg(n, 2, "dim").value_or(0);
    if (dim < -ndim || dim >= ndim)
        return {src, false};
    dim = (dim + ndim) % ndim;
    const Value* start = argument(n, 3, "start");
    const Value* end = argument(n, 4, "end");
    const bool stepOne = intArg(n, 5, "step").value_or(1) == 1;
    const std::optional<SymInt> startSize = start && !start->isNone() ? symIntOf(g, *start) : SymInt{};
    const bool startZero = startSize && facts.guardEqual(*startSize, SymInt{});
    const bool endPast = !end || end->isNone() || reachesEnd(g, *end, a->sizes[size_t(dim)]);
    bool sameShape = a->sizes.size() == b->sizes.size();
    for (size_t d = 0; sameShape && d < a->sizes.size(); ++d)
        sameShape = facts.guardEqual(a->sizes[d], b->sizes[d]);
    const bool full = sameShape && startZero && endPast && stepOne;
    bool partial = stepOne && int64_t(b->sizes.size()) == ndim;
    for (int64_t d = 0; partial && d < ndim; ++d)
        if (d != dim)
            partial = facts.knownEqual(a->sizes[size_t(d)], b->sizes[size_t(d)]);
    if (partial) { // src's length along dim is end - start, known here only for numbers
        const SymInt& length = b->sizes[size_t(dim)];
        const int64_t from = !start || start->isNone()         ? 0
                             : start->kind() == ValueKind::Int ? start->asInt()
                                                               : -1;
        partial = from >= 0 && end && end->kind() == ValueKind::Int && !length.isSymbolic() &&
                  end->asInt() - from == length.value;
    }
    return {sliceScatterReplacement(g, n, *self, *src, dim, ndim), full || partial};
}
NoopRule noopRule(const WorkGraph& g, const ShapeFacts& facts, const Node& n) {
    if (n.op != NodeOp::CallFunction || n.target.kind != TargetKind::OpOverload)
        return {};
    const Target& t = n.target;
    auto input = [&](size_t i) { return nodeArg(n, i); };
    auto meta = [&](std::optional<NodeId> id) -> const TensorMeta* {
        return id ? g.node(*id).tensor() : nullptr;
    };
    if (t.ns == "aten" && (t.op == "alias" || t.op == "clone") && t.overload == "default")
        return {input(0), true};
    if (t.ns == "aten" && t.op == "copy" && t.overload == "default")
        return {input(1), true};
    if (t.ns == "aten" && t.op == "view" && t.overload == "default") {
        const TensorMeta* in = meta(input(0));
        return {input(0), in && n.args.size() > 1 && shapeArgEquals(g, n.args[1], in->sizes)};
    }
    if (t.ns == "aten" && t.op == "view" && t.overload == "dtype") {
        const TensorMeta* in = meta(input(0));
        return {input(0), in && n.args.size() > 1 && n.args[1].kind() == ValueKind::DType &&
                              n.args[1].asDType() == in->dtype};
    }
    if (t.ns == "prims" && t.op == "convert_element_type") {
        const TensorMeta* in = meta(input(0));
        return {input(0), in && n.args.size() > 1 && n.args[1].kind() == ValueKind::DType &&
                              n.args[1].asDType() == in->dtype};
    }
    if (t.ns == "aten" && t.op == "slice") {
        const TensorMeta* in = meta(input(0));
        if (!in)
            return {input(0), false};
        int64_t dim = intArg(n, 1, "dim").value_or(0);
        const Value* start = argument(n, 2, "start");
        const Value* end = argument(n, 3, "end");
        const int64_t step = intArg(n, 4, "step").value_or(1);
        if (!start || !end || start->isNone() || end->isNone())
            return {input(0), false};
        if (dim < 0)
            dim += static_cast<int64_t>(in->sizes.size());
        if (dim < 0 || dim >= static_cast<int64_t>(in->sizes.size()))
            return {input(0), false};
        const SymInt& size = in->sizes[static_cast<size_t>(dim)];
        const std::optional<SymInt> startSize = symIntOf(g, *start);
        const bool startZero = startSize && facts.knownEqual(*startSize, SymInt{});
        return {input(0), startZero && reachesEnd(g, *end, size) && step == 1};
    }
    if (t.ns == "aten" && t.op == "slice_scatter")
        return sliceScatterRule(g, facts, n);
    if (t.ns == "aten" && t.op == "repeat") {
        const Value* r = argument(n, 1, "repeats");
        bool ones = r && r->isSequence();
        if (ones)
            for (const Value& v : r->items())
                ones = ones && v.kind() == ValueKind::Int && v.asInt() == 1;
        return {input(0), ones};
    }
    if (t.ns == "aten" && t.op == "constant_pad_nd") {
        const Value* p = argument(n, 1, "pad");
        bool zeros = p && p->isSequence();
        if (zeros)
            for (const Value& v : p->items())
                zeros = zeros && v.kind() == ValueKind::Int && v.asInt() == 0;
        return {input(0), zeros};
    }
    if (t.ns == "aten" && (t.op == "ceil" || t.op == "floor" || t.op == "round" || t.op == "trunc")) {
        const TensorMeta* in = meta(input(0));
        return {input(0), in && isIntegral(in->dtype)};
    }
    if (t.ns == "aten" && t.op == "pow") {
        return {input(0), n.args.size() > 1 && n.args[1].kind() == ValueKind::Int && n.args[1].asInt() == 1};
    }
    if (t.ns == "aten" && t.op == "cat") {
        if (n.args.empty() || !n.args[0].isSequence() || n.args[0].items().size() != 1 ||
            n.args[0].items()[0].kind() != ValueKind::NodeRef)
            return {};
        return {n.args[0].items()[0].asNode(), true};
    }
    return {};
}

// val.is_conj(), which same_meta compares: aten._conj makes a view with the conjugate bit flipped, and other
// views of a storage keep their base's bit (a clone of a _conj view resolves it: not a no-op).
bool conjugated(const PassContext& c, NodeId id) {
    bool conj = false;
    for (size_t hops = 0; hops < c.g.size(); ++hops) {
        const Node& n = c.g.node(id);
        const std::optional<NodeId> base = nodeArg(n, 0);
        if (!base || c.storage(id) != c.storage(*base))
            break;
        if (isAten(n, "_conj", "default"))
            conj = !conj;
        id = *base;
    }
    return conj;
}

// post_grad.remove_noop_ops
void removeNoopOps(PassContext& c) {
    WorkGraph& g = c.g;
    std::set<NodeId> inputs, inputStorages, outputStorages, mutatedStorages;
    for (NodeId id : g.liveOrder())
        if (g.node(id).op == NodeOp::Placeholder) {
            inputs.insert(id);
            inputStorages.insert(c.storage(id));
        }
    for (NodeId id : outputArgs(g))
        outputStorages.insert(c.storage(id));
    for (NodeId id : g.liveOrder()) {
        const Node& n = g.node(id);
        if ((isAten(n, "copy_", "default") || isAten(n, "set_", "source_Tensor")) && !n.args.empty() &&
            n.args[0].kind() == ValueKind::NodeRef)
            mutatedStorages.insert(c.storage(n.args[0].asNode()));
    }
    // AOTAutograd's clone of an input the runtime epilogue mutates: the backward saves it before the
    // mutation.
    const std::vector<bool> epilogueMutated =
        c.rules.epilogueMutatedInputsUnsaveable ? epilogueMutatedInputs(c.original) : std::vector<bool>();
    for (NodeId id : g.liveOrder()) {
        const Node& n = g.node(id);
        const NoopRule rule = noopRule(g, c.facts, n);
        if (!rule.source)
            continue;
        const NodeId src = *rule.source;
        if (isAten(n, "clone", "default") && src < epilogueMutated.size() && epilogueMutated[src])
            continue;
        const NodeId nodeStorage = c.storage(id), srcStorage = c.storage(src);
        const bool nodeIsView = nodeStorage == srcStorage;
        // Don't introduce new aliasing between inputs and outputs.
        if (!nodeIsView && outputStorages.count(nodeStorage) &&
            (inputStorages.count(srcStorage) || outputStorages.count(srcStorage)))
            continue;
        // A real copy of a storage the graph mutates stays.
        if (!nodeIsView && mutatedStorages.count(srcStorage))
            continue;
        if (!sameMeta(c.facts, n, g.node(src)) || conjugated(c, id) != conjugated(c, src) || !rule.noop)
            continue;
        c.removed("remove_noop_ops", id);
        g.replaceAllUses(id, src);
        g.erase(id);
    }
}

// ---- constant_fold_uniform_value (joint_graph.py: UniformValueConstantFolder) ----

// A value the folder knows: a one-element tensor (the uniform value) of a dtype, or a symbolic int.
struct Known {
    double value = 0;
    DType dtype = DType::Undefined;
    int64_t storage = -1; // constant_data_ptrs: which folded tensor object it is (views share it)
    // The tensor constant (get_attr target) whose value this is, when the graph does not show it (the value
    // is in the module): `value` is then not known, and the full torch makes reads `<constant>.item()`.
    std::string unseen = {};
};

bool isViewPacket(const Node& n) {
    if (n.target.kind != TargetKind::OpOverload)
        return false;
    const Target& t = n.target;
    if (t.ns == "prims" && t.op == "broadcast_in_dim")
        return true;
    static const std::set<std::string, std::less<>> kViews = {
        "squeeze", "unsqueeze", "alias", "view", "slice", "t", "expand", "as_strided", "permute"};
    return t.ns == "aten" && kViews.count(t.op) && !(t.op == "view" && t.overload == "dtype");
}

double castTo(double v, DType d) {
    if (d == DType::Bool)
        return v != 0 ? 1 : 0;
    if (isIntegral(d))
        return std::trunc(v);
    if (d == DType::Float32)
        return static_cast<double>(static_cast<float>(v));
    return v;
}

class UniformFolder {
public:
    explicit UniformFolder(PassContext& c) : c_(c), g_(c.g) {}

    void run() {
        const std::vector<NodeId> order = g_.liveOrder();
        // symint_nodes: the first node holding each symbolic value (a full's shape can name it). The folder
        // knows the symbolic-int placeholders (insert_placerholder_values); other symbolic ints are known
        // when what they read is (a sym_size of a tensor it cannot fold is not).
        for (NodeId id : order) {
            const Node& n = g_.node(id);
            if (n.outputKind == OutputKind::SymInt && !n.symValue.empty()) {
                if (n.op == NodeOp::Placeholder)
                    symbolic_.insert(id);
                symbolNodes_.emplace(n.symValue, id);
            }
        }
        lastUsers_ = lastUses(order);
        readConstantValues();
        addMulByZeroPeepholes(order);
        for (NodeId id : order)
            visit(id);
        rewrite();
        reportUnseenFulls();
    }

private:
    void addMulByZeroPeepholes(const std::vector<NodeId>& order) {
        for (NodeId id : order) {
            const Node& n = g_.node(id);
            if (!(isAten(n, "mul", "Tensor") || isAten(n, "mul", "Scalar")) || !n.tensor())
                continue;
            bool zeroInt = false;
            for (const Value& a : n.args)
                zeroInt = zeroInt || (a.kind() == ValueKind::Int && a.asInt() == 0);
            if (!zeroInt || !isIntegral(n.tensor()->dtype))
                continue;
            addReplacement(id, Known{0, n.tensor()->dtype, nextStorage_++});
        }
    }

    // Interpreter's user_to_last_uses: for each node, the nodes whose last reader it is.
    std::unordered_map<NodeId, std::vector<NodeId>> lastUses(const std::vector<NodeId>& order) {
        std::unordered_map<NodeId, std::vector<NodeId>> out;
        std::unordered_set<NodeId> seen;
        for (auto it = order.rbegin(); it != order.rend(); ++it)
            g_.node(*it).forEachInput([&](NodeId input) {
                if (seen.insert(input).second)
                    out[*it].push_back(input);
            });
        return out;
    }

    std::optional<Known> valueOf(const Value& v) const {
        switch (v.kind()) {
        case ValueKind::Bool:
            return Known{v.asBool() ? 1.0 : 0.0, DType::Bool, -1};
        case ValueKind::Int:
            return Known{static_cast<double>(v.asInt()), DType::Int64, -1};
        case ValueKind::Float:
            return Known{v.asFloat(), DType::Float32, -1}; // a Python float: the default dtype
        case ValueKind::NodeRef: {
            auto it = env_.find(v.asNode());
            if (it == env_.end())
                return std::nullopt;
            return it->second;
        }
        default:
            return std::nullopt;
        }
    }
    bool anyUnknownInput(const Node& n) const {
        bool unknown = false;
        n.forEachInput(
            [&](NodeId input) { unknown = unknown || (!env_.count(input) && !symbolic_.count(input)); });
        return unknown;
    }
    // The "single-elem attrs" of _deduce_value: a one-element tensor constant is uniform. A get_attr is a
    // constant source, never replaced itself; what copies or views it is.
    void visitConstant(NodeId id, const Node& n) {
        if (!isOneElementTensorConstant(n))
            return;
        const TensorMeta* t = n.tensor();
        if (auto it = constantValues_.find(n.target.text); it != constantValues_.end())
            env_[id] = Known{castTo(it->second, t->dtype), t->dtype, nextStorage_++};
        else
            env_[id] = Known{0, t->dtype, nextStorage_++, n.target.text};
    }
    // tensor_constant_values (addLogGraphFacts): "_tensor_constant0 = -2", one per line.
    void readConstantValues() {
        for (const auto& [key, text] : c_.original.attributes) {
            if (key != "tensor_constant_values")
                continue;
            for (std::string_view line : nonEmptyLines(text)) {
                const size_t eq = line.find(" = ");
                if (eq == std::string_view::npos)
                    continue;
                const std::string value(line.substr(eq + 3));
                constantValues_[std::string(line.substr(0, eq))] = value == "True" ? 1.0
                                                                   : value == "False"
                                                                       ? 0.0
                                                                       : std::strtod(value.c_str(), nullptr);
            }
        }
    }
    bool anySymbolicInput(const Node& n) const {
        bool symbolic = false;
        n.forEachInput([&](NodeId input) { symbolic = symbolic || symbolic_.count(input); });
        return symbolic;
    }

    void visit(NodeId id) {
        const Node& n = g_.node(id);
        if (n.op == NodeOp::CallFunction && n.outputKind == OutputKind::SymInt) {
            if (!anyUnknownInput(n))
                symbolic_.insert(id);
            return;
        }
        if (n.op == NodeOp::GetAttr)
            return visitConstant(id, n);
        if (n.op != NodeOp::CallFunction || n.target.kind != TargetKind::OpOverload)
            return;
        if (isAten(n, "full", "default") && n.args.size() == 2) {
            if (anyUnknownInput(n))
                return;
            const Value& v = n.args[1];
            if (v.kind() != ValueKind::Int && v.kind() != ValueKind::Float && v.kind() != ValueKind::Bool)
                return;
            const TensorMeta* t = n.tensor();
            if (!t)
                return;
            define(id, Known{castTo(valueOf(v)->value, t->dtype), t->dtype, nextStorage_++});
            return;
        }
        if (anyUnknownInput(n))
            return;
        if (isViewPacket(n)) {
            if (auto in = nodeArg(n, 0); in && env_.count(*in))
                define(id, env_.at(*in)); // the same tensor object: its storage is shared
            return;
        }
        if (isAten(n, "scalar_tensor", "default")) {
            const TensorMeta* t = n.tensor();
            auto v = n.args.empty() ? std::nullopt : valueOf(n.args[0]);
            if (t && v)
                define(id, Known{castTo(v->value, t->dtype), t->dtype, nextStorage_++});
            return;
        }
        if (symbolic_.count(id) || anySymbolicInput(n))
            return; // a pointwise op on a symbolic int is not folded
        std::optional<Known> out = pointwise(n);
        if (out) {
            out->storage = nextStorage_++;
            define(id, *out);
        } else if (const std::string constant = unseenInput(n); !constant.empty()) {
            c_.report.notReplayed.push_back("constant_fold_uniform_value: " + describe(n) + " reads " +
                                            constant +
                                            ", a one-element tensor constant whose value the graph does not "
                                            "show; torch folds it into a full");
        } else if (hasTensorInput(n) && c_.rules.recomputable.contains(opKey(n.target))) {
            c_.report.notReplayed.push_back("constant_fold_uniform_value: " + describe(n) +
                                            " reads only constants, and jointscope does not evaluate it");
        }
    }

    // The tensor constant behind one of n's inputs whose value the graph does not show, or "".
    std::string unseenInput(const Node& n) const {
        std::string constant;
        n.forEachInput([&](NodeId input) {
            if (auto it = env_.find(input); it != env_.end() && constant.empty())
                constant = it->second.unseen;
        });
        return constant;
    }

    bool hasTensorInput(const Node& n) const {
        bool any = false;
        n.forEachInput([&](NodeId) { any = true; });
        return any;
    }

    // The pointwise ops the folder runs on one-element tensors, evaluated here in doubles.
    std::optional<Known> pointwise(const Node& n) const {
        const Target& t = n.target;
        const TensorMeta* out = n.tensor();
        if (!out)
            return std::nullopt;
        auto arg = [&](size_t i) { return i < n.args.size() ? valueOf(n.args[i]) : std::nullopt; };
        auto result = [&](double v) { return Known{castTo(v, out->dtype), out->dtype, -1}; };
        const bool copy =
            (t.ns == "prims" && t.op == "convert_element_type") ||
            (t.ns == "aten" && (t.op == "_to_copy" || t.op == "clone" || t.op == "lift_fresh_copy"));
        if (!unseenInput(n).empty()) { // a copy of an unseen value is that value, in the copy's dtype
            auto a = arg(0);
            if (!copy || !a || a->unseen.empty())
                return std::nullopt;
            return Known{0, out->dtype, -1, a->unseen};
        }
        if (t.ns == "prims" && t.op == "convert_element_type") {
            auto a = arg(0);
            return a ? std::optional(result(a->value)) : std::nullopt;
        }
        if (t.ns != "aten")
            return std::nullopt;
        if (t.op == "_to_copy" || t.op == "clone" || t.op == "lift_fresh_copy") {
            auto a = arg(0);
            return a ? std::optional(result(a->value)) : std::nullopt;
        }
        if (t.op == "neg") {
            auto a = arg(0);
            return a ? std::optional(result(-a->value)) : std::nullopt;
        }
        // Unary ops whose float32 result is the double one rounded (sqrt is correctly rounded either way).
        static const std::map<std::string, double (*)(double), std::less<>> kUnary = {
            {"sqrt", [](double v) { return std::sqrt(v); }},
            {"rsqrt", [](double v) { return 1.0 / std::sqrt(v); }},
            {"reciprocal", [](double v) { return 1.0 / v; }},
            {"abs", [](double v) { return std::fabs(v); }},
            {"logical_not", [](double v) { return v == 0 ? 1.0 : 0.0; }},
        };
        if (auto f = kUnary.find(t.op); f != kUnary.end()) {
            auto a = arg(0);
            return a ? std::optional(result(f->second(a->value))) : std::nullopt;
        }
        if (t.op == "bitwise_not") { // ~x: not of a bool, two's complement of an integer
            auto a = arg(0);
            if (!a || !(out->dtype == DType::Bool || isIntegral(out->dtype)))
                return std::nullopt;
            return result(out->dtype == DType::Bool ? double(a->value == 0)
                                                    : double(~static_cast<int64_t>(a->value)));
        }
        static const std::set<std::string, std::less<>> kBinary = {"add",     "sub",     "mul",  "div", "eq",
                                                                   "ne",      "lt",      "le",   "gt",  "ge",
                                                                   "maximum", "minimum", "rsub", "pow"};
        if (!kBinary.count(t.op) || n.args.size() < 2)
            return std::nullopt;
        auto a = arg(0), b = arg(1);
        if (!a || !b)
            return std::nullopt;
        double alpha = 1;
        for (const auto& [k, v] : n.kwargs)
            if (k == "alpha")
                alpha = v.kind() == ValueKind::Int ? static_cast<double>(v.asInt()) : v.asFloat();
        const std::string& op = t.op;
        double r = 0;
        if (op == "add")
            r = a->value + alpha * b->value;
        else if (op == "sub")
            r = a->value - alpha * b->value;
        else if (op == "rsub")
            r = b->value - alpha * a->value;
        else if (op == "mul")
            r = a->value * b->value;
        else if (op == "div") {
            const Value* mode = nullptr;
            for (const auto& [k, v] : n.kwargs)
                if (k == "rounding_mode")
                    mode = &v;
            r = a->value / b->value;
            if (mode && mode->kind() == ValueKind::String)
                r = mode->text() == "floor" ? std::floor(r) : std::trunc(r);
        } else if (op == "pow")
            r = std::pow(a->value, b->value);
        else if (op == "eq")
            r = a->value == b->value;
        else if (op == "ne")
            r = a->value != b->value;
        else if (op == "lt")
            r = a->value < b->value;
        else if (op == "le")
            r = a->value <= b->value;
        else if (op == "gt")
            r = a->value > b->value;
        else if (op == "ge")
            r = a->value >= b->value;
        else if (op == "maximum")
            r = std::max(a->value, b->value);
        else if (op == "minimum")
            r = std::min(a->value, b->value);
        return result(r);
    }

    void define(NodeId id, Known k) {
        env_[id] = k;
        addReplacement(id, k);
        // A node whose every use was folded away is not replaced itself: it becomes dead.
        const Node& n = g_.node(id);
        n.forEachInput([&](NodeId input) { ++replacedUses_[input]; });
        auto it = lastUsers_.find(id);
        if (it == lastUsers_.end())
            return;
        for (NodeId last : it->second)
            if (replacedUses_[last] == g_.users(last).size())
                dropReplacement(last);
    }
    void addReplacement(NodeId id, Known k) {
        if (!replacements_.count(id)) {
            replacementOrder_.push_back(id);
            replacements_[id] = k;
        }
    }
    void dropReplacement(NodeId id) { replacements_.erase(id); }

    // The rewrite in constant_fold_uniform_value: each replaced node becomes a `full` of its shape.
    void rewrite() {
        std::map<int64_t, int> perStorage;
        for (NodeId id : replacementOrder_)
            if (auto it = replacements_.find(id); it != replacements_.end())
                ++perStorage[it->second.storage];
        for (NodeId id : replacementOrder_) {
            auto it = replacements_.find(id);
            if (it == replacements_.end())
                continue;
            const Node& n = g_.node(id);
            const TensorMeta* t = n.tensor();
            if (!t || !contiguous(*t))
                continue;
            if (t->dtype == DType::UInt8 || t->dtype == DType::UInt16 || t->dtype == DType::UInt32 ||
                t->dtype == DType::UInt64)
                continue;
            if (it->second.storage >= 0 && perStorage[it->second.storage] > 1)
                continue;
            std::optional<Value> shape = shapeValue(*t);
            if (!shape)
                continue;
            Value value = it->second.unseen.empty() ? fillValue(n, it->second)
                                                    : Value::opaque(it->second.unseen + ".item()");
            Node full;
            full.op = NodeOp::CallFunction;
            full.target = Target::parseFunction("torch.ops.aten.full.default");
            full.args = {*shape, value};
            full.kwargs = {{"dtype", Value::dtype(t->dtype)},
                           {"layout", Value::layout("strided")},
                           {"device", Value::device(t->device.type, t->device.index)},
                           {"pin_memory", Value::boolean(false)}};
            full.outputKind = OutputKind::Tensor;
            full.outputs = {*t};
            full.meta = n.meta;
            const NodeId fresh = g_.insert(std::move(full), id, /*after=*/true);
            c_.change("constant_fold_uniform_value").replaced.emplace_back(n.name, g_.node(fresh).name);
            g_.replaceAllUses(id, fresh);
            g_.erase(id);
            if (!it->second.unseen.empty()) {
                reportIfNoOpOperand(fresh, it->second.unseen);
                unseenFulls_.push_back(g_.node(fresh).name);
            } else if (value.kind() != ValueKind::NodeRef) {
                const double v =
                    value.kind() == ValueKind::Float ? value.asFloat() : static_cast<double>(value.asInt());
                if (v == 0)
                    zeros.insert(fresh);
                else if (v == 1)
                    ones.insert(fresh);
            }
        }
    }

    // CSE merges fulls of equal values: two of unseen values may be one for torch.
    void reportUnseenFulls() {
        if (unseenFulls_.size() < 2)
            return;
        std::string names;
        for (const std::string& name : unseenFulls_)
            names += (names.empty() ? "" : ", ") + name;
        c_.report.notReplayed.push_back(
            "constant_fold_uniform_value: " + names +
            " are fulls of one-element tensor constants whose values neither the joint graph nor the dynamo "
            "graph shows; torch's CSE merges those of equal values");
    }

    // remove_no_ops drops x + 0, x * 1, ... where the 0 or 1 is a folded full: with the value unseen, a full
    // that such an op reads may or may not be one.
    void reportIfNoOpOperand(NodeId full, const std::string& constant) {
        for (NodeId user : g_.users(full)) {
            const Node& u = g_.node(user);
            for (std::string_view op : {"add", "sub", "mul", "div"})
                if (isAten(u, op, "Tensor"))
                    c_.report.notReplayed.push_back(
                        "constant_fold_uniform_value: " + describe(u) + " reads " + constant +
                        ", a one-element tensor constant whose value the graph does not show; torch drops " +
                        describe(u) + " when the value is 0 or 1");
        }
    }

    static bool contiguous(const TensorMeta& t) {
        if (t.strides.empty())
            return true;
        if (t.strides.size() != t.sizes.size())
            return false;
        return isContiguousFor(t, {}) || symbolicallyContiguous(t);
    }
    // is_contiguous on sizes and strides evaluated with `symbols`; false where one does not evaluate.
    static bool isContiguousFor(const TensorMeta& t, const SymbolBindings& symbols) {
        auto valueOf = [&](const SymInt& s) -> std::optional<int64_t> {
            if (!s.isSymbolic())
                return s.value;
            Expected<int64_t> v = evaluateSymbolic(s.expr, symbols);
            return v ? std::optional<int64_t>(*v) : std::nullopt;
        };
        int64_t expected = 1;
        for (size_t i = t.sizes.size(); i-- > 0;) {
            const std::optional<int64_t> size = valueOf(t.sizes[i]), stride = valueOf(t.strides[i]);
            if (!size || !stride)
                return false;
            if (*size != 1 && *stride != expected)
                return false;
            if (__builtin_mul_overflow(expected, std::max<int64_t>(*size, 1), &expected))
                return false;
        }
        return true;
    }
    // Symbolic sizes and strides (s27, 4*s27**2): contiguous for whatever values the symbols take, tried on
    // three sets of distinct values above 1 (a size of 1 ignores its stride, and torch specializes 0 and 1).
    static bool symbolicallyContiguous(const TensorMeta& t) {
        std::vector<std::string> names;
        for (const std::vector<SymInt>* dims : {&t.sizes, &t.strides})
            for (const SymInt& d : *dims)
                if (d.isSymbolic())
                    for (std::string& name : symbolNames(d.expr))
                        names.push_back(std::move(name));
        if (names.empty())
            return false;
        constexpr int64_t kPrimes[] = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43};
        for (int trial = 0; trial < 3; ++trial) {
            SymbolBindings symbols;
            for (size_t k = 0; k < names.size(); ++k)
                symbols[names[k]] = kPrimes[(k + size_t(trial) * 4) % std::size(kPrimes)] + trial;
            if (!isContiguousFor(t, symbols))
                return false;
        }
        return true;
    }
    std::optional<Value> shapeValue(const TensorMeta& t) const {
        std::vector<Value> dims;
        for (const SymInt& s : t.sizes) {
            if (!s.isSymbolic()) {
                dims.push_back(Value::integer(s.value));
                continue;
            }
            auto it = symbolNodes_.find(s.expr);
            if (it == symbolNodes_.end())
                return std::nullopt; // no node holds the symbol: torch leaves the node alone too
            dims.push_back(Value::nodeRef(it->second));
        }
        return Value::list(std::move(dims));
    }
    // The value the new full takes: a full's own literal (lossless), else the folded value in the dtype's
    // Python type.
    static Value fillValue(const Node& n, const Known& k) {
        if (isAten(n, "full", "default") && n.args.size() == 2)
            return n.args[1];
        if (k.dtype == DType::Bool)
            return Value::boolean(k.value != 0);
        if (isIntegral(k.dtype))
            return Value::integer(static_cast<int64_t>(k.value));
        return Value::real(k.value);
    }

public:
    std::set<NodeId> zeros, ones;

private:
    PassContext& c_;
    WorkGraph& g_;
    std::unordered_map<NodeId, Known> env_;
    std::map<std::string, double> constantValues_; // of the tensor constants the log shows
    std::vector<std::string> unseenFulls_;         // the fulls of constants it does not
    std::unordered_set<NodeId> symbolic_;
    std::unordered_map<std::string, NodeId> symbolNodes_;
    std::unordered_map<NodeId, Known> replacements_;
    std::vector<NodeId> replacementOrder_;
    std::unordered_map<NodeId, size_t> replacedUses_;
    std::unordered_map<NodeId, std::vector<NodeId>> lastUsers_;
    int64_t nextStorage_ = 0;
};

// isScalarValue(e) and e == target: a Python int, float or bool literal.
bool isScalarEqual(const Value& v, double target) {
    switch (v.kind()) {
    case ValueKind::Int:
    case ValueKind::Bool:
        return double(v.asInt()) == target;
    case ValueKind::Float:
        return v.asFloat() == target;
    default:
        return false;
    }
}

// is_mutated: an in-place op (its schema writes its first argument) reads the node.
bool isMutatedInPlace(const WorkGraph& g, NodeId id) {
    for (NodeId user : g.users(id)) {
        const Node& u = g.node(user);
        if (u.target.kind == TargetKind::OpOverload && !u.target.op.empty() && u.target.op.back() == '_' &&
            !u.args.empty() && u.args[0].kind() == ValueKind::NodeRef && u.args[0].asNode() == id)
            return true;
    }
    return false;
}

// prims.convert_element_type(input, dtype) of `out`'s shape, inserted before or after `anchor` by `pass`.
NodeId insertConvert(PassContext& c, std::string_view pass, NodeId input, DType dtype, TensorMeta out,
                     const NodeMeta& meta, NodeId anchor, bool after) {
    out.dtype = dtype;
    Node convert = callNode("torch.ops.prims.convert_element_type.default",
                            {Value::nodeRef(input), Value::dtype(dtype)}, {}, std::move(out), meta);
    const NodeId id = c.g.insert(std::move(convert), anchor, after);
    c.change(pass).added.push_back(c.g.node(id).name);
    return id;
}

// joint_graph.remove_no_ops: x + 0, x - 0, x * 1, x / 1, the 0 and 1 being folded zeros and ones, or (torch
// 2.14 on: Ruleset::removeNoOpsTakesLiterals) literals.
void removeNoOps(PassContext& c, const std::set<NodeId>& zeros, const std::set<NodeId>& ones) {
    WorkGraph& g = c.g;
    const bool literals = c.rules.removeNoOpsTakesLiterals;
    auto replaceNoOp = [&](NodeId id, size_t keep) {
        const Node& n = g.node(id);
        // replace_no_op: a literal argument is fine as long as what replaces the node is a node (before
        // torch 2.14: no literal argument at all).
        if (n.args[keep].kind() != ValueKind::NodeRef)
            return;
        if (!literals && std::any_of(n.args.begin(), n.args.end(),
                                     [](const Value& a) { return a.kind() != ValueKind::NodeRef; }))
            return;
        NodeId replacement = n.args[keep].asNode();
        if (isMutatedInPlace(g, replacement)) // the node was an implicit copy of it
            return;
        const TensorMeta* x = n.tensor();
        const TensorMeta* y = g.node(replacement).tensor();
        if (!x || !y || !sameSizes(x->sizes, y->sizes) || !(x->device == y->device))
            return;
        if (x->dtype != y->dtype) // the same tensor in the node's dtype: converted after the node
            replacement = insertConvert(c, "constant_fold_uniform_value", replacement, x->dtype, *x,
                                        NodeMeta{}, id, /*after=*/true);
        const Node removed = g.node(id);
        c.removed("constant_fold_uniform_value", id);
        g.replaceAllUses(id, replacement);
        g.erase(id);
        Node& kept = g.node(replacement);
        updateMeta(kept.meta, removed.meta);
        kept.outputs = removed.outputs; // meta["val"] is the node's
    };
    auto zero = [&](const Value& v) {
        return (v.kind() == ValueKind::NodeRef && zeros.count(v.asNode())) ||
               (literals && isScalarEqual(v, 0));
    };
    auto one = [&](const Value& v) {
        return (v.kind() == ValueKind::NodeRef && ones.count(v.asNode())) ||
               (literals && isScalarEqual(v, 1));
    };
    auto alphaIsOne = [](const Node& n) {
        for (const auto& [k, v] : n.kwargs)
            if (k == "alpha" && !(v.kind() == ValueKind::Int && v.asInt() == 1))
                return false;
        return true;
    };
    for (std::string_view op : {"add", "sub", "mul", "div"}) {
        for (NodeId id : g.liveOrder()) {
            const Node& n = g.node(id);
            if (!isAten(n, op, "Tensor") || n.args.size() != 2)
                continue;
            if (op == "add" && (zero(n.args[0]) || zero(n.args[1])) && alphaIsOne(n))
                replaceNoOp(id, zero(n.args[0]) ? 1 : 0);
            else if (op == "sub" && zero(n.args[1]) && alphaIsOne(n))
                replaceNoOp(id, 0);
            else if (op == "mul" && (one(n.args[0]) || one(n.args[1])))
                replaceNoOp(id, one(n.args[0]) ? 1 : 0);
            else if (op == "div" && one(n.args[1]))
                replaceNoOp(id, 0);
        }
    }
}

// ---- pattern passes (joint_graph.py early_patterns / pass_patterns; PatternMatcherPass.apply walks the
// candidate nodes last to first) ----

std::optional<std::vector<int64_t>> intList(const Value* v) {
    if (!v || !v->isSequence())
        return std::nullopt;
    std::vector<int64_t> out;
    for (const Value& item : v->items()) {
        if (item.kind() != ValueKind::Int)
            return std::nullopt;
        out.push_back(item.asInt());
    }
    return out;
}

// An inner node of a pattern must have no reader outside it (CallFunction's users=1).
bool onlyReader(const WorkGraph& g, NodeId inner, NodeId outer) {
    return g.users(inner).size() == 1 && g.users(inner)[0] == outer;
}

void eraseMatch(PassContext& c, std::string_view pass, NodeId outer, NodeId replacement,
                std::initializer_list<NodeId> inner) {
    WorkGraph& g = c.g;
    c.removed(pass, outer);
    g.replaceAllUses(outer, replacement);
    g.erase(outer);
    for (NodeId id : inner)
        if (!g.erased(id) && g.users(id).empty()) {
            c.removed(pass, id);
            g.erase(id);
        }
}

// early_patterns: pointless_view, pointless_view_pair, pointless_permute_pair.
void earlyPatterns(PassContext& c) {
    WorkGraph& g = c.g;
    std::vector<NodeId> candidates;
    for (NodeId id : g.liveOrder())
        if (isAten(g.node(id), "view", "default") || isAten(g.node(id), "permute", "default"))
            candidates.push_back(id);
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
        const NodeId id = *it;
        if (g.erased(id))
            continue;
        const Node& n = g.node(id);
        const auto arg = nodeArg(n, 0);
        if (!arg)
            continue;
        const Node& inner = g.node(*arg);
        if (isAten(n, "view", "default")) {
            // Registration order: pointless_view, then pointless_view_pair.
            const TensorMeta* in = inner.tensor();
            if (in && n.args.size() > 1 && shapeArgEquals(g, n.args[1], in->sizes, true)) {
                eraseMatch(c, "pointless_view", id, *arg, {});
                continue;
            }
            if (isAten(inner, "view", "default") && onlyReader(g, *arg, id)) {
                const auto base = nodeArg(inner, 0);
                const TensorMeta* b = base ? g.node(*base).tensor() : nullptr;
                if (b && n.args.size() > 1 && shapeArgEquals(g, n.args[1], b->sizes, true))
                    eraseMatch(c, "pointless_view_pair", id, *base, {*arg});
            }
            continue;
        }
        if (!isAten(inner, "permute", "default") || !onlyReader(g, *arg, id))
            continue;
        const auto perm1 = intList(argument(inner, 1, "dims"));
        const auto perm2 = intList(argument(n, 1, "dims"));
        const auto base = nodeArg(inner, 0);
        if (!perm1 || !perm2 || !base || perm1->size() != perm2->size())
            continue;
        bool identity = true;
        for (size_t i = 0; i < perm2->size() && identity; ++i) {
            const int64_t j = (*perm2)[i];
            identity = j >= 0 && j < static_cast<int64_t>(perm1->size()) &&
                       (*perm1)[static_cast<size_t>(j)] == static_cast<int64_t>(i);
        }
        if (identity)
            eraseMatch(c, "pointless_permute_pair", id, *base, {*arg});
    }
}

// joint_graph.scatter_upon_const_tensor: scatter(full(shape, background), dim, selector, val) with a
// selector of size 1 along dim becomes where(selector.expand(shape) == iota(shape[dim]).view(...), val,
// background).
void scatterUponConstTensor(PassContext& c, NodeId id) {
    WorkGraph& g = c.g;
    const Node scatter = g.node(id);
    const auto fullId = nodeArg(scatter, 0);
    const auto selectorId = nodeArg(scatter, 2);
    if (!fullId || !selectorId || scatter.args.size() < 4 || !onlyReader(g, *fullId, id))
        return;
    const Node& full = g.node(*fullId);
    if (!isAten(full, "full") || full.args.size() < 2)
        return;
    const TensorMeta* out = scatter.tensor();
    const TensorMeta* selector = g.node(*selectorId).tensor();
    if (!out || !selector || !full.args[0].isSequence() || scatter.args[1].kind() != ValueKind::Int)
        return;
    std::vector<SymInt> shape;
    for (const Value& item : full.args[0].items()) {
        std::optional<SymInt> size = symIntOf(g, item);
        if (!size)
            return;
        shape.push_back(std::move(*size));
    }
    int64_t dim = scatter.args[1].asInt();
    const int64_t rank = static_cast<int64_t>(shape.size());
    if (dim < 0)
        dim += rank;
    if (dim < 0 || dim >= rank || static_cast<int64_t>(selector->sizes.size()) != rank)
        return;
    // The extra check compares sizes with plain < and ==: guards, decided on the hints.
    for (int64_t i = 0; i < rank; ++i) {
        const std::optional<int64_t> s = c.facts.guarded(selector->sizes[static_cast<size_t>(i)]);
        const std::optional<int64_t> f = c.facts.guarded(shape[static_cast<size_t>(i)]);
        if (!s || !f) {
            c.report.notReplayed.push_back("scatter_upon_const_tensor: " + describe(scatter) +
                                           " compares symbolic sizes without their hints");
            return;
        }
        if (i == dim ? *s != 1 : *s < *f)
            return;
    }
    const Value& background = full.args[1];
    const Value& val = scatter.args[3];
    auto isNumber = [](const Value& v) {
        return v.kind() == ValueKind::Int || v.kind() == ValueKind::Float || v.kind() == ValueKind::Bool;
    };
    if (!isNumber(background) || !isNumber(val))
        return;
    // torch.where on two Python scalars: the default float dtype if either is a float, else int64; from torch
    // 2.13 .to(dtype) converts it to the full's dtype where that differs.
    const DType whereType = background.kind() == ValueKind::Float || val.kind() == ValueKind::Float
                                ? DType::Float32
                                : DType::Int64;
    const Device& device = selector->device;
    const Value deviceValue = Value::device(device.type, device.index);
    const Value length = full.args[0].items()[static_cast<size_t>(dim)];
    const SymInt& lengthSize = shape[static_cast<size_t>(dim)];
    const std::vector<SymInt>& shapeSizes = shape;
    std::vector<Value> viewShape;
    std::vector<SymInt> viewSizes;
    for (int64_t i = 0; i < rank; ++i) {
        viewShape.push_back(i == dim ? length : Value::integer(1));
        viewSizes.push_back(i == dim ? lengthSize : SymInt{1, {}});
    }
    const NodeMeta& meta = scatter.meta;
    const NodeId iota = g.insert(callNode("torch.ops.prims.iota.default", {length},
                                          {{"start", Value::integer(0)},
                                           {"step", Value::integer(1)},
                                           {"dtype", Value::dtype(DType::Int64)},
                                           {"device", deviceValue},
                                           {"requires_grad", Value::boolean(false)}},
                                          contiguousMeta(DType::Int64, {lengthSize}, device), meta),
                                 id, false);
    const NodeId view =
        g.insert(callNode("torch.ops.aten.view.default", {Value::nodeRef(iota), Value::list(viewShape)}, {},
                          contiguousMeta(DType::Int64, viewSizes, device), meta),
                 id, false);
    TensorMeta expanded = *selector;
    expanded.sizes = shapeSizes;
    const NodeId expand = g.insert(callNode("torch.ops.aten.expand.default",
                                            {Value::nodeRef(*selectorId), full.args[0]}, {}, expanded, meta),
                                   id, false);
    const NodeId eq =
        g.insert(callNode("torch.ops.aten.eq.Tensor", {Value::nodeRef(expand), Value::nodeRef(view)}, {},
                          contiguousMeta(DType::Bool, shapeSizes, device), meta),
                 id, false);
    auto scalar = [&](const Value& v) {
        return g.insert(callNode("torch.ops.aten.scalar_tensor.default", {v},
                                 {{"dtype", Value::dtype(whereType)},
                                  {"layout", Value::layout("strided")},
                                  {"device", deviceValue}},
                                 contiguousMeta(whereType, {}, device), meta),
                        id, false);
    };
    const NodeId other = scalar(background);
    const NodeId self = scalar(val);
    const NodeId where = g.insert(callNode("torch.ops.aten.where.self",
                                           {Value::nodeRef(eq), Value::nodeRef(self), Value::nodeRef(other)},
                                           {}, contiguousMeta(whereType, shapeSizes, device), meta),
                                  id, false);
    NodeId result = where;
    if (whereType != out->dtype && c.rules.scatterUponConstTensorKeepsDtype)
        result = g.insert(callNode("torch.ops.prims.convert_element_type.default",
                                   {Value::nodeRef(where), Value::dtype(out->dtype)}, {},
                                   contiguousMeta(out->dtype, shapeSizes, device), meta),
                          id, false);
    PassChange& change = c.change("scatter_upon_const_tensor");
    for (NodeId added : {iota, view, expand, eq, other, self})
        change.added.push_back(g.node(added).name);
    if (result != where)
        change.added.push_back(g.node(where).name);
    change.replaced.emplace_back(scatter.name, g.node(result).name);
    g.replaceAllUses(id, result);
    g.erase(id);
    if (g.users(*fullId).empty()) {
        change.removed.push_back(full.name);
        g.erase(*fullId);
    }
}

// joint_graph.pointless_convert: convert(convert(x, d1), d2) over floating dtypes becomes convert(x, d2);
// from torch 2.13 only for a float x and d1 no narrower than d2 (emulate_precision_casts off, its default).
void pointlessConvert(PassContext& c, NodeId id) {
    WorkGraph& g = c.g;
    const Node outer = g.node(id);
    const auto innerId = nodeArg(outer, 0);
    if (!innerId || !isPrims(g.node(*innerId), "convert_element_type") || !onlyReader(g, *innerId, id))
        return;
    const Node& inner = g.node(*innerId);
    const auto argId = nodeArg(inner, 0);
    const TensorMeta* arg = argId ? g.node(*argId).tensor() : nullptr;
    const bool narrowingKept = c.rules.pointlessConvertKeepsNarrowing;
    if (!argId || (narrowingKept && !arg) || inner.args.size() < 2 || outer.args.size() < 2 ||
        inner.args[1].kind() != ValueKind::DType || outer.args[1].kind() != ValueKind::DType)
        return;
    auto allowed = [](DType d) {
        return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
    };
    const DType d1 = inner.args[1].asDType(), d2 = outer.args[1].asDType();
    if (!allowed(d1) || !allowed(d2) ||
        (narrowingKept && (!allowed(arg->dtype) || itemSize(d1) < itemSize(d2))))
        return;
    Node repl = outer;
    repl.args = {Value::nodeRef(*argId), outer.args[1]};
    const NodeId replId = g.insert(std::move(repl), id, /*after=*/false);
    PassChange& change = c.change("pointless_convert");
    change.replaced.emplace_back(outer.name, g.node(replId).name);
    g.replaceAllUses(id, replId);
    g.erase(id);
    if (g.users(*innerId).empty()) {
        change.removed.push_back(inner.name);
        g.erase(*innerId);
    }
}

// ---- pad_mm (torch/_inductor/fx_passes/pad_mm.py: mm / bmm / addmm patterns in joint_graph's `patterns`)
// ----

// The matmul's tensor arguments in argument order (addmm: input, mat1, mat2).
std::vector<NodeId> matmulOperands(const Node& n) {
    const size_t count = isAten(n, "addmm", "default") ? 3 : 2;
    std::vector<NodeId> out;
    for (size_t i = 0; i < count; ++i) {
        const std::optional<NodeId> id = nodeArg(n, i);
        if (!id)
            return {};
        out.push_back(*id);
    }
    return out;
}

std::optional<std::string> matmulOp(const Node& n) {
    for (const char* op : {"mm", "bmm", "addmm"})
        if (isAten(n, op, "default"))
            return std::string(op);
    return std::nullopt;
}

// pad_mm's replacement for `id`, as torch made it: its nodes inserted where the matmul was, named by the
// same namespace rule (constant_pad_nd_default, mm_default, slice_tensor), the matmul's meta on each
// (pattern_matcher's _transfer_meta), the matmul's readers moved to the last.
void padMatmul(PassContext& c, NodeId id, const PaddedMatmul& padded, const std::vector<NodeId>& operands) {
    WorkGraph& g = c.g;
    const NodeMeta meta = g.node(id).meta;
    std::vector<NodeId> made;
    std::function<void(Value&)> bind = [&](Value& v) {
        if (v.kind() == ValueKind::NodeRef) {
            const NodeId ref = v.asNode();
            v = Value::nodeRef(ref < operands.size() ? operands[ref] : made[ref - operands.size()]);
        }
        for (Value& item : v.items())
            bind(item);
    };
    PassChange& change = c.change("pad_mm");
    for (Node n : padded.replacement) {
        for (Value& v : n.args)
            bind(v);
        for (auto& kv : n.kwargs)
            bind(kv.second);
        n.meta = meta;
        made.push_back(g.insert(std::move(n), id, /*after=*/false));
        if (made.size() < padded.replacement.size())
            change.added.push_back(g.node(made.back()).name);
    }
    change.replaced.emplace_back(g.node(id).name, g.node(made.back()).name);
    g.replaceAllUses(id, made.back());
    g.erase(id);
}

// Whether `x` and `y` call one target on arguments of one structure, equal literals and inputs that
// `sameInput` pairs.
bool sameCall(const Node& x, const Node& y, const std::function<bool(NodeId, NodeId)>& sameInput) {
    if (x.op != y.op || x.target.text != y.target.text || x.args.size() != y.args.size() ||
        x.kwargs.size() != y.kwargs.size())
        return false;
    std::function<bool(const Value&, const Value&)> same = [&](const Value& u, const Value& v) {
        if (u.kind() != v.kind() || u.items().size() != v.items().size())
            return false;
        if (u.kind() == ValueKind::NodeRef)
            return sameInput(u.asNode(), v.asNode());
        if (u.items().empty())
            return u == v;
        for (size_t i = 0; i < u.items().size(); ++i)
            if (!same(u.items()[i], v.items()[i]))
                return false;
        return true;
    };
    for (size_t i = 0; i < x.args.size(); ++i)
        if (!same(x.args[i], y.args[i]))
            return false;
    for (size_t i = 0; i < x.kwargs.size(); ++i)
        if (x.kwargs[i].first != y.kwargs[i].first || !same(x.kwargs[i].second, y.kwargs[i].second))
            return false;
    return true;
}

// Whether fx_graph_cse would make `a` and `b` one node: the same call on arguments it would make one
// (torch's graphs name an operand after the twin CSE kept: `view` where the joint's matmul read `view_2`).
bool cseTwins(const WorkGraph& g, NodeId a, NodeId b, int depth = 16) {
    if (a == b)
        return true;
    const Node& x = g.node(a);
    const Node& y = g.node(b);
    return depth > 0 && x.op == NodeOp::CallFunction && y.op == NodeOp::CallFunction &&
           sameCall(x, y, [&](NodeId u, NodeId v) { return cseTwins(g, u, v, depth - 1); });
}

bool readsOperandsOf(const WorkGraph& g, const std::vector<NodeId>& operands, const PaddedMatmul& p,
                     const std::vector<PaddedMatmul>& padded,
                     const std::unordered_map<std::string, NodeId>& byName, int depth);

// Whether the joint's node `actual` is the operand torch's graphs name `torchName`: that node or its CSE
// twin, or, where torchName is the slice another padded matmul ends in, that matmul not yet padded (pad_mm
// visits the graph from its end, so a padded product read by a later one is padded after it, and its slice
// then takes the readers the later one's pad had).
bool readsAsTorchNames(const WorkGraph& g, NodeId actual, const std::string& torchName,
                       const std::vector<PaddedMatmul>& padded,
                       const std::unordered_map<std::string, NodeId>& byName, int depth = 4) {
    if (auto it = byName.find(torchName); it != byName.end() && !g.erased(it->second))
        return cseTwins(g, actual, it->second);
    if (depth == 0)
        return false;
    const std::optional<std::string> op = matmulOp(g.node(actual));
    if (!op)
        return false;
    return std::any_of(padded.begin(), padded.end(), [&](const PaddedMatmul& q) {
        return q.op == *op && !q.replacement.empty() && q.replacement.back().name == torchName &&
               readsOperandsOf(g, matmulOperands(g.node(actual)), q, padded, byName, depth - 1);
    });
}

bool readsOperandsOf(const WorkGraph& g, const std::vector<NodeId>& operands, const PaddedMatmul& p,
                     const std::vector<PaddedMatmul>& padded,
                     const std::unordered_map<std::string, NodeId>& byName, int depth) {
    if (p.operands.size() != operands.size())
        return false;
    for (size_t i = 0; i < operands.size(); ++i)
        if (!readsAsTorchNames(g, operands[i], p.operands[i], padded, byName, depth))
            return false;
    return true;
}

// The padded matmul torch's graphs show for `id` (its operands by name, their CSE twins, or products padded
// after it), or null.
const PaddedMatmul* observedPadding(const WorkGraph& g, NodeId id, const std::vector<PaddedMatmul>& padded,
                                    const std::unordered_map<std::string, NodeId>& byName,
                                    std::vector<NodeId>& operands) {
    const Node& n = g.node(id);
    const std::optional<std::string> op = matmulOp(n);
    if (!op)
        return nullptr;
    operands = matmulOperands(n);
    for (const PaddedMatmul& p : padded)
        if (p.op == *op && readsOperandsOf(g, operands, p, padded, byName, 4))
            return &p;
    return nullptr;
}

// ---- misc_patterns (torch/_inductor/fx_passes/misc_patterns.py: register_replacement into `patterns`) ----

// A match of one of the randperm patterns: index_put(x, [idx], y, True) (index_add) or index(x, [idx]), idx
// randperm(x.size(0)) or a slice [:k] of it.
struct RandpermIndex {
    NodeId anchor = kNoNode, randperm = kNoNode, slice = kNoNode;
    bool adds = false;
};

// The randperm node `v` refers to, drawing x.size(0) values: the re-traced pattern's randperm(x.shape[0]).
std::optional<NodeId> randpermOfSize(const WorkGraph& g, const Value& v, const SymInt& rows) {
    if (v.kind() != ValueKind::NodeRef)
        return std::nullopt;
    const Node& n = g.node(v.asNode());
    if (!isAten(n, "randperm", "default") || n.args.size() != 1)
        return std::nullopt;
    for (const auto& [key, value] : n.kwargs)
        if (key != "device" && key != "pin_memory" && key != "layout" &&
            !(key == "dtype" && value.kind() == ValueKind::DType && value.asDType() == DType::Int64))
            return std::nullopt;
    const std::optional<SymInt> size = symIntOf(g, n.args[0]);
    if (!size || !sameSymInt(*size, rows))
        return std::nullopt;
    return v.asNode();
}

// What the slice end of index_add's re-traced pattern, y.size(0), matches (register_replacement's check_fn):
// a number, itself; a size symbol check_fn passes in as an input (sym_args: the symbolic sizes and strides
// of x, then of y, each kept only when statically known different from every one kept before it), any node
// of that value; any other size is traced as sym_size.int(y, 0), which only such a node matches.
bool sliceEndMatches(const WorkGraph& g, const ShapeFacts& facts, const Value& end, NodeId y,
                     const TensorMeta& x, const SymInt& rows) {
    const std::optional<SymInt> k = symIntOf(g, end);
    if (!k || !sameSymInt(*k, rows))
        return false;
    if (!rows.isSymbolic())
        return true;
    std::vector<SymInt> kept;
    auto keep = [&](const SymInt& s) {
        if (s.isSymbolic() && std::all_of(kept.begin(), kept.end(),
                                          [&](const SymInt& a) { return facts.knownDifferent(s, a); }))
            kept.push_back(s);
    };
    std::for_each(x.sizes.begin(), x.sizes.end(), keep);
    std::for_each(x.strides.begin(), x.strides.end(), keep);
    const bool passedIn =
        std::any_of(kept.begin(), kept.end(), [&](const SymInt& a) { return sameSymInt(a, rows); }) ||
        std::all_of(kept.begin(), kept.end(), [&](const SymInt& a) { return facts.knownDifferent(rows, a); });
    if (passedIn)
        return true;
    if (end.kind() != ValueKind::NodeRef)
        return false;
    const Node& size = g.node(end.asNode());
    return isAten(size, "sym_size", "int") && size.args.size() == 2 && nodeArg(size, 0) == y &&
           isScalarEqual(size.args[1], 0);
}

// The pattern at `id` (index_put.default or index.Tensor), tried in torch's registration order: sliced then
// full for index_add, full then sliced for index. The re-traced pattern pins the randperm's size to x.size(0)
// and index_add's slice end to y.size(0) (sliceEndMatches); index's slice end (slice_shape, a
// scalar_workaround) is any.
std::optional<RandpermIndex> matchRandpermIndex(const WorkGraph& g, const ShapeFacts& facts,
                                                const Ruleset& rules, NodeId id) {
    const Node& n = g.node(id);
    const bool adds = isAten(n, "index_put", "default");
    if (!adds && !isAten(n, "index", "Tensor"))
        return std::nullopt;
    if (n.args.size() != (adds ? 4u : 2u) || !n.kwargs.empty() || n.args[1].kind() != ValueKind::List ||
        n.args[1].items().size() != 1 ||
        (adds && !(n.args[3].kind() == ValueKind::Bool && n.args[3].asBool())))
        return std::nullopt;
    const std::optional<NodeId> x = nodeArg(n, 0);
    const TensorMeta* xm = x ? g.node(*x).tensor() : nullptr;
    if (!xm || xm->sizes.empty())
        return std::nullopt;
    const Value& idx = n.args[1].items()[0];
    // `y`: index_add's source, whose size(0) the slice end must match; none for index.
    auto sliced = [&](std::optional<NodeId> y) -> std::optional<RandpermIndex> {
        if (idx.kind() != ValueKind::NodeRef)
            return std::nullopt;
        const Node& s = g.node(idx.asNode());
        if (!isAten(s, "slice", "Tensor") || s.args.size() != 4 || !s.kwargs.empty() ||
            !isScalarEqual(s.args[1], 0) || !isScalarEqual(s.args[2], 0))
            return std::nullopt;
        const std::optional<NodeId> r = randpermOfSize(g, s.args[0], xm->sizes[0]);
        if (!r || g.users(*r).size() != 1) // the randperm is inside the pattern: the slice is its one reader
            return std::nullopt;
        if (y && !sliceEndMatches(g, facts, s.args[3], *y, *xm, g.node(*y).tensor()->sizes[0]))
            return std::nullopt;
        return RandpermIndex{id, *r, idx.asNode(), adds};
    };
    auto full = [&]() -> std::optional<RandpermIndex> {
        const std::optional<NodeId> r = randpermOfSize(g, idx, xm->sizes[0]);
        return r ? std::optional(RandpermIndex{id, *r, kNoNode, adds}) : std::nullopt;
    };
    if (adds) {
        const std::optional<NodeId> y = nodeArg(n, 2);
        const TensorMeta* ym = y ? g.node(*y).tensor() : nullptr;
        if (rules.randpermIndexAdd && ym && !ym->sizes.empty())
            if (auto m = sliced(y))
                return m;
        return rules.randpermIndexAddFull ? full() : std::nullopt;
    }
    if (rules.randpermIndexFull)
        if (auto m = full())
            return m;
    return rules.randpermIndexSlice ? sliced(std::nullopt) : std::nullopt;
}

// The replacement, traced as torch traces it and inserted before the earliest output of the match (the index,
// randperm or slice): a new randperm (and slice), then _unsafe_index(x, [idx]) — for index_add,
// index_put(x, [idx], _unsafe_index(x, [idx]) + y) without accumulation (the index is a permutation).
void replaceRandpermIndex(PassContext& c, const RandpermIndex& m) {
    WorkGraph& g = c.g;
    const Node anchor = g.node(m.anchor);
    const NodeId first = m.slice != kNoNode ? m.slice : m.randperm;
    const std::string pass = "randperm_index" + std::string(m.adds ? "_add" : "") + "_pattern";
    std::vector<std::string> added;
    auto add = [&](Node n) {
        const NodeId id = g.insert(std::move(n), first, false);
        added.push_back(g.node(id).name);
        return id;
    };
    Node randperm = g.node(m.randperm);
    randperm.users.clear();
    // The replacement is traced on x itself: a symbolic x.shape[0] is read off x anew (sym_size.int).
    const Value x = anchor.args[0];
    if (const TensorMeta* xm = g.node(x.asNode()).tensor(); xm && xm->sizes[0].isSymbolic()) {
        Node rows;
        rows.op = NodeOp::CallFunction;
        rows.target = Target::parseFunction("torch.ops.aten.sym_size.int");
        rows.args = {x, Value::integer(0)};
        rows.outputKind = OutputKind::SymInt;
        rows.symValue = xm->sizes[0].expr;
        rows.meta = randperm.meta;
        randperm.args[0] = Value::nodeRef(add(std::move(rows)));
    }
    const NodeId newRandperm = add(std::move(randperm));
    NodeId index = newRandperm;
    if (m.slice != kNoNode) {
        Node slice = g.node(m.slice);
        slice.args[0] = Value::nodeRef(newRandperm);
        index = add(std::move(slice));
    }
    const Value indices = Value::list({Value::nodeRef(index)});
    // index's result is the anchor's; index_add's gathers index.size(0) rows of x
    TensorMeta gathered = *anchor.tensor();
    if (m.adds) {
        std::vector<SymInt> rows = gathered.sizes;
        if (const TensorMeta* picked = g.node(index).tensor(); picked && !picked->sizes.empty())
            rows[0] = picked->sizes[0];
        gathered = contiguousMeta(gathered.dtype, std::move(rows), gathered.device);
    }
    NodeId result =
        add(callNode("torch.ops.aten._unsafe_index.Tensor", {x, indices}, {}, gathered, anchor.meta));
    if (m.adds) {
        const TensorMeta* y = g.node(anchor.args[2].asNode()).tensor();
        const NodeId sum = add(callNode("torch.ops.aten.add.Tensor", {Value::nodeRef(result), anchor.args[2]},
                                        {}, y ? *y : gathered, anchor.meta));
        result = add(callNode("torch.ops.aten.index_put.default", {x, indices, Value::nodeRef(sum)}, {},
                              *anchor.tensor(), anchor.meta));
    }
    added.pop_back(); // the result replaces the anchor
    PassChange& change = c.change(pass);
    change.added.insert(change.added.end(), added.begin(), added.end());
    change.replaced.emplace_back(anchor.name, g.node(result).name);
    g.replaceAllUses(m.anchor, result);
    g.replaceAllUses(first, index);
    // match.erase_nodes: the matched nodes left without readers, last first
    for (NodeId old : {m.anchor, m.slice, m.randperm})
        if (old != kNoNode && !g.erased(old) && g.users(old).empty()) {
            change.removed.push_back(g.node(old).name);
            g.erase(old);
        }
}

// pass_patterns: what jointscope replays (pointless_convert, scatter_upon_const_tensor, pad_mm as torch's
// graphs show it, fuse_attention, the randperm patterns) and what it only recognises.
void passPatterns(PassContext& c, const std::vector<PaddedMatmul>& padded) {
    WorkGraph& g = c.g;
    const std::vector<NodeId> order = g.liveOrder();
    // every fuse_attention pattern holds a matmul's bmm and a softmax's exp: without both nothing matches
    // (and the patterns are not loaded)
    const auto has = [&](std::string_view op) {
        return std::any_of(order.begin(), order.end(),
                           [&](NodeId id) { return isAten(g.node(id), op, "default"); });
    };
    const AttentionPatternSet* attention =
        has("bmm") && has("exp") ? builtinAttentionPatterns(c.rules.name) : nullptr;
    std::unordered_map<std::string, NodeId> byName;
    if (!padded.empty())
        for (NodeId id : order)
            byName.emplace(g.node(id).name, id);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const NodeId id = *it;
        if (g.erased(id))
            continue;
        const Node& n = g.node(id);
        if (isPrims(n, "convert_element_type")) {
            pointlessConvert(c, id);
            continue;
        }
        if (c.rules.scatterUponConstTensor && isAten(n, "scatter", "value")) {
            scatterUponConstTensor(c, id);
            continue;
        }
        if (const std::optional<RandpermIndex> m = matchRandpermIndex(g, c.facts, c.rules, id)) {
            replaceRandpermIndex(c, *m);
            continue;
        }
        std::vector<NodeId> operands;
        if (const PaddedMatmul* p =
                padded.empty() ? nullptr : observedPadding(g, id, padded, byName, operands)) {
            padMatmul(c, id, *p, operands);
            ++c.paddedReplayed;
            continue;
        }
        if (attention)
            fuseAttention(c, *attention, id);
    }
}

// ---- pass_patterns[1]: mul_softmax_pattern, div_softmax_pattern (joint_graph.py) ----

// The dtype an elementwise op on two 0-d tensors (or two tensors of one category) computes in: a float over
// an integer, the wider of two floats.
DType scalarResultType(DType a, DType b) {
    if (isFloatingPoint(a) != isFloatingPoint(b))
        return isFloatingPoint(a) ? a : b;
    return itemSize(a) >= itemSize(b) ? a : b;
}

// `sizes` reduced over `dims` (negative from the end), kept as size-1 dimensions.
std::vector<SymInt> keptReduction(std::vector<SymInt> sizes, const std::vector<int64_t>& dims) {
    const int64_t rank = static_cast<int64_t>(sizes.size());
    for (int64_t d : dims) {
        const int64_t i = d < 0 ? d + rank : d;
        if (i >= 0 && i < rank)
            sizes[static_cast<size_t>(i)] = SymInt{1, {}};
    }
    return sizes;
}

// A match of _partial_softmax_pattern: sub(scaled, amax(scaled, dim, keepdim)), scaled = mul(inp, other) /
// mul(other, inp) / div(inp, other), optionally through convert_element_type(scaled, dtype).
struct ScaledSoftmax {
    NodeId sub = kNoNode, amax = kNoNode, scale = kNoNode, convert = kNoNode;
    bool divides = false;
    Value inp, other;
    std::vector<int64_t> dims;
    Value dimArg, keepdimArg;
    std::optional<DType> dtype;
};

// _other_is_broadcasted_in_dim: the scale is one number along the reduced dimensions.
bool otherBroadcastsInDim(const WorkGraph& g, const ScaledSoftmax& m) {
    if (m.other.kind() == ValueKind::Int || m.other.kind() == ValueKind::Float)
        return true;
    if (m.inp.kind() != ValueKind::NodeRef || m.other.kind() != ValueKind::NodeRef)
        return false;
    const TensorMeta* in = g.node(m.inp.asNode()).tensor();
    const TensorMeta* other = g.node(m.other.asNode()).tensor();
    if (!in || !other || in->sizes.size() < other->sizes.size())
        return false;
    std::vector<SymInt> shape(in->sizes.size() - other->sizes.size(), SymInt{1, {}});
    shape.insert(shape.end(), other->sizes.begin(), other->sizes.end());
    const int64_t rank = static_cast<int64_t>(shape.size());
    for (int64_t d : m.dims) {
        if (d >= rank || d < -rank)
            return false;
        const SymInt& size = shape[static_cast<size_t>(d < 0 ? d + rank : d)];
        if (size.isSymbolic() || size.value != 1)
            return false;
    }
    return true;
}

// The pattern at `subId`, tried as torch registers it: mul (inp * other, then other * inp, each without and
// with a convert), then div.
std::optional<ScaledSoftmax> matchScaledSoftmax(const WorkGraph& g, NodeId subId) {
    const Node& sub = g.node(subId);
    if (!isAten(sub, "sub", "Tensor") || sub.args.size() != 2 || !sub.kwargs.empty())
        return std::nullopt;
    const auto scaledId = nodeArg(sub, 0);
    const auto amaxId = nodeArg(sub, 1);
    if (!scaledId || !amaxId)
        return std::nullopt;
    const Node& amax = g.node(*amaxId);
    if (!isAten(amax, "amax", "default") || amax.args.size() != 3 || !amax.kwargs.empty() ||
        g.users(*amaxId).size() != 1 || nodeArg(amax, 0) != scaledId)
        return std::nullopt;
    const auto dims = intList(&amax.args[1]);
    if (!dims)
        return std::nullopt;
    ScaledSoftmax m;
    m.sub = subId;
    m.amax = *amaxId;
    m.dims = *dims;
    m.dimArg = amax.args[1];
    m.keepdimArg = amax.args[2];
    NodeId scaleId = *scaledId;
    const Node& scaled = g.node(*scaledId);
    if (isPrims(scaled, "convert_element_type")) {
        const auto source = nodeArg(scaled, 0);
        if (scaled.args.size() != 2 || !scaled.kwargs.empty() || !source ||
            scaled.args[1].kind() != ValueKind::DType)
            return std::nullopt;
        m.convert = *scaledId;
        m.dtype = scaled.args[1].asDType();
        scaleId = *source;
    }
    const Node& scale = g.node(scaleId);
    m.scale = scaleId;
    if (scale.args.size() != 2 || !scale.kwargs.empty())
        return std::nullopt;
    if (isAten(scale, "mul", "Tensor")) {
        for (bool reverse : {false, true}) {
            m.inp = scale.args[reverse ? 1 : 0];
            m.other = scale.args[reverse ? 0 : 1];
            if (otherBroadcastsInDim(g, m))
                return m;
        }
        return std::nullopt;
    }
    if (isAten(scale, "div", "Tensor")) {
        m.divides = true;
        m.inp = scale.args[0];
        m.other = scale.args[1];
        if (otherBroadcastsInDim(g, m))
            return m;
    }
    return std::nullopt;
}

// mul_softmax_pattern / div_softmax_pattern's replacement, traced as torch traces it:
// scale(x) - amax(scale(x)) becomes scale(x * sign - amax(x * sign)) (from torch 2.13 kept only where every
// scaled value along dim is finite: where(all(isfinite(scaled)), stable, scaled - amax(scaled))).
void replaceScaledSoftmax(PassContext& c, const ScaledSoftmax& m) {
    WorkGraph& g = c.g;
    const Node& sub = g.node(m.sub);
    const TensorMeta* scaledOut = g.node(m.convert != kNoNode ? m.convert : m.scale).tensor();
    const TensorMeta* inpMeta =
        m.inp.kind() == ValueKind::NodeRef ? g.node(m.inp.asNode()).tensor() : nullptr;
    if (!scaledOut || !inpMeta)
        return;
    const bool scalarOther = m.other.kind() != ValueKind::NodeRef;
    const TensorMeta* otherMeta = scalarOther ? nullptr : g.node(m.other.asNode()).tensor();
    if (!scalarOther && !otherMeta) {
        c.report.notReplayed.push_back(std::string(m.divides ? "div" : "mul") +
                                       "_softmax_pattern: " + describe(sub) + " scales by a symbolic number");
        return;
    }
    const NodeMeta meta = sub.meta;
    const Device device = scaledOut->device;
    const std::vector<SymInt> shape = scaledOut->sizes;
    const std::string pass = m.divides ? "div_softmax_pattern" : "mul_softmax_pattern";
    auto add = [&](std::string_view target, std::vector<Value> args,
                   std::vector<std::pair<std::string, Value>> kwargs, DType dtype,
                   std::vector<SymInt> sizes) {
        const NodeId id = g.insert(callNode(target, std::move(args), std::move(kwargs),
                                            contiguousMeta(dtype, std::move(sizes), device), meta),
                                   m.sub, false);
        c.change(pass).added.push_back(g.node(id).name);
        return id;
    };
    const char* scaleOp = m.divides ? "torch.ops.aten.div.Tensor" : "torch.ops.aten.mul.Tensor";
    const bool keepsNonfinite = c.rules.scaledSoftmaxKeepsNonfinite;
    DType dtype = inpMeta->dtype;
    const DType scaledType =
        m.dtype.value_or(g.node(m.scale).tensor() ? g.node(m.scale).tensor()->dtype : dtype);
    NodeId scaled = kNoNode;
    if (keepsNonfinite) {
        scaled = add(scaleOp, {m.inp, m.other}, {},
                     g.node(m.scale).tensor() ? g.node(m.scale).tensor()->dtype : dtype, shape);
        if (m.dtype && g.node(scaled).tensor()->dtype != *m.dtype)
            scaled = add("torch.ops.prims.convert_element_type.default",
                         {Value::nodeRef(scaled), Value::dtype(*m.dtype)}, {}, *m.dtype, shape);
    }
    Value inp = m.inp;
    if (m.dtype && dtype != *m.dtype) {
        inp = Value::nodeRef(add("torch.ops.prims.convert_element_type.default",
                                 {inp, Value::dtype(*m.dtype)}, {}, *m.dtype, inpMeta->sizes));
        dtype = *m.dtype;
    }
    Value sign, signedOther;
    if (scalarOther) {
        const bool negative = m.other.kind() == ValueKind::Int ? m.other.asInt() < 0 : m.other.asFloat() < 0;
        sign = Value::integer(negative ? -1 : 1);
        signedOther = m.other.kind() == ValueKind::Int
                          ? Value::integer(negative ? -m.other.asInt() : m.other.asInt())
                          : Value::real(negative ? -m.other.asFloat() : m.other.asFloat());
    } else {
        const NodeId one = add("torch.ops.aten.scalar_tensor.default", {Value::integer(1)},
                               {{"dtype", Value::dtype(dtype)},
                                {"device", Value::device(device.type, device.index)},
                                {"pin_memory", Value::boolean(false)}},
                               dtype, {});
        const NodeId positive =
            add("torch.ops.aten.ge.Scalar", {m.other, Value::integer(0)}, {}, DType::Bool, otherMeta->sizes);
        const NodeId minusOne = add("torch.ops.aten.neg.default", {Value::nodeRef(one)}, {}, dtype, {});
        sign = Value::nodeRef(add("torch.ops.aten.where.self",
                                  {Value::nodeRef(positive), Value::nodeRef(one), Value::nodeRef(minusOne)},
                                  {}, dtype, otherMeta->sizes));
    }
    const NodeId signedInp = add("torch.ops.aten.mul.Tensor", {inp, sign}, {}, dtype, shape);
    const NodeId max = add("torch.ops.aten.amax.default", {Value::nodeRef(signedInp), m.dimArg, m.keepdimArg},
                           {}, dtype, g.node(m.amax).tensor() ? g.node(m.amax).tensor()->sizes : shape);
    const NodeId shifted =
        add("torch.ops.aten.sub.Tensor", {Value::nodeRef(signedInp), Value::nodeRef(max)}, {}, dtype, shape);
    DType stableType = dtype;
    if (!scalarOther) {
        stableType = scalarResultType(dtype, otherMeta->dtype);
        signedOther = Value::nodeRef(
            add("torch.ops.aten.mul.Tensor", {sign, m.other}, {}, stableType, otherMeta->sizes));
    }
    NodeId result = add(scaleOp, {Value::nodeRef(shifted), signedOther}, {}, stableType, shape);
    if (keepsNonfinite) {
        const std::vector<SymInt> reduced = keptReduction(shape, m.dims);
        const NodeId max2 =
            add("torch.ops.aten.amax.default", {Value::nodeRef(scaled), m.dimArg, m.keepdimArg}, {},
                scaledType, g.node(m.amax).tensor() ? g.node(m.amax).tensor()->sizes : reduced);
        const NodeId original = add("torch.ops.aten.sub.Tensor",
                                    {Value::nodeRef(scaled), Value::nodeRef(max2)}, {}, scaledType, shape);
        // isfinite(scaled) = (scaled == scaled) * (abs(scaled) != inf); all(x, dim) = !any(!x, dim)
        const NodeId magnitude =
            add("torch.ops.aten.abs.default", {Value::nodeRef(scaled)}, {}, scaledType, shape);
        const NodeId notInf =
            add("torch.ops.aten.ne.Scalar",
                {Value::nodeRef(magnitude), Value::real(std::numeric_limits<double>::infinity())}, {},
                DType::Bool, shape);
        const NodeId notNan = add("torch.ops.aten.eq.Tensor",
                                  {Value::nodeRef(scaled), Value::nodeRef(scaled)}, {}, DType::Bool, shape);
        const NodeId finite = add("torch.ops.aten.mul.Tensor",
                                  {Value::nodeRef(notNan), Value::nodeRef(notInf)}, {}, DType::Bool, shape);
        const NodeId nonfinite =
            add("torch.ops.aten.logical_not.default", {Value::nodeRef(finite)}, {}, DType::Bool, shape);
        const NodeId anyNonfinite =
            add("torch.ops.aten.any.dims", {Value::nodeRef(nonfinite), m.dimArg, Value::boolean(true)}, {},
                DType::Bool, reduced);
        const NodeId allFinite = add("torch.ops.aten.logical_not.default", {Value::nodeRef(anyNonfinite)}, {},
                                     DType::Bool, reduced);
        result = add("torch.ops.aten.where.self",
                     {Value::nodeRef(allFinite), Value::nodeRef(result), Value::nodeRef(original)}, {},
                     scalarResultType(stableType, scaledType), shape);
    }
    PassChange& change = c.change(pass);
    change.added.pop_back(); // the result replaces the sub
    change.replaced.emplace_back(sub.name, g.node(result).name);
    g.replaceAllUses(m.sub, result);
    g.erase(m.sub);
    for (NodeId inner : {m.amax, m.convert, m.scale})
        if (inner != kNoNode && !g.erased(inner) && g.users(inner).empty()) {
            change.removed.push_back(g.node(inner).name);
            g.erase(inner);
        }
}

// pass_patterns[1], after pass_patterns[0] (a pattern pass visits the nodes it found, last first).
void softmaxPatterns(PassContext& c) {
    WorkGraph& g = c.g;
    const std::vector<NodeId> order = g.liveOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it)
        if (!g.erased(*it))
            if (const std::optional<ScaledSoftmax> m = matchScaledSoftmax(g, *it))
                replaceScaledSoftmax(c, *m);
}

// ---- replace_random (torch/_inductor/fx_passes/replace_random.py) ----

std::optional<std::pair<std::string, int64_t>> deviceOf(const Node& n) {
    for (const auto& [k, v] : n.kwargs)
        if (k == "device" && v.kind() == ValueKind::Device)
            return std::pair(v.text(), v.deviceIndex());
    if (const TensorMeta* t = n.tensor(); t && !t->device.type.empty())
        return std::pair(t->device.type, t->device.index);
    return std::pair(std::string("cpu"), int64_t(-1));
}

void replaceRandom(PassContext& c) {
    WorkGraph& g = c.g;
    std::vector<NodeId> candidates;
    for (NodeId id : g.liveOrder()) {
        const Node& n = g.node(id);
        if (isAten(n, "rand") || isAten(n, "randn"))
            candidates.push_back(id);
    }
    std::vector<NodeId> seeds;
    for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {
        const NodeId id = *it;
        const Node n = g.node(id);
        bool skip = n.target.overload != "default" && n.target.overload != "generator";
        const TensorMeta* t = n.tensor();
        std::optional<DType> dtype;
        for (const auto& [k, v] : n.kwargs) {
            if (k == "generator" && !v.isNone())
                skip = true;
            if (k == "pin_memory" && v.kind() == ValueKind::Bool && v.asBool())
                skip = true;
            if (k == "dtype" && v.kind() == ValueKind::DType)
                dtype = v.asDType();
        }
        if (skip || !t || n.args.empty())
            continue;
        const auto device = deviceOf(n);
        Node seed;
        seed.op = NodeOp::CallFunction;
        seed.target = Target::parseFunction("torch.ops.prims.inductor_seed.default");
        seed.args = {Value::device(device->first, device->second)};
        seed.outputKind = OutputKind::Tensor;
        TensorMeta seedMeta;
        seedMeta.dtype = DType::Int64;
        seedMeta.device = t->device;
        seed.outputs = {seedMeta};
        seed.meta = n.meta;
        const NodeId seedId = g.insert(std::move(seed), id, /*after=*/false);
        Node random;
        random.op = NodeOp::CallFunction;
        random.target = Target::parseFunction("torch.ops.prims.inductor_random.default");
        random.args = {n.args[0], Value::nodeRef(seedId), Value::string(n.target.op)};
        random.outputKind = OutputKind::Tensor;
        random.outputs = n.outputs;
        random.outputs[0].dtype = DType::Float32; // inductor_random draws float32; .to(dtype) converts
        random.meta = n.meta;
        const NodeId randomId = g.insert(std::move(random), id, /*after=*/false);
        NodeId drawn = randomId;
        if (dtype && *dtype != DType::Float32)
            drawn = insertConvert(c, "replace_random", randomId, *dtype, *t, n.meta, id, /*after=*/false);
        c.change("replace_random").replaced.emplace_back(n.name, g.node(randomId).name);
        g.replaceAllUses(id, drawn);
        g.erase(id);
        seeds.push_back(seedId);
    }
    if (seeds.empty())
        return;
    // fuse_seed_creation_pass: one inductor_seeds per device, looked up by index, in graph order.
    std::map<std::pair<std::string, int64_t>, std::vector<NodeId>> byDevice;
    std::vector<std::pair<std::string, int64_t>> deviceOrder;
    for (NodeId id : g.liveOrder()) {
        const Node& n = g.node(id);
        if (!isPrims(n, "inductor_seed"))
            continue;
        const auto key = std::pair(n.args[0].text(), n.args[0].deviceIndex());
        if (!byDevice.count(key))
            deviceOrder.push_back(key);
        byDevice[key].push_back(id);
    }
    for (const auto& key : deviceOrder) {
        const std::vector<NodeId>& list = byDevice[key];
        Node combined;
        combined.op = NodeOp::CallFunction;
        combined.target = Target::parseFunction("torch.ops.prims.inductor_seeds.default");
        combined.args = {Value::integer(static_cast<int64_t>(list.size())),
                         Value::device(key.first, key.second)};
        combined.outputKind = OutputKind::Tensor;
        TensorMeta m = g.node(list[0]).outputs.empty() ? TensorMeta{} : g.node(list[0]).outputs[0];
        m.sizes = {SymInt{static_cast<int64_t>(list.size()), {}}};
        m.strides = {SymInt{1, {}}};
        combined.outputs = {m};
        if (c.rules.fusedSeedsKeepMeta)
            combined.meta = g.node(list[0]).meta;
        const NodeId seedsId = g.insert(std::move(combined), list[0], /*after=*/false);
        c.change("replace_random").added.push_back(g.node(seedsId).name);
        for (size_t i = 0; i < list.size(); ++i) {
            Node lookup;
            lookup.op = NodeOp::CallFunction;
            lookup.target = Target::parseFunction("torch.ops.prims.inductor_lookup_seed.default");
            lookup.args = {Value::nodeRef(seedsId), Value::integer(static_cast<int64_t>(i))};
            lookup.outputKind = OutputKind::Tensor;
            lookup.outputs = g.node(list[i]).outputs;
            lookup.meta = g.node(list[i]).meta;
            const NodeId lookupId = g.insert(std::move(lookup), list[i], /*after=*/false);
            c.change("replace_random").added.push_back(g.node(lookupId).name);
            g.replaceAllUses(list[i], lookupId);
            g.erase(list[i]);
        }
    }
}

// ---- tensorify_python_scalars (torch/fx/passes/_tensorify_python_scalars.py) ----

// SUPPORTED_OPS (the ruleset's tensorify_ops): a tensor op that may read a SymFloat, and the overload that
// reads a tensor in its place.
std::optional<std::string_view> tensorOverload(const Ruleset& rules, const Node& n) {
    auto it = rules.tensorifyOps.find(n.target.text);
    return it != rules.tensorifyOps.end() ? std::optional<std::string_view>(it->second) : std::nullopt;
}

// get_computation_dtype: half types compute in float32.
DType computationDType(DType d) {
    return d == DType::Float16 || d == DType::BFloat16 ? DType::Float32 : d;
}

// A float input read as a Python scalar (_local_scalar_dense: a SymFloat zfN) and fed to tensor ops becomes a
// float64 tensor those ops read. Only a bare symbol is replayed; an expression of symbols (torch interprets
// it with tensor ops) is reported.
// A sympy expression read back from the text torch prints ("1.0 - zf7", "2.0*ToFloat(s53)",
// "OpaqueUnaryFn_sqrt(FloatTrueDiv(2.0, zf36))") into sympy's own form, whose arguments _sympy_interp walks:
// Add and Mul hold their number first (Add.flatten and Mul.flatten put the coefficient in front), a - b is
// Add(a, Mul(-1, b)). Two or more non-number terms are read only when they are symbols of one kind, which
// sympy sorts by name; other mixes (sorted by keys not read here) are not read.
struct SympyExpr {
    enum class Kind { Integer, Float, Symbol, Call, Add, Mul };
    Kind kind = Kind::Symbol;
    std::string name; // the symbol or function
    double number = 0;
    std::vector<SympyExpr> args;

    bool isNumber() const { return kind == Kind::Integer || kind == Kind::Float; }
    // sympy's structural identity, the key of torch's hash consing.
    std::string key() const {
        switch (kind) {
        case Kind::Integer:
            return std::to_string(static_cast<int64_t>(number));
        case Kind::Float: {
            char buffer[32];
            const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, number);
            return ec == std::errc() ? std::string(buffer, end) + "f" : std::string("nan");
        }
        case Kind::Symbol:
            return name;
        default:
            break;
        }
        std::string text = kind == Kind::Add ? "Add(" : kind == Kind::Mul ? "Mul(" : name + "(";
        for (size_t i = 0; i < args.size(); ++i)
            text += (i ? "," : "") + args[i].key();
        return text + ")";
    }
};

class SympyReader {
public:
    static std::optional<SympyExpr> read(std::string_view text) {
        SympyReader r(text);
        std::optional<SympyExpr> e = r.sum();
        r.skipSpaces();
        return e && r.pos_ == r.text_.size() ? e : std::nullopt;
    }

private:
    explicit SympyReader(std::string_view text) : text_(text) {}

    void skipSpaces() {
        while (pos_ < text_.size() && text_[pos_] == ' ')
            ++pos_;
    }
    bool eat(char ch) {
        skipSpaces();
        if (pos_ < text_.size() && text_[pos_] == ch &&
            !(ch == '*' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*')) {
            ++pos_;
            return true;
        }
        return false;
    }
    static SympyExpr number(SympyExpr::Kind kind, double v) {
        SympyExpr e;
        e.kind = kind;
        e.number = v;
        return e;
    }
    static SympyExpr negated(SympyExpr e) {
        if (e.isNumber()) {
            e.number = -e.number;
            return e;
        }
        if (e.kind == SympyExpr::Kind::Mul && e.args.front().isNumber()) {
            e.args.front().number = -e.args.front().number;
            return e;
        }
        SympyExpr m;
        m.kind = SympyExpr::Kind::Mul;
        m.args = {number(SympyExpr::Kind::Integer, -1), std::move(e)};
        return m;
    }
    // Add(...) or Mul(...) of `parts` as sympy builds it: nested ones flattened, the number first.
    static std::optional<SympyExpr> flattened(SympyExpr::Kind kind, std::vector<SympyExpr> parts) {
        std::vector<SympyExpr> numbers, others;
        for (SympyExpr& p : parts) {
            if (p.kind == kind) {
                for (SympyExpr& inner : p.args)
                    (inner.isNumber() ? numbers : others).push_back(std::move(inner));
            } else {
                (p.isNumber() ? numbers : others).push_back(std::move(p));
            }
        }
        if (numbers.size() > 1)
            return std::nullopt;                         // sympy would have folded the numbers
        if (others.size() > 1 &&
            !(kind == SympyExpr::Kind::Mul ? sortFactors(others) : sortSymbols(others))) {
            // sorted by keys not read here
            SympyExpr unordered;
            unordered.kind = SympyExpr::Kind::Call;
            unordered.name = kind == SympyExpr::Kind::Add ? "UnorderedAdd" : "UnorderedMul";
            unordered.args = std::move(numbers);
            std::move(others.begin(), others.end(), std::back_inserter(unordered.args));
            return unordered;
        }
        if (others.empty())
            return numbers.front();
        if (numbers.empty() && others.size() == 1)
            return others.front();
        SympyExpr e;
        e.kind = kind;
        e.args = std::move(numbers);
        std::move(others.begin(), others.end(), std::back_inserter(e.args));
        return e;
    }
    // Basic.compare's order for plain symbols of one kind (a product of sizes, s27*s77): by name, as Python
    // compares strings. Symbols of different kinds (s, u, zf) carry different assumptions, which sympy
    // compares first; those and any other term are not sorted here.
    static bool sortSymbols(std::vector<SympyExpr>& terms) {
        auto prefix = [](const std::string& name) {
            return name.substr(0, name.find_first_of("0123456789"));
        };
        for (const SympyExpr& t : terms)
            if (t.kind != SympyExpr::Kind::Symbol || prefix(t.name) != prefix(terms.front().name))
                return false;
        std::sort(terms.begin(), terms.end(),
                  [](const SympyExpr& a, const SympyExpr& b) { return a.name < b.name; });
        return true;
    }
    // A product's factors in sympy's order where it is known: symbols of one kind by name, then one factor
    // that is no symbol (a power, FloorDiv, Max, ...: 2*s27*(s77//2), s27*Max(1, s53), zf5*ToFloat(s27)).
    static bool sortFactors(std::vector<SympyExpr>& factors) {
        const auto rest = std::stable_partition(factors.begin(), factors.end(), [](const SympyExpr& f) {
            return f.kind == SympyExpr::Kind::Symbol;
        });
        if (factors.end() - rest > 1)
            return false;
        std::vector<SympyExpr> symbols(std::make_move_iterator(factors.begin()),
                                       std::make_move_iterator(rest));
        const bool sorted = symbols.size() < 2 || sortSymbols(symbols);
        std::move(symbols.begin(), symbols.end(), factors.begin());
        return sorted;
    }
    std::optional<SympyExpr> sum() {
        std::vector<SympyExpr> terms;
        std::optional<SympyExpr> first = product();
        if (!first)
            return std::nullopt;
        terms.push_back(std::move(*first));
        for (;;) {
            const bool plus = eat('+');
            if (!plus && !eat('-'))
                break;
            std::optional<SympyExpr> t = product();
            if (!t)
                return std::nullopt;
            terms.push_back(plus ? std::move(*t) : negated(std::move(*t)));
        }
        return terms.size() == 1 ? std::optional(std::move(terms.front()))
                                 : flattened(SympyExpr::Kind::Add, std::move(terms));
    }
    std::optional<SympyExpr> product() {
        std::vector<SympyExpr> factors;
        do {
            std::optional<SympyExpr> f = unary();
            if (!f)
                return std::nullopt;
            factors.push_back(std::move(*f));
        } while (eat('*'));
        skipSpaces();
        if (text_.substr(pos_, 2) == "//") { // sympy prints FloorDiv(a, b) as ((a)//b), parenthesized
            pos_ += 2;
            std::optional<SympyExpr> divisor = unary();
            if (!divisor || factors.size() != 1)
                return std::nullopt;
            SympyExpr quotient;
            quotient.kind = SympyExpr::Kind::Call;
            quotient.name = "FloorDiv";
            quotient.args = {std::move(factors.front()), std::move(*divisor)};
            return quotient;
        }
        if (pos_ < text_.size() && text_[pos_] == '/')
            return std::nullopt; // a quotient: not read
        return factors.size() == 1 ? std::optional(std::move(factors.front()))
                                   : flattened(SympyExpr::Kind::Mul, std::move(factors));
    }
    std::optional<SympyExpr> unary() {
        if (eat('-')) {
            std::optional<SympyExpr> e = unary();
            return e ? std::optional(negated(std::move(*e))) : std::nullopt;
        }
        std::optional<SympyExpr> base = atom();
        skipSpaces();
        if (!base || text_.substr(pos_, 2) != "**")
            return base;
        pos_ += 2;
        std::optional<SympyExpr> exponent = unary();
        if (!exponent)
            return std::nullopt;
        SympyExpr power; // read, not interpreted (pow_by_natural vs pow, and sympy's order around it)
        power.kind = SympyExpr::Kind::Call;
        power.name = "Pow";
        power.args = {std::move(*base), std::move(*exponent)};
        return power;
    }
    std::optional<SympyExpr> atom() {
        skipSpaces();
        if (eat('(')) {
            std::optional<SympyExpr> e = sum();
            return e && eat(')') ? e : std::nullopt;
        }
        const size_t begin = pos_;
        while (pos_ < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                text_[pos_] == '.' ||
                ((text_[pos_] == '-' || text_[pos_] == '+') && pos_ > begin && (text_[pos_ - 1] == 'e') &&
                 std::isdigit(static_cast<unsigned char>(text_[begin])))))
            ++pos_;
        const std::string_view word = text_.substr(begin, pos_ - begin);
        if (word.empty())
            return std::nullopt;
        if (std::isdigit(static_cast<unsigned char>(word.front()))) {
            const std::string s(word);
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            if (end != s.c_str() + s.size())
                return std::nullopt;
            const bool integral = s.find_first_of(".eE") == std::string::npos;
            return number(integral ? SympyExpr::Kind::Integer : SympyExpr::Kind::Float, v);
        }
        SympyExpr e;
        e.name = std::string(word);
        if (!eat('('))
            return e;
        e.kind = SympyExpr::Kind::Call;
        if (eat(')'))
            return e;
        do {
            std::optional<SympyExpr> a = sum();
            if (!a)
                return std::nullopt;
            e.args.push_back(std::move(*a));
        } while (eat(','));
        return eat(')') ? std::optional(std::move(e)) : std::nullopt;
    }

    std::string_view text_;
    size_t pos_ = 0;
};

// _sympy_interp (tensorify_python_scalars): a float expression of symbols as tensor ops
// (TensorReferenceAnalysis), each subexpression made once (hash-consed by sympy's identity), each number
// made anew where it is met (torch's "cache constants" overwrites), a float symbol the float64 tensor of its
// .item() source, an integer symbol scalar_tensor(the node that holds it).
class SympyTensorInterpreter {
public:
    SympyTensorInterpreter(PassContext& c, std::map<std::string, NodeId>& tensorOf, NodeId& anchor)
        : c_(c), tensorOf_(tensorOf), anchor_(anchor) {}

    // What interpreting an expression comes to. TensorReferenceAnalysis raises NotImplementedError for some
    // functions (int_truediv, mod, round_decimal) once their arguments are made; tensorify then leaves the op
    // reading the SymFloat as it is.
    enum class Outcome { Made, TorchRaises, Unreadable };
    struct Result {
        Outcome outcome = Outcome::Unreadable;
        NodeId node = kNoNode; // the tensor, when made
    };

    // Without making anything: what interpret would come to.
    Outcome check(std::string_view text) const {
        const std::optional<SympyExpr> e = SympyReader::read(trimSpaces(text));
        return e ? walk(*e, false).outcome : Outcome::Unreadable;
    }
    // Only for text check() did not find Unreadable.
    Result interpret(std::string_view text) { return walk(*SympyReader::read(trimSpaces(text)), true); }

private:
    static bool torchRaises(std::string_view fn) {
        return fn == "IntTrueDiv" || fn == "Mod" || fn == "RoundDecimal";
    }
    static Result made(NodeId id) { return {Outcome::Made, id}; }
    // What torch interprets though we do not make it (a sum or product whose terms sympy orders by keys not
    // read here, functions sympy_interp's handlers map that tensorify never needs made whole here), given its
    // parts are read.
    static bool interpretedByTorch(const SympyExpr& e) {
        static const std::set<std::string_view, std::less<>> kReadOnly = {
            "UnorderedAdd", "UnorderedMul", "Max",      "Min",     "TruncToInt", "FloorToInt",
            "CeilToInt",    "RoundToInt",   "floor",    "ceiling", "CleanDiv",   "Abs",
            "PowByNatural", "TruncToFloat", "Identity", "Where"};
        if (e.kind == SympyExpr::Kind::Call && !handler(e.name) && !kReadOnly.count(e.name) &&
            !torchRaises(e.name))
            return false;
        return std::all_of(e.args.begin(), e.args.end(),
                           [](const SympyExpr& a) { return interpretedByTorch(a); });
    }

    // The aten op of a sympy function torch prints as a call, and how many arguments it takes.
    static std::optional<std::pair<std::string_view, size_t>> handler(std::string_view fn) {
        static const std::map<std::string_view, std::pair<std::string_view, size_t>, std::less<>> kCalls = {
            {"FloatTrueDiv", {"torch.ops.aten.true_divide.Tensor", 2}},
            {"FloatPow", {"torch.ops.aten.pow.Tensor_Tensor", 2}},
            {"Pow", {"torch.ops.aten.pow.Tensor_Tensor", 2}}, // pow_by_natural, pow: the same op
            {"FloorDiv", {"torch.ops.aten.div.Tensor_mode", 2}},
            {"ToFloat", {"torch.ops.prims.convert_element_type.default", 1}},
        };
        if (auto it = kCalls.find(fn); it != kCalls.end())
            return it->second;
        static const std::map<std::string_view, std::string_view, std::less<>> kUnary = {
            {"sqrt", "torch.ops.aten.sqrt.default"}, {"exp", "torch.ops.aten.exp.default"},
            {"log", "torch.ops.aten.log.default"},   {"log2", "torch.ops.aten.log2.default"},
            {"cos", "torch.ops.aten.cos.default"},   {"sin", "torch.ops.aten.sin.default"},
            {"tan", "torch.ops.aten.tan.default"},   {"cosh", "torch.ops.aten.cosh.default"},
            {"sinh", "torch.ops.aten.sinh.default"}, {"tanh", "torch.ops.aten.tanh.default"},
            {"acos", "torch.ops.aten.acos.default"}, {"asin", "torch.ops.aten.asin.default"},
            {"atan", "torch.ops.aten.atan.default"}};
        constexpr std::string_view kOpaque = "OpaqueUnaryFn_";
        if (fn.substr(0, kOpaque.size()) == kOpaque)
            if (auto it = kUnary.find(fn.substr(kOpaque.size())); it != kUnary.end())
                return std::pair{it->second, size_t(1)};
        return std::nullopt;
    }
    // The node that holds integer symbol `name` (expr_to_sym_proxy: the first whose value it is).
    std::optional<NodeId> symIntNode(const std::string& name) const {
        for (NodeId id : c_.g.liveOrder()) {
            const Node& n = c_.g.node(id);
            if (n.outputKind == OutputKind::SymInt && trimSpaces(n.symValue) == name)
                return id;
        }
        return std::nullopt;
    }

    // With `build`, the tensor standing for `e` (made now if not yet); without, what making it would come to
    // (Made with no node). Arguments are made left to right, and the first raise stops the walk, as torch's
    // recursion does.
    Result walk(const SympyExpr& e, bool build) const {
        using Kind = SympyExpr::Kind;
        if (e.isNumber()) {
            if (!build)
                return made(kNoNode);
            const bool integral = e.kind == Kind::Integer;
            const DType dtype = integral ? DType::Int64 : DType::Float64;
            return made(
                add("torch.ops.aten.scalar_tensor.default",
                    {integral ? Value::integer(static_cast<int64_t>(e.number)) : Value::real(e.number)},
                    {{"dtype", Value::dtype(dtype)}}, dtype));
        }
        const std::string key = e.key();
        if (auto it = tensorOf_.find(key); it != tensorOf_.end())
            return made(it->second);
        if (e.kind == Kind::Symbol) {
            const std::optional<NodeId> holder = symIntNode(e.name);
            if (!holder)
                return {};
            if (!build)
                return made(kNoNode);
            return made(remember(key, add("torch.ops.aten.scalar_tensor.default", {Value::nodeRef(*holder)},
                                          {}, DType::Float32)));
        }
        std::string_view target;
        const bool raises = e.kind == Kind::Call && torchRaises(e.name);
        if (e.kind == Kind::Add)
            target = "torch.ops.aten.add.Tensor";
        else if (e.kind == Kind::Mul)
            target = "torch.ops.aten.mul.Tensor";
        else if (const auto op = handler(e.name); op && op->second == e.args.size())
            target = op->first;
        else if (!raises)
            return {};
        std::vector<NodeId> args;
        for (const SympyExpr& a : e.args) {
            const Result arg = walk(a, build);
            if (arg.outcome == Outcome::Unreadable && raises && interpretedByTorch(a))
                return {Outcome::TorchRaises, kNoNode}; // only the names of what torch made and swept differ
            if (arg.outcome != Outcome::Made)
                return arg;
            args.push_back(arg.node);
        }
        if (raises)
            return {Outcome::TorchRaises, kNoNode};
        if (!build)
            return made(kNoNode);
        auto dtypeOf = [&](NodeId id) { return c_.g.node(id).tensor()->dtype; };
        if (e.kind == Kind::Call && e.name == "ToFloat")
            return made(remember(key, add(target, {Value::nodeRef(args[0]), Value::dtype(DType::Float64)}, {},
                                          DType::Float64)));
        // Add and Mul are associative: ((a + b) + c)
        NodeId acc = args[0];
        DType dtype = dtypeOf(acc);
        if (args.size() == 1) {
            dtype = isFloatingPoint(dtype) ? dtype : DType::Float32;
            return made(remember(key, add(target, {Value::nodeRef(acc)}, {}, dtype)));
        }
        for (size_t i = 1; i < args.size(); ++i) {
            dtype = scalarResultType(dtype, dtypeOf(args[i]));
            if (target == "torch.ops.aten.true_divide.Tensor" && !isFloatingPoint(dtype))
                dtype = DType::Float32;
            std::vector<std::pair<std::string, Value>> kwargs;
            if (target == "torch.ops.aten.div.Tensor_mode")
                kwargs.emplace_back("rounding_mode", Value::string("floor"));
            acc = add(target, {Value::nodeRef(acc), Value::nodeRef(args[i])}, std::move(kwargs), dtype);
        }
        return made(remember(key, acc));
    }
    NodeId add(std::string_view target, std::vector<Value> args,
               std::vector<std::pair<std::string, Value>> kwargs, DType dtype) const {
        const NodeId id = c_.g.insert(callNode(target, std::move(args), std::move(kwargs),
                                               contiguousMeta(dtype, {}, Device{"cpu", -1}), NodeMeta{}),
                                      anchor_, true);
        c_.change("tensorify_python_scalars").added.push_back(c_.g.node(id).name);
        anchor_ = id;
        return id;
    }
    NodeId remember(const std::string& key, NodeId id) const {
        tensorOf_[key] = id;
        return id;
    }

    PassContext& c_;
    std::map<std::string, NodeId>& tensorOf_;
    NodeId& anchor_;
};

// tensorify's last sweep: a symbolic value still read whose symbols are all floats (one an op could not
// take as a tensor: clamp_min under torch 2.14 and older) becomes the value it has at the hints
// (guard_scalar: torch guards on it), and its node goes.
void specializeFloats(PassContext& c) {
    WorkGraph& g = c.g;
    const FloatSymbolBindings floats = floatSymbolHints(c.original.attributes);
    if (floats.empty())
        return;
    const SymbolBindings ints = symbolHints(c.original.attributes);
    const std::vector<NodeId> live = g.liveOrder();
    for (auto it = live.rbegin(); it != live.rend(); ++it) {
        const Node& n = g.node(*it);
        const bool symbolic = n.outputKind == OutputKind::SymFloat || n.outputKind == OutputKind::SymInt;
        if (!symbolic || n.op == NodeOp::Placeholder || g.users(*it).empty() || n.symValue.empty())
            continue;
        const std::vector<std::string> symbols = symbolNames(n.symValue);
        if (symbols.empty() || !std::all_of(symbols.begin(), symbols.end(),
                                            [](const std::string& s) { return s.starts_with("zf"); }))
            continue;
        const std::optional<double> v = evaluateFloatSymbolic(n.symValue, ints, floats);
        if (!v)
            continue;
        g.replaceAllUsesWithValue(*it, n.outputKind == OutputKind::SymFloat
                                           ? Value::real(*v)
                                           : Value::integer(static_cast<int64_t>(*v)));
        c.removed("tensorify_python_scalars", *it);
        g.erase(*it);
    }
}

void tensorifyPythonScalars(PassContext& c) {
    WorkGraph& g = c.g;
    std::map<std::string, NodeId> tensorOf; // float symbol (or expression) -> the float64 tensor for it
    NodeId anchor = kNoNode;                // new nodes go after the node visited, in order
    SympyTensorInterpreter sympy(c, tensorOf, anchor);
    const std::vector<NodeId> order = g.liveOrder();
    for (NodeId id : order) {
        const Node n = g.node(id);
        anchor = id;
        if (isAten(n, "_local_scalar_dense", "default")) {
            const std::optional<NodeId> source = nodeArg(n, 0);
            const TensorMeta* t = source ? g.node(*source).tensor() : nullptr;
            const bool upcasts = c.rules.tensorifyUpcastsFloatItems;
            if (!t || n.symValue.empty() ||
                !(upcasts ? isFloatingPoint(t->dtype) : t->dtype == DType::Float64))
                continue;
            NodeId tensor = *source;
            if (!t->sizes.empty()) { // .item() of a one-element tensor of rank > 0 is 0-d
                TensorMeta scalar = *t;
                scalar.sizes.clear();
                scalar.strides.clear();
                tensor = g.insert(callNode("torch.ops.aten.reshape.default",
                                           {Value::nodeRef(tensor), Value::list({})}, {}, scalar, NodeMeta{}),
                                  anchor, true);
                c.change("tensorify_python_scalars").added.push_back(g.node(tensor).name);
                anchor = tensor;
            }
            TensorMeta scalar = *t;
            scalar.sizes.clear();
            scalar.strides.clear();
            tensorOf[std::string(trimSpaces(n.symValue))] =
                upcasts ? insertConvert(c, "tensorify_python_scalars", tensor, DType::Float64, scalar,
                                        NodeMeta{}, anchor, true)
                        : tensor;
            continue;
        }
        const std::optional<std::string_view> overload = tensorOverload(c.rules, n);
        const TensorMeta* out = n.tensor();
        if (!overload || !out || !out->known())
            continue;
        // torch interprets the SymFloat arguments in order and stops at the first that raises.
        bool reads = false, replayable = true, raises = false;
        for (const Value& a : n.args) {
            if (raises || a.kind() != ValueKind::NodeRef ||
                g.node(a.asNode()).outputKind != OutputKind::SymFloat)
                continue;
            reads = true;
            const auto outcome = sympy.check(g.node(a.asNode()).symValue);
            replayable = replayable && outcome != SympyTensorInterpreter::Outcome::Unreadable;
            raises = outcome == SympyTensorInterpreter::Outcome::TorchRaises;
        }
        if (!reads)
            continue;
        if (!replayable) {
            c.report.notReplayed.push_back("tensorify_python_scalars: " + describe(n) +
                                           " reads a float expression of symbols, which is not replayed");
            continue;
        }
        const DType compute = computationDType(out->dtype);
        std::vector<Value> args;
        for (const Value& a : n.args) {
            if (a.kind() != ValueKind::NodeRef || g.node(a.asNode()).outputKind != OutputKind::SymFloat) {
                args.push_back(a);
                continue;
            }
            const SympyTensorInterpreter::Result made = sympy.interpret(g.node(a.asNode()).symValue);
            if (made.outcome != SympyTensorInterpreter::Outcome::Made)
                break; // torch leaves the op; what its arguments made goes in the sweep below
            NodeId tensor = made.node;
            if (compute != DType::Bool && g.node(tensor).tensor()->dtype != compute) {
                tensor = insertConvert(c, "tensorify_python_scalars", tensor, compute,
                                       *g.node(tensor).tensor(), NodeMeta{}, anchor, true);
                anchor = tensor;
            }
            args.push_back(Value::nodeRef(tensor));
        }
        if (raises)
            continue;
        TensorMeta computed = *out;
        computed.dtype = compute;
        NodeId replacement =
            g.insert(callNode(*overload, std::move(args), n.kwargs, computed, NodeMeta{}), anchor, true);
        c.change("tensorify_python_scalars").replaced.emplace_back(n.name, g.node(replacement).name);
        if (compute != out->dtype)
            replacement = insertConvert(c, "tensorify_python_scalars", replacement, out->dtype, *out,
                                        NodeMeta{}, replacement, true);
        g.replaceAllUses(id, replacement);
        g.erase(id);
    }
    specializeFloats(c);
    // The sweep after: what no longer has a reader goes (the _local_scalar_dense calls). Without a
    // replacement it removes only what the partitioner's dead-code elimination removes anyway.
    if (!c.report.changed())
        return;
    const std::vector<NodeId> live = g.liveOrder();
    for (auto it = live.rbegin(); it != live.rend(); ++it) {
        const Node& n = g.node(*it);
        if (n.op == NodeOp::Output || n.op == NodeOp::Placeholder || !g.users(*it).empty() ||
            isImpure(n, c.rules.dceKeepsMutatingOps))
            continue;
        c.removed("tensorify_python_scalars", *it);
        g.erase(*it);
    }
}

} // namespace

namespace {

// Reads pad_mm's replacements off torch's forward and backward graphs (observePaddedMatmuls).
class PaddingObserver {
public:
    explicit PaddingObserver(std::vector<const Graph*> graphs) : graphs_(std::move(graphs)) {}

    std::optional<PaddedMatmul> observe(const Graph& graph, const Node& product) const {
        PaddedMatmul p;
        p.op = matmulOp(product).value_or("");
        const size_t count = p.op == "addmm" ? 3 : 2;
        if (p.op.empty() || product.args.size() < count || reads(product) != count ||
            std::any_of(product.args.begin(), product.args.begin() + count,
                        [](const Value& v) { return v.kind() != ValueKind::NodeRef; }))
            return std::nullopt;
        std::vector<Pad> pads(count);
        for (size_t i = 0; i < count; ++i) {
            const Node& arg = graph.node(product.args[i].asNode());
            pads[i] = padOf(arg.name);
            p.operands.push_back(pads[i] ? pads[i].operand : arg.name);
        }
        if (std::none_of(pads.begin(), pads.end(), [](const Pad& pad) { return bool(pad); }))
            return std::nullopt;
        // pad_mm pads mat1, then mat2 (constant_pad_nd_default, _1, ...), then addmm's input (full + cat).
        std::vector<size_t> order;
        for (size_t i = 0; i < count; ++i)
            if (pads[i])
                order.push_back(i);
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return pads[a].creationOrder() < pads[b].creationOrder();
        });
        const NodeId base = NodeId(count);
        auto nextRef = [&] { return Value::nodeRef(base + NodeId(p.replacement.size())); };
        std::vector<Value> productArgs = product.args;
        for (size_t i = 0; i < count; ++i)
            productArgs[i] = Value::nodeRef(NodeId(i));
        for (size_t i : order) {
            Node padNode = copyOf(*pads[i].node);
            if (pads[i].zeros) { // cat([input, full]): the full first
                const Value fullRef = nextRef();
                p.replacement.push_back(copyOf(*pads[i].zeros));
                padNode.args[0] = Value::list({Value::nodeRef(NodeId(i)), fullRef});
            } else {
                padNode.args[0] = Value::nodeRef(NodeId(i));
            }
            productArgs[i] = nextRef();
            p.replacement.push_back(std::move(padNode));
        }
        Node made = copyOf(product);
        made.args = std::move(productArgs);
        p.replacement.push_back(std::move(made));
        appendSlices(product.name, p, base);
        if (!bindsOnlyItsOwn(p))
            return std::nullopt;
        return p;
    }

private:
    // How torch padded one operand: constant_pad_nd(operand, ...), or cat([operand, full]) for addmm's input.
    struct Pad {
        const Node* node = nullptr;  // the constant_pad_nd or the cat
        const Node* zeros = nullptr; // the cat's full
        std::string operand;
        explicit operator bool() const { return node != nullptr; }
        // "constant_pad_nd_default" is made first, then _1, _2, ...; an input's cat after both mats' pads.
        int64_t creationOrder() const {
            constexpr std::string_view base = "constant_pad_nd_default";
            const std::string& name = node->name;
            if (zeros || name.rfind(base, 0) != 0)
                return kInt64Max;
            int64_t n = 0;
            if (name.size() <= base.size() + 1)
                return 0;
            const char* first = name.data() + base.size() + 1;
            const auto [end, ec] = std::from_chars(first, name.data() + name.size(), n);
            return ec == std::errc() && end == name.data() + name.size() ? n + 1 : kInt64Max - 1;
        }
    };

    static size_t reads(const Node& n) {
        size_t refs = 0;
        n.forEachInput([&](NodeId) { ++refs; });
        return refs;
    }
    static Node copyOf(const Node& n) {
        Node copy = n;
        copy.users.clear();
        return copy;
    }

    // A node by name in whichever graph computes it (a saved pad is a placeholder of the backward).
    std::pair<const Graph*, const Node*> computed(const std::string& name) const {
        for (const Graph* graph : graphs_)
            if (std::optional<NodeId> id = graph->find(name);
                id && graph->node(*id).op == NodeOp::CallFunction)
                return {graph, &graph->node(*id)};
        return {nullptr, nullptr};
    }

    Pad padOf(const std::string& name) const {
        const auto [graph, n] = computed(name);
        Pad pad;
        if (!n || n->args.empty())
            return pad;
        if (isAten(*n, "constant_pad_nd", "default") && n->args[0].kind() == ValueKind::NodeRef &&
            reads(*n) == 1) {
            pad.node = n;
            pad.operand = graph->node(n->args[0].asNode()).name;
            return pad;
        }
        // pad_dim: cat([x, x.new_zeros(...)]) with the full inductor folded the zeros into
        const Value& list = n->args[0];
        if (isAten(*n, "cat", "default") && list.isSequence() && list.items().size() == 2 && reads(*n) == 2 &&
            list.items()[0].kind() == ValueKind::NodeRef && list.items()[1].kind() == ValueKind::NodeRef) {
            const Node& zeros = graph->node(list.items()[1].asNode());
            if (isAten(zeros, "full", "default") && reads(zeros) == 0) {
                pad.node = n;
                pad.zeros = &zeros;
                pad.operand = graph->node(list.items()[0].asNode()).name;
            }
        }
        return pad;
    }

    // The slices back to the matmul's size, from whichever graph reads the product (it may be saved).
    void appendSlices(std::string last, PaddedMatmul& p, NodeId base) const {
        for (bool more = true; more;) {
            more = false;
            for (const Graph* g : graphs_) {
                const std::optional<NodeId> at = g->find(last);
                if (!at)
                    continue;
                for (NodeId user : g->node(*at).users) {
                    const Node& slice = g->node(user);
                    if (!isAten(slice, "slice", "Tensor") || slice.name.rfind("slice_tensor", 0) != 0 ||
                        slice.args.empty() || slice.args[0].kind() != ValueKind::NodeRef ||
                        slice.args[0].asNode() != *at || reads(slice) != 1)
                        continue;
                    Node copy = copyOf(slice);
                    copy.args[0] = Value::nodeRef(base + NodeId(p.replacement.size() - 1));
                    p.replacement.push_back(std::move(copy));
                    last = slice.name;
                    more = true;
                    break;
                }
                if (more)
                    break;
            }
        }
    }

    // Every reference of a copied node is one this replay binds: an operand or an earlier replacement node.
    static bool bindsOnlyItsOwn(const PaddedMatmul& p) {
        const NodeId base = NodeId(p.operands.size());
        for (size_t i = 0; i < p.replacement.size(); ++i) {
            bool ok = true;
            p.replacement[i].forEachInput([&](NodeId ref) { ok = ok && ref < base + NodeId(i); });
            if (!ok)
                return false;
        }
        return true;
    }

    std::vector<const Graph*> graphs_;
};

} // namespace

namespace {

void observePaddingIn(std::vector<const Graph*> graphs, const std::string& body,
                      std::vector<PaddedMatmul>& out) {
    const PaddingObserver observer(graphs);
    std::set<std::string> seen; // a product the backward recomputes is one padding
    for (const Graph* graph : graphs)
        for (const Node& n : graph->nodes())
            if (!seen.count(n.name))
                if (std::optional<PaddedMatmul> p = observer.observe(*graph, n)) {
                    seen.insert(n.name);
                    p->body = body;
                    out.push_back(std::move(*p));
                }
}

// Whether `x` of graph `a` and `y` of graph `b` compute the same thing: one op on the same-named inputs.
bool sameDefinition(const Graph& a, const Node& x, const Graph& b, const Node& y) {
    return sameCall(x, y, [&](NodeId u, NodeId v) { return a.node(u).name == b.node(v).name; });
}

// The outer compile's _recursive_joint_graph_passes run the joint-graph passes again on each partitioned
// body, forward and backward apart, each naming its new nodes afresh: a padding node of one name that the
// two bodies define differently was made there, after the body's partition (which it cannot have
// changed), not on the body's joint.
bool paddedAfterPartition(const Graph& fwBody, const Graph& bwBody, const std::vector<PaddedMatmul>& seen) {
    for (const PaddedMatmul& m : seen)
        for (const Node& made : m.replacement) {
            const std::optional<NodeId> f = fwBody.find(made.name), b = bwBody.find(made.name);
            if (f && b && bwBody.node(*b).op != NodeOp::Placeholder &&
                !sameDefinition(fwBody, fwBody.node(*f), bwBody, bwBody.node(*b)))
                return true;
        }
    return false;
}

} // namespace

std::vector<PaddedMatmul> observePaddedMatmuls(const Graph& forward, const Graph* backward) {
    std::vector<PaddedMatmul> out;
    observePaddingIn(backward ? std::vector<const Graph*>{&forward, backward}
                              : std::vector<const Graph*>{&forward},
                     "", out);
    // run_joint_graph_passes_on_hops: each invoke_subgraph body's joint had the passes too; the forward holds
    // it as partitioned_fw<id>, the backward as partitioned_bw<id>.
    constexpr std::string_view kForwardBody = "partitioned_fw";
    for (const auto& fwBody : forward.subgraphs()) {
        if (!fwBody->name.starts_with(kForwardBody))
            continue;
        std::vector<const Graph*> graphs{fwBody.get()};
        const std::string bwName = "partitioned_bw" + fwBody->name.substr(kForwardBody.size());
        if (const int32_t bw = backward ? backward->findSubgraph(bwName) : -1; bw >= 0)
            graphs.push_back(backward->subgraph(bw));
        std::vector<PaddedMatmul> seen;
        observePaddingIn(graphs, fwBody->name, seen);
        if (graphs.size() == 2 && paddedAfterPartition(*graphs[0], *graphs[1], seen))
            continue;
        out.insert(out.end(), seen.begin(), seen.end());
    }
    return out;
}

JointPassReport replayTensorifyPythonScalars(Graph& joint, const Ruleset& rules) {
    JointPassReport report;
    const Graph original = joint;
    WorkGraph work(joint);
    PassContext c{work, rules, original, report};
    tensorifyPythonScalars(c);
    if (report.changed())
        work.writeBack(joint);
    return report;
}

void prependPasses(JointPassReport& report, const JointPassReport& earlier) {
    report.changes.insert(report.changes.begin(), earlier.changes.begin(), earlier.changes.end());
    report.notReplayed.insert(report.notReplayed.begin(), earlier.notReplayed.begin(),
                              earlier.notReplayed.end());
}

bool isOneElementTensorConstant(const Node& n) {
    const TensorMeta* t = n.tensor();
    return n.op == NodeOp::GetAttr && t && t->known() &&
           std::all_of(t->sizes.begin(), t->sizes.end(),
                       [](const SymInt& d) { return !d.isSymbolic() && d.value == 1; });
}

JointPassReport replayJointGraphPasses(Graph& joint, const Ruleset& rules, const JointPassOptions& options) {
    JointPassReport report;
    const Graph original = joint;
    WorkGraph work(joint);
    PassContext c{work, rules, original, report};
    // joint_graph_passes, in torch's order (canonicalize_aten_ir_passes only rewrites quantization HOPs).
    removeNoopOps(c);
    if (options.constantFolding) {
        UniformFolder folder(c);
        folder.run();
        removeNoOps(c, folder.zeros, folder.ones);
    }
    if (options.patternMatcher) {
        earlyPatterns(c);
        passPatterns(c, options.paddedMatmuls);
        softmaxPatterns(c);
    }
    if (c.paddedReplayed < options.paddedMatmuls.size())
        report.notReplayed.push_back("pad_mm: torch's graphs show " +
                                     std::to_string(options.paddedMatmuls.size()) + " padded matmul(s); " +
                                     std::to_string(options.paddedMatmuls.size() - c.paddedReplayed) +
                                     " read operands no matmul of the joint graph reads");
    if (options.patternMatcher)
        for (const std::string& op : options.fusedAttentionOps)
            if (std::find(c.attentionOpsMade.begin(), c.attentionOpsMade.end(), op) ==
                c.attentionOpsMade.end())
                report.notReplayed.push_back(
                    "fuse_attention: torch's forward calls " + op +
                    " more often than the joint graph: inductor rewrote an eager attention "
                    "(softmax(q @ k^T * scale) @ v, forward and backward) into it where "
                    "jointscope's replay of fuse_attention matched none");
    if (!options.fallbackRandom)
        replaceRandom(c);
    if (report.changed()) {
        work.stableTopologicalSort();
        work.writeBack(joint);
    }
    return report;
}

} // namespace jointscope::partition
