// IR basics: values, targets, dtypes, users, stats on hand-counted graphs; symbolic sizes, tensor metadata
// checks, op schemas and graph validation.
#include "graph/FxNamespace.h"
#include "graph/Graph.h"
#include "graph/GraphStats.h"
#include "graph/HopBody.h"
#include "graph/ShapeFacts.h"
#include "graph/SymbolicExpr.h"
#include "io/FxReader.h"
#include "io/GraphCheck.h"
#include "ops/OpSchema.h"
#include "testutil.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <optional>

using namespace jointscope;

class TestGraph : public QObject {
    Q_OBJECT
private slots:
    // The body a get_attr or a HOP call reads: the GUI's "open body" and the interpreter both ask bodyOf.
    void hopBodies() {
        using test::makeNode;
        Graph g;
        auto makeBody = [](const char* name) {
            auto body = std::make_unique<Graph>();
            body->name = name;
            return body;
        };
        const int32_t first = g.addSubgraph(makeBody("wrap_body_0"));
        const int32_t second = g.addSubgraph(makeBody("wrap_body_1"));
        const NodeId x = g.addNode(makeNode("x", NodeOp::Placeholder, "x"));
        Node attr0 = makeNode("wrap_body_0", NodeOp::GetAttr, "wrap_body_0");
        attr0.subgraph = first;
        const NodeId a0 = g.addNode(attr0);
        Node attr1 = makeNode("wrap_body_1", NodeOp::GetAttr, "wrap_body_1");
        attr1.subgraph = second;
        const NodeId a1 = g.addNode(attr1);
        Node dangling = makeNode("dangling", NodeOp::GetAttr, "dangling");
        dangling.subgraph = 7; // no such body in the file
        const NodeId bad = g.addNode(dangling);
        // invoke_subgraph(wrap_body_1, "id", x): the body is the second argument, operands follow it.
        const NodeId call = g.addNode(
            makeNode("invoke", NodeOp::CallFunction, "torch.ops.higher_order.invoke_subgraph",
                     {Value::nodeRef(x), Value::nodeRef(a1), Value::string("id"), Value::nodeRef(x)}));
        const NodeId noBody = g.addNode(makeNode("orphan", NodeOp::CallFunction,
                                                 "torch.ops.higher_order.tag_activation_checkpoint",
                                                 {Value::nodeRef(bad), Value::nodeRef(x)}));
        const NodeId mm = g.addNode(makeNode("mm", NodeOp::CallFunction, "torch.ops.aten.mm.default",
                                             {Value::nodeRef(a0), Value::nodeRef(x)}));
        g.computeUsers();

        QCOMPARE(bodyOf(g, a0), g.subgraph(first));
        QCOMPARE(bodyOf(g, a1), g.subgraph(second));
        QCOMPARE(bodyOf(g, call), g.subgraph(second));
        QCOMPARE(bodyArgument(g, g.node(call)), std::optional<size_t>(1));
        QVERIFY(!bodyOf(g, bad));
        QVERIFY(!bodyOf(g, noBody));
        QVERIFY(!bodyArgument(g, g.node(noBody)));
        QVERIFY(!bodyOf(g, mm)); // not a HOP, though it reads a body
        QVERIFY(!bodyArgument(g, g.node(mm)));
        QVERIFY(!bodyOf(g, x));
        QVERIFY(!bodyOf(g, NodeId(g.size())));
    }

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

