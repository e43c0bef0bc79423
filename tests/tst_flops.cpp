// FLOP counts as torch.utils.flop_counter makes them: hand-counted values on hand-built nodes, and every
// mm / addmm / bmm / convolution of the real torch 1.13 graphs recounted from joint.meta.json shapes.
#include "cost/RuntimeEstimator.h"
#include "io/GraphFile.h"
#include "testutil.h"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>

using namespace jointscope;
using namespace jointscope::cost;
using namespace jointscope::test;

namespace {

TensorMeta tensorOf(std::vector<SymInt> sizes) {
    TensorMeta t;
    t.dtype = DType::Float32;
    t.sizes = std::move(sizes);
    return t;
}

TensorMeta tensorOf(const std::vector<int64_t>& sizes) {
    return f32(sizes);
}

Value ref(NodeId id) {
    return Value::nodeRef(id);
}

Value ints(const std::vector<int64_t>& values) {
    std::vector<Value> items;
    for (int64_t v : values)
        items.push_back(Value::integer(v));
    return Value::list(std::move(items));
}

Value bools(const std::vector<bool>& values) {
    std::vector<Value> items;
    for (bool v : values)
        items.push_back(Value::boolean(v));
    return Value::list(std::move(items));
}

NodeId input(Graph& g, const std::string& name, TensorMeta tensor) {
    Node n = makeNode(name, NodeOp::Placeholder, name);
    n.outputKind = OutputKind::Tensor;
    n.outputs = {std::move(tensor)};
    return g.addNode(std::move(n));
}

NodeId input(Graph& g, const std::string& name, const std::vector<int64_t>& sizes) {
    return input(g, name, tensorOf(sizes));
}

NodeId call(Graph& g, const std::string& name, const std::string& target, std::vector<Value> args,
            std::optional<std::vector<int64_t>> out = std::nullopt) {
    Node n = makeNode(name, NodeOp::CallFunction, target, std::move(args));
    if (out) {
        n.outputKind = OutputKind::Tensor;
        n.outputs = {tensorOf(*out)};
    }
    return g.addNode(std::move(n));
}

Graph loadGraph(const std::string& dir) {
    return jointscope::test::loadGraphAt(dir + "/joint.txt");
}

using Shapes = std::map<std::string, std::vector<uint64_t>>;

// Node name -> shape, straight from the torch 1.13 sidecar.
Shapes metaShapes(const std::string& dir) {
    const auto meta = nlohmann::json::parse(readFile(dir + "/joint.meta.json"));
    Shapes shapes;
    for (const auto& node : meta.at("nodes"))
        if (node.contains("shape"))
            shapes[node.at("name").get<std::string>()] = node.at("shape").get<std::vector<uint64_t>>();
    return shapes;
}

const std::vector<uint64_t>& shapeOfArg(const Graph& g, const Shapes& shapes, const Node& n, size_t i) {
    return shapes.at(g.node(n.args.at(i).asNode()).name);
}

} // namespace

