// The cost model: per-op work (FLOPs, bytes) against hand-computed numbers on real torch 1.13 graphs and
// hand- built nodes, the device table, roofline arithmetic, profiled lookups, and the CLI (cost, partition /
// pareto
// --cost-model).
#include "cost/CostModel.h"
#include "cost/DeviceSpec.h"
#include "cost/OpSignature.h"
#include "cost/OpWork.h"
#include "cost/ProfileDb.h"
#include "ops/Ruleset.h"
#include "partition/Partitioner.h"
#include "testutil.h"

#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>
#include <set>

using namespace jointscope;
using namespace jointscope::cost;
using namespace jointscope::test;
using Json = nlohmann::json;

namespace {

constexpr double kF32 = 4; // bytes per float32 element

std::string graph113(const char* model) {
    return sharedPath(std::string("graphs/torch-1.13/") + model + "/joint.txt");
}

NodeId idOf(const Graph& g, const char* name) {
    const std::optional<NodeId> id = g.find(name);
    if (!id)
        qFatal("no node %s", name);
    return *id;
}

TensorMeta tensorOf(const std::vector<int64_t>& sizes, DType dtype = DType::Float32,
                    const std::vector<int64_t>& strides = {}) {
    TensorMeta t;
    t.dtype = dtype;
    for (int64_t s : sizes)
        t.sizes.push_back(SymInt{s, {}});
    for (int64_t s : strides)
        t.strides.push_back(SymInt{s, {}});
    return t;
}

NodeId input(Graph& g, const std::string& name, TensorMeta tensor) {
    Node n = makeNode(name, NodeOp::Placeholder, name);
    n.outputKind = OutputKind::Tensor;
    n.outputs = {std::move(tensor)};
    return g.addNode(std::move(n));
}

NodeId call(Graph& g, const std::string& name, const std::string& target, std::vector<Value> args,
            std::optional<TensorMeta> out = std::nullopt) {
    Node n = makeNode(name, NodeOp::CallFunction, target, std::move(args));
    if (out) {
        n.outputKind = OutputKind::Tensor;
        n.outputs = {std::move(*out)};
    }
    return g.addNode(std::move(n));
}

Value ref(NodeId id) {
    return Value::nodeRef(id);
}

Json parseOut(const Run& run) {
    Json j = Json::parse(run.out, nullptr, false);
    if (j.is_discarded())
        qFatal("not JSON: %s\nstderr: %s", run.out.c_str(), run.err.c_str());
    return j;
}

const Json& nodeEntry(const Json& costJson, const std::string& name) {
    for (const Json& n : costJson.at("nodes"))
        if (n.at("name") == name)
            return n;
    qFatal("no node %s in cost output", name.c_str());
}

// Every node costs 1 µs: shows which numbers the partitioner took from the estimator.
class UnitCostModel final : public CostModel {
public:
    NodeCost cost(const Graph&, NodeId) const override { return {1.0, {}, CostSource::Roofline}; }
    std::string_view name() const override { return "unit"; }
};

// A device with round numbers for the roofline arithmetic.
DeviceSpec roundDevice() {
    DeviceSpec d;
    d.name = "round";
    d.fp32 = 1e12;
    d.tf32 = 8e12;
    d.fp64 = 0.5e12;
    d.memoryBandwidth = 1e13;
    return d;
}

} // namespace