    void symbolicEvaluation_data() {
        QTest::addColumn<QString>("expr");
        QTest::addColumn<qint64>("value"); // expected value (Python's, worked by hand)
        QTest::newRow("floor div") << "-7//2" << qint64(-4);
        QTest::newRow("mod sign") << "-7 % 3" << qint64(2);
        QTest::newRow("mod negative divisor") << "7 % -3" << qint64(-2);
        QTest::newRow("ceil div") << "CeilDiv(7, 2)" << qint64(4);
        QTest::newRow("ceil div negative") << "CeilDiv(-7, 2)" << qint64(-3);
        QTest::newRow("symbols") << "4*s0 + 1" << qint64(4 * 128 + 1);
        QTest::newRow("max min") << "Max(1, Min(s0, 7))" << qint64(7);
        QTest::newRow("INT64_MIN literal")
            << "-9223372036854775808" << qint64(std::numeric_limits<int64_t>::min());
        QTest::newRow("INT64_MIN % -1") << "-9223372036854775808 % -1" << qint64(0);
        QTest::newRow("Mod INT64_MIN, -1") << "Mod(-9223372036854775808, -1)" << qint64(0);
        QTest::newRow("INT64_MAX") << "9223372036854775806 + 1"
                                   << qint64(std::numeric_limits<int64_t>::max());
        QTest::newRow("minus chain") << QString(10001, '-') + "5" << qint64(-5);
        QTest::newRow("256 levels") << QString(256, '(') + "s0" + QString(256, ')') << qint64(128);
        // sympy prints strides of symbolic shapes with powers: 4*s27**2
        QTest::newRow("power") << "4*s0**2" << qint64(4 * 128 * 128);
        QTest::newRow("power before minus") << "-2**2" << qint64(-4);
        QTest::newRow("power right to left") << "2**3**2" << qint64(512);
        QTest::newRow("power of a sum") << "(s0//2 + 1)**2 - 1" << qint64(65 * 65 - 1);
        QTest::newRow("zero power") << "s0**0" << qint64(1);
        // efficient attention's logsumexp on CUDA (torch 2.11 log): f32[2, 4, 32*CeilToInt(IntTrueDiv(s27,
        // 32))]
        QTest::newRow("ceil of a true quotient") << "32*CeilToInt(IntTrueDiv(s0 - 112, 32))" << qint64(32);
        QTest::newRow("ceil of an exact quotient") << "CeilToInt(IntTrueDiv(s0, 32))" << qint64(4);
        QTest::newRow("floor of a negative quotient") << "FloorToInt(IntTrueDiv(-7, 2))" << qint64(-4);
        QTest::newRow("trunc of a negative quotient") << "TruncToInt(IntTrueDiv(-7, 2))" << qint64(-3);
        QTest::newRow("ceil of an int") << "CeilToInt(s0 + 1)" << qint64(129);
        // k = max(int(b * 0.5), 1) under dynamic=True (torch 2.11 and 2.15 logs): Python's int() of a float;
        // the values are Python's: int(0.5 * 128), math.floor(-0.3 * 128), math.ceil(128 / 3), round(2.5)
        QTest::newRow("trunc of a float product") << "Max(1, TruncToInt(0.5*ToFloat(s0)))" << qint64(64);
        QTest::newRow("floor of a negative float") << "FloorToInt(-0.3*ToFloat(s0))" << qint64(-39);
        QTest::newRow("ceil of a float quotient")
            << "CeilToInt(FloatTrueDiv(ToFloat(s0), 3.0))" << qint64(43);
        QTest::newRow("round half to even") << "RoundToInt(2.5) + RoundToInt(3.5)" << qint64(2 + 4);
    }

    void symbolicEvaluation() {
        QFETCH(QString, expr);
        QFETCH(qint64, value);
        Expected<int64_t> v = evaluateSymbolic(expr.toStdString(), {{"s0", 128}});
        JS_VERIFY_EXPECTED(v);
        QCOMPARE(qint64(*v), value);
    }

