// FX text writer: readFxText(writeFxText(g)) == g for every real graph text, and Python-repr literals.
#include "io/FxReader.h"
#include "io/FxWriter.h"
#include "testutil.h"

#include <QDir>

#include <cmath>
#include <limits>

using namespace jointscope;
using namespace jointscope::test;

namespace {

// Line numbers are where the text put a node, so they differ between the original and the rewrite.
void clearSourceLines(Graph& g) {
    for (NodeId id = 0; id < g.size(); ++id)
        g.node(id).meta.sourceLine = 0;
    for (size_t i = 0; i < g.subgraphs().size(); ++i)
        clearSourceLines(*g.subgraph(int32_t(i)));
}

size_t countSubgraphs(const Graph& g) {
    size_t n = g.subgraphs().size();
    for (const auto& sub : g.subgraphs())
        n += countSubgraphs(*sub);
    return n;
}

struct NamedText {
    std::string name;
    std::string text;
};

// Every FX text in the shared data: torch 1.13 joint/fw/bw, the snippets, and each graph payload
// (tab-indented lines after a header) of the TORCH_TRACE logs.
std::vector<NamedText> allGraphTexts() {
    std::vector<NamedText> out;
    const QString base = q(sharedPath("graphs"));
    for (const QString& model : QDir(base + "/torch-1.13").entryList(QDir::Dirs | QDir::NoDotAndDotDot))
        for (const char* part : {"joint.txt", "fw.txt", "bw.txt"}) {
            const std::string rel = "graphs/torch-1.13/" + model.toStdString() + "/" + part;
            out.push_back({rel, readFile(sharedPath(rel))});
        }
    for (const QString& file : QDir(base + "/snippets").entryList({"*.txt"}, QDir::Files)) {
        const std::string rel = "graphs/snippets/" + file.toStdString();
        out.push_back({rel, readFile(sharedPath(rel))});
    }
    for (const QString& file : QDir(base + "/torch-trace").entryList(QDir::Files)) {
        const std::string rel = "graphs/torch-trace/" + file.toStdString();
        const std::string log = readFile(sharedPath(rel));
        size_t pos = 0;
        std::string header;
        std::string payload;
        auto flush = [&] {
            // Graph payloads only: not generated code, and not str(ExportedProgram) (split across blank
            // lines).
            const bool graphKind = header.find("_graph\"") != std::string::npos &&
                                   header.find("fx_graph_runnable") == std::string::npos &&
                                   header.find("exported_program") == std::string::npos;
            if (graphKind && payload.find("def forward(") != std::string::npos)
                out.push_back({rel + " @ " + header.substr(0, 60), payload});
            payload.clear();
        };
        while (pos < log.size()) {
            size_t end = log.find('\n', pos);
            if (end == std::string::npos)
                end = log.size();
            const std::string line = log.substr(pos, end - pos);
            if (!line.empty() && line[0] == '\t') {
                payload += line.substr(1) + "\n";
            } else {
                flush();
                header = line;
            }
            pos = end + 1;
        }
        flush();
    }
    return out;
}

Graph graphWithLiterals() {
    // Built from plain literals: moc's tokenizer stumbles over quotes inside raw strings.
    const std::string text =
        "def forward(self, x):\n"
        "    a = torch.ops.test.op(x, 1e-05, 0.0001, 1e+16, 1234567890123456.0, 0.1, -0.0, inf, -inf, "
        "nan, 3.0, 'it\\'s', 'say \"hi\"', 'both \\' and \"', 'ctl\\x01', 9223372036854775807)\n"
        "    return (a,)\n";
    auto g = readFxText(text);
    if (!g)
        qFatal("%s", g.error().format().c_str());
    return g.take();
}

} // namespace