class TestCostModel : public QObject {
    Q_OBJECT

private slots:
    // Shapes from gpt_block2/joint.meta.json, counted by hand.
    void gptBlockFormulas() {
        const Graph g = loadGraphAt(graph113("gpt_block2"));

        // addmm(primals_4 [192], view [32, 64], t [64, 192]) -> [32, 192]
        OpWork w = opWork(g, idOf(g, "addmm"));
        QCOMPARE(w.flops, double(2 * 32 * 192 * 64));
        QCOMPARE(w.bytesRead, (192 + 32 * 64 + 64 * 192) * kF32);
        QCOMPARE(w.bytesWritten, 32 * 192 * kF32);
        QCOMPARE(w.opClass, OpClass::Matmul);
        QCOMPARE(w.dtype, DType::Float32);
        QVERIFY(!w.free && !w.unknown && !w.incomplete);
        // The FLOPs are torch's flop_counter count, unchanged.
        QCOMPARE(w.flops, double(countFlops(g, idOf(g, "addmm"))));

        // bmm([8, 16, 16], [8, 16, 16]) -> [8, 16, 16]
        w = opWork(g, idOf(g, "bmm"));
        QCOMPARE(w.flops, double(2 * 8 * 16 * 16 * 16));
        QCOMPARE(w.bytesRead, 2 * 8 * 16 * 16 * kF32);
        QCOMPARE(w.bytesWritten, 8 * 16 * 16 * kF32);

        // mm_1 = mm(t_9 [64, 32], view_22 [32, 256]) -> [64, 256]: K = 32
        w = opWork(g, idOf(g, "mm_1"));
        QCOMPARE(w.flops, double(2 * 64 * 256 * 32));

        // native_layer_norm(primals_25 [2, 16, 64], [64], w [64], b [64]): 5 per element + weight + bias.
        // Its outputs are only recorded on its getitems: [2, 16, 64], mean and rstd [2, 16, 1].
        w = opWork(g, idOf(g, "native_layer_norm"));
        QCOMPARE(w.flops, double(2 * 16 * 64 * (5 + 1 + 1)));
        QCOMPARE(w.bytesRead, (2 * 16 * 64 + 64 + 64) * kF32);
        QCOMPARE(w.bytesWritten, (2 * 16 * 64 + 2 * 16 + 2 * 16) * kF32);
        QCOMPARE(w.opClass, OpClass::Normalization);

        // native_layer_norm_backward(grad [2,16,64], input [2,16,64], [64], mean, rstd [2,16,1], w, b, mask
        // all true): x-hat 2 + grad_input 6 + grad_weight 2 + grad_bias 1 per element.
        w = opWork(g, idOf(g, "native_layer_norm_backward"));
        QCOMPARE(w.flops, double(2 * 16 * 64 * (2 + 6 + 2 + 1)));
        QCOMPARE(w.bytesRead, (2 * (2 * 16 * 64) + 2 * (2 * 16) + 64 + 64) * kF32);
        QCOMPARE(w.bytesWritten, (2 * 16 * 64 + 64 + 64) * kF32);

        // _softmax(mul [2, 4, 16, 16]): max, subtract, exp, sum, divide.
        w = opWork(g, idOf(g, "_softmax"));
        QCOMPARE(w.flops, double(2 * 4 * 16 * 16 * 5));
        QCOMPARE(w.bytesRead, 2 * 4 * 16 * 16 * kF32);
        QCOMPARE(w.bytesWritten, 2 * 4 * 16 * 16 * kF32);
        QCOMPARE(w.opClass, OpClass::Softmax);
        // _softmax_backward_data(grad, out, -1, f32): multiply, sum, subtract, multiply.
        w = opWork(g, idOf(g, "_softmax_backward_data"));
        QCOMPARE(w.flops, double(2 * 4 * 16 * 16 * 4));
        QCOMPARE(w.bytesRead, 2 * (2 * 4 * 16 * 16) * kF32);

        // mul(_unsafe_view_2, 0.25): the scalar is no tensor.
        w = opWork(g, idOf(g, "mul"));
        QCOMPARE(w.flops, double(2 * 4 * 16 * 16));
        QCOMPARE(w.bytesRead, 2 * 4 * 16 * 16 * kF32);
        // gelu [2, 16, 256] (erf form) and its backward.
        QCOMPARE(opWork(g, idOf(g, "gelu")).flops, double(2 * 16 * 256 * 5));
        QCOMPARE(opWork(g, idOf(g, "gelu_backward")).flops, double(2 * 16 * 256 * 11));
        // sum(_reshape_alias_2 [32, 64], [0], True) -> [1, 64]: one add per input element.
        w = opWork(g, idOf(g, "sum_1"));
        QCOMPARE(w.flops, double(32 * 64));
        QCOMPARE(w.bytesRead, 32 * 64 * kF32);
        QCOMPARE(w.bytesWritten, 64 * kF32);
        QCOMPARE(w.opClass, OpClass::Reduction);
        // cat of three [2, 16, 64] -> [2, 16, 192]: bytes only.
        w = opWork(g, idOf(g, "cat"));
        QCOMPARE(w.flops, 0.0);
        QCOMPARE(w.bytesRead, 3 * (2 * 16 * 64) * kF32);
        QCOMPARE(w.bytesWritten, 2 * 16 * 192 * kF32);
        QCOMPARE(w.opClass, OpClass::Copy);
        // clone of a transposed expand: every element read and written.
        w = opWork(g, idOf(g, "clone"));
        QCOMPARE(w.bytesRead, 2 * 4 * 16 * 16 * kF32);
        QCOMPARE(w.bytesWritten, 2 * 4 * 16 * 16 * kF32);
    }

    // Shapes from convnet/joint.meta.json.
    void convnetFormulas() {
        const Graph g = loadGraphAt(graph113("convnet"));
        // convolution(x [2,3,8,8], w [16,3,3,3], b [16]) -> [2,16,8,8]: torch's count (8*8 * 3*3 * 2 * 16 * 3
        // * 2).
        OpWork w = opWork(g, idOf(g, "convolution"));
        QCOMPARE(w.flops, double(8 * 8 * 3 * 3 * 2 * 16 * 3 * 2));
        QCOMPARE(w.bytesRead, (2 * 3 * 8 * 8 + 16 * 3 * 3 * 3 + 16) * kF32);
        QCOMPARE(w.bytesWritten, 2 * 16 * 8 * 8 * kF32);
        QCOMPARE(w.opClass, OpClass::Convolution);

        // native_batch_norm(conv [2,16,8,8], w, b, running_mean, running_var [16], training): like layer
        // norm.
        w = opWork(g, idOf(g, "native_batch_norm"));
        QCOMPARE(w.flops, double(2 * 16 * 8 * 8 * (5 + 1 + 1)));
        QCOMPARE(w.bytesRead, (2 * 16 * 8 * 8 + 4 * 16) * kF32);
        QCOMPARE(w.bytesWritten, (2 * 16 * 8 * 8 + 16 + 16) * kF32);
        w = opWork(g, idOf(g, "native_batch_norm_backward"));
        QCOMPARE(w.flops, double(2 * 16 * 8 * 8 * (2 + 6 + 2 + 1)));

        // relu [2,16,8,8]
        QCOMPARE(opWork(g, idOf(g, "relu")).flops, double(2 * 16 * 8 * 8));
        // max_pool2d_with_indices(relu_1 [2,16,8,8], [2, 2]) -> values f32 and indices i64 [2,16,4,4]: each
        // output compares its 2x2 window.
        w = opWork(g, idOf(g, "max_pool2d_with_indices"));
        QCOMPARE(w.flops, double(2 * 16 * 4 * 4 * (2 * 2)));
        QCOMPARE(w.bytesRead, 2 * 16 * 8 * 8 * kF32);
        QCOMPARE(w.bytesWritten, 2 * 16 * 4 * 4 * (kF32 + 8));
        QCOMPARE(w.opClass, OpClass::Pool);
        // Its backward(div [2,16,4,4], relu_1, ..., indices i64 [2,16,4,4]): one add per gradient element;
        // relu_1 only gives the shape and is not read.
        w = opWork(g, idOf(g, "max_pool2d_with_indices_backward"));
        QCOMPARE(w.flops, double(2 * 16 * 4 * 4));
        QCOMPARE(w.bytesRead, 2 * 16 * 4 * 4 * (kF32 + 8));
        QCOMPARE(w.bytesWritten, 2 * 16 * 8 * 8 * kF32);
        // mean(getitem_6 [2,16,4,4], [2, 3]) -> [2, 16]
        w = opWork(g, idOf(g, "mean"));
        QCOMPARE(w.flops, double(2 * 16 * 4 * 4));
        QCOMPARE(w.bytesWritten, 2 * 16 * kF32);
        // div(expand, 16): expand is [2,16,4,4] with strides [16,1,0,0], a broadcast of 2 x 16 stored values.
        w = opWork(g, idOf(g, "div"));
        QCOMPARE(w.flops, double(2 * 16 * 4 * 4));
        QCOMPARE(w.bytesRead, 2 * 16 * kF32);
        QCOMPARE(w.bytesWritten, 2 * 16 * 4 * 4 * kF32);
        // threshold_backward(grad, out, 0): one select per element, two tensors read.
        w = opWork(g, idOf(g, "threshold_backward"));
        QCOMPARE(w.flops, double(2 * 16 * 8 * 8));
        QCOMPARE(w.bytesRead, 2 * (2 * 16 * 8 * 8) * kF32);
    }

