// The memory timeline on a graph small enough to count by hand (every expected number is worked out in the
// comments: f32 [4, 8] = 128 B, a 0-d f32 = 4 B, f32 [8, 8] = 256 B; inputs count 0), and the view rule
// (ATen's computeStride) on hand-made layouts. torch itself is the oracle of tests/python/
// test_memory_timeline.py and test_torch2_memory_timeline.py.
#include "testutil.h"

#include "ops/StorageAlias.h"
#include "partition/MemoryTimeline.h"

#include <QTest>

using namespace jointscope;
using namespace jointscope::partition;
using namespace jointscope::test;

namespace {

NodeId add(Graph& g, std::string name, NodeOp op, std::string target, std::vector<Value> args,
           TensorMeta out) {
    Node n = makeNode(std::move(name), op, std::move(target), std::move(args));
    n.outputKind = OutputKind::Tensor;
    n.outputs = {std::move(out)};
    return g.addNode(std::move(n));
}

Value ref(NodeId id) {
    return Value::nodeRef(id);
}

// forward:  mm = x @ w; relu; view = relu.view(32) (an alias); sum = view.sum()   -> returns sum
// backward: expand(tangent) -> view_1 (aliases of the tangent); mul = view_1 * relu; t = x.t() (an alias of
//           an input); mm_1 = t @ mul (grad of w)                                 -> returns None, mm_1
// returnRelu: the forward also returns relu (as torch returns a mutated buffer's new value that it saves
// too).
Graph tinyJoint(bool returnRelu = false) {
    Graph g;
    const NodeId x = add(g, "primals_1", NodeOp::Placeholder, "primals_1", {}, f32({4, 8}));
    const NodeId w = add(g, "primals_2", NodeOp::Placeholder, "primals_2", {}, f32({8, 8}));
    const NodeId tangent = add(g, "tangents_1", NodeOp::Placeholder, "tangents_1", {}, f32({}));
    const NodeId mm =
        add(g, "mm", NodeOp::CallFunction, "torch.ops.aten.mm.default", {ref(x), ref(w)}, f32({4, 8}));
    const NodeId relu =
        add(g, "relu", NodeOp::CallFunction, "torch.ops.aten.relu.default", {ref(mm)}, f32({4, 8}));
    const NodeId view = add(g, "view", NodeOp::CallFunction, "torch.ops.aten.view.default",
                            {ref(relu), Value::list({Value::integer(32)})}, f32({32}));
    const NodeId sum =
        add(g, "sum_1", NodeOp::CallFunction, "torch.ops.aten.sum.default", {ref(view)}, f32({}));
    const NodeId expand = add(g, "expand", NodeOp::CallFunction, "torch.ops.aten.expand.default",
                              {ref(tangent), Value::list({Value::integer(32)})}, f32({32}));
    const NodeId view1 = add(g, "view_1", NodeOp::CallFunction, "torch.ops.aten.view.default",
                             {ref(expand), Value::list({Value::integer(4), Value::integer(8)})}, f32({4, 8}));
    const NodeId mul = add(g, "mul", NodeOp::CallFunction, "torch.ops.aten.mul.Tensor",
                           {ref(view1), ref(relu)}, f32({4, 8}));
    const NodeId t = add(g, "t", NodeOp::CallFunction, "torch.ops.aten.t.default", {ref(x)}, f32({8, 4}));
    const NodeId mm1 =
        add(g, "mm_1", NodeOp::CallFunction, "torch.ops.aten.mm.default", {ref(t), ref(mul)}, f32({8, 8}));
    std::vector<Value> results{ref(sum)};
    if (returnRelu)
        results.push_back(ref(relu));
    results.insert(results.end(), {Value::none(), ref(mm1)});
    g.addNode(makeNode("output", NodeOp::Output, "output", {Value::tuple(std::move(results))}));
    g.numFwdOutputs = returnRelu ? 2 : 1;
    g.computeUsers();
    return g;
}

struct Expect {
    const char* node;
    uint64_t live;
    bool recomputed = false;
};

void check(const Graph& g, const MemoryTimeline& t, const std::vector<Expect>& expected) {
    QCOMPARE(t.steps.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i) {
        const MemoryStep& s = t.steps[i];
        QVERIFY2(g.node(s.node).name == expected[i].node,
                 qPrintable(QString("step %1 runs %2, expected %3")
                                .arg(i)
                                .arg(q(g.node(s.node).name), expected[i].node)));
        QVERIFY2(s.liveBytes == expected[i].live, qPrintable(QString("step %1 (%2): %3 bytes, expected %4")
                                                                 .arg(i)
                                                                 .arg(expected[i].node)
                                                                 .arg(s.liveBytes)
                                                                 .arg(expected[i].live)));
        QCOMPARE(s.recomputed, expected[i].recomputed);
    }
}

NodeId id(const Graph& g, const char* name) {
    return *g.find(name);
}

} // namespace