    void symbolicErrors_data() {
        QTest::addColumn<QString>("expr");
        QTest::addColumn<QString>("message");
        QTest::addColumn<bool>("hard");  // checkSymbolic refuses it too (wrong whatever the symbols)
        QTest::addColumn<int>("offset"); // where checkSymbolic points (hard errors only)
        QTest::newRow("INT64_MIN // -1") << "-9223372036854775808 // -1"
                                         << "int64 overflow in -9223372036854775808 // -1" << true << 21;
        QTest::newRow("FloorDiv(INT64_MIN, -1)")
            << "FloorDiv(-9223372036854775808, -1)"
            << "int64 overflow in -9223372036854775808 // -1" << true << 0;
        QTest::newRow("CeilDiv(INT64_MIN, -1)") << "CeilDiv(-9223372036854775808, -1)"
                                                << "int64 overflow" << true << 0;
        QTest::newRow("add") << "9223372036854775807 + 1 + s0"
                             << "int64 overflow in 9223372036854775807 + 1" << true << 20;
        QTest::newRow("sub") << "-9223372036854775807 - 2"
                             << "int64 overflow in -9223372036854775807 - 2" << true << 21;
        QTest::newRow("mul") << "4611686018427387904*2"
                             << "int64 overflow in 4611686018427387904 * 2" << true << 19;
        QTest::newRow("negate") << "-(-9223372036854775808)"
                                << "int64 overflow in -(-9223372036854775808)" << true << 0;
        QTest::newRow("literal") << "9223372036854775808"
                                 << "does not fit in int64" << true << 0;
        QTest::newRow("division by zero") << "s0 // (1 - 1)"
                                          << "division by zero" << true << 3;
        QTest::newRow("mod by zero") << "Mod(s0, 0)"
                                     << "division by zero" << true << 0;
        QTest::newRow("20000 parens") << QString(20000, '(') + "s0" + QString(20000, ')')
                                      << "nesting deeper than 256 levels" << true << 256;
        QTest::newRow("20000 calls") << QString("Max(1, ").repeated(20000) + "s0" + QString(20000, ')')
                                     << "nesting deeper than 256 levels" << true << 256 * 7 + 3;
        QTest::newRow("unbound") << "s9 + 1"
                                 << "symbol 's9' has no value" << false << 0;
        QTest::newRow("unknown function") << "PythonMod(s0, 2)"
                                          << "function 'PythonMod' is not supported" << false << 0;
        QTest::newRow("a true quotient left a float")
            << "IntTrueDiv(s0, 3)"
            << "function 'IntTrueDiv' is not supported" << false << 0;
        QTest::newRow("rounded quotient by zero") << "CeilToInt(IntTrueDiv(s0, 0))"
                                                  << "division by zero" << true << 0;
        QTest::newRow("negative exponent") << "s0**-1"
                                           << "negative exponent" << false << 0;
        QTest::newRow("power overflow") << "s0 + 2**63"
                                        << "int64 overflow in 2 ** 63" << true << 6;
    }

    void symbolicErrors() {
        QFETCH(QString, expr);
        QFETCH(QString, message);
        QFETCH(bool, hard);
        QFETCH(int, offset);
        const std::string text = expr.toStdString();
        Expected<int64_t> v = evaluateSymbolic(text, {{"s0", 128}});
        QVERIFY(!v);
        QVERIFY2(v.error().message.find(message.toStdString()) != std::string::npos,
                 v.error().message.c_str());
        QVERIFY(v.error().message.size() < 400); // the expression is quoted, but not 40,000 bytes of it
        const SymbolicCheck check = checkSymbolic(text);
        QCOMPARE(bool(check.issue), hard);
        if (hard) {
            QVERIFY2(check.issue->message.find(message.toStdString()) != std::string::npos,
                     check.issue->message.c_str());
            QCOMPARE(int(check.issue->offset), offset);
        }
    }

    void checkSymbolicFoldsConstants() {
        QCOMPARE(checkSymbolic("2*(3 + 4)").constant, std::optional<int64_t>(14));
        QVERIFY(!checkSymbolic("2*s0").constant);
        QVERIFY(!checkSymbolic("2*s0").issue);
        QVERIFY(!checkSymbolic("Piecewise((1, Eq(s0, 1)), (s0, True))").issue); // not understood: no issue
    }

