// FX text reader: real torch 1.13 / 2.x texts, HOP nesting, literals, and located errors.
// Expected counts come from torch's own sidecars and from a line counter written here, not from the reader.
#include "graph/SymbolicType.h"
#include "io/FxReader.h"
#include "testutil.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <cmath>
#include <limits>

using namespace jointscope;
using namespace jointscope::test;

namespace {

// Independent node count of the forward() whose body is indented by `bodyIndent` spaces (the first one
// found): placeholders (def parameters, or the names a tree_flatten_spec line unpacks) + one per
// `name = ...` statement at that indentation (dynamo's `l_x_ = L_x_` renames excluded) + the output.
int countNodes(const std::string& text, int bodyIndent) {
    const QRegularExpression assignment(
        QString("^ {%1}([A-Za-z_][A-Za-z0-9_]*)(: [^=]+)? = (.*)$").arg(bodyIndent));
    const QRegularExpression bareName("^[A-Za-z_][A-Za-z0-9_]*(;.*)?$");
    const QString defPrefix = QString(bodyIndent - 4, ' ') + "def forward(";
    int placeholders = 0;
    int statements = 0;
    int returns = 0;
    QString params;
    bool inDef = false;
    bool inBody = false;
    for (const std::string& raw : splitLines(text)) {
        const QString line = q(raw);
        if (!inBody && line.startsWith(defPrefix)) {
            params = line.mid(defPrefix.size());
            inDef = !line.trimmed().endsWith("):");
            inBody = !inDef;
            continue;
        }
        if (inDef) {
            params += "\n" + line;
            if (line.trimmed().startsWith("):")) {
                inDef = false;
                inBody = true;
            }
            continue;
        }
        if (!inBody)
            continue;
        if (!line.trimmed().isEmpty() && !line.trimmed().startsWith("#") &&
            !line.startsWith(QString(bodyIndent, ' ')))
            break; // end of this forward's body
        if (line.contains("fx_pytree.tree_flatten_spec")) {
            const QString names = line.left(line.indexOf(" = fx_pytree")).trimmed();
            int n = 0;
            for (const QString& name : names.split(',', Qt::SkipEmptyParts))
                n += name.trimmed().isEmpty() ? 0 : 1;
            placeholders = n;
            params.clear();
            continue;
        }
        if (line.startsWith(QString(bodyIndent, ' ') + "return"))
            ++returns;
        const auto m = assignment.match(line);
        if (m.hasMatch() && !bareName.match(m.captured(3)).hasMatch())
            ++statements;
    }
    if (!params.isEmpty()) {
        // "self, a: "f32[4]", b" (single- or multi-line): count the top-level commas after self.
        params.remove(QRegularExpression("#[^\n]*"));
        params = params.left(params.lastIndexOf(')'));
        int depth = 0;
        int count = 0;
        bool inString = false;
        QString current;
        for (QChar c : params + ",") {
            if (c == '"')
                inString = !inString;
            if (!inString && (c == '[' || c == '('))
                ++depth;
            if (!inString && (c == ']' || c == ')'))
                --depth;
            if (!inString && depth == 0 && c == ',') {
                if (!current.trimmed().isEmpty() && current.trimmed() != "self")
                    ++count;
                current.clear();
            } else {
                current += c;
            }
        }
        placeholders = count;
    }
    return placeholders + statements + returns;
}

// The aot_joint_graph payload of the provenance log: the tab-indented lines after its header.
struct Payload {
    std::string text;
    uint32_t firstLine = 0;
};

Payload jointPayload() {
    const std::vector<std::string> lines =
        splitLines(readFile(sharedPath("graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt")));
    Payload p;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].empty() || lines[i][0] == '\t' ||
            lines[i].find("\"aot_joint_graph\"") == std::string::npos)
            continue;
        p.firstLine = static_cast<uint32_t>(i + 2);
        for (size_t j = i + 1; j < lines.size() && !lines[j].empty() && lines[j][0] == '\t'; ++j)
            p.text += lines[j].substr(1) + "\n";
        break;
    }
    return p;
}

const Node& nodeNamed(const Graph& g, const std::string& name) {
    auto id = g.find(name);
    if (!id)
        qFatal("no node %s", name.c_str());
    return g.node(*id);
}

std::vector<SymInt> ints(std::initializer_list<int64_t> values) {
    std::vector<SymInt> out;
    for (int64_t v : values)
        out.push_back(SymInt{v, {}});
    return out;
}

const std::string kLiterals =
    "def forward(self, x):\n"
    "    a = torch.ops.test.op(x, 9223372036854775807, -9223372036854775808, -3, inf, -inf, nan, 1e-05, "
    "2.5e+16, True, False, None, 'it\\'s', \"say \\\"hi\\\"\", 'tab\\tnl\\n', [1, 2], (3,), (), {'k': 1, "
    "'j': [x]}, slice(None, 5, None), torch.float32, device(type='cuda', index=0), device(type='cpu'), "
    "torch.strided, torch.channels_last, ..., s0, 4*s0 + 1, dtype = torch.bfloat16)\n"
    "    return (a,)\n";

Diagnostic errorOf(const std::string& text, const FxReadOptions& options = {}) {
    auto g = readFxText(text, options);
    if (g)
        qFatal("expected a parse error for:\n%s", text.c_str());
    return g.error();
}

} // namespace