class TestFxWriter : public QObject {
    Q_OBJECT
private slots:
    void roundTripsEverySharedGraph() {
        const std::vector<NamedText> texts = allGraphTexts();
        // 9 torch 1.13 texts + 5 snippets + the graph payloads of the trace logs.
        QVERIFY2(texts.size() > 100, std::to_string(texts.size()).c_str());
        size_t nested = 0;
        for (const NamedText& t : texts) {
            auto original = readFxText(t.text, {t.name});
            QVERIFY2(bool(original), (t.name + ": " + (original ? "" : original.error().format())).c_str());
            const std::string written = writeFxText(*original);
            auto reread = readFxText(written, {t.name + " (rewritten)"});
            QVERIFY2(bool(reread),
                     (t.name + ": " + (reread ? "" : reread.error().format()) + "\n" + written).c_str());
            QCOMPARE(writeFxText(*reread), written); // a fixed point
            Graph a = *original;
            Graph b = *reread;
            clearSourceLines(a);
            clearSourceLines(b);
            QVERIFY2(a == b, (t.name + " changed in the round trip:\n" + written).c_str());
            nested += countSubgraphs(a);
        }
        QVERIFY(nested >= 3); // the HOP bodies took part
    }

    void floatsAndStringsArePythonRepr() {
        const std::string text = writeFxText(graphWithLiterals());
        const std::string expected =
            "torch.ops.test.op(x, 1e-05, 0.0001, 1e+16, 1234567890123456.0, 0.1, -0.0, inf, "
            "-inf, nan, 3.0, \"it's\", 'say \"hi\"', 'both \\' and \"', 'ctl\\x01', "
            "9223372036854775807)";
        QVERIFY2(text.find(expected) != std::string::npos, text.c_str());
        Graph g = graphWithLiterals();
        auto reread = readFxText(text);
        JS_VERIFY_EXPECTED(reread);
        clearSourceLines(g);
        clearSourceLines(*reread);
        QVERIFY(g == *reread);
        const std::vector<Value>& args = reread->node(1).args;
        QCOMPARE(args[1], Value::real(1e-05));
        QVERIFY(std::signbit(args[6].asFloat()));
        QCOMPARE(args[14], Value::string("ctl\x01"));
    }

    void modernStyleWithDescriptorsAndNesting() {
        const std::string log =
            readFile(sharedPath("graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt"));
        const size_t header = log.find("{\"aot_joint_graph\"");
        std::string payload;
        for (size_t pos = log.find('\n', header) + 1; pos < log.size() && log[pos] == '\t';) {
            const size_t end = log.find('\n', pos);
            payload += log.substr(pos + 1, end - pos);
            pos = end + 1;
        }
        auto joint = readFxText(payload);
        JS_VERIFY_EXPECTED(joint);
        const std::string text = writeFxText(*joint);
        QVERIFY2(text.rfind("class inner_f(torch.nn.Module):\n    def forward(\n        self,\n", 0) == 0,
                 text.c_str());
        QVERIFY(text.find("        primals_1: \"f32[16, 10][10, 1]cuda:0\",  # PlainAOTInput(idx=0)\n") !=
                std::string::npos);
        QVERIFY(
            text.find(
                "        scalar_tensor: \"f32[][]cuda:0\" = torch.ops.aten.scalar_tensor.default(0, dtype = "
                "torch.float32, layout = torch.strided, device = device(type='cuda', index=0))\n") !=
            std::string::npos);
        QVERIFY(text.find("\n         # File: ") != std::string::npos);
        QVERIFY(text.find("        return [\n            sigmoid,  # PlainAOTOutput(idx=0)\n") !=
                std::string::npos);
        QVERIFY(text.find("            permute_3,  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))\n") !=
                std::string::npos);

        FxWriteOptions bare;
        bare.annotations = false;
        bare.stackTraces = false;
        bare.descriptors = false;
        const std::string plain = writeFxText(*joint, bare);
        QVERIFY(plain.find("\"f32") == std::string::npos);
        QVERIFY(plain.find("# File") == std::string::npos);
        QVERIFY(plain.find("def forward(self, primals_1, primals_2,") != std::string::npos);

        auto nested = readFxText(readFile(sharedPath("graphs/snippets/hop_nested_invoke_subgraph.txt")));
        JS_VERIFY_EXPECTED(nested);
        const std::string nestedText = writeFxText(*nested);
        QVERIFY(
            nestedText.find(
                "\n    class subgraph_0(torch.nn.Module):\n        def forward(self, l_x_: \"f32[8]\"):\n") !=
            std::string::npos);
        QVERIFY(nestedText.find("\n        class wrap_body_0(torch.nn.Module):\n") != std::string::npos);
        QVERIFY(nestedText.find("    def forward(self, L_x_: \"f32[8]\"):\n        l_x_ = L_x_\n") !=
                std::string::npos);
        QVERIFY(nestedText.find("getitem_2: \"f32[8]\" = invoke_subgraph[0]\n") != std::string::npos);
        QVERIFY(nestedText.find("detach: \"f32[8]\" = getitem_2.detach()\n") != std::string::npos);
    }