    void viewsAndBookkeepingAreFree() {
        const Graph g = loadGraphAt(graph113("gpt_block2"));
        const RooflineModel roofline(*findDevice("h100"));
        const std::set<std::string> views = {
            "view", "t", "transpose", "expand", "_unsafe_view", "_reshape_alias", "detach", "split"};
        int checked = 0;
        for (NodeId id = 0; id < g.size(); ++id) {
            const Node& n = g.node(id);
            const char* reason = n.op == NodeOp::Placeholder ? "placeholder"
                                 : n.op == NodeOp::Output    ? "output"
                                 : n.target.isGetItem()      ? "getitem"
                                 : views.count(n.target.op)  ? "view"
                                                             : nullptr;
            const NodeCost c = roofline.cost(g, id);
            if (reason == nullptr) {
                QVERIFY2(!c.work.free, n.name.c_str());
                QCOMPARE(c.source, CostSource::Roofline);
                QVERIFY(c.timeUs >= RooflineModel::kDefaultLaunchOverheadUs);
                continue;
            }
            QVERIFY2(c.work.free, n.name.c_str());
            QCOMPARE(c.work.freeReason, std::string(reason));
            QCOMPARE(c.work.bytes(), 0.0);
            QCOMPARE(c.timeUs, 0.0);
            QCOMPARE(c.source, CostSource::Free);
            ++checked;
        }
        QVERIFY(checked > 200); // 311 nodes, 88 of them kernels
    }

    void broadcastingPointwise() {
        Graph g;
        const NodeId a = input(g, "a", tensorOf({4, 1, 8}));
        const NodeId b = input(g, "b", tensorOf({3, 1}));
        // No output shape: the broadcast [4, 3, 8] of the inputs.
        const NodeId add = call(g, "add", "torch.ops.aten.add.Tensor", {ref(a), ref(b)});
        const NodeId addOut =
            call(g, "add_out", "torch.ops.aten.add.Tensor", {ref(a), ref(b)}, tensorOf({4, 3, 8}));
        const NodeId cond = input(g, "cond", tensorOf({4, 3, 8}, DType::Bool));
        const NodeId x = input(g, "x", tensorOf({8}));
        const NodeId where = call(g, "where", "torch.ops.aten.where.self",
                                  {ref(cond), ref(x), Value::real(0.0)}, tensorOf({4, 3, 8}));
        const NodeId sq = input(g, "sq", tensorOf({5, 5}));
        const NodeId mulSelf =
            call(g, "mul_self", "torch.ops.aten.mul.Tensor", {ref(sq), ref(sq)}, tensorOf({5, 5}));
        const NodeId bcast = input(g, "bcast", tensorOf({4, 8}, DType::Float32, {0, 1})); // expanded [8]
        const NodeId neg = call(g, "neg", "torch.ops.aten.neg.default", {ref(bcast)}, tensorOf({4, 8}));
        Node tanh = makeNode("gelu_tanh", NodeOp::CallFunction, "torch.ops.aten.gelu.default", {ref(sq)});
        tanh.kwargs = {{"approximate", Value::string("tanh")}};
        tanh.outputKind = OutputKind::Tensor;
        tanh.outputs = {tensorOf({5, 5})};
        const NodeId gelu = g.addNode(std::move(tanh));
        const NodeId var = call(g, "var", "torch.ops.aten.var.correction", {ref(sq)}, tensorOf({}));
        const NodeId maxOther =
            call(g, "max_other", "torch.ops.aten.max.other", {ref(sq), ref(sq)}, tensorOf({5, 5}));
        g.computeUsers();

        OpWork w = opWork(g, add);
        QCOMPARE(w.flops, double(4 * 3 * 8));
        QCOMPARE(w.bytesRead, (4 * 8 + 3) * kF32);
        QCOMPARE(w.bytesWritten, 0.0);
        QVERIFY(w.incomplete); // the result's size is unknown
        w = opWork(g, addOut);
        QCOMPARE(w.flops, double(4 * 3 * 8));
        QCOMPARE(w.bytesWritten, 4 * 3 * 8 * kF32);
        QVERIFY(!w.incomplete);
        w = opWork(g, where);
        QCOMPARE(w.flops, double(4 * 3 * 8));
        QCOMPARE(w.bytesRead, 4 * 3 * 8 * 1 + 8 * kF32);      // bool condition, f32 x, scalar y
        QCOMPARE(opWork(g, mulSelf).bytesRead, 5 * 5 * kF32); // the same tensor twice is read once
        QCOMPARE(opWork(g, neg).bytesRead, 8 * kF32);         // stride-0 dimension read once
        QCOMPARE(opWork(g, neg).flops, double(4 * 8));
        QCOMPARE(opWork(g, gelu).flops, double(5 * 5 * 9));
        QCOMPARE(opWork(g, var).flops, double(5 * 5 * 3));
        QCOMPARE(opWork(g, var).opClass, OpClass::Reduction);
        QCOMPARE(opWork(g, maxOther).opClass, OpClass::Pointwise); // max.other is binary, not a reduction
        QCOMPARE(opWork(g, maxOther).flops, double(5 * 5));
    }

