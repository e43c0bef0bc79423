// jointscope JSON: lossless round trips of every IR field, located syntax and schema errors.
#include "graph/Graph.h"
#include "io/FxReader.h"
#include "io/GraphFile.h"
#include "io/JsonFormat.h"
#include "io/JsonSupport.h"
#include "testutil.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

using namespace jointscope;

namespace {

Node makeNode(std::string name, NodeOp op, Target target, std::vector<Value> args = {}) {
    Node n;
    n.name = std::move(name);
    n.op = op;
    n.target = std::move(target);
    n.args = std::move(args);
    return n;
}

TensorMeta tensor(DType dtype, std::vector<SymInt> sizes, std::vector<SymInt> strides = {},
                  Device device = {}) {
    TensorMeta t;
    t.dtype = dtype;
    t.sizes = std::move(sizes);
    t.strides = std::move(strides);
    t.device = std::move(device);
    return t;
}

// A graph touching every Value kind and every Node / NodeMeta / Graph field.
Graph buildEveryFieldGraph() {
    auto body = std::make_unique<Graph>();
    body->name = "repeated_subgraph0";
    {
        auto inner = std::make_unique<Graph>();
        inner->name = "inner_body";
        inner->addNode(makeNode("arg0", NodeOp::Placeholder, Target::name("arg0")));
        inner->addNode(
            makeNode("output", NodeOp::Output, Target::name("output"), {Value::tuple({Value::nodeRef(0)})}));
        inner->computeUsers();
        const int32_t innerIndex = body->addSubgraph(std::move(inner));
        body->addNode(makeNode("arg0_1", NodeOp::Placeholder, Target::name("arg0_1")));
        Node attr = makeNode("inner_body", NodeOp::GetAttr, Target::name("inner_body"));
        attr.subgraph = innerIndex;
        body->addNode(std::move(attr));
        Node sin = makeNode("sin", NodeOp::CallFunction, Target::parseFunction("torch.ops.aten.sin.default"),
                            {Value::nodeRef(0)});
        sin.outputKind = OutputKind::Tensor;
        sin.outputs = {tensor(DType::BFloat16, {{0, "s0"}, {8, {}}}, {{8, {}}, {1, {}}}, Device{"cuda", 1})};
        body->addNode(std::move(sin));
        body->addNode(
            makeNode("output", NodeOp::Output, Target::name("output"), {Value::tuple({Value::nodeRef(2)})}));
        body->computeUsers();
    }

    Graph g;
    g.name = "GraphModule";
    g.numFwdOutputs = 2;
    g.attributes = {
        {"torch_version", "2.6.0"}, {"kind", "aot_joint_graph"}, {"a\"quoted\" key", "line\nbreak"}};
    const int32_t bodyIndex = g.addSubgraph(std::move(body));

    Node primal = makeNode("primals_1", NodeOp::Placeholder, Target::name("primals_1"));
    primal.outputKind = OutputKind::Tensor;
    primal.outputs = {tensor(DType::Float32, {{4, {}}, {0, "s0"}}, {{0, "s0"}, {1, {}}}, Device{"cpu", -1})};
    primal.meta.descriptor = "PlainAOTInput(idx=0)";
    primal.meta.sourceLine = 3;
    g.addNode(std::move(primal)); // 0
    Node sym =
        makeNode("sym_size_int", NodeOp::CallFunction, Target::parseFunction("torch.ops.aten.sym_size.int"),
                 {Value::nodeRef(0), Value::integer(1)});
    sym.outputKind = OutputKind::SymInt;
    sym.symValue = "s0";
    g.addNode(std::move(sym)); // 1
    Node tangent = makeNode("tangents_1", NodeOp::Placeholder, Target::name("tangents_1"));
    tangent.outputKind = OutputKind::Tensor;
    tangent.outputs = {tensor(DType::Float8E4M3FN, {})};
    g.addNode(std::move(tangent)); // 2

    const double inf = std::numeric_limits<double>::infinity();
    Node every =
        makeNode("every_value", NodeOp::CallFunction, Target::parseFunction("torch.ops.test.every.default"));
    every.args = {
        Value::none(),
        Value::boolean(true),
        Value::boolean(false),
        Value::integer(std::numeric_limits<int64_t>::max()),
        Value::integer(std::numeric_limits<int64_t>::min()),
        Value::integer(0),
        Value::real(1.0),
        Value::real(0.1 + 0.2),
        Value::real(-0.0),
        Value::real(1e-300),
        Value::real(6.02214076e23),
        Value::real(inf),
        Value::real(-inf),
        Value::real(std::numeric_limits<double>::quiet_NaN()),
        Value::string("caf\xC3\xA9 \"quoted\" \\ \n\t"),
        Value::string(""),
        Value::nodeRef(0),
        Value::nodeRef(2), // an earlier node only: a later one is a forward reference (refused)
        Value::list({}),
        Value::list({Value::integer(1), Value::list({Value::nodeRef(2)})}),
        Value::tuple({}),
        Value::tuple({Value::nodeRef(1), Value::string("x")}),
        Value::dict({{Value::string("a"), Value::integer(1)},
                     {Value::integer(2), Value::nodeRef(0)},
                     {Value::tuple({Value::integer(1), Value::integer(2)}), Value::none()},
                     {Value::dtype(DType::Int8), Value::real(-inf)}}),
        Value::dict({}),
        Value::slice(Value::none(), Value::integer(4), Value::none()),
        Value::slice(Value::symExpr("s0"), Value::integer(-1), Value::integer(2)),
        Value::device("cuda", 0),
        Value::device("cpu"),
        Value::device("meta", -1),
        Value::layout("strided"),
        Value::memoryFormat("channels_last"),
        Value::symExpr("4*s0 + 1"),
        Value::ellipsis(),
        Value::opaque("torch._C._nn.some_object<0x7f>"),
        Value::opaque(""),
    };
    for (int d = 0; d <= static_cast<int>(DType::Bits1x8); ++d)
        every.args.push_back(Value::dtype(static_cast<DType>(d)));
    every.kwargs = {{"memory_format", Value::memoryFormat("contiguous_format")},
                    {"dtype", Value::dtype(DType::BFloat16)},
                    {"a", Value::list({Value::nodeRef(1)})}};
    every.outputKind = OutputKind::Tuple;
    every.outputs = {tensor(DType::Int64, {{2, {}}}), TensorMeta{},
                     tensor(DType::Bool, {{0, "s1"}}, {}, Device{"", 0})};
    every.meta.stackTrace = {"File: model.py:12 in forward, code: x = self.fc(x)", "File: other.py:3 in f"};
    every.meta.nnModuleStack = {{"L__self__", "", "Model"}, {"L__self___fc", "fc", "torch.nn.Linear"}};
    every.meta.recompute = "PREFER_RECOMPUTE";
    every.meta.acGraphId = 7;
    every.meta.partitionerTag = "is_backward";
    every.meta.extra = {{"seq_nr", "12"}, {"custom", "{\"a\": [1, 2]}"}, {"text", "\"s\""}};
    every.meta.sourceLine = 4000000000u;
    g.addNode(std::move(every)); // 3

    Node attr = makeNode("repeated_subgraph0", NodeOp::GetAttr, Target::name("repeated_subgraph0"));
    attr.subgraph = bodyIndex;
    g.addNode(std::move(attr)); // 4
    Node hop = makeNode("invoke_subgraph", NodeOp::CallFunction,
                        Target::parseFunction("torch.ops.higher_order.invoke_subgraph"),
                        {Value::nodeRef(4), Value::string("subgraph_0"), Value::nodeRef(0)});
    g.addNode(std::move(hop)); // 5
    g.addNode(makeNode("getitem", NodeOp::CallFunction, Target::parseFunction("operator.getitem"),
                       {Value::nodeRef(5), Value::integer(0)})); // 6
    g.addNode(
        makeNode("sin_py", NodeOp::CallFunction, Target::parseFunction("torch.sin"), {Value::nodeRef(6)}));
    g.addNode(makeNode("add_packet", NodeOp::CallFunction, Target::parseFunction("torch.ops.aten.add"),
                       {Value::nodeRef(6), Value::integer(1)}));
    g.addNode(
        makeNode("view", NodeOp::CallMethod, Target::name("view"), {Value::nodeRef(6), Value::integer(-1)}));
    g.addNode(makeNode("fc", NodeOp::CallModule, Target::name("fc"), {Value::nodeRef(6)}));
    // A target that does not parse back from its text: must be written as an object.
    Node odd =
        makeNode("odd_target", NodeOp::CallFunction, Target{TargetKind::Python, "my.fn", "", "fn", "x"});
    odd.outputKind = OutputKind::None;
    g.addNode(std::move(odd));
    Node symFloat = makeNode("sym_float", NodeOp::CallFunction, Target::parseFunction("operator.truediv"),
                             {Value::nodeRef(1), Value::integer(2)});
    symFloat.outputKind = OutputKind::SymFloat;
    symFloat.symValue = "s0/2";
    g.addNode(std::move(symFloat));
    Node symBool = makeNode("sym_bool", NodeOp::CallFunction, Target::parseFunction("operator.eq"),
                            {Value::nodeRef(1), Value::integer(2)});
    symBool.outputKind = OutputKind::SymBool;
    symBool.symValue = "Eq(s0, 2)";
    g.addNode(std::move(symBool));
    g.addNode(makeNode("output", NodeOp::Output, Target::name("output"),
                       {Value::list({Value::nodeRef(6), Value::none(), Value::nodeRef(3)})}));

    PartitionDecision minCut;
    minCut.name = "torch_min_cut";
    minCut.origin = "functorch min_cut_rematerialization_partition (torch 1.13.0a0)";
    minCut.saved = {"primals_1", "getitem"};
    minCut.savedSym = {"sym_size_int"};
    minCut.seconds = 0.1408;
    PartitionDecision plain;
    plain.name = "empty";
    g.decisions = {minCut, plain};
    g.computeUsers();
    return g;
}

const char* kValidHead =
    "{\n \"format\": \"jointscope-graph\",\n \"version\": 1,\n \"graph\": {\n  \"nodes\": [\n";

std::vector<std::string> sharedSingleGraphFiles() {
    std::vector<std::string> files;
    for (const char* model : test::kTorch113Models)
        for (const char* name : {"joint.txt", "fw.txt", "bw.txt"})
            files.push_back(test::sharedPath(std::string("graphs/torch-1.13/") + model + "/" + name));
    for (const auto& entry : std::filesystem::directory_iterator(test::sharedPath("graphs/snippets")))
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

} // namespace

class TestJson : public QObject {
    Q_OBJECT
private slots:
    void everyFieldRoundTrips() {
        const Graph g = buildEveryFieldGraph();
        const std::string text = writeJsonGraph(g);
        Expected<Graph> back = readJsonGraph(text, "every.json");
        JS_VERIFY_EXPECTED(back);
        QVERIFY(*back == g);
        // Spot checks against the hand-built values, independent of operator==.
        const Node& every = back->node(*back->find("every_value"));
        QCOMPARE(every.args[3].asInt(), std::numeric_limits<int64_t>::max());
        QCOMPARE(every.args[4].asInt(), std::numeric_limits<int64_t>::min());
        QCOMPARE(every.args[7].asFloat(), 0.1 + 0.2);
        QVERIFY(std::isinf(every.args[11].asFloat()) && every.args[11].asFloat() > 0);
        QVERIFY(std::isinf(every.args[12].asFloat()) && every.args[12].asFloat() < 0);
        QVERIFY(std::isnan(every.args[13].asFloat()));
        QCOMPARE(every.args[17].asNode(), NodeId(2));
        QCOMPARE(every.args[22].items()[2].kind(), ValueKind::Int);
        QCOMPARE(back->subgraph(0)->subgraph(0)->name, std::string("inner_body"));
        QCOMPARE(back->node(0).users.size(), g.node(0).users.size());
        QVERIFY(!back->node(0).users.empty());
        QCOMPARE(back->node(*back->find("odd_target")).target.overload, std::string("x"));
    }