class TestFxReader : public QObject {
    Q_OBJECT
private slots:
    // FX prints an operator.iadd / operator.setitem node as a statement on its first argument, then binds the
    // node's name (torch.fx.graph's inplace_methods); dynamo graphs of real models hold them
    // ("mlp_output += attention_output" in transformers' Falcon).
    void inPlaceStatementsAreNodes() {
        const std::string text = "def forward(self, L_x_: \"f32[4][1]cpu\", L_y_: \"f32[4][1]cpu\"):\n"
                                 "    l_x_ = L_x_\n"
                                 "    l_y_ = L_y_\n"
                                 "    h: \"f32[4][1]cpu\" = l_x_ * 2\n"
                                 "    h += l_y_;  out: \"f32[4][1]cpu\" = h;  h = l_y_ = None\n"
                                 "    out //= 3;  floored = out\n"
                                 "    floored[[0]] = 1.5;  setitem = floored;  floored = None\n"
                                 "    return (setitem,)\n";
        auto g = readFxText(text);
        QVERIFY2(g, g ? "" : g.error().format().c_str());
        auto at = [&](const char* name) { return &nodeNamed(*g, name); };
        const Node* out = at("out");
        QVERIFY(out);
        QCOMPARE(out->target.text, std::string("operator.iadd"));
        QCOMPARE(out->args.size(), size_t(2));
        QCOMPARE(g->node(out->args[0].asNode()).name, std::string("h"));
        QCOMPARE(g->node(out->args[1].asNode()).name, std::string("l_y_"));
        QCOMPARE(out->tensor()->sizes.size(), size_t(1));
        const Node* floored = at("floored");
        QVERIFY(floored && floored->target.text == "operator.ifloordiv" && floored->args[1].asInt() == 3);
        const Node* setitem = at("setitem");
        QVERIFY(setitem);
        QCOMPARE(setitem->target.text, std::string("operator.setitem"));
        QCOMPARE(setitem->args.size(), size_t(3));
        QVERIFY(setitem->args[1].kind() == ValueKind::List && setitem->args[1].items()[0].asInt() == 0);
        QCOMPARE(setitem->args[2].asFloat(), 1.5);
        // The name must be bound to the node the statement changed.
        const Diagnostic d = errorOf("def forward(self, x, y):\n    x += y;  out = y\n    return (out,)\n");
        QCOMPARE(d.loc.line, 2u);
        QVERIFY2(d.message.find("expected 'x'") != std::string::npos, d.message.c_str());
        QCOMPARE(errorOf("def forward(self, x):\n    z += x;  out = z\n    return (out,)\n").loc.line, 2u);
    }

    // torch prints a node summary whenever it changes, its checkpoint tag included: a backward node's summary
    // ("# Backward of forward node: File: ...") without one ends the region's tag.
    void checkpointTagsFollowEachSummary() {
        const std::string text =
            "def forward(self, x: \"f32[4][1]cpu\"):\n"
            "    # ac_graph_id: 2 - PREFER_RECOMPUTE File: /m.py:7 in forward, code: y = x.sin()\n"
            "    sin: \"f32[4][1]cpu\" = torch.ops.aten.sin.default(x)\n"
            "\n"
            "    # ac_graph_id: 2 - PREFER_RECOMPUTE Backward of forward node: File: /m.py:7 in forward, "
            "code: y = x.sin()\n"
            "    cos: \"f32[4][1]cpu\" = torch.ops.aten.cos.default(x)\n"
            "\n"
            "    # Backward of forward node: File: /m.py:5 in forward, code: x = self.norm(x)\n"
            "    mul: \"f32[4][1]cpu\" = torch.ops.aten.mul.Tensor(cos, sin)\n"
            "    return (mul,)\n";
        auto g = readFxText(text);
        QVERIFY2(g, g ? "" : g.error().format().c_str());
        auto at = [&](const char* name) { return &nodeNamed(*g, name); };
        for (const char* tagged : {"sin", "cos"}) {
            QCOMPARE(at(tagged)->meta.recompute, std::string("PREFER_RECOMPUTE"));
            QCOMPARE(at(tagged)->meta.acGraphId, int64_t(2));
        }
        const Node* mul = at("mul");
        QCOMPARE(mul->meta.recompute, std::string());
        QCOMPARE(mul->meta.acGraphId, int64_t(-1));
        QCOMPARE(mul->meta.stackTrace,
                 std::vector<std::string>{
                     "Backward of forward node: File: /m.py:5 in forward, code: x = self.norm(x)"});
    }

    // torch 2.10 printed the summary behind a second "# " (a real 2.10 joint graph's lines), and no
    // "Backward of forward node" for the backward: the tag holds for both nodes the same.
    void torch210SummariesCarryTheirTags() {
        const std::string text =
            "def forward(self, x: \"f32[4][1]cpu\"):\n"
            "    # # ac_graph_id: 10 - PREFER_RECOMPUTE File: /m.py:13 in block, code: return self.drop(h)\n"
            "    sin: \"f32[4][1]cpu\" = torch.ops.aten.sin.default(x)\n"
            "\n"
            "    # # ac_graph_id: 10 - MUST_SAVE File: /m.py:14 in block, code: return self.drop(h)\n"
            "    cos: \"f32[4][1]cpu\" = torch.ops.aten.cos.default(sin)\n"
            "\n"
            "    # File: /m.py:5 in forward, code: x = self.norm(x)\n"
            "    mul: \"f32[4][1]cpu\" = torch.ops.aten.mul.Tensor(cos, sin)\n"
            "    return (mul,)\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(nodeNamed(*g, "sin").meta.recompute, std::string("PREFER_RECOMPUTE"));
        QCOMPARE(nodeNamed(*g, "sin").meta.acGraphId, int64_t(10));
        QCOMPARE(nodeNamed(*g, "cos").meta.recompute, std::string("MUST_SAVE"));
        QCOMPARE(nodeNamed(*g, "mul").meta.recompute, std::string());
    }

    void torch113TextsMatchTorchsCounts() {
        const QStringList models =
            QDir(q(sharedPath("graphs/torch-1.13"))).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
        QVERIFY(models.size() >= 3);
        for (const QString& model : models) {
            const std::string dir = "graphs/torch-1.13/" + model.toStdString() + "/";
            for (const char* part : {"joint.txt", "fw.txt", "bw.txt"}) {
                const std::string text = readFile(sharedPath(dir + part));
                auto g = readFxText(text, {dir + part});
                JS_VERIFY_EXPECTED(g);
                QCOMPARE(int(g->size()), countNodes(text, text.rfind("class ", 0) == 0 ? 8 : 4));
                QVERIFY(g->outputNode().has_value());
            }
            const std::string jointText = readFile(sharedPath(dir + "joint.txt"));
            auto joint = readFxText(jointText);
            JS_VERIFY_EXPECTED(joint);
            QCOMPARE(joint->name, std::string("fake_fn"));
            const QJsonObject reference =
                QJsonDocument::fromJson(
                    QByteArray::fromStdString(readFile(sharedPath(dir + "reference.json"))))
                    .object();
            QCOMPARE(int(joint->size()), reference["joint_nodes"].toInt());
            const QJsonArray metaNodes =
                QJsonDocument::fromJson(
                    QByteArray::fromStdString(readFile(sharedPath(dir + "joint.meta.json"))))
                    .object()["nodes"]
                    .toArray();
            QCOMPARE(int(joint->size()), int(metaNodes.size()));
            for (int i = 0; i < metaNodes.size(); ++i) {
                const QJsonObject m = metaNodes[i].toObject();
                const Node& n = joint->node(NodeId(i));
                QCOMPARE(q(n.name), m["name"].toString());
                QCOMPARE(q(std::string(nodeOpName(n.op))), m["op"].toString());
                std::string target = m["target"].toString().toStdString();
                // str(operator.getitem) in the sidecar; FX prints it as x[i].
                if (target == "<built-in function getitem>")
                    target = "operator.getitem";
                QCOMPARE(n.target.text,
                         n.op == NodeOp::CallFunction ? Target::parseFunction(target).text : target);
            }
            const Node& out = joint->node(*joint->outputNode());
            QCOMPARE(out.args.size(), size_t(1));
            QCOMPARE(out.args[0].kind(), ValueKind::List);
        }
    }