    // Guards torch recorded (guard_added_fast) as ShapeEnv axioms: statically_known_true(Eq(a, b)) holds for
    // the same expression or where a - b is a multiple of a guarded equality's sides (canonicalize_bool_expr
    // reduces both to lowest terms); a plain == decides on the hints.
    void shapeFactsFollowGuards() {
        QCOMPARE(equalityGuardSides("Eq(64*s11, 64*s11 + 64*s55)"),
                 (std::optional<std::pair<std::string, std::string>>{{"64*s11", "64*s11 + 64*s55"}}));
        QVERIFY(!equalityGuardSides("Ne(s68*(s11 + s55), 0)"));
        QVERIFY(!equalityGuardSides("Eq(s68, 1) | Eq(s11 + s55, 1)"));
        QVERIFY(!equalityGuardSides("Eq(Max(1, s0), s1)x"));
        QCOMPARE(equalityGuardSides(" Eq(Max(1, s0), s1) ")->first, std::string("Max(1, s0)"));
        QCOMPARE(equalityGuardSides("Eq(s1, Max(1, s0))")->second, std::string("Max(1, s0)"));
        QVERIFY(!equalityGuardSides("Eq(s0, s1, s2)"));
        QVERIFY(!equalityGuardSides("Eq(s0, (s1)"));

        const SymInt s11{16, "s11"}, shifted{16, "s11 + s55"}, stride{1024, "64*s11"},
            strideShifted{1024, "64*s11 + 64*s55"};
        const ShapeFacts none({{"s11", 16}, {"s55", 0}}, {});
        QVERIFY(none.knownEqual(s11, SymInt{0, "s11"}));
        QVERIFY(!none.knownEqual(s11, shifted)); // equal on the hints only
        QVERIFY(none.guardEqual(s11, shifted));
        QCOMPARE(none.guarded(SymInt{0, "-s55"}), std::optional<int64_t>(0));
        QVERIFY(!none.guarded(SymInt{0, "s99"}));

        // statically_known_true(Ne(a, b)) before value ranges: sympy's Ne(s11 - 1, s11) is True, Ne(s11, s55)
        // and Ne(s11, Max(1, TruncToInt(0.5*ToFloat(s11)))) (different at every size above 1) are not
        // decided.
        QVERIFY(none.knownDifferent(SymInt{0, "s11 - 1"}, s11));
        QVERIFY(none.knownDifferent(SymInt{3, {}}, SymInt{4, {}}));
        QVERIFY(!none.knownDifferent(s11, SymInt{0, "s55"}));
        QVERIFY(!none.knownDifferent(s11, SymInt{0, "Max(1, TruncToInt(0.5*ToFloat(s11)))"}));
        QVERIFY(!none.knownDifferent(s11, s11));

        const ShapeFacts guarded({}, {"Eq(64*s11, 64*s11 + 64*s55)", "Ne(s55, 1)"});
        QVERIFY(guarded.knownEqual(s11, shifted));
        QVERIFY(guarded.knownEqual(strideShifted, stride));
        QVERIFY(guarded.knownEqual(std::vector<SymInt>{{2, {}}, s11}, std::vector<SymInt>{{2, {}}, shifted}));
        QVERIFY(!guarded.knownEqual(s11, SymInt{0, "s11 + 2*s55 + 1"})); // not a multiple of s55
        QVERIFY(!guarded.knownEqual(s11, SymInt{0, "s12"}));
        QVERIFY(
            !guarded.knownEqual(SymInt{0, "s0*(s1 + 1)"}, SymInt{0, "s0*s1 + s0"})); // left to sympy's form
        QVERIFY(guarded.guardEqual(s11, shifted)); // no hints: decided statically

        // a - b a nonzero number: sympy decides Eq(a, b) False before any axiom is looked up, though a guard
        // like Eq(Mod(s27, 2), 0) may differ by a constant on every sample (a HF loss's labels[..., 1:]
        // clone: strides s27 and s27 + 1; torch 2.15 kept the clone).
        const ShapeFacts floors({}, {"Eq(Mod(s27, 2), 0)"});
        QVERIFY(!floors.knownEqual(SymInt{0, "s27"}, SymInt{0, "s27 + 1"}));
        QVERIFY(!guarded.knownEqual(s11, SymInt{0, "s11 + 1"}));

        Graph g;
        g.attributes = {{"symbol_hints", "{\"s11\": 16, \"s55\": 0}"},
                        {"symbol_equalities", "Eq(s86, 64)\nEq(64*s11, 64*s11 + 64*s55)"}};
        const ShapeFacts read = ShapeFacts::of(g.attributes);
        QVERIFY(read.knownEqual(SymInt{64, {}}, SymInt{0, "s86"}));
        QVERIFY(read.knownEqual(s11, shifted));
        QCOMPARE(read.guarded(shifted), std::optional<int64_t>(16));
    }