    void writerIsReadableAndStable() {
        const Graph g = buildEveryFieldGraph();
        const std::string text = writeJsonGraph(g);
        QVERIFY(looksLikeJsonGraph(text));
        QVERIFY(text.rfind("{\n \"format\": \"jointscope-graph\",\n \"version\": 1,", 0) == 0);
        QVERIFY(text.find("{\"float\": \"inf\"}") != std::string::npos);
        QVERIFY(text.find("{\"float\": \"-inf\"}") != std::string::npos);
        QVERIFY(text.find("{\"float\": \"nan\"}") != std::string::npos);
        QVERIFY(text.find("9223372036854775807") != std::string::npos);
        QVERIFY(text.find("{\"node\": \"primals_1\"}") != std::string::npos);
        // One line per node: count lines opening a node object at any depth.
        size_t nodeLines = 0;
        std::istringstream lines(text);
        for (std::string line; std::getline(lines, line);)
            if (line.find("{\"name\": ") != std::string::npos && line.find("\"op\": ") != std::string::npos)
                ++nodeLines;
        size_t expectedNodes = g.size() + g.subgraph(0)->size() + g.subgraph(0)->subgraph(0)->size();
        QCOMPARE(nodeLines, expectedNodes);
        // The output is plain JSON any parser reads.
        const auto parsed = nlohmann::json::parse(text);
        QCOMPARE(parsed["graph"]["nodes"].size(), g.size());
        Expected<Graph> back = readJsonGraph(text, "x.json");
        JS_VERIFY_EXPECTED(back);
        QCOMPARE(writeJsonGraph(*back), text);
    }