    void torch113MlpNodeDetails() {
        auto g = readFxText(readFile(sharedPath("graphs/torch-1.13/mlp/joint.txt")));
        JS_VERIFY_EXPECTED(g);
        // Hand-read from the file: "addmm = torch.ops.aten.addmm.default(primals_2, primals_5, t);  primals_2
        // = None"
        const Node& addmm = nodeNamed(*g, "addmm");
        QCOMPARE(addmm.target.text, std::string("torch.ops.aten.addmm.default"));
        QCOMPARE(addmm.args.size(), size_t(3));
        QCOMPARE(g->node(addmm.args[0].asNode()).name, std::string("primals_2"));
        QCOMPARE(g->node(addmm.args[2].asNode()).name, std::string("t"));
        QCOMPARE(addmm.meta.sourceLine, 7u);
        const Node& sum1 = nodeNamed(*g, "sum_1"); // sum.dim_IntList(tangents_1, [0], True)
        QCOMPARE(sum1.args[1], Value::list({Value::integer(0)}));
        QCOMPARE(sum1.args[2], Value::boolean(true));
        QCOMPARE(nodeNamed(*g, "tangents_1").op, NodeOp::Placeholder);
        // Users, read off the file by hand: mm(tangents_1, t_2), t_3 = t(tangents_1), sum_1 = sum(tangents_1,
        // ...).
        std::vector<std::string> users;
        for (NodeId u : nodeNamed(*g, "tangents_1").users)
            users.push_back(g->node(u).name);
        QCOMPARE(users, (std::vector<std::string>{"mm", "t_3", "sum_1"}));
        QVERIFY(addmm.meta.stackTrace.empty()); // "# Gradient addition node ..." is not a stack trace
    }

    void snippetsLoad() {
        const QStringList files = QDir(q(sharedPath("graphs/snippets"))).entryList({"*.txt"}, QDir::Files);
        QVERIFY(files.size() >= 5);
        for (const QString& file : files) {
            const std::string text = readFile(sharedPath("graphs/snippets/" + file.toStdString()));
            auto g = readFxText(text, {file.toStdString()});
            JS_VERIFY_EXPECTED(g);
            const bool isClass = text.rfind("class ", 0) == 0;
            QCOMPARE(int(g->size()), countNodes(text, isClass ? 8 : 4));
            QCOMPARE(g->name, std::string(isClass ? "GraphModule" : "forward"));
        }
    }

    void hopBodiesNest() {
        auto g = readFxText(readFile(sharedPath("graphs/snippets/hop_nested_invoke_subgraph.txt")));
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(g->subgraphs().size(), size_t(1));
        const Graph& sub = *g->subgraph(0);
        QCOMPARE(sub.name, std::string("subgraph_0"));
        QCOMPARE(sub.subgraphs().size(), size_t(1));
        const Graph& body = *sub.subgraph(0);
        QCOMPARE(body.name, std::string("wrap_body_0"));
        QCOMPARE(nodeNamed(*g, "subgraph_0").op, NodeOp::GetAttr);
        QCOMPARE(nodeNamed(*g, "subgraph_0").subgraph, 0);
        QCOMPARE(nodeNamed(sub, "wrap_body_0").subgraph, 0);
        QCOMPARE(nodeNamed(*g, "invoke_subgraph").target.kind, TargetKind::HigherOrder);
        // Counted by hand: l_x_, subgraph_0, invoke_subgraph, getitem_2, detach, output.
        QCOMPARE(g->size(), size_t(6));
        QCOMPARE(sub.size(), size_t(5));
        QCOMPARE(body.size(), size_t(4)); // l_x_, a, _, output
        // Dynamo's "l_x_ = L_x_" renames the placeholder; it is not a node of its own.
        const Node& input = g->node(0);
        QCOMPARE(input.name, std::string("l_x_"));
        QCOMPARE(input.target.text, std::string("L_x_"));
        QCOMPARE(input.tensor()->sizes, ints({8}));
        QCOMPARE(nodeNamed(*g, "detach").op, NodeOp::CallMethod);
        QCOMPARE(nodeNamed(*g, "getitem_2").target.text, std::string("operator.getitem"));
        QCOMPARE(nodeNamed(body, "_").args[0], Value::nodeRef(0));
        QCOMPARE(body.node(0).users.size(), size_t(2));
    }

    void checkpointBodyForms() {
        auto g = readFxText(readFile(sharedPath("graphs/snippets/hop_checkpoint_wrap.txt")));
        JS_VERIFY_EXPECTED(g);
        const Node& tac = nodeNamed(*g, "tag_activation_checkpoint");
        QCOMPARE(tac.kwargs.size(), size_t(1));
        QCOMPARE(tac.kwargs[0].first, std::string("use_reentrant"));
        QCOMPARE(tac.kwargs[0].second, Value::boolean(false));
        QCOMPARE(tac.meta.stackTrace,
                 std::vector<std::string>{
                     "File: /opt/pytorch/lightning-thunder/main.py:19 in checkpoint_fn, code: return "
                     "checkpoint(fn, x, use_reentrant=False)"});
        const Graph& body = *g->subgraph(0);
        const Node& w = nodeNamed(body, "w");
        QCOMPARE(w.op, NodeOp::CallMethod);
        QCOMPARE(w.target.text, std::string("sin"));
        QCOMPARE(w.meta.stackTrace[0],
                 std::string("File: /opt/pytorch/lightning-thunder/main.py:15 in fn, code: w = x.sin()"));
        const Node& mT = nodeNamed(body, "getattr_1");
        QCOMPARE(mT.op, NodeOp::CallFunction);
        QCOMPARE(mT.target.text, std::string("getattr"));
        QCOMPARE(mT.args[1], Value::string("mT"));
        QCOMPARE(mT.meta.stackTrace[0].substr(0, 44),
                 std::string("File: /opt/pytorch/lightning-thunder/main.py"));
        const Node& matmul = nodeNamed(body, "matmul");
        QCOMPARE(matmul.target.text, std::string("operator.matmul"));
        QCOMPARE(matmul.args, (std::vector<Value>{Value::nodeRef(*body.find("getattr_1")),
                                                  Value::nodeRef(*body.find("w"))}));
    }