    void attentionGathersLossesCopies() {
        Graph g;
        const NodeId q = input(g, "q", tensorOf({2, 4, 16, 8}, DType::BFloat16));
        const NodeId k = input(g, "k", tensorOf({2, 4, 32, 8}, DType::BFloat16));
        const NodeId v = input(g, "v", tensorOf({2, 4, 32, 8}, DType::BFloat16));
        Node sdpa =
            makeNode("sdpa", NodeOp::CallFunction,
                     "torch.ops.aten._scaled_dot_product_flash_attention.default", {ref(q), ref(k), ref(v)});
        sdpa.outputKind = OutputKind::Tuple;
        sdpa.outputs = {tensorOf({2, 4, 16, 8}, DType::BFloat16), tensorOf({2, 4, 16}, DType::Float32)};
        const NodeId attention = g.addNode(std::move(sdpa));

        const NodeId table = input(g, "table", tensorOf({1000, 64}));
        const NodeId tokens = input(g, "tokens", tensorOf({2, 16}, DType::Int64));
        const NodeId embedding = call(g, "embedding", "torch.ops.aten.embedding.default",
                                      {ref(table), ref(tokens)}, tensorOf({2, 16, 64}));
        const NodeId grad = input(g, "grad", tensorOf({2, 16, 64}));
        const NodeId embeddingBw =
            call(g, "embedding_bw", "torch.ops.aten.embedding_dense_backward.default",
                 {ref(grad), ref(tokens), Value::integer(1000), Value::integer(-1), Value::boolean(false)},
                 tensorOf({1000, 64}));
        const NodeId logp = input(g, "logp", tensorOf({32, 1000}));
        const NodeId labels = input(g, "labels", tensorOf({32}, DType::Int64));
        Node nll = makeNode("nll", NodeOp::CallFunction, "torch.ops.aten.nll_loss_forward.default",
                            {ref(logp), ref(labels), Value::none(), Value::integer(1), Value::integer(-100)});
        nll.outputKind = OutputKind::Tuple;
        nll.outputs = {tensorOf({}), tensorOf({})};
        const NodeId loss = g.addNode(std::move(nll));
        const NodeId lossGrad = input(g, "loss_grad", tensorOf({}));
        const NodeId totalWeight = input(g, "total_weight", tensorOf({}));
        const NodeId nllBw = call(g, "nll_bw", "torch.ops.aten.nll_loss_backward.default",
                                  {ref(lossGrad), ref(logp), ref(labels), Value::none(), Value::integer(1),
                                   Value::integer(-100), ref(totalWeight)},
                                  tensorOf({32, 1000}));
        const NodeId index = call(g, "index", "torch.ops.aten.index.Tensor",
                                  {ref(table), Value::list({ref(labels)})}, tensorOf({32, 64}));
        const NodeId toBf16 = call(g, "to_bf16", "torch.ops.aten._to_copy.default", {ref(table)},
                                   tensorOf({1000, 64}, DType::BFloat16));
        const NodeId zeros = call(g, "zeros", "torch.ops.aten.zeros.default",
                                  {Value::list({Value::integer(8), Value::integer(8)})}, tensorOf({8, 8}));
        g.computeUsers();

        // Attention: torch's count, b*h = 8: q @ k^T and scores @ v, each 8 * 16 * 32 * 2 * 8.
        OpWork w = opWork(g, attention);
        QCOMPARE(w.flops, double(2 * (8 * 16 * 32 * 2 * 8)));
        QCOMPARE(w.opClass, OpClass::Attention);
        QCOMPARE(w.dtype, DType::BFloat16);
        QCOMPARE(w.bytesRead, (2 * 4 * 16 * 8 + 2 * (2 * 4 * 32 * 8)) * 2.0);
        QCOMPARE(w.bytesWritten, 2 * 4 * 16 * 8 * 2.0 + 2 * 4 * 16 * kF32);
        // Embedding reads the indices and the 32 rows it gathers, not the whole table.
        w = opWork(g, embedding);
        QCOMPARE(w.flops, 0.0);
        QCOMPARE(w.bytesRead, 2 * 16 * 8 + 2 * 16 * 64 * kF32);
        QCOMPARE(w.bytesWritten, 2 * 16 * 64 * kF32);
        QCOMPARE(w.opClass, OpClass::Gather);
        // Its backward adds every gradient row into the table.
        w = opWork(g, embeddingBw);
        QCOMPARE(w.flops, double(2 * 16 * 64));
        QCOMPARE(w.bytesRead, 2 * 16 * 64 * kF32 + 2 * 16 * 8);
        QCOMPARE(w.bytesWritten, 1000 * 64 * kF32);
        // nll_loss: one gathered log-probability per label.
        w = opWork(g, loss);
        QCOMPARE(w.flops, 32.0);
        QCOMPARE(w.bytesRead, 32 * 8 + 32 * kF32);
        QCOMPARE(w.bytesWritten, 2 * kF32);
        QCOMPARE(w.opClass, OpClass::Loss);
        w = opWork(g, nllBw); // grad, labels, total_weight read; the whole gradient written
        QCOMPARE(w.flops, 32.0);
        QCOMPARE(w.bytesRead, kF32 + 32 * 8 + kF32);
        QCOMPARE(w.bytesWritten, 32 * 1000 * kF32);
        // index gathers 32 rows of 64.
        w = opWork(g, index);
        QCOMPARE(w.bytesRead, 32 * 8 + 32 * 64 * kF32);
        // A dtype conversion reads f32 and writes bf16.
        w = opWork(g, toBf16);
        QCOMPARE(w.flops, 0.0);
        QCOMPARE(w.bytesRead, 1000 * 64 * kF32);
        QCOMPARE(w.bytesWritten, 1000 * 64 * 2.0);
        QCOMPARE(w.opClass, OpClass::Copy);
        w = opWork(g, zeros);
        QCOMPARE(w.bytesRead, 0.0);
        QCOMPARE(w.bytesWritten, 8 * 8 * kF32);
        QCOMPARE(w.opClass, OpClass::Creation);
    }