    void tensorMetaChecks() {
        auto meta = [](std::vector<SymInt> sizes, std::vector<SymInt> strides = {},
                       DType dtype = DType::Float32) {
            return TensorMeta{dtype, std::move(sizes), std::move(strides), {}};
        };
        QVERIFY(!checkTensorMeta(meta({{4, {}}, {0, "s0"}}, {{0, "s0"}, {1, {}}})));
        QVERIFY(
            !checkTensorMeta(meta({{0, {}}, {std::numeric_limits<int64_t>::max(), {}}}))); // zero elements
        QVERIFY(!checkTensorMeta(meta({{int64_t(1) << 60, {}}})));                         // 2^62 bytes fit
        std::optional<TensorMetaIssue> issue = checkTensorMeta(meta({{4, {}}, {-1, {}}}));
        QVERIFY(issue && !issue->stride && issue->dim == 1);
        QCOMPARE(issue->message, std::string("negative size -1 in dimension 1"));
        issue = checkTensorMeta(meta({{4, {}}}, {{-1, {}}}));
        QVERIFY(issue && issue->stride && issue->dim == 0);
        issue = checkTensorMeta(meta({{int64_t(1) << 62, {}}}));
        QVERIFY(issue && issue->message.find("the byte size overflows int64") != std::string::npos);
        issue = checkTensorMeta(meta({{int64_t(1) << 62, {}}}, {}, DType::Int8)); // 2^62 bytes: fine
        QVERIFY(!issue);
        issue = checkTensorMeta(meta({{0, "s0"}, {int64_t(1) << 32, {}}, {int64_t(1) << 32, {}}}));
        QVERIFY(issue && issue->dim == 2 &&
                issue->message.find("element count overflows") != std::string::npos);
        issue = checkTensorMeta(meta({{0, "(-9223372036854775808)//(-1)"}}));
        QVERIFY(issue && issue->exprOffset == 22);
        issue = checkTensorMeta(meta({{0, "2 - 5"}})); // folds to a negative constant
        QVERIFY(issue && issue->message.find("negative size -3") != std::string::npos);
        // Engines saturate rather than wrap where sizes come from elsewhere (hand-built graphs, symbol
        // hints).
        QVERIFY(!meta({{int64_t(1) << 62, {}}}).bytes());
        QCOMPARE(meta({{int64_t(1) << 40, {}}}).bytes(), std::optional<uint64_t>(uint64_t(1) << 42));
    }