    void aotJointAnnotationsAndDescriptors() {
        const Payload payload = jointPayload();
        QVERIFY(!payload.text.empty());
        FxReadOptions options{"inductor_provenance_jit_debug_handle_log.txt", payload.firstLine, 1};
        auto g = readFxText(payload.text, options);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(g->name, std::string("inner_f"));
        QCOMPARE(int(g->size()), countNodes(payload.text, 8));
        const Node& permute = nodeNamed(*g, "permute");
        QCOMPARE(permute.outputKind, OutputKind::Tensor);
        QCOMPARE(permute.tensor()->dtype, DType::Float32);
        QCOMPARE(permute.tensor()->sizes, ints({10, 16}));
        QCOMPARE(permute.tensor()->strides, ints({1, 10}));
        QCOMPARE(permute.tensor()->device.str(), std::string("cuda:0"));
        QCOMPARE(permute.args[1], Value::list({Value::integer(1), Value::integer(0)}));
        QVERIFY(permute.meta.stackTrace.size() == 1 &&
                permute.meta.stackTrace[0].find(
                    "test_provenance_tracing.py:79 in forward, code: x = self.fc1(x)") != std::string::npos);
        // sourceLine is the line in the log file.
        const std::vector<std::string> fileLines = splitLines(
            readFile(sharedPath("graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt")));
        QVERIFY(permute.meta.sourceLine > 0 && permute.meta.sourceLine <= fileLines.size());
        QVERIFY(fileLines[permute.meta.sourceLine - 1].rfind("\t        permute: ", 0) == 0);
        QCOMPARE(nodeNamed(*g, "le").tensor()->dtype, DType::Bool);
        const Node& scalar = nodeNamed(*g, "scalar_tensor");
        QCOMPARE(scalar.tensor()->dtype, DType::Float32);
        QVERIFY(scalar.tensor()->sizes.empty());
        QVERIFY(scalar.tensor()->strides.empty());
        QCOMPARE(scalar.kwargs.size(), size_t(3));
        QCOMPARE(scalar.kwargs[0].first, std::string("dtype"));
        QCOMPARE(scalar.kwargs[0].second, Value::dtype(DType::Float32));
        QCOMPARE(scalar.kwargs[1].second, Value::layout("strided"));
        QCOMPARE(scalar.kwargs[2].first, std::string("device"));
        QCOMPARE(scalar.kwargs[2].second, Value::device("cuda", 0));
        const Node& primals1 = g->node(0);
        QCOMPARE(primals1.name, std::string("primals_1"));
        QCOMPARE(primals1.meta.descriptor, std::string("PlainAOTInput(idx=0)"));
        QCOMPARE(primals1.tensor()->sizes, ints({16, 10}));
        const Node& tangents = nodeNamed(*g, "tangents_1");
        QCOMPARE(tangents.op, NodeOp::Placeholder);
        QCOMPARE(tangents.meta.descriptor, std::string("TangentAOTInput(output=PlainAOTOutput(idx=0))"));
        // The returned list keeps its Nones; the pytree containers (primals, tangents) are not nodes.
        const Node& out = g->node(*g->outputNode());
        QCOMPARE(out.args[0].items().size(), size_t(8));
        QCOMPARE(out.args[0].items()[4], Value::none());
        // The per-output comments of the multi-line return are the AOT output descriptors.
        QCOMPARE(out.meta.extra.size(), size_t(1));
        QCOMPARE(out.meta.extra[0].first, std::string("output_descriptors"));
        const QJsonArray descriptors =
            QJsonDocument::fromJson(QByteArray::fromStdString(out.meta.extra[0].second)).array();
        QCOMPARE(descriptors.size(), 8);
        QCOMPARE(descriptors[0].toString(), QString("PlainAOTOutput(idx=0)"));
        QCOMPARE(descriptors[2].toString(), QString("GradAOTOutput(grad_of=PlainAOTInput(idx=0))"));
        QCOMPARE(descriptors[7].toString(), QString("None"));
        // Two PlainAOTOutputs (sigmoid, mul_3) come before the first gradient: torch's num_fwd_outputs.
        QCOMPARE(g->numFwdOutputs.value_or(-1), int64_t(2));
        QVERIFY(!g->find("primals"));
        QCOMPARE(std::count_if(g->nodes().begin(), g->nodes().end(),
                               [](const Node& n) { return n.op == NodeOp::Placeholder; }),
                 long(7));
    }

    void exportedProgram() {
        // str(ExportedProgram) in export.log: a header line, the module indented by 4, then signature lines.
        // The payload has empty lines without the tab, so take tab lines and empty lines after the header.
        const std::vector<std::string> lines =
            splitLines(readFile(sharedPath("graphs/torch-trace/export.log")));
        std::string text;
        uint32_t firstLine = 0;
        for (size_t i = 0; i < lines.size() && text.empty(); ++i) {
            if (lines[i].find("{\"exported_program\"") == std::string::npos)
                continue;
            firstLine = uint32_t(i + 2);
            for (size_t j = i + 1; j < lines.size() && (lines[j].empty() || lines[j][0] == '\t'); ++j)
                text += (lines[j].empty() ? "" : lines[j].substr(1)) + "\n";
        }
        QVERIFY(text.rfind("ExportedProgram:\n", 0) == 0);
        auto g = readFxText(text, {"export.log", firstLine, 1});
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(int(g->size()), countNodes(text, 12));
        const Node& neg = nodeNamed(*g, "neg");
        QCOMPARE(neg.target.text, std::string("operator.neg"));
        QCOMPARE(neg.symValue, std::string("-u1"));
        QCOMPARE(nodeNamed(*g, "floordiv").target.text, std::string("operator.floordiv"));
        QCOMPARE(nodeNamed(*g, "slice_1").tensor()->sizes[0].expr, std::string("(((-u1)//3)) + 5"));
        QCOMPARE(nodeNamed(*g, "slice_1").args[3], Value::nodeRef(*g->find("add")));
    }

