// IR basics: values, targets, dtypes, users, stats on hand-counted graphs.
#include "graph/Graph.h"
#include "graph/GraphStats.h"
#include "testutil.h"

#include <cmath>
#include <limits>

using namespace jointscope;

class TestGraph : public QObject {
    Q_OBJECT
private slots:
    void eraseNodesRedirectsReaders() {
        using jointscope::test::makeNode;
        Graph g;
        const NodeId x = g.addNode(makeNode("x", NodeOp::Placeholder, "x"));
        const NodeId a = g.addNode(
            makeNode("a", NodeOp::CallFunction, "torch.ops.aten.relu.default", {Value::nodeRef(x)}));
        const NodeId b = g.addNode(
            makeNode("b", NodeOp::CallFunction, "torch.ops.aten.relu.default", {Value::nodeRef(x)}));
        const NodeId dead = g.addNode(
            makeNode("dead", NodeOp::CallFunction, "torch.ops.aten.neg.default", {Value::nodeRef(x)}));
        const NodeId c = g.addNode(makeNode("c", NodeOp::CallFunction, "torch.ops.aten.add.Tensor",
                                            {Value::list({Value::nodeRef(a), Value::nodeRef(b)})}));
        g.computeUsers();
        std::vector<bool> keep{true, true, false, false, true};
        std::vector<NodeId> replace{x, a, a, dead, c}; // b merged into a; dead simply dropped
        const std::vector<NodeId> newId = g.eraseNodes(keep, replace);
        QCOMPARE(g.size(), size_t(3));
        QCOMPARE(newId[b], kNoNode);
        QCOMPARE(newId[c], NodeId(2));
        QVERIFY(!g.find("b") && !g.find("dead"));
        QCOMPARE(*g.find("c"), NodeId(2));
        const Node& add = g.node(2);
        QCOMPARE(add.args[0].items()[0].asNode(), NodeId(1));
        QCOMPARE(add.args[0].items()[1].asNode(), NodeId(1));
        QCOMPARE(g.node(1).users, (std::vector<NodeId>{2}));
        QCOMPARE(g.node(0).users, (std::vector<NodeId>{1}));
    }

    void targetParsesOpOverloads() {
        Target t = Target::parseFunction("torch.ops.aten.mm.default");
        QCOMPARE(t.kind, TargetKind::OpOverload);
        QCOMPARE(t.ns, std::string("aten"));
        QCOMPARE(t.op, std::string("mm"));
        QCOMPARE(t.overload, std::string("default"));
        QCOMPARE(t.schemaName(), std::string("aten::mm"));
        // str(node.target) form, as torch 1.13 meta sidecars write it.
        QCOMPARE(Target::parseFunction("aten.sum.dim_IntList").text,
                 std::string("torch.ops.aten.sum.dim_IntList"));
        Target hop = Target::parseFunction("torch.ops.higher_order.tag_activation_checkpoint");
        QCOMPARE(hop.kind, TargetKind::HigherOrder);
        QCOMPARE(hop.op, std::string("tag_activation_checkpoint"));
        Target c10d = Target::parseFunction("torch.ops._c10d_functional.all_reduce.default");
        QCOMPARE(c10d.ns, std::string("_c10d_functional"));
        Target packet = Target::parseFunction("torch.ops.aten.add");
        QCOMPARE(packet.kind, TargetKind::OpPacket);
        Target getitem = Target::parseFunction("operator.getitem");
        QVERIFY(getitem.isGetItem());
        Target sin = Target::parseFunction("torch.sin");
        QCOMPARE(sin.kind, TargetKind::Python);
        QCOMPARE(sin.op, std::string("sin"));
    }

    void dtypesRoundTrip() {
        QCOMPARE(parseDType("f32").value(), DType::Float32);
        QCOMPARE(parseDType("torch.bfloat16").value(), DType::BFloat16);
        QCOMPARE(parseDType("b8").value(), DType::Bool);
        QCOMPARE(parseDType("long").value(), DType::Int64);
        QVERIFY(!parseDType("f33"));
        QCOMPARE(itemSize(DType::BFloat16), 2u);
        QCOMPARE(abbreviation(DType::Float8E4M3FN), std::string_view("f8e4m3fn"));
    }

    void valuesCompareNanEqual() {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        QVERIFY(Value::real(nan) == Value::real(nan));
        QVERIFY(!(Value::real(INFINITY) == Value::real(-INFINITY)));
        QVERIFY(Value::integer(INT64_MAX).asInt() == INT64_MAX);
        Value d = Value::dict({{Value::string("a"), Value::nodeRef(3)}});
        int refs = 0;
        d.forEachNode([&](NodeId id) { refs += id == 3 ? 1 : 0; });
        QCOMPARE(refs, 1);
    }

    void usersAndStats() {
        // primals_1 -> relu -> mul(tangents_1, relu) -> output: 1 forward op, 1 backward op (counted by
        // hand).
        Graph g;
        auto add = [&](std::string name, NodeOp op, std::string target, std::vector<Value> args) {
            Node n;
            n.name = std::move(name);
            n.op = op;
            n.target = op == NodeOp::CallFunction ? Target::parseFunction(target) : Target::name(target);
            n.args = std::move(args);
            return g.addNode(std::move(n));
        };
        NodeId p = add("primals_1", NodeOp::Placeholder, "primals_1", {});
        NodeId t = add("tangents_1", NodeOp::Placeholder, "tangents_1", {});
        NodeId relu = add("relu", NodeOp::CallFunction, "torch.ops.aten.relu.default", {Value::nodeRef(p)});
        NodeId mul = add("mul", NodeOp::CallFunction, "torch.ops.aten.mul.Tensor",
                         {Value::nodeRef(t), Value::nodeRef(relu)});
        add("output", NodeOp::Output, "output", {Value::tuple({Value::nodeRef(relu), Value::nodeRef(mul)})});
        g.node(relu).outputKind = OutputKind::Tensor;
        g.node(relu).outputs = {TensorMeta{DType::Float32, {{4, {}}, {8, {}}}, {}, {}}};
        g.computeUsers();
        QCOMPARE(g.node(relu).users.size(), size_t(2));
        QCOMPARE(g.node(p).users, std::vector<NodeId>{relu});
        GraphStats s = computeStats(g);
        QCOMPARE(s.nodes, uint64_t(5));
        QCOMPARE(s.primals, uint64_t(1));
        QCOMPARE(s.tangents, uint64_t(1));
        QCOMPARE(s.forward, uint64_t(1));
        QCOMPARE(s.backward, uint64_t(1));
        QCOMPARE(s.tensorBytes, uint64_t(4 * 8 * 4));
        Graph copy = g;
        QVERIFY(copy == g);
        QCOMPARE(copy.find("mul").value(), mul);
    }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "tst_graph.moc"