    void opSchemas() {
        std::optional<OpSchema> mm = findOpSchema(Target::parseFunction("torch.ops.aten.mm.default"));
        QVERIFY(mm);
        QCOMPARE(mm->signature(), std::string("aten.mm.default(self: Tensor, mat2: Tensor)"));
        QVERIFY(!findOpSchema(Target::parseFunction("torch.ops.aten.mm"))); // a packet: unchecked
        QVERIFY(!findOpSchema(Target::parseFunction("torch.ops.mylib.custom.default"))); // unknown: unchecked
        QVERIFY(!findOpSchema(Target::parseFunction("torch.ops.higher_order.invoke_subgraph")));
        QVERIFY(findOpSchema(Target::parseFunction("operator.getitem")));
        QVERIFY(!opSchemaTorchVersion().empty());
        std::optional<OpSchema> add = findOpSchema(Target::parseFunction("aten.add.Tensor"));
        QVERIFY(add);
        const Value x = Value::nodeRef(0);
        QVERIFY(!checkCallArguments(*add, {x, Value::real(0.5)}, {}));              // a number for a Tensor
        QVERIFY(!checkCallArguments(*add, {x, x}, {{"alpha", Value::integer(2)}})); // keyword-only by name
        QVERIFY(!checkCallArguments(*add, {x}, {{"other", x}}));                    // positional by name
        QCOMPARE(*checkCallArguments(*add, {x, x, Value::integer(2)}, {}),
                 std::string("takes at most 2 positional arguments (self, other), got 3"));
        QCOMPARE(*checkCallArguments(*add, {x, x}, {{"beta", x}}), std::string("has no parameter 'beta'"));
        QCOMPARE(*checkCallArguments(*add, {x, x}, {{"other", x}}),
                 std::string("got argument 'other' twice (by position and by keyword)"));
        QCOMPARE(*checkCallArguments(*add, {x, Value::string("y")}, {}),
                 std::string("argument 'other' is Tensor, got a string"));
        std::optional<OpSchema> cat = findOpSchema(Target::parseFunction("torch.ops.aten.cat.default"));
        QVERIFY(cat);
        QVERIFY(!checkCallArguments(*cat, {Value::list({x, x})}, {}));
        QVERIFY(!checkCallArguments(*cat, {x, Value::integer(1)}, {})); // a node that is a list
        QVERIFY(checkCallArguments(*cat, {Value::integer(3)}, {}));
        // Every overload of resources/ops/aten_schemas.json is found: the compiled table is complete and
        // sorted (lookups are binary searches), and each parameter list parses.
        const nlohmann::json table = nlohmann::json::parse(
            jointscope::test::readFile(jointscope::test::sourcePath("resources/ops/aten_schemas.json")));
        QVERIFY(table.at("schemas").size() > 3000);
        for (const auto& [key, params] : table.at("schemas").items()) {
            std::optional<OpSchema> schema = findOpSchema(Target::parseFunction(key));
            QVERIFY2(schema && schema->key == key, key.c_str());
            const std::string text = params.get<std::string>();
            const size_t commas = size_t(std::count(text.begin(), text.end(), ','));
            const bool star = text.find('*') != std::string::npos;
            QCOMPARE(schema->params.size() + (star ? 1 : 0), text.empty() ? size_t(0) : commas + 1);
        }
    }