    void literalEdgeCases() {
        auto g = readFxText(kLiterals);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(g->name, std::string("forward"));
        const std::vector<Value>& a = nodeNamed(*g, "a").args;
        QCOMPARE(a.size(), size_t(28));
        QCOMPARE(a[1], Value::integer(std::numeric_limits<int64_t>::max()));
        QCOMPARE(a[2], Value::integer(std::numeric_limits<int64_t>::min()));
        QCOMPARE(a[3], Value::integer(-3));
        QCOMPARE(a[4], Value::real(INFINITY));
        QCOMPARE(a[5], Value::real(-INFINITY));
        QVERIFY(a[6].kind() == ValueKind::Float && std::isnan(a[6].asFloat()));
        QCOMPARE(a[7], Value::real(1e-05));
        QCOMPARE(a[8], Value::real(2.5e16));
        QCOMPARE(a[9], Value::boolean(true));
        QCOMPARE(a[10], Value::boolean(false));
        QCOMPARE(a[11], Value::none());
        QCOMPARE(a[12], Value::string("it's"));
        QCOMPARE(a[13], Value::string("say \"hi\""));
        QCOMPARE(a[14], Value::string("tab\tnl\n"));
        QCOMPARE(a[15], Value::list({Value::integer(1), Value::integer(2)}));
        QCOMPARE(a[16], Value::tuple({Value::integer(3)}));
        QCOMPARE(a[17], Value::tuple({}));
        QCOMPARE(a[18], Value::dict({{Value::string("k"), Value::integer(1)},
                                     {Value::string("j"), Value::list({Value::nodeRef(0)})}}));
        QCOMPARE(a[19], Value::slice(Value::none(), Value::integer(5), Value::none()));
        QCOMPARE(a[20], Value::dtype(DType::Float32));
        QCOMPARE(a[21], Value::device("cuda", 0));
        QCOMPARE(a[22], Value::device("cpu"));
        QCOMPARE(a[23], Value::layout("strided"));
        QCOMPARE(a[24], Value::memoryFormat("channels_last"));
        QCOMPARE(a[25], Value::ellipsis());
        QCOMPARE(a[26], Value::symExpr("s0"));
        QCOMPARE(a[27], Value::symExpr("4*s0 + 1"));
        QCOMPARE(nodeNamed(*g, "a").kwargs[0].second, Value::dtype(DType::BFloat16));
        QCOMPARE(g->node(0).users, std::vector<NodeId>{1}); // x is used once by a (dict and arg)
    }

    void operatorAndAttributeForms() {
        const std::string text = "class M(torch.nn.Module):\n"
                                 "    def forward(self, x: \"f32[4, 8]\", s0: \"Sym(s0)\"):\n"
                                 "        # No stacktrace found for following nodes\n"
                                 "        b = x + 1\n"
                                 "        c = -x\n"
                                 "        d = x @ b\n"
                                 "        e = x[0]\n"
                                 "        f = x[(slice(None, None, None), 0)]\n"
                                 "        g = x.view(4, 8)\n"
                                 "        w = getattr(self.layers, \"0\").weight\n"
                                 "        l0 = getattr(self, \"0\")\n"
                                 "        p = self.fc1.bias\n"
                                 "        m = self.norm(x, eps = 1e-05)\n"
                                 "        t = x.mT\n"
                                 "        h = torch.sin(x)\n"
                                 "        k = operator.getitem(x, 1)\n"
                                 "        n = 2 - x\n"
                                 "        sym: \"Sym(4*s0 + 1)\" = s0 * 4\n"
                                 "        return [b, c, d, e, f, g, w, l0, p, m, t, h, k, n, sym]\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(g->size(), size_t(18)); // x, s0, 15 statements, output
        QCOMPARE(nodeNamed(*g, "b").target.text, std::string("operator.add"));
        QCOMPARE(nodeNamed(*g, "b").args[1], Value::integer(1));
        QCOMPARE(nodeNamed(*g, "c").target.text, std::string("operator.neg"));
        QCOMPARE(nodeNamed(*g, "c").args.size(), size_t(1));
        QCOMPARE(nodeNamed(*g, "d").target.text, std::string("operator.matmul"));
        QCOMPARE(nodeNamed(*g, "e").args[1], Value::integer(0));
        QCOMPARE(
            nodeNamed(*g, "f").args[1],
            Value::tuple({Value::slice(Value::none(), Value::none(), Value::none()), Value::integer(0)}));
        QCOMPARE(nodeNamed(*g, "g").op, NodeOp::CallMethod);
        QCOMPARE(nodeNamed(*g, "g").args.size(), size_t(3));
        QCOMPARE(nodeNamed(*g, "w").op, NodeOp::GetAttr);
        QCOMPARE(nodeNamed(*g, "w").target.text, std::string("layers.0.weight"));
        QCOMPARE(nodeNamed(*g, "p").target.text, std::string("fc1.bias"));
        QCOMPARE(nodeNamed(*g, "l0").target.text, std::string("0"));
        QCOMPARE(nodeNamed(*g, "m").op, NodeOp::CallModule);
        QCOMPARE(nodeNamed(*g, "m").target.text, std::string("norm"));
        QCOMPARE(nodeNamed(*g, "m").kwargs[0].second, Value::real(1e-05));
        QCOMPARE(nodeNamed(*g, "t").args[1], Value::string("mT"));
        QCOMPARE(nodeNamed(*g, "h").target.kind, TargetKind::Python);
        QCOMPARE(nodeNamed(*g, "k").target.text, std::string("operator.getitem"));
        QCOMPARE(nodeNamed(*g, "n").args[0], Value::integer(2));
        QCOMPARE(nodeNamed(*g, "s0").outputKind, OutputKind::SymInt);
        const Node& sym = nodeNamed(*g, "sym");
        QCOMPARE(sym.outputKind, OutputKind::SymInt);
        QCOMPARE(sym.symValue, std::string("4*s0 + 1"));
        QCOMPARE(sym.args[0], Value::nodeRef(*g->find("s0")));
        QCOMPARE(nodeNamed(*g, "x").tensor()->sizes, ints({4, 8}));
        QVERIFY(nodeNamed(*g, "x").tensor()->strides.empty());
        QVERIFY(nodeNamed(*g, "x").tensor()->device.type.empty());
    }