    void reshapeSymbolicAndUnknown() {
        Graph g;
        const NodeId contiguous = input(g, "c", tensorOf({4, 8}, DType::Float32, {8, 1}));
        const NodeId transposed = input(g, "tr", tensorOf({4, 8}, DType::Float32, {1, 4}));
        const NodeId view = call(g, "reshape_view", "torch.ops.aten.reshape.default",
                                 {ref(contiguous), Value::list({Value::integer(32)})}, tensorOf({32}));
        const NodeId copy = call(g, "reshape_copy", "torch.ops.aten.reshape.default",
                                 {ref(transposed), Value::list({Value::integer(32)})}, tensorOf({32}));
        Node size = makeNode("sym_size", NodeOp::CallFunction, "torch.ops.aten.sym_size.int",
                             {ref(contiguous), Value::integer(0)});
        size.outputKind = OutputKind::SymInt;
        size.symValue = "s0";
        const NodeId sym = g.addNode(std::move(size));
        const NodeId mystery =
            call(g, "mystery", "torch.ops.aten.mystery_op.default", {ref(contiguous)}, tensorOf({4, 8}));
        const NodeId hop =
            call(g, "hop", "torch.ops.higher_order.some_hop", {ref(contiguous)}, tensorOf({4, 8}));
        g.computeUsers();

        QVERIFY(opWork(g, view).free);
        QCOMPARE(opWork(g, view).freeReason, std::string("view"));
        OpWork w = opWork(g, copy); // a non-contiguous input is copied
        QVERIFY(!w.free);
        QCOMPARE(w.bytesRead, 32 * kF32);
        QCOMPARE(w.bytesWritten, 32 * kF32);
        QVERIFY(opWork(g, sym).free);
        QCOMPARE(opWork(g, sym).freeReason, std::string("symbolic"));

        for (NodeId id : {mystery, hop}) {
            w = opWork(g, id);
            QVERIFY(w.unknown);
            QVERIFY(!w.free);
            QCOMPARE(w.opClass, OpClass::Unknown);
            QCOMPARE(w.flops, 0.0);
            QCOMPARE(w.bytesRead, 4 * 8 * kF32);
            QCOMPARE(w.bytesWritten, 4 * 8 * kF32);
        }
        // An unknown op still costs its bytes and the launch.
        const RooflineModel model(roundDevice(), Efficiency{1.0, 0.5}, 2.0);
        const NodeCost c = model.cost(g, mystery);
        QCOMPARE(c.source, CostSource::Roofline);
        QCOMPARE(c.timeUs, (2 * 4 * 8 * kF32) / (1e13 * 0.5) * 1e6 + 2.0);
    }

    // The sharding engine's question: the same node on a shard's local shapes, without a graph.
    void explicitTensors() {
        const Graph g = loadGraphAt(graph113("gpt_block2"));
        const NodeId addmm = idOf(g, "addmm");
        OpTensors local = gatherTensors(g, addmm);
        QCOMPARE(local.inputs.size(), size_t(3));
        const Node& node = g.node(addmm);
        // Rows split in half: mat1 [16, 64], result [16, 192]; bias and weight whole.
        local.setInput(node.args[1].asNode(), tensorOf({16, 64}));
        local.outputs = {tensorOf({16, 192})};
        const OpWork w = opWork(node, local);
        QCOMPARE(w.flops, double(2 * 16 * 192 * 64));
        QCOMPARE(w.bytesRead, (192 + 16 * 64 + 64 * 192) * kF32);
        QCOMPARE(w.bytesWritten, 16 * 192 * kF32);
        QCOMPARE(double(countFlops(node, local)), w.flops);
        // The graph itself is untouched.
        QCOMPARE(opWork(g, addmm).flops, double(2 * 32 * 192 * 64));
    }

    void deviceLookups() {
        const std::optional<DeviceSpec> h100 = findDevice("h100");
        QVERIFY(h100);
        QCOMPARE(h100->name, std::string("NVIDIA H100 SXM5 80GB"));
        QCOMPARE(h100->cudaName, std::string("NVIDIA H100 80GB HBM3"));
        QCOMPARE(h100->bf16, 989.4e12);
        QCOMPARE(h100->memoryBandwidth, 3350e9);
        QCOMPARE(h100->smCount, 132);
        const std::optional<DeviceSpec> byCuda = findDevice("NVIDIA H100 80GB HBM3");
        QVERIFY(byCuda);
        QCOMPARE(byCuda->alias, std::string("h100"));
        QCOMPARE(findDevice("H100")->alias, std::string("h100")); // case does not matter

        const std::optional<DeviceSpec> a100 = findDevice("NVIDIA A100-SXM4-80GB");
        QVERIFY(a100);
        QCOMPARE(a100->alias, std::string("a100"));
        QCOMPARE(a100->memoryBandwidth, 2039e9);
        QCOMPARE(findDevice("nvidia a100 sxm4 80gb")->alias, std::string("a100"));
        // A second CUDA name of a row keeps its own spelling: it keys the profile DB.
        const std::optional<DeviceSpec> pcie40 = findDevice("NVIDIA A100-PCIE-40GB");
        QVERIFY(pcie40);
        QCOMPARE(pcie40->alias, std::string("a100-40gb"));
        QCOMPARE(pcie40->cudaName, std::string("NVIDIA A100-PCIE-40GB"));
        QCOMPARE(findDevice("l40s")->fp8, 733e12);
        QCOMPARE(findDevice("h200")->memoryBandwidth, 4800e9);
        QVERIFY(!findDevice("tpu-v5"));
        QVERIFY(!findDevice(""));

        // The dtype picks the matmul peak; fp32 uses TF32 only when asked.
        QCOMPARE(peakFlops(*h100, DType::Float32), 66.9e12);
        QCOMPARE(peakFlops(*h100, DType::Float32, Fp32Matmul::Tf32), 494.7e12);
        QCOMPARE(peakFlops(*h100, DType::BFloat16), 989.4e12);
        QCOMPARE(peakFlops(*h100, DType::Float8E4M3FN), 1978.9e12);
        QCOMPARE(peakFlops(*h100, DType::Float64), 66.9e12); // FP64 tensor core
        QCOMPARE(vectorFlops(*h100, DType::Float64), 33.5e12);
        QCOMPARE(vectorFlops(*h100, DType::BFloat16), 66.9e12);
        // Missing units fall back: no FP8 on A100 (FP16 rate), no BF16 on V100 (FP32 rate).
        QCOMPARE(peakFlops(*a100, DType::Float8E5M2), 312e12);
        QCOMPARE(peakFlops(*findDevice("v100"), DType::BFloat16), 15.7e12);

        std::set<std::string> aliases;
        for (const DeviceSpec& d : knownDevices()) {
            QVERIFY2(aliases.insert(d.alias).second, d.alias.c_str());
            QVERIFY(d.fp32 > 0 && d.memoryBandwidth > 0 && d.memoryBytes > 0 && d.smCount > 0);
            QVERIFY(!d.source.empty());
            QVERIFY(findDevice(d.cudaName)); // every row is found by the name CUDA reports
        }
        QVERIFY(aliases.size() >= 12);

        const DeviceSpec cpu = cpuDevice({"test cpu", 100, 0, 20, 8, 0});
        QVERIFY(cpu.measured);
        QCOMPARE(cpu.fp32, 100e9);
        QCOMPARE(cpu.bf16, 100e9);
        QCOMPARE(cpu.fp64, 50e9);
        QCOMPARE(cpu.memoryBandwidth, 20e9);
        QCOMPARE(cpu.smCount, 8);
        QCOMPARE(cpuDevice({"cpu", 100, 80, 20, 8, 0}).fp64Matmul, 80e9);
    }