    void validateGraphFindsProblems() {
        using jointscope::test::makeNode;
        auto graph = [](std::vector<Node> nodes) {
            Graph g;
            for (Node& n : nodes)
                g.addNode(std::move(n));
            return g;
        };
        const Node x = makeNode("x", NodeOp::Placeholder, "x");
        const Node out = makeNode("output", NodeOp::Output, "output", {Value::nodeRef(0)});
        QVERIFY(validateGraph(graph({x, out})).empty());
        std::vector<NodeIssue> issues = validateGraph(
            graph({x, makeNode("mm", NodeOp::CallFunction, "torch.ops.aten.mm.default", {Value::nodeRef(0)}),
                   out}));
        QCOMPARE(issues.size(), size_t(1));
        QCOMPARE(issues[0].node, NodeId(1));
        QCOMPARE(issues[0].message,
                 std::string(
                     "node 'mm' (torch.ops.aten.mm.default): missing required argument 'mat2' (1 positional "
                     "argument given); schema aten.mm.default(self: Tensor, mat2: Tensor)"));
        // a -> c -> b -> a: reported at the first node that uses a later one, with the whole cycle.
        issues = validateGraph(graph(
            {x,
             makeNode("a", NodeOp::CallFunction, "torch.ops.aten.add.Tensor",
                      {Value::nodeRef(0), Value::nodeRef(3)}),
             makeNode("b", NodeOp::CallFunction, "torch.ops.aten.relu.default", {Value::nodeRef(1)}),
             makeNode("c", NodeOp::CallFunction, "torch.ops.aten.relu.default", {Value::nodeRef(2)}), out}));
        QCOMPARE(issues.size(), size_t(1));
        QCOMPARE(issues[0].node, NodeId(1));
        QVERIFY2(issues[0].message.find("is on a cycle: 'a' -> 'c' -> 'b' -> 'a'") != std::string::npos,
                 issues[0].message.c_str());
        issues = validateGraph(graph({makeNode("o", NodeOp::Output, "output", {})}));
        QCOMPARE(issues.size(), size_t(1));
        QVERIFY(issues[0].message.find("the output node takes one argument") != std::string::npos);
        issues = validateGraph(graph({makeNode("o", NodeOp::Output, "output", {Value::nodeRef(7)})}));
        QVERIFY(!issues.empty() && issues[0].message.find("dangling") != std::string::npos);
    }

    void validateGraphIsLinear() {
        // A 100k-node chain whose last node uses a later one: the cycle search and the checks stay linear.
        Graph g;
        g.addNode(jointscope::test::makeNode("x", NodeOp::Placeholder, "x"));
        for (NodeId i = 1; i < 100000; ++i)
            g.addNode(jointscope::test::makeNode("n" + std::to_string(i), NodeOp::CallFunction,
                                                 "torch.ops.aten.relu.default", {Value::nodeRef(i - 1)}));
        g.node(1).args[0] = Value::nodeRef(99999);
        QElapsedTimer timer;
        timer.start();
        std::vector<NodeIssue> issues = validateGraph(g);
        QVERIFY(timer.elapsed() < 2000);
        QCOMPARE(issues.size(), size_t(1));
        QVERIFY(issues[0].message.find("is on a cycle: 'n1' -> 'n99999' -> 'n99998'") != std::string::npos);
    }

    // The status bar's "HOP bodies (k unique)": bodies that compute the same thing under other names count
    // once (two sin bodies differ only in names; the cos body differs).
    void uniqueHopBodies() {
        const std::string text = R"fx(class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[8]"):
        body_a = self.body_a
        call_a = torch.ops.higher_order.invoke_subgraph(body_a, 'a', x);  body_a = None
        getitem: "f32[8]" = call_a[0];  call_a = None
        body_b = self.body_b
        call_b = torch.ops.higher_order.invoke_subgraph(body_b, 'b', getitem);  body_b = None
        getitem_1: "f32[8]" = call_b[0];  call_b = None
        body_c = self.body_c
        call_c = torch.ops.higher_order.invoke_subgraph(body_c, 'c', getitem_1);  body_c = None
        getitem_2: "f32[8]" = call_c[0];  call_c = None
        return (getitem_2,)

    class body_a(torch.nn.Module):
        def forward(self, arg0_1: "f32[8]"):
            sin: "f32[8]" = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None
            return (sin,)

    class body_b(torch.nn.Module):
        def forward(self, arg0_1: "f32[8]"):
            sin_1: "f32[8]" = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None
            return (sin_1,)