class TestFlops : public QObject {
    Q_OBJECT
private slots:
    void matmuls() {
        Graph g;
        const NodeId a = input(g, "a", {3, 5}), b = input(g, "b", {5, 7}), bias = input(g, "bias", {7});
        const NodeId ba = input(g, "ba", {2, 3, 5}), bb = input(g, "bb", {2, 5, 7});
        const NodeId mm = call(g, "mm", "torch.ops.aten.mm.default", {ref(a), ref(b)});
        const NodeId addmm = call(g, "addmm", "torch.ops.aten.addmm.default", {ref(bias), ref(a), ref(b)});
        const NodeId bmm = call(g, "bmm", "torch.ops.aten.bmm.default", {ref(ba), ref(bb)});
        const NodeId baddbmm =
            call(g, "baddbmm", "torch.ops.aten.baddbmm.default", {ref(bias), ref(ba), ref(bb)});
        const NodeId scaled =
            call(g, "scaled", "torch.ops.aten._scaled_mm.default", {ref(a), ref(b), ref(bias), ref(bias)});
        const NodeId relu = call(g, "relu", "torch.ops.aten.relu.default", {ref(a)});
        Node kw = makeNode("mm_kw", NodeOp::CallFunction, "torch.ops.aten.mm.default");
        kw.kwargs = {{"self", ref(a)}, {"mat2", ref(b)}};
        const NodeId mmKw = g.addNode(std::move(kw));
        const NodeId unknown = call(g, "mm_unknown", "torch.ops.aten.mm.default", {ref(relu), ref(b)});
        g.computeUsers();

        QCOMPARE(countFlops(g, mm), uint64_t(2 * 3 * 7 * 5)); // 2 * M * N * K
        QCOMPARE(countFlops(g, addmm), uint64_t(210));        // bias add not counted
        QCOMPARE(countFlops(g, bmm), uint64_t(2 * 2 * 3 * 7 * 5));
        QCOMPARE(countFlops(g, baddbmm), uint64_t(420));
        QCOMPARE(countFlops(g, scaled), uint64_t(210));
        QCOMPARE(countFlops(g, mmKw), uint64_t(210));
        QCOMPARE(countFlops(g, relu), uint64_t(0));
        QCOMPARE(countFlops(g, unknown), uint64_t(0)); // relu carries no shape here
        QCOMPARE(countFlops(g, a), uint64_t(0));

        const FlopEstimator flops;
        const UnitEstimator unit;
        QCOMPARE(flops.estimate(g, mm), 210.0);
        QCOMPARE(flops.estimate(g, relu), 1.0); // max(counted, 1)
        QCOMPARE(unit.estimate(g, mm), 1.0);
        QCOMPARE(flops.name(), std::string_view("flops"));
        QCOMPARE(unit.name(), std::string_view("testing"));
    }

    void symbolicSizesUseHintOrFallback() {
        Graph g;
        const NodeId unhinted = input(g, "x", tensorOf({SymInt{0, "s0"}, SymInt{5, {}}}));
        const NodeId hinted = input(g, "y", tensorOf({SymInt{3, "s1"}, SymInt{5, {}}}));
        const NodeId w = input(g, "w", {5, 7});
        const NodeId mm0 = call(g, "mm0", "torch.ops.aten.mm.default", {ref(unhinted), ref(w)});
        const NodeId mm1 = call(g, "mm1", "torch.ops.aten.mm.default", {ref(hinted), ref(w)});
        QCOMPARE(countFlops(g, mm0), uint64_t(4096) * 7 * 2 * 5);
        QCOMPARE(countFlops(g, mm1), uint64_t(3 * 7 * 2 * 5));
    }

