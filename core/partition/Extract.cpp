#include "partition/Extract.h"

#include "graph/SymbolicExpr.h"
#include "ops/Ruleset.h"
#include "partition/JointGraph.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <optional>
#include <utility>

namespace jointscope::partition {
namespace {

Value remap(const Value& value, const std::vector<NodeId>& newId) {
    if (value.kind() == ValueKind::NodeRef)
        return Value::nodeRef(newId[value.asNode()]);
    if (value.items().empty())
        return value;
    Value copy = value;
    for (Value& item : copy.items())
        item = remap(item, newId);
    return copy;
}

void leavesOf(const Value& v, std::vector<Value>& leaves) {
    if (v.isSequence()) {
        for (const Value& item : v.items())
            leavesOf(item, leaves);
    } else if (v.kind() == ValueKind::Dict) {
        for (size_t i = 1; i < v.items().size(); i += 2)
            leavesOf(v.items()[i], leaves);
    } else {
        leaves.push_back(v);
    }
}

std::string describe(const Node& n) {
    return "'" + n.name + "' (" + (n.op == NodeOp::Placeholder ? std::string("placeholder") : n.target.text) +
           ")";
}

// The inputs `id` cannot be computed without: invalid placeholders (and must-be-in-backward nodes) it depends
// on.
std::vector<NodeId> missingRoots(const Graph& joint, NodeId id, const std::vector<bool>& invalid,
                                 const std::vector<bool>& isRoot) {
    std::vector<NodeId> roots, stack{id};
    std::vector<bool> seen(joint.size(), false);
    seen[id] = true;
    while (!stack.empty()) {
        const NodeId v = stack.back();
        stack.pop_back();
        if (isRoot[v]) {
            roots.push_back(v);
            continue;
        }
        if (!invalid[v])
            continue;
        joint.node(v).forEachInput([&](NodeId in) {
            if (invalid[in] && !seen[in]) {
                seen[in] = true;
                stack.push_back(in);
            }
        });
    }
    std::sort(roots.begin(), roots.end());
    return roots;
}

// The forward values a backward output is missing: invalid nodes without a tangent among their ancestors that
// a node with one (or the output itself) reads. These are what should have been saved.
std::vector<NodeId> missingValues(const Graph& joint, NodeId output, const std::vector<bool>& invalid) {
    std::vector<bool> readsTangent(joint.size(), false);
    for (NodeId id = 0; id < joint.size(); ++id) {
        bool reads = isTangent(joint.node(id));
        joint.node(id).forEachInput([&](NodeId in) { reads = reads || readsTangent[in]; });
        readsTangent[id] = reads;
    }
    std::vector<NodeId> missing, stack{output};
    std::vector<bool> seen(joint.size(), false);
    seen[output] = true;
    if (!readsTangent[output])
        return {output};
    while (!stack.empty()) {
        const NodeId v = stack.back();
        stack.pop_back();
        joint.node(v).forEachInput([&](NodeId in) {
            if (!invalid[in] || seen[in])
                return;
            seen[in] = true;
            if (readsTangent[in])
                stack.push_back(in);
            else
                missing.push_back(in);
        });
    }
    std::sort(missing.begin(), missing.end());
    return missing;
}

// Symbols are s<N> (backed) and u<N> (unbacked) in torch's printed expressions.
bool isSymbolName(std::string_view word) {
    return word.size() > 1 && (word[0] == 's' || word[0] == 'u') &&
           std::all_of(word.begin() + 1, word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void symbolsIn(std::string_view expr, std::vector<std::string>& out) {
    for (std::string& name : symbolNames(expr))
        if (isSymbolName(name))
            out.push_back(std::move(name));
}

// free_symbols(node.meta["val"]): of a symbolic value's expression, or of a tensor's sizes and strides.
std::vector<std::string> freeSymbols(const Node& node) {
    std::vector<std::string> symbols;
    if (!node.symValue.empty())
        symbolsIn(node.symValue, symbols);
    for (const TensorMeta& meta : node.outputs) {
        for (const SymInt& d : meta.sizes)
            if (d.isSymbolic())
                symbolsIn(d.expr, symbols);
        for (const SymInt& d : meta.strides)
            if (d.isSymbolic())
                symbolsIn(d.expr, symbols);
    }
    std::sort(symbols.begin(), symbols.end());
    symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
    return symbols;
}

bool isIntegerLiteral(std::string_view text) {
    if (!text.empty() && text[0] == '-')
        text.remove_prefix(1);
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A SymInt placeholder printed as a number (Sym(32)): dynamo lifted a symbol that a guard then specialized
// (symbolic_shape_specialization). Its placeholder expression is still that symbol, whose name the graph no
// longer shows: it goes by "@" and the placeholder's name.
std::optional<std::string> specializedSymbol(const Node& node) {
    if (node.op != NodeOp::Placeholder || node.outputKind != OutputKind::SymInt ||
        !isIntegerLiteral(node.symValue))
        return std::nullopt;
    return "@" + node.name;
}

// is_symbol_binding_fx_node for every node: a SymInt placeholder (or an unbacked SymInt) whose expression is
// a bare symbol. With `unreplaced` (torch 2.14 on: _get_placeholder_expr), the placeholder's own expression:
// a placeholder printing a symbol an earlier one printed stands for another symbol that a guard made equal to
// it (its name is gone: "@" and the placeholder's name), and a specialized one for its symbol. Before, the
// expression after replacement: both bind the printed symbol, and a specialized placeholder binds none.
std::vector<std::optional<std::string>> bindingSymbols(const Graph& joint, bool unreplaced) {
    std::vector<std::optional<std::string>> symbols(joint.size());
    std::vector<std::string_view> printed;
    for (NodeId id = 0; id < joint.size(); ++id) {
        const Node& node = joint.node(id);
        if (std::optional<std::string> specialized = specializedSymbol(node)) {
            if (unreplaced)
                symbols[id] = specialized;
            continue;
        }
        if (node.outputKind != OutputKind::SymInt || !isSymbolName(node.symValue))
            continue;
        if (node.op == NodeOp::Placeholder) {
            const bool seen = std::find(printed.begin(), printed.end(), node.symValue) != printed.end();
            symbols[id] = seen && unreplaced ? "@" + node.name : node.symValue;
            printed.push_back(node.symValue);
        } else if (node.symValue[0] == 'u') {
            symbols[id] = node.symValue;
        }
    }
    return symbols;
}

// Which dims of a tensor placeholder the symbols lifted just before it stand for: dynamo lifts each symbol a
// tensor's sizes introduce, in dim order, before the tensor (dims reusing a symbol lifted earlier have none).
// -1 where the dims do not say.
std::vector<int> liftedDims(const TensorMeta& tensor, const std::vector<const Node*>& lifted) {
    std::vector<int> dims(lifted.size(), -1);
    size_t next = 0;
    for (size_t k = 0; k < lifted.size(); ++k) {
        const std::string& value = lifted[k]->symValue;
        const bool specialized = isIntegerLiteral(value);
        while (next < tensor.sizes.size() && dims[k] < 0) {
            const SymInt& d = tensor.sizes[next];
            if (specialized ? !d.isSymbolic() && std::to_string(d.value) == value
                            : d.isSymbolic() && d.expr == value)
                dims[k] = int(next);
            ++next;
        }
    }
    return dims;
}

// _free_symbols_without_replacements of the tensor placeholders: the specialized symbols their unreplaced
// strides hold. A stride still symbolic after replacement (32*s27) is the product of the later dims' symbols
// before it (s53*s27), so it brings in the specialized symbols of those dims; a stride that became a number
// is skipped, as torch skips expressions that are no longer symbolic. Contiguous strides are assumed; tensors
// computed from an input may carry the symbols too, which the graph does not show.
std::map<NodeId, std::vector<std::string>> specializedSymbolsOfInputs(const Graph& joint) {
    std::map<NodeId, std::vector<std::string>> out;
    std::vector<const Node*> lifted;
    for (NodeId id = 0; id < joint.size(); ++id) {
        const Node& node = joint.node(id);
        if (node.op != NodeOp::Placeholder)
            continue;
        if (node.outputKind == OutputKind::SymInt) {
            lifted.push_back(&node);
            continue;
        }
        if (node.outputKind != OutputKind::Tensor || lifted.empty() || node.outputs.empty())
            continue;
        const TensorMeta& tensor = node.outputs[0];
        const std::vector<int> dims = liftedDims(tensor, lifted);
        std::vector<std::string> symbols;
        for (size_t k = 0; k < lifted.size(); ++k) {
            const std::optional<std::string> symbol = specializedSymbol(*lifted[k]);
            if (!symbol || dims[k] < 0)
                continue;
            for (int i = 0; i < dims[k] && size_t(i) < tensor.strides.size(); ++i)
                if (tensor.strides[i].isSymbolic()) {
                    symbols.push_back(*symbol);
                    break;
                }
        }
        if (!symbols.empty())
            out[id] = std::move(symbols);
        lifted.clear();
    }
    return out;
}

// The saved-symbol step of _extract_fwd_bwd_modules: binding sym nodes first, then derived ones, plus the
// binding of every symbol a backward input mentions that no saved node binds yet (each symbol's first binding
// node); with `specializedToo` (torch 2.14 on), placeholders bind their unreplaced symbols and the symbols a
// specialized input held before replacement are bound too.
std::vector<NodeId> withSymbolBindings(const Graph& joint, const std::vector<NodeId>& savedSym,
                                       const std::vector<NodeId>& saved, const std::vector<NodeId>& tangents,
                                       bool specializedToo) {
    const std::vector<std::optional<std::string>> bindingSymbol = bindingSymbols(joint, specializedToo);
    std::vector<NodeId> binding, derived;
    std::vector<std::string> bound;
    for (NodeId id : savedSym) {
        if (const std::optional<std::string>& symbol = bindingSymbol[id]) {
            bound.push_back(*symbol);
            binding.push_back(id);
        } else {
            derived.push_back(id);
        }
    }
    std::vector<std::pair<std::string, NodeId>> bindings; // symbol -> its first binding node, graph order
    for (NodeId id = 0; id < joint.size(); ++id)
        if (const std::optional<std::string>& symbol = bindingSymbol[id])
            if (std::none_of(bindings.begin(), bindings.end(),
                             [&](const auto& b) { return b.first == *symbol; }))
                bindings.emplace_back(*symbol, id);
    auto isBound = [&](const std::string& s) {
        return std::find(bound.begin(), bound.end(), s) != bound.end();
    };
    const std::map<NodeId, std::vector<std::string>> unreplaced =
        specializedToo ? specializedSymbolsOfInputs(joint) : std::map<NodeId, std::vector<std::string>>{};
    for (const std::vector<NodeId>* list :
         std::initializer_list<const std::vector<NodeId>*>{&derived, &saved, &tangents})
        for (NodeId id : *list) {
            std::vector<std::string> symbols = freeSymbols(joint.node(id));
            if (auto it = unreplaced.find(id); it != unreplaced.end())
                symbols.insert(symbols.end(), it->second.begin(), it->second.end());
            std::vector<std::string> fresh;
            for (const std::string& s : symbols)
                if (!isBound(s))
                    fresh.push_back(s); // sorted by name, as torch sorts them
            for (const std::string& s : fresh)
                for (const auto& [symbol, node] : bindings)
                    if (symbol == s)
                        binding.push_back(node);
            bound.insert(bound.end(), fresh.begin(), fresh.end());
        }
    binding.insert(binding.end(), derived.begin(), derived.end());
    return binding;
}

std::string describeList(const Graph& joint, const std::vector<NodeId>& ids) {
    std::string text;
    for (NodeId id : ids)
        text += (text.empty() ? "" : ", ") + describe(joint.node(id));
    return text;
}

} // namespace

Expected<ExtractionPlan> planExtraction(const Graph& joint, std::span<const NodeId> inputs,
                                        std::span<const Value> outputs, ExtractSide side,
                                        bool mutationsStayInForward) {
    const size_t n = joint.size();
    ExtractionPlan plan;
    plan.inputs.assign(inputs.begin(), inputs.end());
    plan.outputs.assign(outputs.begin(), outputs.end());
    plan.copied.assign(n, false);
    plan.kept.assign(n, false);
    plan.read.assign(n, false);
    std::vector<bool> invalid(n, false), isRoot(n, false), isInput(n, false);
    for (NodeId id : inputs)
        isInput[id] = true;
    // Forward pass: which calls are computable from the inputs.
    for (NodeId id = 0; id < n; ++id) {
        const Node& node = joint.node(id);
        if (isInput[id])
            continue;
        if ((side != ExtractSide::Backward && mustBeInBackward(node)) ||
            (side != ExtractSide::Forward && mutationsStayInForward && mustBeInForward(node))) {
            invalid[id] = isRoot[id] = true;
            continue;
        }
        if (node.op == NodeOp::Placeholder) {
            invalid[id] = isRoot[id] = true;
        } else if (node.op == NodeOp::CallFunction || node.op == NodeOp::GetAttr) {
            bool ok = true;
            node.forEachInput([&](NodeId in) { ok = ok && !invalid[in]; });
            invalid[id] = !ok;
            plan.copied[id] = ok;
        } else {
            invalid[id] = true; // the output node and call_method / call_module, as torch skips them
        }
    }
    for (const Value& leaf : outputs) {
        if (leaf.kind() != ValueKind::NodeRef)
            continue;
        const NodeId out = leaf.asNode();
        if (invalid[out]) {
            if (side != ExtractSide::Backward) {
                const Node& needed = joint.node(out);
                return makeError({"", needed.meta.sourceLine, 0},
                                 "the forward output " + describe(needed) +
                                     " cannot be computed from the forward inputs: it depends on " +
                                     describeList(joint, missingRoots(joint, out, invalid, isRoot)));
            }
            const std::vector<NodeId> missing = missingValues(joint, out, invalid);
            std::vector<NodeId> roots;
            for (NodeId m : missing)
                for (NodeId r : missingRoots(joint, m, invalid, isRoot))
                    if (std::find(roots.begin(), roots.end(), r) == roots.end())
                        roots.push_back(r);
            std::sort(roots.begin(), roots.end());
            const Node& first = joint.node(missing.front());
            return makeError({"", first.meta.sourceLine, 0},
                             "the backward needs " + describeList(joint, missing) +
                                 (missing.size() == 1 ? ", which is" : ", which are") +
                                 " neither saved nor recomputable from saved values (recomputing needs " +
                                 describeList(joint, roots) + ", not saved)");
        }
        (isInput[out] ? plan.read : plan.kept)[out] = true;
    }
    // Backward pass (dead-code elimination): a call is kept when something kept reads it, or it is impure.
    for (NodeId id = NodeId(n); id-- > 0;) {
        if (isInput[id] || invalid[id])
            continue;
        const Node& node = joint.node(id);
        if (!plan.kept[id] &&
            !(node.op == NodeOp::CallFunction && isImpure(node, /*mutatingOpsAreImpure=*/true)))
            continue;
        plan.kept[id] = true;
        node.forEachInput([&](NodeId in) { (isInput[in] ? plan.read : plan.kept)[in] = true; });
    }
    return plan;
}

Graph materialize(const Graph& joint, const ExtractionPlan& plan) {
    Graph out;
    out.name = joint.name;
    out.attributes = joint.attributes;
    for (const auto& sub : joint.subgraphs())
        out.addSubgraph(std::make_unique<Graph>(*sub));
    std::vector<NodeId> newId(joint.size(), kNoNode);
    size_t keptCount = 0;
    for (bool k : plan.kept)
        keptCount += k;
    out.reserve(plan.inputs.size() + keptCount + 1);
    for (NodeId id : plan.inputs) {
        const Node& from = joint.node(id);
        Node placeholder;
        placeholder.name = from.name;
        placeholder.op = NodeOp::Placeholder;
        placeholder.target = Target::name(from.name);
        placeholder.outputKind = from.outputKind;
        placeholder.outputs = from.outputs;
        placeholder.symValue = from.symValue;
        placeholder.meta = from.meta;
        newId[id] = out.addNode(std::move(placeholder));
    }
    for (NodeId id = 0; id < joint.size(); ++id) {
        if (!plan.kept[id] || newId[id] != kNoNode)
            continue;
        Node copy = joint.node(id);
        for (Value& arg : copy.args)
            arg = remap(arg, newId);
        for (auto& kv : copy.kwargs)
            kv.second = remap(kv.second, newId);
        copy.users.clear();
        newId[id] = out.addNode(std::move(copy));
    }
    std::vector<Value> results;
    results.reserve(plan.outputs.size());
    for (const Value& leaf : plan.outputs)
        results.push_back(remap(leaf, newId));
    Node output;
    output.name = "output";
    output.op = NodeOp::Output;
    output.target = Target::name("output");
    output.args.push_back(Value::tuple(std::move(results)));
    out.addNode(std::move(output));
    out.computeUsers();
    return out;
}

FxNamespace extractedNames(const Graph& joint, const ExtractionPlan& plan) {
    FxNamespace names;
    for (NodeId id : plan.inputs)
        names.create(joint.node(id).name);
    for (NodeId id = 0; id < joint.size(); ++id)
        if (plan.copied[id])
            names.create(joint.node(id).name);
    return names;
}

Expected<Graph> extractGraph(const Graph& joint, std::span<const NodeId> inputs,
                             std::span<const Value> outputs, ExtractSide side) {
    Expected<ExtractionPlan> plan = planExtraction(joint, inputs, outputs, side);
    if (!plan)
        return plan.error();
    return materialize(joint, *plan);
}

FwdBwdOutputs splitOutputs(const Graph& joint, int64_t numFwdOutputs) {
    FwdBwdOutputs split;
    const std::optional<NodeId> output = joint.outputNode();
    if (!output)
        return split;
    std::vector<Value> leaves;
    for (const Value& arg : joint.node(*output).args)
        leavesOf(arg, leaves);
    const size_t numFwd = std::min(leaves.size(), size_t(std::max<int64_t>(numFwdOutputs, 0)));
    split.forward.assign(leaves.begin(), leaves.begin() + long(numFwd));
    split.backward.assign(leaves.begin() + long(numFwd), leaves.end());
    return split;
}

// reordering_to_mimic_autograd_engine rebuilds the backward from its first node that reads a tangent on, each
// node with the earlier ones it needs (and copy_ nodes): an earlier node nothing later needs, such as an
// assert on a saved input, is left out.
void keepWhatAutogradRuns(const Graph& joint, ExtractionPlan& plan) {
    const size_t n = joint.size();
    size_t first = n;
    for (NodeId id = 0; id < n && first == n; ++id)
        if (plan.kept[id])
            joint.node(id).forEachInput([&](NodeId in) {
                if (joint.node(in).op == NodeOp::Placeholder && isTangent(joint.node(in)))
                    first = id;
            });
    if (first == n)
        return;
    std::vector<NodeId> runs;
    for (NodeId id = 0; id < n; ++id)
        if (plan.kept[id] && (id >= first || opKey(joint.node(id).target) == "aten.copy_"))
            runs.push_back(id);
    for (const Value& out : plan.outputs)
        out.forEachNode([&](NodeId id) { runs.push_back(id); });
    const std::vector<bool> needed = readByAny(joint, std::move(runs));
    for (NodeId id = 0; id < n; ++id)
        if (plan.kept[id] && !needed[id])
            plan.kept[id] = false;
}

Expected<FwdBwdGraphs> extractForwardBackward(const Graph& joint, std::vector<NodeId> saved,
                                              std::vector<NodeId> savedSym, int64_t numFwdOutputs,
                                              ExtractOptions options) {
    const FwdBwdOutputs outputs = splitOutputs(joint, numFwdOutputs);
    std::vector<NodeId> primals, tangents, fwdSeeds, bwdSeeds;
    for (NodeId id = 0; id < joint.size(); ++id) {
        const Node& node = joint.node(id);
        if (node.op != NodeOp::Placeholder)
            continue;
        if (isTangent(node))
            tangents.push_back(id);
        else if (isBwdSeedOffset(node))
            bwdSeeds.push_back(id);
        else if (isFwdSeedOffset(node))
            fwdSeeds.push_back(id);
        else
            primals.push_back(id);
    }
    auto backwardInputs = [&] {
        std::vector<NodeId> in = savedSym;
        in.insert(in.end(), saved.begin(), saved.end());
        in.insert(in.end(), tangents.begin(), tangents.end());
        in.insert(in.end(), bwdSeeds.begin(), bwdSeeds.end());
        return in;
    };
    Expected<ExtractionPlan> firstBackward = planExtraction(
        joint, backwardInputs(), outputs.backward, ExtractSide::Backward, options.mutationsStayInForward);
    if (!firstBackward)
        return firstBackward.error();
    // Saved values the backward does not read are not saved after all (torch's _remove_by_name step).
    std::erase_if(saved, [&](NodeId id) { return !firstBackward->read[id]; });
    std::erase_if(savedSym, [&](NodeId id) { return !firstBackward->read[id]; });
    savedSym = withSymbolBindings(joint, savedSym, saved, tangents, options.bindSpecializedSymbols);

    std::vector<NodeId> forwardInputs = primals;
    forwardInputs.insert(forwardInputs.end(), fwdSeeds.begin(), fwdSeeds.end());
    std::vector<Value> forwardOutputs = outputs.forward;
    for (NodeId id : saved)
        forwardOutputs.push_back(Value::nodeRef(id));
    for (NodeId id : savedSym)
        forwardOutputs.push_back(Value::nodeRef(id));
    Expected<ExtractionPlan> forward =
        planExtraction(joint, forwardInputs, forwardOutputs, ExtractSide::Forward);
    if (!forward)
        return forward.error();
    Expected<ExtractionPlan> backward = planExtraction(joint, backwardInputs(), outputs.backward,
                                                       ExtractSide::Backward, options.mutationsStayInForward);
    if (!backward)
        return backward.error();
    if (options.backwardMimicsAutograd)
        keepWhatAutogradRuns(joint, *backward);
    FwdBwdGraphs graphs;
    graphs.inForward = forward->kept;
    graphs.inBackward = backward->kept;
    if (options.buildGraphs) {
        graphs.forward = materialize(joint, *forward);
        graphs.backward = materialize(joint, *backward);
    }
    graphs.forwardPlan = forward.take();
    graphs.backwardPlan = backward.take();
    graphs.saved = std::move(saved);
    graphs.savedSym = std::move(savedSym);
    return graphs;
}

} // namespace jointscope::partition