    void acceptsPythonStyleInput() {
        // What a python json.dumps emitter writes: string targets in str(node.target) form, string devices, a
        // subgraph by name, a non-string extra value, keys in any order.
        const std::string text = R"({"format": "jointscope-graph", "version": 1, "graph": {
 "subgraphs": [{"name": "body", "nodes": [{"name": "x", "op": "placeholder", "target": "x"}]}],
 "nodes": [
  {"op": "placeholder", "name": "a", "target": "a", "output_kind": "tensor",
   "outputs": [{"dtype": "f32", "sizes": [2, "s0"], "device": "cuda:0"}], "meta": {"extra": {"seq_nr": 3}}},
  {"name": "body", "op": "get_attr", "target": "body", "subgraph": "body"},
  {"name": "mm", "op": "call_function", "target": "aten.add.Tensor", "args": [{"node": "a"}, {"node": "a"}],
   "kwargs": {"alpha": {"float": 0.5}}},
  {"name": "output", "op": "output", "target": "output", "args": [[{"node": "mm"}]]}
 ]}})";
        Expected<Graph> g = readJsonGraph(text, "py.json");
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(g->size(), size_t(4));
        const Node& mm = g->node(2);
        QCOMPARE(mm.target.text, std::string("torch.ops.aten.add.Tensor"));
        QCOMPARE(mm.target.kind, TargetKind::OpOverload);
        QCOMPARE(mm.kwargs[0].second.asFloat(), 0.5);
        QCOMPARE(g->node(1).subgraph, 0);
        const TensorMeta* a = g->node(0).tensor();
        QVERIFY(a);
        QCOMPARE(a->dtype, DType::Float32);
        QCOMPARE(a->sizes[1].expr, std::string("s0"));
        QCOMPARE(a->device.type, std::string("cuda"));
        QCOMPARE(a->device.index, int64_t(0));
        QCOMPARE(g->node(0).meta.extra[0].second, std::string("3"));
        QCOMPARE(g->node(0).users.size(), size_t(1)); // mm reads a twice: one user
    }

    void sharedGraphsRoundTrip_data() {
        QTest::addColumn<QString>("path");
        for (const std::string& path : sharedSingleGraphFiles()) {
            const std::filesystem::path p(path);
            const std::string row = p.parent_path().filename().string() + "/" + p.filename().string();
            QTest::newRow(row.c_str()) << test::q(path);
        }
    }

    void sharedGraphsRoundTrip() {
        QFETCH(QString, path);
        Expected<GraphFile> file = GraphFile::open(path.toStdString());
        JS_VERIFY_EXPECTED(file);
        Expected<Graph> g = file->load(0);
        JS_VERIFY_EXPECTED(g);
        QVERIFY(g->size() > 0);
        const std::string text = writeJsonGraph(*g);
        Expected<Graph> back = readJsonGraph(text, "roundtrip.json");
        JS_VERIFY_EXPECTED(back);
        QVERIFY(*back == *g);
        Expected<Graph> located = readJsonGraph(text, "roundtrip.json", JsonParser::Nlohmann);
        JS_VERIFY_EXPECTED(located);
        QVERIFY(*located == *g);
        // Independent count: FX text has one "name = ..." statement per node except placeholders / output.
        const auto parsed = nlohmann::json::parse(text);
        QCOMPARE(parsed["graph"]["nodes"].size(), g->size());
        // The picker's summary (simdjson's document, or nlohmann's SAX events) counts the same nodes.
        Expected<json_support::JsonGraphSummary> summary =
            json_support::summarizeJsonGraph(text, "summary.json");
        JS_VERIFY_EXPECTED(summary);
        QCOMPARE(summary->nodes, uint64_t(parsed["graph"]["nodes"].size()));
    }

    void malformedJsonIsLocated_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("line");
        QTest::addColumn<int>("col");
        // Columns counted by hand on the literal below.
        QTest::newRow("bracket") << QString("{\n \"format\": \"jointscope-graph\",\n \"version\": 1,\n "
                                            "\"graph\": {\"nodes\": [}\n}")
                                 << 4 << 22;
        QTest::newRow("missing comma")
            << QString("{\"format\": \"jointscope-graph\"\n \"version\": 1}") << 2 << 2;
        QTest::newRow("truncated") << QString("{\"format\": \"jointscope-graph\",\n \"version\": 1,\n \"gr")
                                   << 3 << 2;
        QTest::newRow("truncated after comma")
            << QString("{\"format\": \"jointscope-graph\",\n \"version\": 1,") << 2 << 15;
        QTest::newRow("empty") << QString("") << 1 << 1;
        QTest::newRow("bad literal") << QString("{\n\n   \"format\": nope}") << 3 << 14;
    }

    void malformedJsonIsLocated() {
        QFETCH(QString, text);
        QFETCH(int, line);
        QFETCH(int, col);
        Expected<Graph> g = readJsonGraph(text.toStdString(), "bad.json");
        QVERIFY(!g);
        QCOMPARE(g.error().loc.file, std::string("bad.json"));
        QCOMPARE(int(g.error().loc.line), line);
        QCOMPARE(int(g.error().loc.col), col);
        QVERIFY(g.error().format().rfind(
                    "bad.json:" + std::to_string(line) + ":" + std::to_string(col) + ": error: ", 0) == 0);
    }

    void deepNestingIsRefused() {
        std::string text =
            std::string(kValidHead) + "{\"name\": \"a\", \"op\": \"output\", \"target\": \"o\", \"args\": ";
        text += std::string(100000, '[');
        Expected<Graph> g = readJsonGraph(text, "deep.json");
        QVERIFY(!g);
        QCOMPARE(int(g.error().loc.line), 6);
        QVERIFY(g.error().message.find("deeper") != std::string::npos);
    }

    void schemaErrorsNameNodeAndField_data() {
        QTest::addColumn<QString>("nodes");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<int>("line");
        // Nodes start on line 6 (after kValidHead); the bad node is the second one, on line 7.
        const QString a = "   {\"name\": \"a\", \"op\": \"placeholder\", \"target\": \"a\"},\n";
        QTest::newRow("unknown ref")
            << a + "   {\"name\": \"b\", \"op\": \"call_function\", \"target\": \"aten.relu.default\", "
                   "\"args\": [{\"node\": \"zz\"}]}\n"
            << "node 'b': args[0]: unknown node reference 'zz'" << 7;
        QTest::newRow("missing op") << a + "   {\"name\": \"b\", \"target\": \"x\"}\n"
                                    << "node 'b': missing \"op\"" << 7;
        QTest::newRow("duplicate") << a + "   {\"name\": \"a\", \"op\": \"placeholder\", \"target\": \"a\"}\n"
                                   << "node 'a': duplicate node name" << 7;
        QTest::newRow("bad tag") << a + "   {\"name\": \"b\", \"op\": \"output\", \"target\": \"output\", "
                                        "\"kwargs\": {\"k\": {\"tensor\": 1}}}\n"
                                 << "node 'b': kwargs.k: unknown value tag \"tensor\"" << 7;
        QTest::newRow("bad dtype") << a + "   {\"name\": \"b\", \"op\": \"placeholder\", \"target\": \"b\", "
                                          "\"outputs\": [{\"dtype\": \"float33\"}]}\n"
                                   << "node 'b': outputs[0].dtype: unknown dtype 'float33'" << 7;
        QTest::newRow("bad op") << a + "   {\"name\": \"b\", \"op\": \"call\", \"target\": \"b\"}\n"
                                << "node 'b': op: unknown op 'call'" << 7;
        QTest::newRow("int overflow")
            << a + "   {\"name\": \"b\", \"op\": \"output\", \"target\": \"output\", "
                   "\"args\": [18446744073709551615]}\n"
            << "node 'b': args[0]: expected an int64 integer" << 7;
        QTest::newRow("subgraph range")
            << a + "   {\"name\": \"b\", \"op\": \"get_attr\", \"target\": \"b\", "
                   "\"subgraph\": 3}\n"
            << "node 'b': subgraph: index 3 out of range" << 7;

        // Graph checks (validateGraph, checkTensorMeta, checkSymbolic): the bad node's object is located.
        auto call = [](const QString& name, const QString& target, const QString& args) {
            return "   {\"name\": \"" + name + "\", \"op\": \"call_function\", \"target\": \"" + target +
                   "\", \"args\": [" + args + "]},\n";
        };
        const QString out =
            "   {\"name\": \"out\", \"op\": \"output\", \"target\": \"output\", \"args\": [null]}\n";
        QTest::newRow("forward reference")
            << a + call("b", "aten.relu.default", "{\"node\": \"c\"}") +
                   call("c", "aten.relu.default", "{\"node\": \"a\"}") + out
            << "node 'b' (torch.ops.aten.relu.default) uses 'c', which is defined after it (forward reference"
            << 7;
        QTest::newRow("cycle") << a + call("b", "aten.add.Tensor", "{\"node\": \"a\"}, {\"node\": \"c\"}") +
                                      call("c", "aten.relu.default", "{\"node\": \"b\"}") + out
                               << "node 'b' (torch.ops.aten.add.Tensor) is on a cycle: 'b' -> 'c' -> 'b'"
                               << 7;
        QTest::newRow("self cycle") << a + call("b", "aten.relu.default", "{\"node\": \"b\"}") + out
                                    << "node 'b' (torch.ops.aten.relu.default) uses itself" << 7;
        QTest::newRow("dangling reference") << a + call("b", "aten.relu.default", "{\"node\": null}") + out
                                            << "refers to no node (dangling reference)" << 7;
        QTest::newRow("mm with one argument")
            << a + call("b", "torch.ops.aten.mm.default", "{\"node\": \"a\"}") + out
            << "node 'b' (torch.ops.aten.mm.default): missing required argument 'mat2'" << 7;
        auto tensor = [&](const QString& sizes) {
            return a +
                   "   {\"name\": \"b\", \"op\": \"placeholder\", \"target\": \"b\", \"output_kind\": "
                   "\"tensor\", "
                   "\"outputs\": [{\"dtype\": \"float32\", \"sizes\": " +
                   sizes + "}]}\n";
        };
        QTest::newRow("negative size")
            << tensor("[4, -3]") << "node 'b': outputs[0].sizes[1]: negative size -3" << 7;
        QTest::newRow("2^62 size")
            << tensor("[4611686018427387904]")
            << "node 'b': outputs[0].sizes[0]: sizes [4611686018427387904]: "
               "4611686018427387904 elements of 4 bytes (float32): the byte size overflows"
            << 7;
        QTest::newRow("INT64_MAX size")
            << tensor("[2, 9223372036854775807]") << "the element count overflows int64 at dimension 1" << 7;
        QTest::newRow("INT64_MIN // -1 in a size")
            << tensor("[\"(-9223372036854775808)//(-1)\"]")
            << "node 'b': outputs[0].sizes[0]: size 0: int64 overflow in -9223372036854775808 // -1" << 7;
        QTest::newRow("20000 nested parens in a size")
            << tensor("[\"" + QString(20000, '(') + "s0" + QString(20000, ')') + "\"]")
            << "node 'b': outputs[0].sizes[0]: size 0: nesting deeper than 256 levels" << 7;
        QTest::newRow("INT64_MIN // -1 in a sym value")
            << a + "   {\"name\": \"b\", \"op\": \"call_function\", \"target\": \"operator.floordiv\", "
                   "\"args\": "
                   "[-9223372036854775808, -1], \"output_kind\": \"sym_int\", \"sym\": "
                   "\"-9223372036854775808 // -1\"}\n"
            << "node 'b': sym: int64 overflow in -9223372036854775808 // -1" << 7;
        QTest::newRow("deep sym argument")
            << a +
                   call("b", "aten.view.default",
                        "{\"node\": \"a\"}, [{\"sym\": \"" + QString(300, '(') + "s0" + QString(300, ')') +
                            "\"}]") +
                   out
            << "node 'b': args[1][0].sym: nesting deeper than 256 levels" << 7;
    }

    void schemaErrorsNameNodeAndField() {
        QFETCH(QString, nodes);
        QFETCH(QString, expected);
        QFETCH(int, line);
        const std::string text = kValidHead + nodes.toStdString() + "  ]\n }\n}\n";
        QVERIFY(nlohmann::json::accept(text)); // syntactically valid: the error is a schema error
        Expected<Graph> g = readJsonGraph(text, "schema.json");
        QVERIFY(!g);
        QVERIFY2(g.error().message.find(expected.toStdString()) != std::string::npos,
                 g.error().format().c_str());
        QCOMPARE(int(g.error().loc.line), line);
        QCOMPARE(int(g.error().loc.col), 4);
    }

    // The fast parser (simdjson) and the locating one (nlohmann) accept the same documents and read them
    // alike, down to the corners where the two libraries differ.
    void parsersAgree_data() {
        QTest::addColumn<QString>("nodes");
        QTest::addColumn<bool>("valid");
        // The output node returns one list, which holds the values tried.
        const QString out =
            "   {\"name\": \"output\", \"op\": \"output\", \"target\": \"output\", \"args\": [[";
        const QString end = "]]}\n";
        auto nested = [](int depth) { return QString(depth, '[') + "1" + QString(depth, ']'); };
        // kValidHead opens 3 levels (document, graph, nodes), the output node, its args and the list 3 more.
        QTest::newRow("depth 256") << out + nested(250) + end << true;
        QTest::newRow("depth 257") << out + nested(251) + end << false;
        // nlohmann keeps the last of repeated keys.
        QTest::newRow("repeated key") << "   {\"name\": \"x\", \"name\": \"output\", \"op\": \"output\", "
                                         "\"target\": \"output\", \"args\": [null]}\n"
                                      << true;
        QTest::newRow("repeated kwarg") << "   {\"name\": \"output\", \"op\": \"output\", \"target\": "
                                           "\"output\", \"args\": [null], \"kwargs\": {\"a\": 1, \"a\": 2}}\n"
                                        << true;
        QTest::newRow("uint64") << out + "18446744073709551615" + end << false;
        QTest::newRow("beyond uint64") << out + "18446744073709551616" + end << true; // a float to both
        QTest::newRow("float overflow") << out + "1e999" + end << false;
        QTest::newRow("negative zero") << out + "-0, -0.0" + end << true;
        QTest::newRow("escapes") << out + "\"\\u00e9\\n\\ud83d\\ude00\"" + end << true;
        QTest::newRow("lone surrogate") << out + "\"\\ud83d\"" + end << false;
        QTest::newRow("tagged float") << out + "{\"float\": \"-inf\"}, {\"float\": 2}" + end << true;
    }

    void parsersAgree() {
        QFETCH(QString, nodes);
        QFETCH(bool, valid);
        const std::string text = kValidHead + nodes.toStdString() + "  ]\n }\n}\n";
        Expected<Graph> fast = readJsonGraph(text, "agree.json");
        Expected<Graph> located = readJsonGraph(text, "agree.json", JsonParser::Nlohmann);
        QCOMPARE(bool(fast), valid);
        QCOMPARE(bool(located), valid);
        if (valid)
            QCOMPARE(writeJsonGraph(*fast), writeJsonGraph(*located));
        else
            QCOMPARE(fast.error().format(), located.error().format());
    }

    void documentErrors() {
        Expected<Graph> v2 = readJsonGraph(
            R"({"format": "jointscope-graph", "version": 2, "graph": {"nodes": []}})", "v.json");
        QVERIFY(!v2);
        QVERIFY(v2.error().message.find("unsupported version 2") != std::string::npos);
        QCOMPARE(int(v2.error().loc.line), 1);
        Expected<Graph> noFormat = readJsonGraph(R"({"version": 1, "graph": {"nodes": []}})", "n.json");
        QVERIFY(!noFormat);
        QVERIFY(noFormat.error().message.find("\"format\"") != std::string::npos);
        Expected<Graph> noNodes =
            readJsonGraph("{\"format\": \"jointscope-graph\", \"version\": 1,\n \"graph\": {}}", "m.json");
        QVERIFY(!noNodes);
        QVERIFY(noNodes.error().message.find("missing \"nodes\"") != std::string::npos);
        QCOMPARE(int(noNodes.error().loc.line), 2);
        QCOMPARE(int(noNodes.error().loc.col), 11);
        Expected<Graph> array = readJsonGraph("[1, 2]", "a.json");
        QVERIFY(!array);
        // A torch 1.13 sidecar is not a graph; the message says what it looks like.
        const std::string meta = test::readFile(test::sharedPath("graphs/torch-1.13/mlp/joint.meta.json"));
        Expected<Graph> sidecar = readJsonGraph(meta, "joint.meta.json");
        QVERIFY(!sidecar);
        QVERIFY(sidecar.error().message.find("sidecar") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestJson)
#include "tst_json.moc"
