// Mathematical validity of core/sharding's strategy rules, checked with LibTorch on CPU.
//
// For every strategy the rules emit for every op node of the shared torch 1.13 graphs, on a 1-D mesh of 2 and
// a 2x2 mesh: the node's real inputs (from running the graph) are split per placement over a simulated mesh
// (Shard: chunk, Replicate: copy, Partial(sum): random summands), the op runs once per device on its local
// tensors, and the local results are combined (shards concatenated, partials summed) and compared with the
// unsharded result. The expected values are torch's own results on the whole tensors.
// LibTorch before Qt: Qt's `slots` macro breaks ATen's headers.
#include "runtime/Interpreter.h"
#include <ATen/ATen.h>

#include "sharding/Strategies.h"
#include "testutil.h"

#include <QTest>

#include <map>
#include <optional>
#include <set>

using namespace jointscope;
using namespace jointscope::test;
using namespace jointscope::sharding;

namespace {

using Coord = std::vector<int64_t>;

std::vector<Coord> coordinates(const std::vector<int64_t>& shape) {
    std::vector<Coord> out{{}};
    for (int64_t n : shape) {
        std::vector<Coord> next;
        for (const Coord& c : out)
            for (int64_t i = 0; i < n; ++i) {
                Coord d = c;
                d.push_back(i);
                next.push_back(d);
            }
        out = std::move(next);
    }
    return out;
}

// The local tensor of device `coord`. Partial(sum) dims get summands: an even share plus noise that sums
// to zero over the partial mesh dimensions (per position on the other dimensions).
at::Tensor localTensor(const at::Tensor& global, const Placements& p, const std::vector<int64_t>& mesh,
                       const Coord& coord, std::map<std::string, std::vector<at::Tensor>>& noise,
                       const std::string& key) {
    at::Tensor t = global;
    for (size_t i = 0; i < p.size(); ++i)
        if (p[i].isShard())
            t = t.chunk(mesh[i], p[i].dim)[coord[i]];
    t = t.contiguous();
    int64_t parts = 1, index = 0;
    std::string rest = key;
    for (size_t i = 0; i < p.size(); ++i) {
        if (p[i].isPartial()) {
            parts *= mesh[i];
            index = index * mesh[i] + coord[i];
        } else if (p[i].isShard()) {
            rest += ":" + std::to_string(coord[i]); // replicated dims hold the same summand
        }
    }
    if (parts == 1)
        return t;
    std::vector<at::Tensor>& summands = noise[rest];
    if (summands.empty()) {
        at::Tensor sum = at::zeros_like(t);
        for (int64_t k = 0; k < parts; ++k) {
            summands.push_back(0.1 * at::randn_like(t));
            sum = sum + summands.back();
        }
        for (at::Tensor& s : summands)
            s = s - sum / static_cast<double>(parts);
    }
    return t / static_cast<double>(parts) + summands[index];
}

// Combines per-device results (in coordinates() order) into the global tensor, innermost mesh dim first.
std::optional<at::Tensor> combine(std::vector<at::Tensor> locals, const Placements& p,
                                  std::vector<int64_t> mesh, std::string& why) {
    for (size_t i = mesh.size(); i-- > 0;) {
        const int64_t n = mesh[i];
        std::vector<at::Tensor> next;
        for (size_t g = 0; g < locals.size(); g += n) {
            std::vector<at::Tensor> group(locals.begin() + g, locals.begin() + g + n);
            const Placement& pl = p[i];
            if (pl.isShard()) {
                next.push_back(at::cat(group, pl.dim));
            } else if (pl.isPartial()) {
                at::Tensor acc = group[0].to(at::kDouble);
                for (int64_t k = 1; k < n; ++k)
                    acc = pl.reduce == ReduceOp::Max ? at::maximum(acc, group[k].to(at::kDouble))
                                                     : acc + group[k].to(at::kDouble);
                if (pl.reduce == ReduceOp::Avg)
                    acc = acc / static_cast<double>(n);
                next.push_back(acc.to(group[0].scalar_type()));
            } else {
                for (int64_t k = 1; k < n; ++k)
                    if (!group[k].sizes().equals(group[0].sizes()) ||
                        !at::allclose(group[k].to(at::kDouble), group[0].to(at::kDouble), 1e-4, 1e-5)) {
                        why = "replicated result differs between devices";
                        return std::nullopt;
                    }
                next.push_back(group[0]);
            }
        }
        locals = std::move(next);
    }
    return locals[0];
}

bool isShapeArgOp(const Node& n) {
    const std::string& op = n.target.op;
    return op == "view" || op == "_unsafe_view" || op == "reshape" || op == "expand" ||
           op == "_reshape_alias";
}

std::vector<int64_t> localSizes(const at::Tensor& global, const Placements& p,
                                const std::vector<int64_t>& mesh) {
    std::vector<int64_t> sizes(global.sizes().begin(), global.sizes().end());
    for (size_t i = 0; i < p.size(); ++i)
        if (p[i].isShard())
            sizes[p[i].dim] /= mesh[i];
    return sizes;
}

struct Tally {
    int checked = 0;
    int skipped = 0;
    std::set<std::string> skippedOps;
    std::vector<std::string> failures;
};

void checkGraph(const std::string& name, const std::vector<int64_t>& meshShape, Tally& tally) {
    const Graph graph = loadGraphAt(sharedPath("graphs/torch-1.13/" + name + "/joint.txt"));
    runtime::Interpreter interp(graph, c10::Device(c10::kCPU));
    SymbolBindings symbols;
    Expected<runtime::InputMap> inputs = runtime::generateInputs(graph, c10::Device(c10::kCPU), 7, symbols);
    QVERIFY2(bool(inputs), inputs ? "" : inputs.error().format().c_str());
    auto ran = interp.run(*inputs, /*keepValues=*/true);
    QVERIFY2(bool(ran), ran ? "" : ran.error().format().c_str());
    const DeviceMesh mesh = DeviceMesh::make(meshShape, {}, *findTopology("h100"));
    const ShardingProblem problem = buildStrategies(graph, mesh);
    const std::vector<Coord> coords = coordinates(meshShape);
    at::manual_seed(11);
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& node = graph.node(id);
        const NodeStrategies& ns = problem.nodes[id];
        if (ns.kind != RuleKind::Rule || ns.inputs.empty())
            continue;
        auto prepared = interp.prepare(id);
        if (!prepared || !*prepared) {
            tally.skipped += static_cast<int>(ns.options.size());
            tally.skippedOps.insert(node.target.op);
            continue;
        }
        const runtime::PreparedCall& call = **prepared;
        // Stack slots holding the node's tensor inputs, in order: (slot, list element or -1).
        std::vector<std::pair<size_t, int64_t>> tensorSlots;
        // A Python number the dispatcher wrapped into a tensor (mul(x, 0.25)) is no input: it stays as it is.
        auto isInput = [&](const at::Tensor& t) {
            for (NodeId in : ns.inputs)
                if (interp.value(in).isTensor() &&
                    interp.value(in).toTensor().unsafeGetTensorImpl() == t.unsafeGetTensorImpl())
                    return true;
            return false;
        };
        for (size_t s = 0; s < call.stack.size(); ++s) {
            if (call.stack[s].isTensor() && isInput(call.stack[s].toTensor()))
                tensorSlots.push_back({s, -1});
            else if (call.stack[s].isTensorList())
                for (size_t e = 0; e < call.stack[s].toTensorList().size(); ++e)
                    tensorSlots.push_back({s, static_cast<int64_t>(e)});
        }
        if (tensorSlots.size() != ns.inputs.size()) {
            tally.skipped += static_cast<int>(ns.options.size());
            tally.skippedOps.insert(node.target.op);
            continue;
        }
        std::vector<at::Tensor> globals;
        for (const auto& [s, e] : tensorSlots)
            globals.push_back(e < 0 ? call.stack[s].toTensor() : call.stack[s].toTensorList().get(e));
        const c10::IValue& expectedValue = interp.value(id);
        std::vector<at::Tensor> expected;
        if (expectedValue.isTensor())
            expected.push_back(expectedValue.toTensor());
        else if (expectedValue.isTuple())
            for (const c10::IValue& v : expectedValue.toTupleRef().elements())
                expected.push_back(v.isTensor() ? v.toTensor() : at::Tensor());
        else if (expectedValue.isTensorList())
            for (const at::Tensor& t : expectedValue.toTensorVector())
                expected.push_back(t);
        for (const Strategy& st : ns.options) {
            const std::string label = name + " " + node.name + " (" + node.target.text + ") mesh " +
                                      std::to_string(meshShape.size()) + "-D: " + [&] {
                                          std::string in;
                                          for (const Placements& p : st.inputs)
                                              in += (in.empty() ? "" : ", ") + toString(p);
                                          std::string out;
                                          for (const Placements& p : st.outputs)
                                              out += (out.empty() ? "" : ", ") + toString(p);
                                          return "(" + in + ") -> " + out;
                                      }();
            std::map<std::string, std::vector<at::Tensor>> noise;
            std::vector<std::vector<at::Tensor>> results(expected.size());
            bool ok = true;
            std::string why;
            for (const Coord& coord : coords) {
                std::vector<c10::IValue> stack = call.stack;
                std::vector<std::vector<at::Tensor>> lists(stack.size());
                for (size_t k = 0; k < tensorSlots.size(); ++k) {
                    at::Tensor local =
                        localTensor(globals[k], st.inputs[k], meshShape, coord, noise, std::to_string(k));
                    if (tensorSlots[k].second < 0)
                        stack[tensorSlots[k].first] = local;
                    else
                        lists[tensorSlots[k].first].push_back(local);
                }
                for (size_t s = 0; s < stack.size(); ++s)
                    if (!lists[s].empty())
                        stack[s] = c10::IValue(c10::List<at::Tensor>(lists[s]));
                if (isShapeArgOp(node) && !expected.empty() && expected[0].defined()) {
                    const std::vector<int64_t> sizes = localSizes(expected[0], st.outputs[0], meshShape);
                    stack[1] = c10::IValue(sizes);
                    if (node.target.op == "_reshape_alias")
                        stack[2] = c10::IValue(at::empty(sizes).strides().vec());
                }
                try {
                    call.op.callBoxed(stack);
                } catch (const std::exception& e) {
                    ok = false;
                    why = std::string("op failed on a shard: ") + e.what();
                    break;
                }
                std::vector<at::Tensor> outs;
                if (stack.size() == 1 && stack[0].isTensorList())
                    outs = stack[0].toTensorVector();
                else
                    for (const c10::IValue& v : stack)
                        outs.push_back(v.isTensor() ? v.toTensor() : at::Tensor());
                for (size_t j = 0; j < expected.size() && j < outs.size(); ++j)
                    results[j].push_back(outs[j]);
            }
            for (size_t j = 0; ok && j < expected.size() && j < st.outputs.size(); ++j) {
                if (!expected[j].defined() || results[j].size() != coords.size() || !results[j][0].defined())
                    continue;
                std::optional<at::Tensor> got = combine(results[j], st.outputs[j], meshShape, why);
                if (!got) {
                    ok = false;
                } else if (!got->sizes().equals(expected[j].sizes())) {
                    ok = false;
                    why = "result " + std::to_string(j) + " has the wrong shape";
                } else if (!at::allclose(got->to(at::kDouble), expected[j].to(at::kDouble), 1e-3, 5e-4)) {
                    ok = false;
                    why =
                        "result " + std::to_string(j) + " differs (max abs error " +
                        std::to_string(
                            (got->to(at::kDouble) - expected[j].to(at::kDouble)).abs().max().item<double>()) +
                        ")";
                }
            }
            if (ok)
                ++tally.checked;
            else
                tally.failures.push_back(label + ": " + why);
        }
    }
}

} // namespace

class TestRuntimeSharding : public QObject {
    Q_OBJECT

private slots:
    void everyStrategyIsValid_data() { test::addTorch113ModelRows("graph"); }
    void everyStrategyIsValid() {
        QFETCH(QString, graph);
        Tally tally;
        for (const std::vector<int64_t>& mesh : {std::vector<int64_t>{2}, std::vector<int64_t>{2, 2}})
            checkGraph(graph.toStdString(), mesh, tally);
        std::string ops;
        for (const std::string& op : tally.skippedOps)
            ops += " " + op;
        qInfo("%s: %d strategies checked, %d skipped (ops:%s)", qPrintable(graph), tally.checked,
              tally.skipped, ops.c_str());
        std::string all;
        for (size_t i = 0; i < tally.failures.size() && i < 40; ++i)
            all += "\n  " + tally.failures[i];
        QVERIFY2(tally.failures.empty(),
                 (std::to_string(tally.failures.size()) + " invalid strategies:" + all).c_str());
        QVERIFY(tally.checked > 50);
        QCOMPARE(tally.skipped, 0);
    }
};

QTEST_GUILESS_MAIN(TestRuntimeSharding)
#include "tst_runtime_sharding.moc"