    void convolutions() {
        Graph g;
        const NodeId x = input(g, "x", {2, 3, 8, 8}), w = input(g, "w", {4, 3, 3, 3}), b = input(g, "b", {4});
        const NodeId wt = input(g, "wt", {3, 4, 3, 3});
        auto convArgs = [&](NodeId weight, int64_t stride, bool transposed) {
            return std::vector<Value>{ref(x),
                                      ref(weight),
                                      ref(b),
                                      ints({stride, stride}),
                                      ints({1, 1}),
                                      ints({1, 1}),
                                      Value::boolean(transposed),
                                      ints({0, 0}),
                                      Value::integer(1)};
        };
        // out 8x8: prod(out spatial) * prod(kernel) * batch * c_out * c_in * 2 = 64 * 9 * 2 * 4 * 3 * 2
        const NodeId conv = call(g, "conv", "torch.ops.aten.convolution.default", convArgs(w, 1, false),
                                 std::vector<int64_t>{2, 4, 8, 8});
        // No output shape recorded: stride 2, padding 1 gives (8 + 2 - 3) / 2 + 1 = 4 -> 16 * 9 * 2 * 4 * 3 *
        // 2
        const NodeId strided =
            call(g, "strided", "torch.ops.aten.convolution.default", convArgs(w, 2, false));
        // Transposed: the input's spatial size counts: 64 * 9 * 2 * 3 * 4 * 2
        const NodeId transposed = call(g, "transposed", "torch.ops.aten.convolution.default",
                                       convArgs(wt, 1, true), std::vector<int64_t>{2, 4, 8, 8});
        std::vector<Value> underscoreArgs = convArgs(w, 1, false);
        for (int i = 0; i < 4; ++i)
            underscoreArgs.push_back(Value::boolean(false));
        const NodeId underscore = call(g, "_conv", "torch.ops.aten._convolution.default", underscoreArgs,
                                       std::vector<int64_t>{2, 4, 8, 8});
        QCOMPARE(countFlops(g, conv), uint64_t(64 * 9 * 2 * 4 * 3 * 2));
        QCOMPARE(countFlops(g, strided), uint64_t(16 * 9 * 2 * 4 * 3 * 2));
        QCOMPARE(countFlops(g, transposed), uint64_t(64 * 9 * 2 * 3 * 4 * 2));
        QCOMPARE(countFlops(g, underscore), uint64_t(27648));

        // convolution_backward of the stride-2 conv: grad_out [2, 4, 4, 4].
        const NodeId gradOut = input(g, "grad_out", {2, 4, 4, 4});
        auto backward = [&](const std::string& name, std::vector<bool> mask) {
            return call(g, name, "torch.ops.aten.convolution_backward.default",
                        {ref(gradOut), ref(x), ref(w), ints({4}), ints({2, 2}), ints({1, 1}), ints({1, 1}),
                         Value::boolean(false), ints({0, 0}), Value::integer(1), bools(mask)});
        };
        // grad_input as a transposed conv of grad_out: prod(grad_out spatial) * 9 * batch 2 * 4 * 3 * 2
        const uint64_t gradInput = 16 * 9 * 2 * 4 * 3 * 2;
        // grad_weight as conv(t(x), t(grad_out)) -> t(grad_weight) [3, 4, 3, 3]:
        // prod(3x3) * prod(grad_out spatial 4x4) * batch 3 * c_out 4 * c_in 2 * 2
        const uint64_t gradWeight = 9 * 16 * 3 * 4 * 2 * 2;
        QCOMPARE(countFlops(g, backward("bw_all", {true, true, true})), gradInput + gradWeight);
        QCOMPARE(countFlops(g, backward("bw_input", {true, false, false})), gradInput);
        QCOMPARE(countFlops(g, backward("bw_weight", {false, true, true})), gradWeight);
        QCOMPARE(countFlops(g, backward("bw_bias", {false, false, true})), uint64_t(0));
    }

    void attention() {
        Graph g;
        const NodeId q = input(g, "q", {2, 4, 16, 8}), k = input(g, "k", {2, 4, 32, 8}),
                     v = input(g, "v", {2, 4, 32, 8});
        const NodeId go = input(g, "go", {2, 4, 16, 8});
        // b*h = 8: q @ k^T = 8 * 16 * 32 * 2 * 8, scores @ v = 8 * 16 * 8 * 2 * 32
        const uint64_t one = 8 * 16 * 32 * 2 * 8;
        for (const char* op :
             {"_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
              "_scaled_dot_product_cudnn_attention"}) {
            const NodeId f = call(g, std::string(op) + "_f", std::string("torch.ops.aten.") + op + ".default",
                                  {ref(q), ref(k), ref(v)});
            QCOMPARE(countFlops(g, f), 2 * one);
            const NodeId b =
                call(g, std::string(op) + "_b", std::string("torch.ops.aten.") + op + "_backward.default",
                     {ref(go), ref(q), ref(k), ref(v)});
            QCOMPARE(countFlops(g, b), 5 * one); // recompute scores + 4 gradient bmms, all the same size here
        }
        // Packed (nested) flash attention: q/k/v [total, h 4, d 8], 3 offsets -> 2 sequences of max
        // length 16.
        const NodeId pq = input(g, "pq", {40, 4, 8}), offsets = input(g, "offsets", {3});
        const NodeId packed = call(g, "packed", "torch.ops.aten._flash_attention_forward.default",
                                   {ref(pq), ref(pq), ref(pq), ref(offsets), ref(offsets), Value::integer(16),
                                    Value::integer(16), Value::real(0.0), Value::boolean(false)});
        QCOMPARE(countFlops(g, packed), uint64_t(2) * (2 * (4 * 16 * 16 * 2 * 8)));
        // Unpacked: shapes taken as they are, [b, h, s, d] (torch does the same for this op's [b, s, h, d]).
        const NodeId plain = call(g, "plain", "torch.ops.aten._flash_attention_forward.default",
                                  {ref(q), ref(k), ref(v), Value::none(), Value::none(), Value::integer(16),
                                   Value::integer(32), Value::real(0.0), Value::boolean(false)});
        QCOMPARE(countFlops(g, plain), 2 * one);
    }