class TestMemoryTimeline : public QObject {
    Q_OBJECT
private slots:
    // relu saved: it lives until mul, its last backward use; the view of it adds nothing.
    void savedValueLivesToItsLastBackwardUse_data() {
        QTest::addColumn<bool>("returnRelu");
        QTest::newRow("saved") << false;
        QTest::newRow("saved and returned") << true; // held once, not released twice when the forward ends
    }
    void savedValueLivesToItsLastBackwardUse() {
        QFETCH(bool, returnRelu);
        const Graph g = tinyJoint(returnRelu);
        const Ruleset rules = loadRuleset("torch-1.13").take();
        const std::vector<NodeId> saved{id(g, "primals_1"), id(g, "relu")}; // the input: 0 bytes
        Expected<MemoryTimeline> t = memoryTimeline(g, saved, {}, rules);
        QVERIFY2(t, t ? "" : t.error().format().c_str());
        check(g, *t,
              {{"mm", 128},     // mm
               {"relu", 256},   // mm + relu; mm's last use: freed after -> 128
               {"view", 128},   // a view of relu: same storage, counted once
               {"sum_1", 132},  // + 4; the view dies, relu (saved) stays
               {"expand", 128}, // sum_1 went to the caller; a view of the tangent: an input, 0
               {"view_1", 128}, // same
               {"mul", 256},    // + 128; relu's last backward use: freed after -> 128
               {"t", 128},      // a view of primals_1: an input
               {"mm_1", 384}}); // + 256 (the gradient, kept to the end)
        QCOMPARE(t->forwardSteps, size_t(4));
        QCOMPARE(t->savedBytes, uint64_t(128));
        QCOMPARE(t->peakBytes, uint64_t(384));
        QCOMPARE(q(g.node(t->peak()->node).name), QString("mm_1"));
    }

    // mm saved, relu recomputed: torch 1.13 runs it at its place in the joint graph (the backward's first
    // node); torch 2 at its first use (reordering_to_mimic_autograd_engine).
    void recomputedNodeRunsInTheBackward() {
        const Graph g = tinyJoint();
        const std::vector<NodeId> saved{id(g, "primals_1"), id(g, "mm")};
        const std::vector<Expect> forward = {
            {"mm", 128},
            {"relu", 256},
            {"view", 256},   // relu's variable dies here, its storage lives on in the view
            {"sum_1", 260}}; // then the view dies: relu's storage goes -> 132
        std::vector<Expect> joint = forward;
        joint.insert(joint.end(), {{"relu", 256, true}, // recomputed from mm, mm's last use -> 128
                                   {"expand", 128},
                                   {"view_1", 128},
                                   {"mul", 256},
                                   {"t", 128},
                                   {"mm_1", 384}});
        Expected<MemoryTimeline> old = memoryTimeline(g, saved, {}, loadRuleset("torch-1.13").take());
        QVERIFY(old);
        check(g, *old, joint);
        QCOMPARE(old->savedBytes, uint64_t(128));

        std::vector<Expect> autograd = forward;
        autograd.insert(autograd.end(), {{"expand", 128},
                                         {"view_1", 128},
                                         {"relu", 256, true}, // right before mul needs it
                                         {"mul", 256},
                                         {"t", 128},
                                         {"mm_1", 384}});
        Expected<MemoryTimeline> now = memoryTimeline(g, saved, {}, loadRuleset("torch-2.15").take());
        QVERIFY(now);
        check(g, *now, autograd);

        // Had relu been a random op whose RNG state the forward saves (functionalize_rng_ops), the CPU
        // generator's 5,056 B state is made with it and lives until the backward replays it.
        const std::vector<NodeId> rngStates{id(g, "relu")};
        Expected<MemoryTimeline> rng =
            memoryTimeline(g, saved, {}, loadRuleset("torch-2.15").take(), rngStates);
        QVERIFY(rng);
        check(g, *rng,
              {{"mm", 128},
               {"relu", 256 + 5056},
               {"view", 256 + 5056},
               {"sum_1", 260 + 5056},
               {"expand", 128 + 5056}, // mm and the state cross into the backward
               {"view_1", 128 + 5056},
               {"relu", 256 + 5056, true}, // the replay: mm and the state go after it
               {"mul", 256},
               {"t", 128},
               {"mm_1", 384}});
    }

    void invalidDecisionIsRefused() {
        const Graph g = tinyJoint();
        const std::vector<NodeId> saved{id(g, "primals_1")};
        QVERIFY(!memoryTimeline(g, saved, {}, loadRuleset("torch-1.13").take())); // the backward needs relu
    }

    // ATen's computeStride: a transposed [4, 8] cannot be flattened without a copy, a contiguous one can.
    void viewRule() {
        TensorMeta contiguous = f32({4, 8});
        contiguous.strides = {SymInt{8, {}}, SymInt{1, {}}};
        TensorMeta transposed = f32({8, 4});
        transposed.strides = {SymInt{1, {}}, SymInt{8, {}}};
        const std::vector<SymInt> flat{SymInt{32, {}}};
        QVERIFY(viewable(contiguous, flat));
        QVERIFY(!viewable(transposed, flat));
        QVERIFY(viewable(transposed, {SymInt{8, {}}, SymInt{1, {}}, SymInt{4, {}}})); // a size-1 dim inserted
        QCOMPARE(storageAlias("aten.view"), StorageAlias::Always);
        QCOMPARE(storageAlias("aten.add_"), StorageAlias::Always); // in place
        QCOMPARE(storageAlias("aten.reshape"), StorageAlias::IfViewable);
        QCOMPARE(storageAlias("aten.clone"), StorageAlias::None);
        Node reshape =
            makeNode("r", NodeOp::CallFunction, "torch.ops.aten.reshape.default", {Value::nodeRef(0)});
        const TensorMeta out = f32({32});
        QVERIFY(sharesFirstArgumentStorage(reshape, &contiguous, &out));
        QVERIFY(!sharesFirstArgumentStorage(reshape, &transposed, &out));
    }

    // A strided tensor occupies its extent: a [4, 8] with row stride 16 spans 3 * 16 + 7 + 1 = 56 elements.
    void storageExtent() {
        TensorMeta t = f32({4, 8});
        QCOMPARE(storageBytes(t), uint64_t(128));
        t.strides = {SymInt{16, {}}, SymInt{1, {}}};
        QCOMPARE(storageBytes(t), uint64_t(56 * 4));
    }
};

QTEST_APPLESS_MAIN(TestMemoryTimeline)
#include "tst_memorytimeline.moc"