    void rooflineTimes() {
        const Graph g = loadGraphAt(graph113("gpt_block2"));
        const RooflineModel ieee(roundDevice(), Efficiency{0.5, 0.25}, 2.0);
        const RooflineModel tf32(roundDevice(), Efficiency{0.5, 0.25}, 2.0, Fp32Matmul::Tf32);

        // addmm: compute-bound on this device.
        const double flops = 2 * 32 * 192 * 64;
        const double bytes = (192 + 32 * 64 + 64 * 192 + 32 * 192) * kF32;
        const NodeCost addmm = ieee.cost(g, idOf(g, "addmm"));
        QCOMPARE(addmm.source, CostSource::Roofline);
        QCOMPARE(addmm.timeUs, std::max(flops / (1e12 * 0.5), bytes / (1e13 * 0.25)) * 1e6 + 2.0);
        QCOMPARE(addmm.timeUs, flops / (1e12 * 0.5) * 1e6 + 2.0);
        QCOMPARE(tf32.nodeTimeUs(g, idOf(g, "addmm")), flops / (8e12 * 0.5) * 1e6 + 2.0);

        // Layer norm runs on the vector units: TF32 does not speed it up.
        const double lnFlops = 2 * 16 * 64 * 7;
        const double lnBytes = (2 * 16 * 64 + 128) * kF32 + (2 * 16 * 64 + 64) * kF32;
        const double lnUs = std::max(lnFlops / (1e12 * 0.5), lnBytes / (1e13 * 0.25)) * 1e6 + 2.0;
        QCOMPARE(ieee.nodeTimeUs(g, idOf(g, "native_layer_norm")), lnUs);
        QCOMPARE(tf32.nodeTimeUs(g, idOf(g, "native_layer_norm")), lnUs);

        // Memory-bound on a slow-memory device: clone moves 2 x 2048 floats.
        DeviceSpec slow = roundDevice();
        slow.memoryBandwidth = 1e9;
        const RooflineModel slowModel(slow, Efficiency{1.0, 1.0}, 0.0);
        QCOMPARE(slowModel.nodeTimeUs(g, idOf(g, "clone")), 2 * 2048 * kF32 / 1e9 * 1e6);
        QCOMPARE(slowModel.nodeTimeUs(g, idOf(g, "view")), 0.0);

        // The estimator adapter hands the partitioner microseconds.
        const CostModelEstimator estimator(ieee);
        QCOMPARE(estimator.estimate(g, idOf(g, "addmm")), addmm.timeUs);
        QCOMPARE(estimator.name(), std::string_view("roofline"));
    }

    void profiledModel() {
        const Graph g = loadGraphAt(graph113("gpt_block2"));
        Expected<std::unique_ptr<ProfileDb>> db = ProfileDb::open(":memory:");
        JS_VERIFY_EXPECTED(db);
        OpStats stats;
        stats.medianUs = 123.5;
        stats.minUs = stats.maxUs = stats.meanUs = 123.5;
        stats.reps = 5;
        const std::string device = "NVIDIA H100 80GB HBM3";
        QVERIFY((*db)->store({device, "2.11.0", opSignature(g, idOf(g, "addmm"))}, stats));
        const RooflineModel roofline(*findDevice("h100"));
        const ProfiledModel profiled(**db, device, "2.11.0", roofline);
        const ProfiledModel otherTorch(**db, device, "2.10.0", roofline);

        NodeCost c = profiled.cost(g, idOf(g, "addmm"));
        QCOMPARE(c.source, CostSource::Profiled);
        QCOMPARE(c.timeUs, 123.5);
        QCOMPARE(c.work.flops, double(2 * 32 * 192 * 64)); // the work is still counted
        // Not in the DB (other shapes, other torch): the roofline.
        c = profiled.cost(g, idOf(g, "addmm_1"));
        QCOMPARE(c.source, CostSource::Roofline);
        QCOMPARE(c.timeUs, roofline.nodeTimeUs(g, idOf(g, "addmm_1")));
        QCOMPARE(otherTorch.cost(g, idOf(g, "addmm")).source, CostSource::Roofline);
        QCOMPARE(profiled.cost(g, idOf(g, "view")).source, CostSource::Free);
        QCOMPARE(profiled.name(), std::string_view("profiled"));
    }