    class body_c(torch.nn.Module):
        def forward(self, arg0_1: "f32[8]"):
            cos: "f32[8]" = torch.ops.aten.cos.default(arg0_1);  arg0_1 = None
            return (cos,)
)fx";
        Expected<Graph> g = readFxText(text, FxReadOptions{"bodies.txt"});
        QVERIFY2(bool(g), g ? "" : g.error().format().c_str());
        const GraphStats s = computeStats(*g);
        QCOMPARE(s.subgraphs, uint64_t(3));
        QCOMPARE(s.uniqueSubgraphs, uint64_t(2));
    }

    // A HOP body's roles come from its tags: torch tags the ops of a partitioned forward body is_forward even
    // where they read a value named like a tangent (issue 29: a forward body showed "0 forward · 2
    // backward").
    void forwardTagsWin() {
        Graph g;
        auto add = [&](std::string name, NodeOp op, std::string target, std::vector<Value> args,
                       std::string tag = {}) {
            Node n;
            n.name = std::move(name);
            n.op = op;
            n.target = op == NodeOp::CallFunction ? Target::parseFunction(target) : Target::name(target);
            n.args = std::move(args);
            n.meta.partitionerTag = std::move(tag);
            return g.addNode(std::move(n));
        };
        NodeId t = add("tangents_1", NodeOp::Placeholder, "tangents_1", {});
        NodeId a =
            add("neg", NodeOp::CallFunction, "torch.ops.aten.neg.default", {Value::nodeRef(t)}, "is_forward");
        NodeId b =
            add("sin", NodeOp::CallFunction, "torch.ops.aten.sin.default", {Value::nodeRef(a)}, "is_forward");
        NodeId c = add("cos", NodeOp::CallFunction, "torch.ops.aten.cos.default", {Value::nodeRef(b)});
        add("output", NodeOp::Output, "output", {Value::tuple({Value::nodeRef(c)})});
        g.computeUsers();
        const std::vector<bool> backward = backwardMask(g);
        QVERIFY(!backward[a] && !backward[b]);
        QVERIFY(!backward[c]); // reads only forward-tagged values
        const GraphStats s = computeStats(g);
        QCOMPARE(s.forward, uint64_t(3));
        QCOMPARE(s.backward, uint64_t(0));
    }

    // New node names as torch.fx's _Namespace.create_name gives them (torch/fx/graph.py), counted by hand:
    // a free candidate is kept, a taken one gets its base's next number, builtins are never names, and the
    // getitems FX made for every element of a tuple spend their numbers even when DCE erased them.
    void fxNamespaceNamesAsTorchFx() {
        const std::string text = R"fx(
class joint(torch.nn.Module):
    def forward(self, primals_1: "f32[4]", tangents_1: "f32[4]"):
        sum_1: "f32[]" = torch.ops.aten.sum.default(primals_1)
        var_mean = torch.ops.aten.var_mean.correction(primals_1, [0], correction = 0)
        getitem_3: "f32[]" = var_mean[0]
        mul: "f32[4]" = torch.ops.aten.mul.Tensor(tangents_1, getitem_3)
        return (sum_1, mul)
)fx";
        Expected<Graph> g = readFxText(text, FxReadOptions{"names.txt"});
        QVERIFY2(bool(g), g ? "" : g.error().format().c_str());
        FxNamespace names(*g);
        // (what var_mean's second element was named is not in the text; an invoke_subgraph body says how many
        // values its call returns, tst_logcheck's nested_compile_region log depends on that)
        // "getitem" itself is free: FX takes it (a traced graph's first getitem always holds it)
        QCOMPARE(names.create("getitem"), std::string("getitem"));
        QCOMPARE(names.create("getitem"), std::string("getitem_4"));
        QCOMPARE(names.create("sum"), std::string("sum_2"));
        QCOMPARE(names.create("mul"), std::string("mul_1"));
        QCOMPARE(names.create("partitioned_fw_subgraph_0_0"), std::string("partitioned_fw_subgraph_0_0"));
        QCOMPARE(names.create("partitioned_fw_subgraph_0_0"), std::string("partitioned_fw_subgraph_0_1"));
        QCOMPARE(names.create("max"), std::string("max_1"));
        QCOMPARE(names.create("full.default"), std::string("full_default"));
        QCOMPARE(FxNamespace::targetToName("aten.convolutionBackward"),
                 std::string("aten.convolution_backward"));
    }
};

QTEST_GUILESS_MAIN(TestGraph)
#include "tst_graph.moc"