    // torch prints SymInt, SymFloat and SymBool values alike as Sym(...): a float symbol (zf5, SymT.FLOAT) or
    // a float literal makes it a SymFloat, as in AOTAutograd's joint graphs under dynamic=True.
    void symFloatAnnotations() {
        const std::string text =
            "class M(torch.nn.Module):\n"
            "    def forward(self, primals_1: \"f64[][]cpu\", primals_2: \"Sym(s77)\"):\n"
            "        _local_scalar_dense: \"Sym(zf5)\" = "
            "torch.ops.aten._local_scalar_dense.default(primals_1)\n"
            "        item: \"Sym(0.0000100000000000000)\" = "
            "torch.ops.aten._local_scalar_dense.default(primals_1)\n"
            "        mul: \"Sym(2*zf5)\" = _local_scalar_dense * 2\n"
            "        size: \"Sym(s77 + 1)\" = primals_2 + 1\n"
            "        return (mul, item, size)\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(nodeNamed(*g, "_local_scalar_dense").outputKind, OutputKind::SymFloat);
        QCOMPARE(nodeNamed(*g, "_local_scalar_dense").symValue, std::string("zf5"));
        QCOMPARE(nodeNamed(*g, "item").outputKind, OutputKind::SymFloat);
        QCOMPARE(nodeNamed(*g, "mul").outputKind, OutputKind::SymFloat);
        QCOMPARE(nodeNamed(*g, "primals_2").outputKind, OutputKind::SymInt);
        QCOMPARE(nodeNamed(*g, "size").outputKind, OutputKind::SymInt);
    }

    // What each Sym(...) value is, as sympy types it. The expressions are from torch 2.15 joint graphs and
    // the expected types from the Python that made them: `mul_25 / 32` of two ints is a float
    // (IntTrueDiv), torch.sym_float(s) is one (ToFloat), a size's floor division and power stay ints,
    // Eq(...) / s0 > 1 are bools; FloorToInt of a float is an int.
    void symbolicValueTypes() {
        const std::pair<const char*, SymbolicType> cases[] = {
            {"IntTrueDiv(32*s27*s77, 32)", SymbolicType::Float},
            {"ToFloat(s53)", SymbolicType::Float},
            {"FloatTrueDiv(1.0, IntTrueDiv(8*s53**2*s77, 8*s77))", SymbolicType::Float},
            {"(IntTrueDiv(64*s53**2*s77, 64)) - 1.0", SymbolicType::Float},
            {"2*zf5", SymbolicType::Float},
            {"0.0000100000000000000", SymbolicType::Float},
            {"OpaqueUnaryFn_sqrt(FloatTrueDiv(2.0, zf36))", SymbolicType::Float},
            {"s53**(-1)", SymbolicType::Float},
            {"32*s27*s77", SymbolicType::Int},
            {"2*((s53//2)) + 1", SymbolicType::Int},
            {"((s53//2))**2", SymbolicType::Int},
            {"Max(1, ((s53**2)//s53))", SymbolicType::Int},
            {"FloorToInt(2.5*zf3)", SymbolicType::Int},
            {"TruncToInt(IntTrueDiv(s0, 2))", SymbolicType::Int},
            {"Eq(s0, 1)", SymbolicType::Bool},
            {"s77 > 1", SymbolicType::Bool},
            {"Ne(Mod(s0, 8), 0) & (s0 >= 2)", SymbolicType::Bool},
            {"Piecewise((1, Eq(s0, 1)), (s0, True))", SymbolicType::Int},
        };
        for (const auto& [expr, type] : cases)
            QVERIFY2(symbolicValueType(expr) == type, expr);
        const std::string text = "class M(torch.nn.Module):\n"
                                 "    def forward(self, primals_3: \"Sym(s77)\", primals_4: \"Sym(s27)\"):\n"
                                 "        mul_25: \"Sym(32*s27*s77)\" = primals_3 * primals_4\n"
                                 "        truediv_2: \"Sym(IntTrueDiv(32*s27*s77, 32))\" = mul_25 / 32\n"
                                 "        eq: \"Sym(Eq(s27, 1))\" = primals_4 == 1\n"
                                 "        return (truediv_2, eq)\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(nodeNamed(*g, "mul_25").outputKind, OutputKind::SymInt);
        QCOMPARE(nodeNamed(*g, "truediv_2").outputKind, OutputKind::SymFloat);
        QCOMPARE(nodeNamed(*g, "eq").outputKind, OutputKind::SymBool);
    }

    void olderAndSymbolicAnnotations() {
        const std::string text =
            "def forward(self, x: f32[s0, 8], y):\n"
            "    sym_size: Sym(s0) = torch.ops.aten.sym_size(x, 0)\n"
            "    add: f32[s0, 8] = torch.ops.aten.add.Tensor(x, y)\n"
            "    cat: \"f32[2*s0, (((-u1)//3)) + 5][8, 1]cpu\" = torch.ops.aten.cat.default([add, add])\n"
            "    return (add, cat, sym_size)\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        const TensorMeta& x = *nodeNamed(*g, "x").tensor();
        QCOMPARE(x.sizes[0], (SymInt{0, "s0"}));
        QCOMPARE(x.sizes[1], (SymInt{8, {}}));
        QCOMPARE(nodeNamed(*g, "sym_size").symValue, std::string("s0"));
        const TensorMeta& cat = *nodeNamed(*g, "cat").tensor();
        QCOMPARE(cat.sizes[0].expr, std::string("2*s0"));
        QCOMPARE(cat.sizes[1].expr, std::string("(((-u1)//3)) + 5"));
        QCOMPARE(cat.strides, ints({8, 1}));
        QCOMPARE(cat.device.str(), std::string("cpu"));
        QVERIFY(!nodeNamed(*g, "y").tensor());
    }

    void gmCodeHeader() {
        // print(gm.code): leading blank lines, imports and wrap() registrations before a bare def.
        const std::string text = "\n\n\nimport torch\nfrom math import inf\n"
                                 "torch.fx._symbolic_trace.wrap(\"my_fn\")\n\n"
                                 "def forward(self, x : torch.Tensor):\n"
                                 "    my_fn = __main___my_fn(x);  x = None\n"
                                 "    return my_fn\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(g->size(), size_t(3));
        QCOMPARE(g->node(1).target.text, std::string("__main___my_fn"));
        QCOMPARE(g->node(1).meta.sourceLine, 9u);
        QVERIFY(!g->node(0).tensor()); // "torch.Tensor" carries no shape
    }