    // CostModelEstimator drives the knapsack: with a model where every node costs 1, the Pareto sweep's
    // recompute cost is the number of recomputed nodes.
    void estimatorDrivesPartitioner() {
        Graph g = loadGraphAt(graph113("gpt_block2"));
        Expected<Ruleset> rules = loadRuleset("torch-1.13");
        JS_VERIFY_EXPECTED(rules);
        const UnitCostModel unit;
        const CostModelEstimator estimator(unit);
        partition::PartitionOptions options;
        options.estimator = &estimator;
        Expected<std::vector<partition::ParetoPoint>> curve = partition::paretoCurve(g, *rules, options, 5);
        JS_VERIFY_EXPECTED(curve);
        bool recomputedSome = false;
        for (const partition::ParetoPoint& p : *curve) {
            QCOMPARE(p.recomputeCost, double(p.recomputedCount));
            recomputedSome = recomputedSome || p.recomputedCount > 0;
        }
        QVERIFY(recomputedSome);
    }

    void partitionCliCostModel() {
        const QString file = q(graph113("gpt_block2"));
        const QStringList base = {"partition",       file,  "--ruleset", "torch-1.13",
                                  "--memory-budget", "0.5", "--json"};
        const Run flops = runCli(base);
        const Run explicitFlops = runCli(QStringList(base) << "--cost-model"
                                                           << "flops");
        const Run roofline = runCli(QStringList(base) << "--cost-model"
                                                      << "roofline");
        QVERIFY2(flops.exitCode == 0, flops.err.c_str());
        QVERIFY2(explicitFlops.exitCode == 0, explicitFlops.err.c_str());
        QVERIFY2(roofline.exitCode == 0, roofline.err.c_str());
        const Json f = parseOut(flops), e = parseOut(explicitFlops), r = parseOut(roofline);
        // The default is FLOPs, exactly as before: same decision, no cost_model key.
        QCOMPARE(e.at("saved"), f.at("saved"));
        QVERIFY(!f.contains("cost_model"));
        QCOMPARE(r.at("cost_model").get<std::string>(), std::string("roofline"));
        QCOMPARE(r.at("decided_by"), f.at("decided_by"));
        // In microseconds a 3 µs pointwise op weighs as much as a matmul: the knapsack keeps other values.
        QVERIFY(r.at("saved") != f.at("saved"));

        const Run curve = runCli({"pareto", file, "--ruleset", "torch-1.13", "--points", "3", "--cost-model",
                                  "roofline", "--target-device", "a100", "--json"});
        QVERIFY2(curve.exitCode == 0, curve.err.c_str());
        const Json c = parseOut(curve);
        QCOMPARE(c.at("cost_model").get<std::string>(), std::string("roofline"));
        QCOMPARE(c.at("points").back().at("recompute_cost").get<double>(), 0.0);
        QVERIFY(c.at("points").front().at("recompute_cost").get<double>() > 0);

        const Run badModel = runCli({"partition", file, "--cost-model", "guess"});
        QCOMPARE(badModel.exitCode, 64);
        QVERIFY(badModel.err.find("unknown --cost-model 'guess'") != std::string::npos);
        const Run badDevice = runCli({"pareto", file, "--cost-model", "roofline", "--target-device", "tpu"});
        QCOMPARE(badDevice.exitCode, 64);
        QVERIFY(badDevice.err.find("unknown --target-device 'tpu'") != std::string::npos);
        const Run noDb =
            runCli({"partition", file, "--cost-model", "profiled", "--db", "/nonexistent/p.sqlite"});
        QCOMPARE(noDb.exitCode, 2);
        QVERIFY(noDb.err.find("/nonexistent/p.sqlite") != std::string::npos);
    }