    void attributeModuleAndOpaqueForms() {
        const std::string text =
            "class M(torch.nn.Module):\n"
            "    def forward(self, x: \"f32[4, 8]\"):\n"
            "        w = getattr(self.layers, \"0\").weight\n"
            "        l0 = getattr(self, \"0\")\n"
            "        m = self.norm(x, eps = 1e-05)\n"
            "        c = -x\n"
            "        e = x[(slice(None, None, None), 0)]\n"
            "        o = torch.ops.test.op(x, s0 + 1, torch.Size([2, 3]), [x, (x,)], f(x) + 1)\n"
            "        return (w, l0, m, c, e, o)\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        const std::string written = writeFxText(*g);
        for (const char* expected :
             {"w = getattr(self.layers, \"0\").weight\n", "l0 = getattr(self, \"0\")\n",
              "m = self.norm(x, eps = 1e-05)\n", "c = -x\n", "e = x[(slice(None, None, None), 0)]\n",
              "o = torch.ops.test.op(x, s0 + 1, torch.Size([2, 3]), [x, (x,)], f(x) + 1)\n"})
            QVERIFY2(written.find(expected) != std::string::npos,
                     (std::string(expected) + " not in\n" + written).c_str());
        auto reread = readFxText(written);
        JS_VERIFY_EXPECTED(reread);
        clearSourceLines(*g);
        clearSourceLines(*reread);
        QVERIFY(*g == *reread);
        const Node& o = g->node(*g->find("o"));
        QCOMPARE(o.args[1], Value::symExpr("s0 + 1"));
        QCOMPARE(o.args[2].kind(), ValueKind::Opaque);
        QCOMPARE(o.args[4].kind(), ValueKind::Opaque);
        QCOMPARE(o.args[4].items(), std::vector<Value>{Value::nodeRef(0)}); // x inside the opaque text
        QCOMPARE(g->node(0).users.size(), size_t(4));                       // m, c, e, o
    }

    void symbolicOutputs() {
        const std::string text = "def forward(self, s0: \"Sym(s0)\", x: \"f32[s0, 8][8, 1]cpu\"):\n"
                                 "    mul: \"Sym(4*s0 + 1)\" = s0 * 4\n"
                                 "    w = x.mT\n"
                                 "    return (mul, w)\n";
        auto g = readFxText(text);
        JS_VERIFY_EXPECTED(g);
        const std::string written = writeFxText(*g);
        QVERIFY2(written.find("mul: \"Sym(4*s0 + 1)\" = s0 * 4\n") != std::string::npos, written.c_str());
        QVERIFY(written.find("x: \"f32[s0, 8][8, 1]cpu\"") != std::string::npos);
        QVERIFY(written.find("w = x.mT\n") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestFxWriter)
#include "tst_fxwriter.moc"