    void blankLinesAndStackTraceGroups() {
        // Blank lines with trailing spaces; a free comment ends the trace group; a multi-line group.
        const std::string text = "def forward(self, x):\n"
                                 "     # File: a.py:1 in f, code: y = x\n"
                                 "    a = torch.sin(x)\n"
                                 "        \n"
                                 "    b = torch.cos(a)\n"
                                 "     # File: b.py:2 in g, code: z\n"
                                 "     # File: c.py:3 in h, code: w\n"
                                 "    c = torch.tan(b)\n"
                                 "    # Gradient addition node due to multiple use of tensor around:\n"
                                 "    d = torch.exp(c)\n"
                                 "    return d\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(nodeNamed(*g, "a").meta.stackTrace,
                 std::vector<std::string>{"File: a.py:1 in f, code: y = x"});
        QVERIFY(nodeNamed(*g, "b").meta.stackTrace.empty());
        QCOMPARE(nodeNamed(*g, "c").meta.stackTrace.size(), size_t(2));
        QVERIFY(nodeNamed(*g, "d").meta.stackTrace.empty());
        QCOMPARE(g->node(*g->outputNode()).args[0], Value::nodeRef(*g->find("d")));
        QCOMPARE(nodeNamed(*g, "c").meta.sourceLine, 8u);
    }

    void errorsAreLocated() {
        Diagnostic d = errorOf("");
        QCOMPARE(d.format(),
                 std::string("<input>:1:1: error: empty input: expected 'class' or 'def forward'"));

        // Truncated before the return: reported at the end of the last line.
        std::string mlp = readFile(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        const size_t returnAt = mlp.find("        return pytree");
        std::string truncated = mlp.substr(0, returnAt);
        const int lastLine = int(std::count(truncated.begin(), truncated.end(), '\n'));
        const size_t lastLineStart = truncated.rfind('\n', truncated.size() - 2) + 1;
        d = errorOf(truncated, {"joint.txt"});
        QCOMPARE(d.loc.file, std::string("joint.txt"));
        QCOMPARE(d.loc.line, uint32_t(lastLine));
        QCOMPARE(d.loc.col, uint32_t(truncated.size() - lastLineStart)); // one past the last character
        QVERIFY2(d.message.find("expected a 'return'") != std::string::npos, d.message.c_str());

        // Truncated inside a call.
        d = errorOf(mlp.substr(0, mlp.find("primals_2, primals_5, t)")));
        QCOMPARE(d.loc.line, 7u);
        QVERIFY2(d.message.find("expected ')' to close '(' at 7:") != std::string::npos, d.message.c_str());

        d = errorOf("def forward(self, x):\n    a = torch.sin(x]\n    return a\n");
        QCOMPARE(d.format(),
                 std::string("<input>:2:20: error: expected ')' to close '(' at 2:18, found ']'"));

        d = errorOf("def forward(self, x):\n    while x:\n        pass\n");
        QCOMPARE(d.loc.line, 2u);
        QCOMPARE(d.loc.col, 5u);
        QVERIFY(d.message.rfind("expected a statement", 0) == 0);

        d = errorOf(std::string("\x7f"
                                "ELF\x02\x01\x01\0\0\0",
                                10));
        QCOMPARE(d.format(), std::string("<input>:1:1: error: unexpected byte 0x7f"));
        d = errorOf("def forward(self, x):\n    a = \x01\x02");
        QCOMPARE(d.loc.line, 2u);
        QCOMPARE(d.loc.col, 9u);

        // 10k-deep nesting: refused at the 257th bracket, without recursion.
        const std::string deep = "def forward(self, x):\n    a = f(" + std::string(10000, '[') + "\n";
        d = errorOf(deep);
        QCOMPARE(d.loc.line, 2u);
        QCOMPARE(d.loc.col, 10u + 256u);
        QVERIFY(d.message.find("nested deeper than 256") != std::string::npos);

        d = errorOf("def forward(self, x):\n    a = torch.sin(y)\n    return a\n");
        QCOMPARE(d.format(), std::string("<input>:2:19: error: use of undefined node 'y'"));
        d = errorOf("def forward(self, x):\n    a = torch.add(x, b1)\n    b1 = torch.sin(x)\n    return a\n");
        QCOMPARE(d.loc.line, 2u);
        QCOMPARE(d.loc.col, 22u);
        QVERIFY(d.message.find("use of undefined node 'b1' (it is defined later, at line 3)") !=
                std::string::npos);

        d = errorOf("def forward(self, x):\n    a = torch.sin(x)\n    a = torch.cos(x)\n    return a\n");
        QCOMPARE(d.format(),
                 std::string("<input>:3:5: error: duplicate node name 'a' (first defined at line 2)"));

        d = errorOf("def forward(self, x):\n    a = torch.sin(x)\n    return a\n    b = torch.cos(x)\n");
        QCOMPARE(d.format(), std::string("<input>:4:5: error: unexpected statement after 'return'"));

        d = errorOf("def forward(self, x):\n    a = 'unterminated\n    return a\n");
        QCOMPARE(d.loc.line, 2u);
        QVERIFY(d.message.find("expected closing '") == 0);

        d = errorOf("def forward(self, x: \"f32[4, 8\"):\n    return x\n");
        QCOMPARE(d.loc.col, 31u); // the end of the annotation text
        QVERIFY(d.message.find("expected ']'") == 0);

        d = errorOf("def forward(self, x):\n    return x\ndef forward(self, y):\n    return y\n");
        QCOMPARE(
            d.format(),
            std::string("<input>:3:1: error: expected end of input after the graph module, found 'def'"));

        d = errorOf("class A(torch.nn.Module):\n    x = 1\n");
        QCOMPARE(d.format(), std::string("<input>:2:5: error: expected 'def forward' or a nested 'class' in "
                                         "the class body, found 'x'"));

        // Payload offsets: line and column map back into the enclosing file.
        d = errorOf("def forward(self, x):\n    a = torch.sin(y)\n    return a\n", {"trace.log", 100, 1});
        QCOMPARE(d.format(), std::string("trace.log:101:20: error: use of undefined node 'y'"));
    }

    // Inputs that used to read with exit 0 and crash or wrap later, inside an engine: each is now refused
    // where the problem is, with its file:line:col.
    void badInputIsRefused_data() {
        QTest::addColumn<QString>("body");    // one statement between "x" and the return
        QTest::addColumn<int>("col");         // on line 3
        QTest::addColumn<QString>("message"); // part of the message
        const QString relu = " = torch.ops.aten.relu.default(x)";
        // "    y: \"" is 8 columns: the annotation text starts at column 9, its first size at 13.
        QTest::newRow("20000 nested parens in a size")
            << "    y: \"f32[" + QString(20000, '(') + "s0" + QString(20000, ')') + "]\"" + relu << 13 + 256
            << "size 0: nesting deeper than 256 levels";
        QTest::newRow("INT64_MIN // -1 in a size")
            << "    y: \"f32[(-9223372036854775808)//(-1), 4]\"" + relu << 13 + 22
            << "size 0: int64 overflow in -9223372036854775808 // -1";
        QTest::newRow("INT64_MIN // -1 in a symbolic value")
            << QString("    y: \"Sym(-9223372036854775808//-1)\" = torch.ops.aten.sym_size.int(x, 0)")
            << 13 + 20 << "symbolic value: int64 overflow in -9223372036854775808 // -1";
        QTest::newRow("operator.floordiv(INT64_MIN, -1)")
            << QString("    y = operator.floordiv(-9223372036854775808, -1)") << 9
            << "node 'y' (operator.floordiv): int64 overflow in -9223372036854775808 // -1";
        QTest::newRow("operator.mod(x, 0)")
            << QString("    y = operator.mod(7, 0)") << 9 << "node 'y' (operator.mod): division by zero";
        QTest::newRow("INT64_MAX + 1")
            << QString("    y = 9223372036854775807 + 1") << 9
            << "node 'y' (operator.add): int64 overflow in 9223372036854775807 + 1";
        QTest::newRow("division by zero in a size")
            << "    y: \"f32[s0 % (2 - 2)]\"" + relu << 13 + 3 << "size 0: division by zero";
        QTest::newRow("negative size")
            << "    y: \"f32[4, -1]\"" + relu << 16 << "negative size -1 in dimension 1";
        QTest::newRow("negative stride")
            << "    y: \"f32[4, 4][-4, 1]\"" + relu << 19 << "negative stride -4 in dimension 0";
        QTest::newRow("2^62 size")
            << "    y: \"f32[4611686018427387904]\"" + relu << 13
            << "4611686018427387904 elements of 4 bytes (float32): the byte size overflows int64";
        QTest::newRow("INT64_MAX size") << "    y: \"i8[9223372036854775807, 2]\"" + relu << 12 + 21
                                        << "the element count overflows int64 at dimension 1";
        QTest::newRow("INT64_MIN // -1 in a symbolic argument")
            << QString("    v = torch.ops.aten.view.default(x, [4, s0 + (-9223372036854775808)//(-1)])") << 71
            << "int64 overflow in -9223372036854775808 // -1";
        QTest::newRow("mm with one argument")
            << QString("    mm = torch.ops.aten.mm.default(x)") << 10
            << "node 'mm' (torch.ops.aten.mm.default): missing required argument 'mat2'";
        QTest::newRow("mm with three arguments") << QString("    mm = torch.ops.aten.mm.default(x, x, x)")
                                                 << 10 << "takes at most 2 positional arguments";
        QTest::newRow("unknown keyword")
            << QString("    s = torch.ops.aten.sum.dim_IntList(x, [0], keep_dim = True)") << 9
            << "has no parameter 'keep_dim'";
        QTest::newRow("a string for a Tensor") << QString("    b = torch.ops.aten.add.Tensor(x, 'y')") << 9
                                               << "argument 'other' is Tensor, got a string";
        QTest::newRow("None for a Tensor[]") << QString("    c = torch.ops.aten.cat.default(None)") << 9
                                             << "argument 'tensors' is Tensor[], got None";
    }

    void badInputIsRefused() {
        QFETCH(QString, body);
        QFETCH(int, col);
        QFETCH(QString, message);
        const std::string text =
            "def forward(self, x: \"f32[4, 4]\"):\n    a = torch.ops.aten.relu.default(x)\n" +
            body.toStdString() + "\n    return (a,)\n";
        Diagnostic d = errorOf(text, {"bad.txt"});
        QVERIFY2(d.message.find(message.toStdString()) != std::string::npos, d.format().c_str());
        QCOMPARE(d.loc.file, std::string("bad.txt"));
        QCOMPARE(int(d.loc.line), 3);
        QCOMPARE(int(d.loc.col), col);
    }

    void truncatedReturnIsRefused() {
        // A file cut inside `return pytree.tree_`: not a verbatim expression, a truncated file.
        const std::string mlp = readFile(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        const size_t returnAt = mlp.find("return pytree.tree_unflatten(");
        QVERIFY(returnAt != std::string::npos);
        const std::string cut = mlp.substr(0, returnAt + std::string("return pytree.tree_").size());
        Diagnostic d = errorOf(cut, {"joint.txt"});
        QCOMPARE(d.format(),
                 std::string("joint.txt:30:16: error: expected 'pytree.tree_unflatten(...)' after "
                             "'return' (truncated file?)"));
        // Cut anywhere inside the return statement: always refused, always located on its line.
        const size_t lineEnd = mlp.find('\n', returnAt);
        for (size_t end = returnAt; end < lineEnd; ++end) {
            auto g = readFxText(mlp.substr(0, end), {"joint.txt"});
            QVERIFY2(!g, ("accepted a file cut at byte " + std::to_string(end) + ": " +
                          mlp.substr(returnAt, end - returnAt))
                             .c_str());
            QVERIFY2(g.error().loc.line == 30 && g.error().loc.col > 0, g.error().format().c_str());
        }
        QVERIFY(readFxText(mlp.substr(0, lineEnd), {"joint.txt"})); // the whole line reads
    }

    void largeGraphReadsCompletely() {
        // Speed is measured in bench/ (bench_readers); this checks a 100k-node graph reads whole.
        // 100k nodes in the shape of real aot graphs (annotations, kwargs, stack traces every 5 nodes).
        std::string text = "class GraphModule(torch.nn.Module):\n    def forward(self, primals_1: "
                           "\"f32[1024, 1024][1024, 1]cuda:0\", primals_2: \"f32[1024][1]cuda:0\"):\n";
        std::string prev = "primals_1";
        const int n = 100000;
        for (int i = 0; i < n; ++i) {
            if (i % 5 == 0)
                text += "        \n         # File: /data/users/someone/pytorch/torch/nn/modules/linear.py:" +
                        std::to_string(i) +
                        " in forward, code: return F.linear(input, self.weight, self.bias)\n";
            const std::string name = "n_" + std::to_string(i);
            text += "        " + name + ": \"f32[1024, 1024][1024, 1]cuda:0\" = ";
            switch (i % 4) {
            case 0:
                text += "torch.ops.aten.mul.Tensor(" + prev + ", primals_1)";
                break;
            case 1:
                text += "torch.ops.aten.add.Tensor(" + prev + ", primals_2, alpha = 0.5)";
                break;
            case 2:
                text += "torch.ops.aten.view.default(" + prev + ", [1024, 1024])";
                break;
            default:
                text += "torch.ops.aten.permute.default(" + prev + ", [1, 0])";
                break;
            }
            text += ";  " + prev + " = None\n";
            prev = name;
        }
        text += "        return (" + prev + ",)\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(g->size(), size_t(n + 3));
        QCOMPARE(g->node(*g->find(prev)).users.size(), size_t(1));
        QCOMPARE(g->node(*g->find("n_99999")).meta.stackTrace.size(), size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestFxReader)
#include "tst_fxreader.moc"