    void costCliJson() {
        const std::string path = graph113("gpt_block2");
        const Graph g = loadGraphAt(path);
        const Run run = runCli({"cost", q(path), "--json"});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        const Json j = parseOut(run);
        QCOMPARE(j.at("format").get<std::string>(), std::string("jointscope-cost"));
        QCOMPARE(j.at("version").get<int>(), 1);
        QCOMPARE(j.at("model").get<std::string>(), std::string("roofline"));
        QCOMPARE(j.at("device").at("alias").get<std::string>(), std::string("h100"));
        QCOMPARE(j.at("nodes").size(), g.size());

        // Totals are the sums of the rows.
        double flops = 0, read = 0, written = 0, time = 0;
        size_t free = 0, roofline = 0;
        for (const Json& n : j.at("nodes")) {
            flops += n.at("flops").get<double>();
            read += n.at("bytes_read").get<double>();
            written += n.at("bytes_written").get<double>();
            time += n.at("time_us").get<double>();
            free += n.at("source") == "free";
            roofline += n.at("source") == "roofline";
            QCOMPARE(n.at("source") == "free", n.contains("free_reason"));
        }
        const Json& t = j.at("totals");
        QCOMPARE(t.at("nodes").get<size_t>(), g.size());
        QCOMPARE(t.at("flops").get<double>(), flops);
        QCOMPARE(t.at("bytes_read").get<double>(), read);
        QCOMPARE(t.at("bytes_written").get<double>(), written);
        QCOMPARE(t.at("time_us").get<double>(), time);
        QCOMPARE(t.at("free").get<size_t>(), free);
        QCOMPARE(t.at("roofline").get<size_t>(), roofline);
        QCOMPARE(free + roofline, g.size());
        QCOMPARE(t.at("unknown").get<size_t>(), size_t(0));
        QVERIFY(j.at("unknown_ops").empty());

        const Json& addmm = nodeEntry(j, "addmm");
        QCOMPARE(addmm.at("flops").get<double>(), double(2 * 32 * 192 * 64));
        QCOMPARE(addmm.at("bytes_read").get<double>(), (192 + 32 * 64 + 64 * 192) * kF32);
        QCOMPARE(addmm.at("class").get<std::string>(), std::string("matmul"));
        QCOMPARE(nodeEntry(j, "view").at("free_reason").get<std::string>(), std::string("view"));

        // Another device: its datasheet rates, with the default efficiencies and launch overhead.
        const Run a100 = runCli({"cost", q(path), "--target-device", "NVIDIA A100-SXM4-80GB", "--json"});
        QVERIFY2(a100.exitCode == 0, a100.err.c_str());
        const Json ja = parseOut(a100);
        QCOMPARE(ja.at("device").at("cuda_name").get<std::string>(), std::string("NVIDIA A100-SXM4-80GB"));
        const Efficiency eff;
        const double bytes = (192 + 32 * 64 + 64 * 192 + 32 * 192) * kF32;
        const double expected =
            std::max(2.0 * 32 * 192 * 64 / (19.5e12 * eff.compute), bytes / (2039e9 * eff.memory)) * 1e6 +
            RooflineModel::kDefaultLaunchOverheadUs;
        QCOMPARE(nodeEntry(ja, "addmm").at("time_us").get<double>(), expected);

        const Run text = runCli({"cost", q(path)});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.find("total: 311 nodes") != std::string::npos);
    }

    void costCliUnknownOpsAndProfiles() {
        QTemporaryDir dir;
        const std::string fx = dir.filePath("mystery.txt").toStdString();
        std::ofstream(fx) << "class GraphModule(torch.nn.Module):\n"
                             "    def forward(self, x: \"f32[4, 8]\", y: \"f32[8]\"):\n"
                             "        add: \"f32[4, 8]\" = torch.ops.aten.add.Tensor(x, y)\n"
                             "        mystery: \"f32[4, 8]\" = torch.ops.aten.mystery_op.default(add)\n"
                             "        mystery_1: \"f32[4, 8]\" = torch.ops.aten.mystery_op.default(mystery)\n"
                             "        return (mystery_1,)\n";
        const Run run = runCli({"cost", q(fx), "--json"});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        QVERIFY2(run.err.find("torch.ops.aten.mystery_op.default (x2)") != std::string::npos,
                 run.err.c_str());
        const Json j = parseOut(run);
        QCOMPARE(j.at("totals").at("unknown").get<int>(), 2);
        QCOMPARE(j.at("unknown_ops").at("torch.ops.aten.mystery_op.default").get<int>(), 2);
        const Json& m = nodeEntry(j, "mystery");
        QVERIFY(m.at("unknown").get<bool>());
        QCOMPARE(m.at("flops").get<double>(), 0.0);
        QCOMPARE(m.at("bytes_read").get<double>(), 4 * 8 * kF32);
        QCOMPARE(m.at("bytes_written").get<double>(), 4 * 8 * kF32);
        QCOMPARE(nodeEntry(j, "add").at("flops").get<double>(), double(4 * 8));
        QCOMPARE(nodeEntry(j, "add").at("bytes_read").get<double>(), (4 * 8 + 8) * kF32);

        // --db: measured medians where the database has the node's signature.
        const std::string graphPath = graph113("gpt_block2");
        const Graph g = loadGraphAt(graphPath);
        const std::string dbPath = dir.filePath("profiles.sqlite").toStdString();
        const std::string signature = opSignature(g, idOf(g, "addmm"));
        {
            Expected<std::unique_ptr<ProfileDb>> db = ProfileDb::open(dbPath);
            JS_VERIFY_EXPECTED(db);
            OpStats stats;
            stats.medianUs = 42.0;
            stats.reps = 3;
            QVERIFY((*db)->store({"NVIDIA H100 80GB HBM3", "2.11.0", signature}, stats));
        }
        size_t sameSignature = 0;
        for (NodeId id = 0; id < g.size(); ++id)
            sameSignature += g.node(id).op == NodeOp::CallFunction && opSignature(g, id) == signature;
        QVERIFY(sameSignature >= 1);
        const Run profiled = runCli({"cost", q(graphPath), "--db", q(dbPath), "--json"});
        QVERIFY2(profiled.exitCode == 0, profiled.err.c_str());
        const Json p = parseOut(profiled);
        QCOMPARE(p.at("model").get<std::string>(), std::string("profiled"));
        QCOMPARE(p.at("torch_version").get<std::string>(), std::string("2.11.0")); // the only one stored
        QCOMPARE(p.at("totals").at("profiled").get<size_t>(), sameSignature);
        QCOMPARE(nodeEntry(p, "addmm").at("source").get<std::string>(), std::string("profiled"));
        QCOMPARE(nodeEntry(p, "addmm").at("time_us").get<double>(), 42.0);
        // The same database drives the partitioner.
        const Run part = runCli({"partition", q(graphPath), "--ruleset", "torch-1.13", "--memory-budget",
                                 "0.5", "--cost-model", "profiled", "--db", q(dbPath), "--json"});
        QVERIFY2(part.exitCode == 0, part.err.c_str());
        QCOMPARE(parseOut(part).at("cost_model").get<std::string>(), std::string("profiled"));
        // No rows for the target device: a warning, and the roofline everywhere.
        const Run otherDevice =
            runCli({"cost", q(graphPath), "--db", q(dbPath), "--target-device", "a100", "--json"});
        QCOMPARE(otherDevice.exitCode, 0);
        QVERIFY(otherDevice.err.find("no rows for 'NVIDIA A100-SXM4-80GB'") != std::string::npos);
        QCOMPARE(parseOut(otherDevice).at("totals").at("profiled").get<int>(), 0);
    }

    void costCliListDevices() {
        const Run text = runCli({"cost", "--list-devices"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY(text.out.find("NVIDIA H100 SXM5 80GB") != std::string::npos);
        const Run json = runCli({"cost", "--list-devices", "--json"});
        QCOMPARE(json.exitCode, 0);
        std::set<std::string> aliases;
        const Json listed = parseOut(json);
        for (const Json& d : listed.at("devices")) {
            aliases.insert(d.at("alias").get<std::string>());
            if (d.at("alias") == "h100")
                QCOMPARE(d.at("bf16_tflops").get<double>(), 989.4);
            if (d.at("alias") == "a100")
                QCOMPARE(d.at("bandwidth_gbs").get<double>(), 2039.0);
        }
        for (const char* alias : {"h100", "h100-pcie", "h200", "a100", "a100-40gb", "l4", "l40s", "b200",
                                  "gb200", "a10", "v100", "mi300x"})
            QVERIFY2(aliases.count(alias), alias);
        const Run missing = runCli({"cost"});
        QCOMPARE(missing.exitCode, 64);
    }
};

QTEST_GUILESS_MAIN(TestCostModel)
#include "tst_costmodel.moc"
