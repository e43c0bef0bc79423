#include "runtime/Interpreter.h"

#include "graph/HopBody.h"
#include "graph/SymbolicExpr.h"
#include "runtime/InputChecks.h"
#include "runtime/OpPolicy.h"
#include "runtime/Sandbox.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/ScalarOps.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <mutex>

#include <unistd.h>

namespace jointscope::runtime {
namespace {

bool isPlainSymbol(const std::string& expr) {
    if (expr.empty() || !(std::isalpha(static_cast<unsigned char>(expr[0])) || expr[0] == '_'))
        return false;
    return std::all_of(expr.begin(), expr.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Operators whose output holds the same integers as their first argument (an index tensor reshaped or
// moved before it is used to index).
bool preservesValues(const Target& t) {
    static constexpr std::string_view kOps[] = {
        "view",     "_unsafe_view", "reshape",        "expand",     "clone",
        "_to_copy", "slice",        "select",         "unsqueeze",  "squeeze",
        "t",        "transpose",    "permute",        "flatten",    "alias",
        "detach",   "contiguous",   "_reshape_alias", "as_strided", "lift_fresh_copy"};
    return std::find(std::begin(kOps), std::end(kOps), t.op) != std::end(kOps);
}

const TensorMeta* metaOf(const Graph& g, const Value& v) {
    return v.kind() == ValueKind::NodeRef ? g.node(v.asNode()).tensor() : nullptr;
}

std::optional<int64_t> intArg(const Node& node, size_t index) {
    if (index < node.args.size() && node.args[index].kind() == ValueKind::Int)
        return node.args[index].asInt();
    return std::nullopt;
}

// The exclusive upper bound a reader puts on the integers of `indices` (an argument of node `user`), or
// nullopt when this reader does not index with them.
std::optional<int64_t> boundFromReader(const Graph& g, const Node& user, NodeId indices,
                                       const SymbolBindings& symbols) {
    auto refersTo = [&](size_t i) {
        return i < user.args.size() && user.args[i].kind() == ValueKind::NodeRef &&
               user.args[i].asNode() == indices;
    };
    auto sizeOf = [&](size_t argIndex, int64_t dim) -> std::optional<int64_t> {
        if (argIndex >= user.args.size())
            return std::nullopt;
        const TensorMeta* m = metaOf(g, user.args[argIndex]);
        if (!m || m->sizes.empty())
            return std::nullopt;
        const int64_t rank = static_cast<int64_t>(m->sizes.size());
        if (dim < 0)
            dim += rank;
        if (dim < 0 || dim >= rank)
            return std::nullopt;
        Expected<int64_t> v = dimValue(m->sizes[dim], symbols);
        return v ? std::optional<int64_t>(*v) : std::nullopt;
    };
    auto classes = [&](size_t selfIndex) -> std::optional<int64_t> {
        const TensorMeta* m = selfIndex < user.args.size() ? metaOf(g, user.args[selfIndex]) : nullptr;
        if (!m)
            return std::nullopt;
        return sizeOf(selfIndex, m->sizes.size() >= 2 ? 1 : 0);
    };
    const std::string& op = user.target.op;
    if (user.target.ns != "aten")
        return std::nullopt;
    if (op == "embedding" && refersTo(1))
        return sizeOf(0, 0);
    if (op == "embedding_dense_backward" && refersTo(1))
        return intArg(user, 2);
    if ((op == "nll_loss_forward" || op == "nll_loss" || op == "nll_loss2d_forward" || op == "nll_loss_nd") &&
        refersTo(1))
        return classes(0);
    if ((op == "nll_loss_backward" || op == "nll_loss2d_backward") && refersTo(2))
        return classes(1);
    if ((op == "gather" || op == "index_select" || op.rfind("scatter", 0) == 0 || op == "index_add" ||
         op == "index_copy" || op == "index_fill" || op == "take_along_dim") &&
        refersTo(2))
        if (std::optional<int64_t> dim = intArg(user, 1))
            return sizeOf(0, *dim);
    if ((op == "index" || op == "index_put" || op == "_unsafe_index" || op == "_unsafe_index_put") &&
        user.args.size() > 1 && user.args[1].isSequence()) {
        const std::vector<Value>& list = user.args[1].items();
        for (size_t k = 0; k < list.size(); ++k)
            if (list[k].kind() == ValueKind::NodeRef && list[k].asNode() == indices)
                return sizeOf(0, static_cast<int64_t>(k));
    }
    return std::nullopt;
}

// The smallest bound any reader of `id` (through value-preserving views and copies) puts on its integers.
std::optional<int64_t> indexBound(const Graph& g, NodeId id, const SymbolBindings& symbols, int depth = 0) {
    std::optional<int64_t> bound;
    if (depth > 32)
        return bound;
    for (NodeId u : g.node(id).users) {
        const Node& user = g.node(u);
        std::optional<int64_t> b = boundFromReader(g, user, id, symbols);
        if (!b && user.op == NodeOp::CallFunction && preservesValues(user.target) && !user.args.empty() &&
            user.args[0].kind() == ValueKind::NodeRef && user.args[0].asNode() == id)
            b = indexBound(g, u, symbols, depth + 1);
        if (b && (!bound || *b < *bound))
            bound = b;
    }
    return bound;
}

bool hasAccelerator(const Graph& g) {
    for (const Node& n : g.nodes())
        if (const TensorMeta* m = n.tensor(); m && !m->device.type.empty() && m->device.type != "cpu")
            return true;
    return false;
}

c10::Device placeOn(const Device& recorded, c10::Device runDevice, bool graphHasAccelerator) {
    if (recorded.type == "cpu" && graphHasAccelerator)
        return c10::Device(c10::kCPU);
    return runDevice;
}

void flattenInto(const c10::IValue& v, std::vector<c10::IValue>& out) {
    if (v.isTuple()) {
        for (const c10::IValue& e : v.toTupleRef().elements())
            flattenInto(e, out);
    } else if (v.isList()) {
        for (const c10::IValue& e : v.toListRef())
            flattenInto(e, out);
    } else {
        out.push_back(v);
    }
}

std::string describe(const c10::IValue& v) {
    return v.isNone() ? "None" : v.tagKind();
}

Diagnostic locatedError(const Node& node, const std::string& message) {
    std::string where = "node '" + node.name + "'";
    if (node.op == NodeOp::CallFunction)
        where += " (" + node.target.text + ")";
    return makeError({{}, node.meta.sourceLine, 0}, where + ": " + message);
}

// The dispatcher's operator for an op overload or packet node, or nullopt when this LibTorch has none.
std::optional<c10::OperatorHandle> lookupOperator(const Target& target) {
    const std::string name = target.schemaName();
    // A packet: the overload is whichever one exists when there is exactly one.
    const std::string overload =
        target.kind == TargetKind::OpPacket || target.overload == "default" ? "" : target.overload;
    if (auto found = c10::Dispatcher::singleton().findSchema({name, overload}))
        return *found;
    return std::nullopt;
}

// Python int arithmetic over int64. Python's ints do not overflow; where int64 cannot hold Python's result
// the interpreter fails with the operation spelled out, rather than wrap around or trap (INT64_MIN // -1
// raises SIGFPE on x86).
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();

std::string overflow(int64_t a, std::string_view op, int64_t b) {
    return "integer overflow: " + std::to_string(a) + " " + std::string(op) + " " + std::to_string(b) +
           " does not fit in 64 bits";
}

// Python's floor division and modulo; q != 0 (the caller reports division by zero).
std::optional<int64_t> floorDivide(int64_t p, int64_t q) {
    if (p == kInt64Min && q == -1)
        return std::nullopt;
    int64_t d = p / q;
    if ((p % q != 0) && ((p < 0) != (q < 0)))
        --d;
    return d;
}
int64_t floorModulo(int64_t p, int64_t q) {
    if (q == -1)
        return 0; // and p % -1 traps for INT64_MIN
    const int64_t r = p % q;
    return r != 0 && ((r < 0) != (q < 0)) ? r + q : r;
}

// b >= 0.
std::optional<int64_t> integerPower(int64_t a, int64_t b) {
    int64_t result = 1;
    while (b > 0) {
        if ((b & 1) && __builtin_mul_overflow(result, a, &result))
            return std::nullopt;
        b >>= 1;
        if (b > 0 && __builtin_mul_overflow(a, a, &a))
            return std::nullopt;
    }
    return result;
}

// int(x) of a float: NaN, infinities and values outside int64 are errors (the cast would be undefined).
std::optional<int64_t> toInt64(double x) {
    if (!std::isfinite(x) || x < -9223372036854775808.0 || x >= 9223372036854775808.0)
        return std::nullopt;
    return static_cast<int64_t>(x);
}

} // namespace

std::string exceptionText(const std::exception& e, bool debug) {
    if (debug)
        return e.what();
    std::string what = e.what();
    if (const c10::Error* ce = dynamic_cast<const c10::Error*>(&e))
        what = ce->what_without_backtrace();
    // LibTorch's messages go on with the backtrace, the dispatcher's list of backends or the Python-side
    // hint: the first line says what went wrong.
    if (const size_t nl = what.find('\n'); nl != std::string::npos)
        what.resize(nl);
    while (!what.empty() && (what.back() == '\r' || what.back() == ' '))
        what.pop_back();
    return what.empty() ? std::string("LibTorch error") : what;
}

static OpSchemaView schemaView(const c10::FunctionSchema& schema) {
    // Optional and List wrappers off: the policy judges the element type.
    auto base = [](c10::TypePtr t) {
        while (t->kind() == c10::TypeKind::OptionalType || t->kind() == c10::TypeKind::ListType)
            t = t->containedType(0);
        return t->str();
    };
    OpSchemaView view;
    view.name = schema.name();
    view.overload = schema.overload_name();
    for (const c10::Argument& a : schema.arguments())
        view.arguments.push_back({a.name(), base(a.type())});
    for (const c10::Argument& r : schema.returns())
        view.returns.push_back(base(r.type()));
    return view;
}

std::optional<std::string> opRefusal(const c10::FunctionSchema& schema) {
    return runtime::opRefusal(schemaView(schema));
}

std::optional<Diagnostic> refusedOp(const Graph& graph) {
    return refusedOpIn(graph, [](const Target& target) -> std::optional<OpSchemaView> {
        if (std::optional<c10::OperatorHandle> op = lookupOperator(target))
            return schemaView(op->schema());
        return std::nullopt;
    });
}

uint64_t tensorByteLimit(c10::Device device) {
    uint64_t limit = kMaxInputBytes;
    if (device.is_cpu()) {
        const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
        if (pages > 0 && pageSize > 0)
            limit = std::min(limit, static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize));
    }
    return limit;
}

Expected<uint64_t> checkedBytes(const std::vector<int64_t>& sizes, const std::vector<int64_t>* strides,
                                size_t itemSize, c10::Device device) {
    return storageBytes(sizes, strides, itemSize, tensorByteLimit(device), device.str());
}

std::optional<c10::ScalarType> toScalarType(DType dtype) {
    switch (dtype) {
    case DType::Float64:
        return c10::ScalarType::Double;
    case DType::Float32:
        return c10::ScalarType::Float;
    case DType::Float16:
        return c10::ScalarType::Half;
    case DType::BFloat16:
        return c10::ScalarType::BFloat16;
    case DType::Complex32:
        return c10::ScalarType::ComplexHalf;
    case DType::Complex64:
        return c10::ScalarType::ComplexFloat;
    case DType::Complex128:
        return c10::ScalarType::ComplexDouble;
    case DType::Int8:
        return c10::ScalarType::Char;
    case DType::Int16:
        return c10::ScalarType::Short;
    case DType::Int32:
        return c10::ScalarType::Int;
    case DType::Int64:
        return c10::ScalarType::Long;
    case DType::UInt8:
        return c10::ScalarType::Byte;
    case DType::Bool:
        return c10::ScalarType::Bool;
#if TORCH_VERSION_MAJOR >= 2
    case DType::Float8E4M3FN:
        return c10::ScalarType::Float8_e4m3fn;
    case DType::Float8E5M2:
        return c10::ScalarType::Float8_e5m2;
    case DType::Float8E4M3FNUZ:
        return c10::ScalarType::Float8_e4m3fnuz;
    case DType::Float8E5M2FNUZ:
        return c10::ScalarType::Float8_e5m2fnuz;
#endif
    default:
        return std::nullopt;
    }
}

Expected<at::Tensor> emptyLike(const TensorMeta& meta, c10::Device device, const SymbolBindings& symbols) {
    std::optional<c10::ScalarType> st = toScalarType(meta.dtype);
    if (!st)
        return makeError({}, "dtype " + std::string(torchName(meta.dtype)) +
                                 " is not supported by this LibTorch");
    Expected<std::vector<int64_t>> sizes = dimValues(meta.sizes, symbols);
    if (!sizes)
        return sizes.error();
    const size_t itemSize = c10::elementSize(*st);
    const at::TensorOptions options = at::TensorOptions().dtype(*st).device(device);
    if (meta.strides.size() == meta.sizes.size()) {
        Expected<std::vector<int64_t>> strides = dimValues(meta.strides, symbols);
        if (!strides)
            return strides.error();
        if (Expected<uint64_t> bytes = checkedBytes(*sizes, &*strides, itemSize, device); !bytes)
            return bytes.error();
        return at::empty_strided(*sizes, *strides, options);
    }
    if (Expected<uint64_t> bytes = checkedBytes(*sizes, nullptr, itemSize, device); !bytes)
        return bytes.error();
    return at::empty(*sizes, options);
}

c10::IValue cloneValue(const c10::IValue& value) {
    if (value.isTensor()) {
        const at::Tensor& t = value.toTensor();
        if (!t.defined())
            return value;
        at::Tensor copy = at::empty_strided(t.sizes(), t.strides(), t.options());
        copy.copy_(t);
        return copy;
    }
    return value;
}

Expected<RunStart> startRun(std::initializer_list<const Graph*> checked, const Graph& inputsOf,
                            const RunOptions& options) {
    if (options.flags.opAllowlist)
        for (const Graph* g : checked)
            if (std::optional<Diagnostic> refused = refusedOp(*g))
                return *refused;
    Expected<RunDevice> device = openDevice(options.device);
    if (!device)
        return device.error();
    const c10::Device where(device->spec);
    SymbolBindings symbols = options.symbols;
    Expected<InputMap> inputs = generateInputs(inputsOf, where, options.seed, symbols);
    if (!inputs)
        return inputs.error();
    return RunStart{std::move(*device), where, std::move(symbols), std::move(*inputs)};
}

Expected<InputMap> generateInputs(const Graph& graph, c10::Device device, uint64_t seed,
                                  SymbolBindings& symbols) {
    // Bind the plain symbols that sizes use first: other expressions are evaluated against them.
    for (const Node& n : graph.nodes()) {
        if (n.op != NodeOp::Placeholder)
            continue;
        for (const TensorMeta& m : n.outputs)
            for (const SymInt& d : m.sizes)
                if (d.isSymbolic() && isPlainSymbol(d.expr) && !symbols.count(d.expr))
                    symbols[d.expr] = d.value > 0 ? d.value : kDefaultSymbolSize;
        if (n.outputKind == OutputKind::SymInt && isPlainSymbol(n.symValue) && !symbols.count(n.symValue))
            symbols[n.symValue] = kDefaultSymbolSize;
    }
    const bool accelerator = hasAccelerator(graph);
    at::Generator gen = at::detail::createCPUGenerator(seed);
    InputMap inputs;
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& n = graph.node(id);
        if (n.op != NodeOp::Placeholder)
            continue;
        if (n.outputKind == OutputKind::SymInt) {
            Expected<int64_t> v = evaluateSymbolic(n.symValue, symbols);
            if (!v)
                return makeError({{}, n.meta.sourceLine, 0},
                                 "placeholder '" + n.name + "': " + v.error().message);
            inputs[n.name] = *v;
            continue;
        }
        const TensorMeta* meta = n.tensor();
        if (!meta || !meta->known())
            return makeError({{}, n.meta.sourceLine, 0},
                             "placeholder '" + n.name +
                                 "' has no recorded dtype and shape; load the graph with its meta sidecar "
                                 "(--meta) or from a source that prints them");
        const c10::Device where = placeOn(meta->device, device, accelerator);
        // emptyLike checks the shape (evaluated symbolic sizes included) before LibTorch allocates.
        Expected<at::Tensor> out = Diagnostic{};
        try {
            out = emptyLike(*meta, where, symbols);
        } catch (const std::exception& e) {
            out = makeError({}, exceptionText(e));
        }
        if (!out)
            return makeError({{}, n.meta.sourceLine, 0},
                             "placeholder '" + n.name + "': " + out.error().message);
        try {
            const std::vector<int64_t> sizes(out->sizes().begin(), out->sizes().end());
            const at::TensorOptions cpu = at::TensorOptions().device(c10::kCPU);
            at::Tensor values;
            if (isFloatingPoint(meta->dtype) || meta->dtype == DType::Complex64 ||
                meta->dtype == DType::Complex128) {
                values = at::randn(sizes, gen, cpu.dtype(at::kFloat));
            } else if (meta->dtype == DType::Bool) {
                values = at::randint(0, 2, sizes, gen, cpu.dtype(at::kLong)).to(at::kBool);
            } else {
                const std::optional<int64_t> bound = indexBound(graph, id, symbols);
                const int64_t high = bound ? std::max<int64_t>(*bound, 1) : kDefaultIntegerRange;
                values = at::randint(0, high, sizes, gen, cpu.dtype(at::kLong));
            }
            out->copy_(values);
        } catch (const std::exception& e) {
            return makeError({{}, n.meta.sourceLine, 0},
                             "placeholder '" + n.name + "': cannot generate its input: " + exceptionText(e));
        }
        inputs[n.name] = *out;
    }
    return inputs;
}

Interpreter::Interpreter(const Graph& graph, c10::Device device, SymbolBindings symbols, RunFlags flags)
    : graph_(graph), device_(device), symbols_(std::move(symbols)), flags_(flags) {}

Diagnostic Interpreter::nodeError(const Node& node, const std::string& message) const {
    return locatedError(node, message);
}

std::string Interpreter::errorText(const std::exception& e) const {
    return exceptionText(e, flags_.debug);
}

Expected<std::vector<c10::IValue>> Interpreter::run(const InputMap& inputs, bool keepValues,
                                                    std::vector<std::string>* nodeErrors) {
    values_.assign(graph_.size(), c10::IValue());
    if (nodeErrors)
        nodeErrors->assign(graph_.size(), std::string());
    std::vector<NodeId> lastUse(graph_.size(), 0);
    for (NodeId id = 0; id < graph_.size(); ++id)
        graph_.node(id).forEachInput([&](NodeId in) { lastUse[in] = std::max(lastUse[in], id); });
    at::NoGradGuard noGrad;
    for (NodeId id = 0; id < graph_.size(); ++id) {
        const Node& node = graph_.node(id);
        if (node.op == NodeOp::Placeholder) {
            auto it = inputs.find(node.name);
            if (it == inputs.end())
                return nodeError(node, "no input was given for this placeholder");
            values_[id] = it->second;
        } else if (node.op == NodeOp::Output) {
            std::vector<c10::IValue> out;
            for (const Value& v : node.args) {
                Expected<c10::IValue> iv = plain(v);
                if (!iv)
                    return nodeError(node, iv.error().message);
                flattenInto(*iv, out);
            }
            return out;
        } else {
            std::string failedInput;
            if (nodeErrors)
                node.forEachInput([&](NodeId in) {
                    if (failedInput.empty() && !(*nodeErrors)[in].empty())
                        failedInput = graph_.node(in).name;
                });
            if (!failedInput.empty()) {
                (*nodeErrors)[id] = "not run: its input '" + failedInput + "' failed";
            } else if (Expected<c10::IValue> v = evalWithRngReplay(id); v) {
                values_[id] = v.take();
            } else if (nodeErrors) {
                // The list is by node already: keep the message without the "node 'x' (op): " prefix.
                const std::string prefix = nodeError(node, "").message;
                const std::string& message = v.error().message;
                (*nodeErrors)[id] = message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
            } else {
                return v.error();
            }
        }
        if (!keepValues)
            node.forEachInput([&](NodeId in) {
                if (lastUse[in] == id)
                    values_[in] = c10::IValue();
            });
    }
    return makeError({}, "graph '" + graph_.name + "' has no output node");
}

Expected<c10::IValue> Interpreter::evalWithRngReplay(NodeId id) {
    const std::string& name = graph_.node(id).name;
    if (!rng_ || !rng_->nodes.count(name) ||
        (rng_->mode == RngReplay::Mode::Replay && !rng_->states.count(name)))
        return evalNode(id);
    at::Generator generator = at::globalContext().defaultGenerator(device_);
    auto state = [&] {
        std::lock_guard<std::mutex> lock(generator.mutex());
        return generator.get_state();
    };
    auto setState = [&](const at::Tensor& s) {
        std::lock_guard<std::mutex> lock(generator.mutex());
        generator.set_state(s);
    };
    if (rng_->mode == RngReplay::Mode::Record) {
        rng_->states[name] = state();
        return evalNode(id);
    }
    const at::Tensor own = state();
    setState(rng_->states.at(name));
    Expected<c10::IValue> v = evalNode(id);
    setState(own);
    return v;
}

Expected<c10::IValue> Interpreter::evalNode(NodeId id) {
    const Node& node = graph_.node(id);
    try {
        switch (node.op) {
        case NodeOp::GetAttr:
            if (node.subgraph >= 0)
                return c10::IValue(static_cast<int64_t>(node.subgraph)); // read only by higher-order ops
            if (const TensorMeta* meta = node.tensor(); meta && meta->known()) {
                // A constant whose data the file does not carry: a seeded random stand-in of its shape.
                Expected<at::Tensor> t = emptyLike(*meta, device_, symbols_);
                if (!t)
                    return nodeError(node, t.error().message);
                if (isFloatingPoint(meta->dtype))
                    t->normal_();
                else
                    t->zero_();
                return c10::IValue(*t);
            }
            return nodeError(node, "get_attr of a constant whose shape the file does not record");
        case NodeOp::CallFunction:
            switch (node.target.kind) {
            case TargetKind::OpOverload:
            case TargetKind::OpPacket:
                return callOperator(node);
            case TargetKind::HigherOrder:
                return callHigherOrder(node);
            case TargetKind::Operator:
            case TargetKind::Python:
                return callPythonOperator(node);
            case TargetKind::Name:
                break;
            }
            return nodeError(node, "cannot run call_function '" + node.target.text + "'");
        case NodeOp::CallMethod:
            return nodeError(node,
                             "cannot run call_method '" + node.target.text +
                                 "' (Dynamo graphs call Python methods; export the ATen graph instead)");
        case NodeOp::CallModule:
            return nodeError(node, "cannot run call_module '" + node.target.text + "'");
        default:
            break;
        }
    } catch (const std::exception& e) {
        return nodeError(node, errorText(e));
    }
    return nodeError(node, "unexpected node kind");
}

Expected<c10::OperatorHandle> Interpreter::findOperator(const Node& node) {
    // Only tensor math runs: a file cannot make us call into other registered namespaces (collectives without
    // a process group, profiler hooks, printing, custom ops with side effects).
    if (node.target.ns != "aten" && node.target.ns != "prims")
        return nodeError(node, "ops of namespace '" + node.target.ns +
                                   "' are not run (the interpreter runs aten and prims ops)");
    const std::string key = node.target.text;
    if (auto it = operators_.find(key); it != operators_.end())
        return it->second;
    std::optional<c10::OperatorHandle> op = lookupOperator(node.target);
    if (!op) {
        const std::string overload = node.target.overload == "default" ? "" : node.target.overload;
        return nodeError(node, "operator " + node.target.schemaName() +
                                   (overload.empty() ? "" : "." + overload) +
                                   " is not registered in this LibTorch (" TORCH_VERSION ")");
    }
    // The runtime's entry points refuse such a graph before anything runs (refusedOp); checked here too so
    // that no path reaches the dispatcher with a refused op.
    if (flags_.opAllowlist)
        if (std::optional<std::string> why = opRefusal(op->schema()))
            return nodeError(node, "refused: " + *why);
    operators_.emplace(key, *op);
    return *op;
}

Expected<c10::IValue> Interpreter::callOperator(const Node& node) {
    const Target& t = node.target;
    // Size queries are answered from the tensor (their schemas differ between torch versions).
    if (t.ns == "aten" &&
        (t.op == "sym_size" || t.op == "sym_stride" || t.op == "sym_numel" || t.op == "sym_storage_offset" ||
         t.op == "size" || t.op == "stride" || t.op == "numel")) {
        Expected<c10::IValue> self = node.args.empty()
                                         ? Expected<c10::IValue>(nodeError(node, "missing argument"))
                                         : plain(node.args[0]);
        if (!self)
            return self.error();
        if (!self->isTensor())
            return nodeError(node, "expects a tensor, got " + describe(*self));
        const at::Tensor& x = self->toTensor();
        if (t.op == "sym_numel" || t.op == "numel")
            return c10::IValue(x.numel());
        if (t.op == "sym_storage_offset")
            return c10::IValue(x.storage_offset());
        std::optional<int64_t> dim = intArg(node, 1);
        if (!dim)
            return c10::IValue(t.op.find("stride") != std::string::npos ? x.strides().vec()
                                                                        : x.sizes().vec());
        return c10::IValue(t.op.find("stride") != std::string::npos ? x.stride(*dim) : x.size(*dim));
    }
    Expected<PreparedCall> call = bind(node);
    if (!call)
        return call.error();
    const c10::FunctionSchema& schema = call->op.schema();
    std::vector<c10::IValue>& stack = call->stack;
    if (std::optional<Diagnostic> bad = checkSizes(node, schema, stack))
        return *bad;
    const FaultScope scope(node.meta.sourceLine, node.name, node.target.text);
    call->op.callBoxed(&stack);
    const size_t returns = schema.returns().size();
    if (returns == 0)
        return c10::IValue();
    if (returns == 1 && !stack.empty())
        return std::move(stack.back());
    std::vector<c10::IValue> elements(std::make_move_iterator(stack.end() - returns),
                                      std::make_move_iterator(stack.end()));
    return c10::IValue(c10::ivalue::Tuple::create(std::move(elements)));
}

Expected<PreparedCall> Interpreter::bind(const Node& node) {
    Expected<c10::OperatorHandle> op = findOperator(node);
    if (!op)
        return op.error();
    Expected<std::vector<c10::IValue>> stack = buildStack(node, op->schema());
    if (!stack)
        return stack.error();
    return PreparedCall{*op, stack.take()};
}

Expected<std::vector<c10::IValue>> Interpreter::buildStack(const Node& node,
                                                           const c10::FunctionSchema& schema) {
    const std::vector<c10::Argument>& params = schema.arguments();
    std::vector<c10::IValue> stack;
    stack.reserve(params.size());
    size_t positional = 0;
    for (const c10::Argument& p : params) {
        const Value* given = nullptr;
        if (!p.kwarg_only() && positional < node.args.size())
            given = &node.args[positional++];
        if (!given)
            for (const auto& [key, value] : node.kwargs)
                if (key == p.name())
                    given = &value;
        if (!given) {
            if (p.default_value()) {
                stack.push_back(*p.default_value());
                continue;
            }
            if (p.type()->kind() == c10::TypeKind::OptionalType) {
                stack.emplace_back();
                continue;
            }
            return nodeError(node, "argument '" + p.name() + "' of " + schema.name() + " is missing");
        }
        Expected<c10::IValue> v = convert(*given, p.type());
        if (!v)
            return nodeError(node, "argument '" + p.name() + "': " + v.error().message);
        stack.push_back(v.take());
    }
    if (positional < node.args.size())
        return nodeError(node, std::to_string(node.args.size()) + " positional arguments given, " +
                                   schema.name() + " takes " + std::to_string(positional));
    for (const auto& [key, value] : node.kwargs) {
        (void)value;
        const bool known = std::any_of(params.begin(), params.end(),
                                       [&](const c10::Argument& p) { return p.name() == key; });
        if (!known)
            return nodeError(node, "keyword argument '" + key + "' is not in the schema of " + schema.name());
    }
    return stack;
}

std::optional<Diagnostic> Interpreter::checkSizes(const Node& node, const c10::FunctionSchema& schema,
                                                  const std::vector<c10::IValue>& stack) const {
    // A view (its result aliases an argument without writing it) allocates nothing, and may take -1.
    // _unsafe_view is one although its schema does not say so.
    const std::vector<c10::Argument>& returns = schema.returns();
    if ((!returns.empty() && returns[0].alias_info() && !returns[0].alias_info()->isWrite()) ||
        schema.name() == "aten::_unsafe_view")
        return std::nullopt;
    const std::vector<c10::Argument>& params = schema.arguments();
    std::optional<size_t> sizeAt, strideAt;
    size_t itemSize = 0;
    for (size_t i = 0; i < params.size() && i < stack.size(); ++i) {
        const std::string& name = params[i].name();
        const c10::IValue& v = stack[i];
        // Factory ops name the shape they allocate `size` (prims: `shape`); new_* and resize_ too.
        if ((name == "size" || name == "shape") && v.isIntList())
            sizeAt = i;
        else if (name == "stride" && v.isIntList())
            strideAt = i;
        else if (name == "dtype" && v.isInt() && v.toInt() >= 0 &&
                 v.toInt() < static_cast<int64_t>(c10::ScalarType::NumOptions))
            itemSize = c10::elementSize(static_cast<c10::ScalarType>(v.toInt()));
        else if (!itemSize && v.isTensor() && v.toTensor().defined())
            itemSize = v.toTensor().element_size(); // new_empty & co. take self's dtype
    }
    if (!sizeAt)
        return std::nullopt;
    std::vector<int64_t> sizes = stack[*sizeAt].toIntVector();
    // Ops on a tensor take -1 for "infer it" or "keep self's" (view_copy, expand_copy): at least 1 element.
    if (!params.empty() && params[0].name() == "self" && !stack.empty() && stack[0].isTensor())
        std::replace(sizes.begin(), sizes.end(), int64_t(-1), int64_t(1));
    std::vector<int64_t> strides;
    if (strideAt)
        strides = stack[*strideAt].toIntVector();
    const bool strided = strideAt && strides.size() == sizes.size();
    Expected<uint64_t> bytes =
        checkedBytes(sizes, strided ? &strides : nullptr, itemSize ? itemSize : sizeof(float), device_);
    if (!bytes)
        return nodeError(node, "argument '" + params[*sizeAt].name() + "': " + bytes.error().message);
    return std::nullopt;
}

Expected<c10::IValue> Interpreter::convert(const Value& value, const c10::TypePtr& type) {
    using c10::TypeKind;
    const TypeKind kind = type->kind();
    if (kind == TypeKind::OptionalType) {
        if (value.isNone())
            return c10::IValue();
        return convert(value, type->containedType(0));
    }
    if (kind == TypeKind::ListType && value.isSequence()) {
        // Each item by its own kind (plain), then made an element of `list` by `element`, which may refuse
        // it.
        auto listOf = [&](auto list, auto element) -> Expected<c10::IValue> {
            for (const Value& item : value.items()) {
                Expected<c10::IValue> v = plain(item);
                if (!v)
                    return v.error();
                auto e = element(*v);
                if (!e)
                    return e.error();
                list.push_back(e.take());
            }
            return c10::IValue(list);
        };
        const c10::TypePtr elem = type->containedType(0);
        const TypeKind ek = elem->kind();
        if (ek == TypeKind::TensorType)
            return listOf(c10::List<at::Tensor>(), [](const c10::IValue& v) -> Expected<at::Tensor> {
                if (!v.isTensor())
                    return makeError({}, "expected a tensor in the list, got " + describe(v));
                return v.toTensor();
            });
        if (ek == TypeKind::OptionalType && elem->containedType(0)->kind() == TypeKind::TensorType)
            return listOf(c10::List<c10::optional<at::Tensor>>(),
                          [](const c10::IValue& v) -> Expected<c10::optional<at::Tensor>> {
                              return v.isNone() ? c10::optional<at::Tensor>()
                                                : c10::optional<at::Tensor>(v.toTensor());
                          });
        if (ek == TypeKind::FloatType)
            return listOf(std::vector<double>(), [](const c10::IValue& v) -> Expected<double> {
                return v.isDouble() ? v.toDouble() : static_cast<double>(v.toInt());
            });
        if (ek == TypeKind::BoolType) {
            c10::List<bool> list;
            for (const Value& item : value.items())
                list.push_back(item.asBool());
            return c10::IValue(list);
        }
        // int[] and SymInt[]
        return listOf(std::vector<int64_t>(), [](const c10::IValue& v) -> Expected<int64_t> {
            if (!v.isInt())
                return makeError({}, "expected an integer in the list, got " + describe(v));
            return v.toInt();
        });
    }
    if (kind == TypeKind::TensorType && value.kind() == ValueKind::None)
        return c10::IValue(at::Tensor()); // torch's toIValue: None for a Tensor is an undefined tensor
    if (kind == TypeKind::TensorType && (value.kind() == ValueKind::Int || value.kind() == ValueKind::Float ||
                                         value.kind() == ValueKind::Bool)) {
        // A Python number where the schema takes a Tensor (mul.Tensor(x, 0.125)): torch passes a CPU scalar
        // tensor marked as a wrapped number, which keeps the other operand's dtype in type promotion.
        const at::Scalar scalar = value.kind() == ValueKind::Float  ? at::Scalar(value.asFloat())
                                  : value.kind() == ValueKind::Bool ? at::Scalar(value.asBool())
                                                                    : at::Scalar(value.asInt());
        at::Tensor t = at::scalar_to_tensor(scalar);
        t.unsafeGetTensorImpl()->set_wrapped_number(true);
        return c10::IValue(t);
    }
    if (kind == TypeKind::FloatType && value.kind() == ValueKind::Int)
        return c10::IValue(static_cast<double>(value.asInt()));
    if (kind == TypeKind::ListType && !value.isSequence() && value.kind() == ValueKind::Int)
        return c10::IValue(std::vector<int64_t>{value.asInt()}); // int[1] given as a single int
    return plain(value);
}

Expected<c10::IValue> Interpreter::plain(const Value& value) {
    switch (value.kind()) {
    case ValueKind::None:
        return c10::IValue();
    case ValueKind::Bool:
        return c10::IValue(value.asBool());
    case ValueKind::Int:
        return c10::IValue(value.asInt());
    case ValueKind::Float:
        return c10::IValue(value.asFloat());
    case ValueKind::String:
        return c10::IValue(value.text());
    case ValueKind::NodeRef: {
        const NodeId id = value.asNode();
        if (id >= values_.size())
            return makeError({}, "reference to an unknown node");
        return values_[id];
    }
    case ValueKind::List:
    case ValueKind::Tuple: {
        std::vector<c10::IValue> items;
        for (const Value& item : value.items()) {
            Expected<c10::IValue> v = plain(item);
            if (!v)
                return v.error();
            items.push_back(v.take());
        }
        return c10::IValue(c10::ivalue::Tuple::create(std::move(items)));
    }
    case ValueKind::DType: {
        std::optional<c10::ScalarType> st = toScalarType(value.asDType());
        if (!st)
            return makeError({}, "dtype " + std::string(torchName(value.asDType())) + " is not supported");
        return c10::IValue(static_cast<int64_t>(*st));
    }
    case ValueKind::Device: {
        if (value.text() == "cpu" && hasAccelerator(graph_))
            return c10::IValue(c10::Device(c10::kCPU));
        return c10::IValue(device_);
    }
    case ValueKind::Layout:
        return c10::IValue(static_cast<int64_t>(value.text() == "strided" ? c10::kStrided : c10::kSparse));
    case ValueKind::MemoryFormat: {
        c10::MemoryFormat f = c10::MemoryFormat::Contiguous;
        if (value.text() == "channels_last")
            f = c10::MemoryFormat::ChannelsLast;
        else if (value.text() == "preserve_format")
            f = c10::MemoryFormat::Preserve;
        else if (value.text() == "channels_last_3d")
            f = c10::MemoryFormat::ChannelsLast3d;
        return c10::IValue(static_cast<int64_t>(f));
    }
    case ValueKind::SymExpr: {
        Expected<int64_t> v = evalSymbolic(value.text());
        if (!v)
            return v.error();
        return c10::IValue(*v);
    }
    default:
        break;
    }
    return makeError({}, "cannot pass '" + value.text() + "' to an operator");
}

Expected<int64_t> Interpreter::evalSymbolic(const std::string& expr) {
    return evaluateSymbolic(expr, symbols_);
}

Expected<c10::IValue> Interpreter::callHigherOrder(const Node& node) {
    const std::string& op = node.target.op;
    static constexpr std::string_view kInline[] = {"invoke_subgraph", "tag_activation_checkpoint",
                                                   "wrap_with_set_grad_enabled", "wrap_with_autocast",
                                                   "wrap_activation_checkpoint"};
    if (std::find(std::begin(kInline), std::end(kInline), op) == std::end(kInline))
        return nodeError(node, "higher-order op '" + op + "' is not supported by the interpreter");
    // The operands are the node arguments after the one naming the body.
    const std::optional<size_t> bodyArg = bodyArgument(graph_, node);
    if (!bodyArg)
        return nodeError(node, "the body graph of '" + op + "' is not in the file");
    const Graph* body = bodyOf(graph_, node.args[*bodyArg].asNode());
    std::vector<c10::IValue> operands;
    for (size_t i = *bodyArg + 1; i < node.args.size(); ++i) {
        const Value& v = node.args[i];
        if (v.kind() == ValueKind::String)
            continue; // invoke_subgraph's identifier
        Expected<c10::IValue> iv = plain(v);
        if (!iv)
            return nodeError(node, iv.error().message);
        operands.push_back(iv.take());
    }
    InputMap inputs;
    size_t next = 0;
    for (const Node& n : body->nodes()) {
        if (n.op != NodeOp::Placeholder)
            continue;
        if (next >= operands.size())
            return nodeError(node, "the body '" + body->name + "' takes more inputs than the call passes");
        inputs[n.name] = operands[next++];
    }
    Interpreter inner(*body, device_, symbols_, flags_);
    Expected<std::vector<c10::IValue>> out = inner.run(inputs);
    if (!out)
        return nodeError(node, "in body '" + body->name + "': " + out.error().message);
    return c10::IValue(c10::ivalue::Tuple::create(out.take()));
}

Expected<c10::IValue> Interpreter::callPythonOperator(const Node& node) {
    const std::string& op = node.target.op;
    std::vector<c10::IValue> a;
    for (const Value& v : node.args) {
        Expected<c10::IValue> iv = plain(v);
        if (!iv)
            return nodeError(node, iv.error().message);
        a.push_back(iv.take());
    }
    if (op == "getitem") {
        if (a.size() != 2 || !a[1].isInt())
            return nodeError(node, "getitem takes a container and an integer index");
        const int64_t i = a[1].toInt();
        if (a[0].isTuple()) {
            const auto& elems = a[0].toTupleRef().elements();
            const int64_t n = static_cast<int64_t>(elems.size());
            if (i < -n || i >= n)
                return nodeError(node, "index " + std::to_string(i) + " out of range for " +
                                           std::to_string(n) + " values");
            return elems[i < 0 ? i + n : i];
        }
        if (a[0].isList()) {
            const auto list = a[0].toListRef();
            const int64_t n = static_cast<int64_t>(list.size());
            if (i < -n || i >= n)
                return nodeError(node, "index " + std::to_string(i) + " out of range for " +
                                           std::to_string(n) + " values");
            return list[i < 0 ? i + n : i];
        }
        return nodeError(node, "getitem on " + describe(a[0]));
    }
    auto number = [](const c10::IValue& v) {
        return v.isDouble() ? v.toDouble() : v.isBool() ? double(v.toBool()) : double(v.toInt());
    };
    auto allInt = [&] {
        return std::all_of(a.begin(), a.end(), [](const c10::IValue& v) { return v.isInt() || v.isBool(); });
    };
    auto allNumbers = [&] {
        return std::all_of(a.begin(), a.end(),
                           [](const c10::IValue& v) { return v.isInt() || v.isDouble() || v.isBool(); });
    };
    auto toI = [](const c10::IValue& v) { return v.isBool() ? int64_t(v.toBool()) : v.toInt(); };
    if (!allNumbers())
        return nodeError(node, "'" + node.target.text + "' on tensors or containers is not supported");
    if (a.size() == 1) {
        const bool ints = allInt();
        const int64_t i = ints ? toI(a[0]) : 0;
        const double x = number(a[0]);
        if (op == "neg") {
            if (!ints)
                return c10::IValue(-x);
            if (i == kInt64Min)
                return nodeError(node,
                                 "integer overflow: -(" + std::to_string(i) + ") does not fit in 64 bits");
            return c10::IValue(-i);
        }
        if (op == "not_" || op == "sym_not")
            return c10::IValue(x == 0);
        if (op == "sym_float")
            return c10::IValue(x);
        if (op == "sym_int" || op == "floor" || op == "trunc" || op == "ceil") {
            if (ints)
                return c10::IValue(i);
            const double r = op == "floor" ? std::floor(x) : op == "ceil" ? std::ceil(x) : std::trunc(x);
            if (std::optional<int64_t> v = toInt64(r))
                return c10::IValue(*v);
            return nodeError(node, "cannot convert " + std::to_string(x) + " to a 64-bit integer");
        }
        if (op == "sqrt")
            return c10::IValue(std::sqrt(x));
        if (op == "abs") {
            if (!ints)
                return c10::IValue(std::abs(x));
            if (i == kInt64Min)
                return nodeError(node,
                                 "integer overflow: abs(" + std::to_string(i) + ") does not fit in 64 bits");
            return c10::IValue(i < 0 ? -i : i);
        }
    }
    if (a.size() == 2) {
        const bool ints = allInt();
        const int64_t p = ints ? toI(a[0]) : 0, q = ints ? toI(a[1]) : 0;
        const double x = number(a[0]), y = number(a[1]);
        int64_t r = 0;
        if (op == "add") {
            if (!ints)
                return c10::IValue(x + y);
            if (__builtin_add_overflow(p, q, &r))
                return nodeError(node, overflow(p, "+", q));
            return c10::IValue(r);
        }
        if (op == "sub") {
            if (!ints)
                return c10::IValue(x - y);
            if (__builtin_sub_overflow(p, q, &r))
                return nodeError(node, overflow(p, "-", q));
            return c10::IValue(r);
        }
        if (op == "mul") {
            if (!ints)
                return c10::IValue(x * y);
            if (__builtin_mul_overflow(p, q, &r))
                return nodeError(node, overflow(p, "*", q));
            return c10::IValue(r);
        }
        if (op == "truediv") {
            if (y == 0)
                return nodeError(node, "division by zero");
            return c10::IValue(x / y);
        }
        if (op == "floordiv" || op == "mod") {
            if (ints) {
                if (q == 0)
                    return nodeError(node, "integer division by zero");
                if (op == "mod")
                    return c10::IValue(floorModulo(p, q));
                if (std::optional<int64_t> d = floorDivide(p, q))
                    return c10::IValue(*d);
                return nodeError(node, overflow(p, "//", q));
            }
            if (y == 0)
                return nodeError(node, "float division by zero");
            const double d = std::floor(x / y);
            return op == "floordiv" ? c10::IValue(d) : c10::IValue(x - d * y);
        }
        if (op == "pow") {
            if (x == 0 && y < 0)
                return nodeError(node, "0 cannot be raised to a negative power");
            if (!ints || q < 0)
                return c10::IValue(std::pow(x, y));
            if (std::optional<int64_t> v = integerPower(p, q))
                return c10::IValue(*v);
            return nodeError(node, overflow(p, "**", q));
        }
        if (op == "lshift" || op == "rshift") {
            if (!ints)
                return nodeError(node, "'" + node.target.text + "' takes integers");
            if (q < 0)
                return nodeError(node, "negative shift count " + std::to_string(q));
            if (op == "rshift") // Python shifts arithmetically; 64 places or more leave the sign
                return c10::IValue(q >= 64 ? (p < 0 ? int64_t(-1) : int64_t(0)) : p >> q);
            if (p == 0)
                return c10::IValue(int64_t(0));
            if (q >= 64)
                return nodeError(node, overflow(p, "<<", q));
            const int64_t shifted = static_cast<int64_t>(static_cast<uint64_t>(p) << q);
            if ((shifted >> q) != p) // bits shifted out, or into the sign
                return nodeError(node, overflow(p, "<<", q));
            return c10::IValue(shifted);
        }
        if (op == "sym_max" || op == "max")
            return ints ? c10::IValue(std::max(p, q)) : c10::IValue(std::max(x, y));
        if (op == "sym_min" || op == "min")
            return ints ? c10::IValue(std::min(p, q)) : c10::IValue(std::min(x, y));
        if (op == "eq")
            return c10::IValue(ints ? p == q : x == y);
        if (op == "ne")
            return c10::IValue(ints ? p != q : x != y);
        if (op == "lt")
            return c10::IValue(ints ? p < q : x < y);
        if (op == "le")
            return c10::IValue(ints ? p <= q : x <= y);
        if (op == "gt")
            return c10::IValue(ints ? p > q : x > y);
        if (op == "ge")
            return c10::IValue(ints ? p >= q : x >= y);
        if (op == "and_")
            return ints ? c10::IValue(p & q) : c10::IValue(x != 0 && y != 0);
        if (op == "or_")
            return ints ? c10::IValue(p | q) : c10::IValue(x != 0 || y != 0);
        if (op == "xor" && ints)
            return c10::IValue(p ^ q);
    }
    return nodeError(node, "'" + node.target.text + "' is not supported by the interpreter");
}

Expected<std::optional<PreparedCall>> Interpreter::prepare(NodeId id) {
    const Node& node = graph_.node(id);
    if (node.op != NodeOp::CallFunction ||
        (node.target.kind != TargetKind::OpOverload && node.target.kind != TargetKind::OpPacket))
        return std::optional<PreparedCall>();
    try {
        Expected<PreparedCall> call = bind(node);
        if (!call)
            return call.error();
        return std::optional<PreparedCall>(call.take());
    } catch (const std::exception& e) {
        return nodeError(node, errorText(e));
    }
}

} // namespace jointscope::runtime