    void realGraphMatmuls_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("mlp") << "mlp";
        QTest::newRow("gpt_block2") << "gpt_block2";
    }
    // Every mm / addmm / bmm recounted as 2 * M * N * K from the sidecar: M, N from the node's own shape, K
    // from its first matrix operand.
    void realGraphMatmuls() {
        QFETCH(QString, model);
        const std::string dir = sharedPath("graphs/torch-1.13/" + model.toStdString());
        const Graph g = loadGraph(dir);
        const Shapes shapes = metaShapes(dir);
        int counted = 0;
        for (NodeId id = 0; id < g.size(); ++id) {
            const Node& n = g.node(id);
            uint64_t expected = 0;
            if (n.target.op == "mm" || n.target.op == "addmm") {
                const auto& out = shapes.at(n.name);
                const auto& a = shapeOfArg(g, shapes, n, n.target.op == "mm" ? 0 : 1);
                expected = 2 * out.at(0) * out.at(1) * a.at(1);
            } else if (n.target.op == "bmm") {
                const auto& out = shapes.at(n.name);
                const auto& a = shapeOfArg(g, shapes, n, 0);
                expected = 2 * out.at(0) * out.at(1) * out.at(2) * a.at(2);
            } else {
                QCOMPARE(countFlops(g, id), uint64_t(0));
                continue;
            }
            QVERIFY(expected > 0);
            QCOMPARE(countFlops(g, id), expected);
            ++counted;
        }
        QVERIFY(counted >= (model == "mlp" ? 6 : 20));
    }

    // convolution: out spatial * kernel * batch * c_out * c_in * 2; convolution_backward: grad_input (same
    // shape as the input) + grad_weight, by the output mask.
    void realGraphConvolutions() {
        const std::string dir = sharedPath("graphs/torch-1.13/convnet");
        const Graph g = loadGraph(dir);
        const Shapes shapes = metaShapes(dir);
        int convs = 0, backwards = 0;
        auto prod = [](const std::vector<uint64_t>& s, size_t from) {
            uint64_t p = 1;
            for (size_t i = from; i < s.size(); ++i)
                p *= s[i];
            return p;
        };
        for (NodeId id = 0; id < g.size(); ++id) {
            const Node& n = g.node(id);
            if (n.target.op == "convolution") {
                const auto& x = shapeOfArg(g, shapes, n, 0);
                const auto& w = shapeOfArg(g, shapes, n, 1);
                const auto& out = shapes.at(n.name);
                QCOMPARE(countFlops(g, id), prod(out, 2) * prod(w, 2) * x[0] * w[0] * w[1] * 2);
                ++convs;
            } else if (n.target.op == "convolution_backward") {
                const auto& go = shapeOfArg(g, shapes, n, 0);
                const auto& x = shapeOfArg(g, shapes, n, 1);
                const auto& w = shapeOfArg(g, shapes, n, 2);
                const std::vector<Value>& mask = n.args.at(10).items();
                uint64_t expected = 0;
                if (mask.at(0).asBool()) // transposed conv of grad_out with w: grad_out's spatial size
                    expected += prod(go, 2) * prod(w, 2) * go[0] * w[0] * w[1] * 2;
                if (mask.at(1).asBool()) // conv(t(x), t(grad_out)) -> t(w): w's spatial * grad_out's spatial
                    expected += prod(w, 2) * prod(go, 2) * x[1] * go[1] * go[0] * 2;
                QVERIFY(expected > 0);
                QCOMPARE(countFlops(g, id), expected);
                ++backwards;
            }
        }
        QCOMPARE(convs, 2);
        QCOMPARE(backwards, 2);
    }
};

QTEST_GUILESS_MAIN(TestFlops)
#include "tst_flops.moc"
