// TORCH_LOGS pastes: every graph listed with kind and compile id, ANSI stripped, payload equal to the real
// graph text it was printed from (the TORCH_TRACE payload), damage located. Most pastes in tests/data/logs
// are built by tests/data/logs/make_pastes.py from shared/graphs/torch-trace the way torch's logging prints
// graphs; compiled_autograd_*.log are real pastes captured live from torch 2.15 by capture_pastes.py, with
// torch's own len(gm.graph.nodes) of every logged graph in *.nodes.json beside them.
#include "graph/GraphStats.h"
#include "io/GraphFile.h"
#include "io/TraceLog.h"
#include "testutil.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>

#include <random>
#include <regex>

using namespace jointscope;
using namespace jointscope::test;

namespace {

std::string pastePath(const std::string& name) {
    return sourcePath("tests/data/logs/" + name);
}

// Payloads of the TORCH_TRACE records `{"kind"`, tab-stripped, trailing blank lines dropped (a paste cannot
// keep them apart from the blank line torch prints after every graph).
std::vector<std::string> tracePayloads(const std::string& traceFile, const std::string& kind) {
    const auto lines = splitLines(readFile(sharedPath("graphs/torch-trace/" + traceFile)));
    std::vector<std::string> out;
    for (size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].find("] {\"" + kind + "\"") == std::string::npos)
            continue;
        std::string payload;
        for (size_t k = i + 1; k < lines.size() && !lines[k].empty() && lines[k][0] == '\t'; ++k)
            payload += (k > i + 1 ? "\n" : "") + lines[k].substr(1);
        while (!payload.empty() && (payload.back() == ' ' || payload.back() == '\n'))
            payload.pop_back();
        out.push_back(payload);
    }
    return out;
}

const Diagnostic* problemAt(const GraphIndex& index, uint32_t line) {
    for (const Diagnostic& d : index.problems)
        if (d.loc.line == line)
            return &d;
    return nullptr;
}

uint32_t lineContaining(const std::string& text, const std::string& needle, size_t from = 0) {
    const size_t pos = text.find(needle, from);
    if (pos == std::string::npos)
        return 0;
    return static_cast<uint32_t>(std::count(text.begin(), text.begin() + pos, '\n') + 1);
}

// What torch logged, in order (capture_pastes.py): the "===== HEADER =====" text and len(gm.graph.nodes).
struct TorchGraph {
    std::string header;
    uint64_t nodes = 0;
};

std::vector<TorchGraph> torchCounts(const std::string& name) {
    const std::string json = readFile(pastePath(name + ".nodes.json"));
    std::vector<TorchGraph> out;
    for (const QJsonValue& v : QJsonDocument::fromJson(QByteArray::fromStdString(json)).array())
        out.push_back(
            {v.toObject()["header"].toString().toStdString(), uint64_t(v.toObject()["nodes"].toInteger())});
    return out;
}

size_t errorCount(const GraphIndex& index) {
    return size_t(std::count_if(index.problems.begin(), index.problems.end(),
                                [](const Diagnostic& d) { return d.severity == Severity::Error; }));
}

} // namespace

class TestLogPaste : public QObject {
    Q_OBJECT
private slots:
    void colouredAotGraphsAreListed() {
        const std::string path = pastePath("aot_graphs_colored.log");
        const std::string text = readFile(path);
        QVERIFY(text.find("\x1b[31m") != std::string::npos); // the input really is coloured
        QVERIFY(looksLikeLogPaste(text.substr(0, 4096)));
        GraphIndex index = indexLogPaste(text, path);
        QVERIFY(index.problems.size() <= 1); // at most the reader's verdict on the dynamo graph
        QCOMPARE(index.graphs.size(), size_t(4));
        const char* kinds[] = {"graph_code", "joint", "forward", "backward"};
        const char* titles[] = {"[0/0] __compiled_fn_1", "[0/0] Joint graph 0", "[0/0] Forward graph 0",
                                "[0/0] Backward graph 0"};
        const std::string trace = "inductor_provenance_jit_debug_handle_log.txt";
        const std::string payloads[] = {tracePayloads(trace, "dynamo_output_graph").at(0),
                                        tracePayloads(trace, "aot_joint_graph").at(0),
                                        tracePayloads(trace, "aot_forward_graph").at(0),
                                        tracePayloads(trace, "aot_backward_graph").at(0)};
        for (size_t i = 0; i < 4; ++i) {
            const GraphEntry& g = index.graphs[i];
            QCOMPARE(g.kind, std::string(kinds[i]));
            QCOMPARE(g.compileId, std::string("0/0"));
            QCOMPARE(g.title(), std::string(titles[i]));
            QVERIFY(g.payload.find('\x1b') == std::string::npos);
            QCOMPARE(g.payload, payloads[i]);
            // The header line is the TRACED GRAPH line; the payload starts two lines below, on the class
            // line.
            const auto lines = splitLines(text);
            QVERIFY(lines[g.line - 1].find("TRACED GRAPH") != std::string::npos);
            QCOMPARE(g.payloadLine, g.line + 2);
            QVERIFY(lines[g.payloadLine - 1].find("(torch.nn.Module):") != std::string::npos);
            if (i >= 2) // forward and backward (the joint's inputs come through a pytree: hand-counted below)
                QCOMPARE(g.nodes, countAotNodes(payloads[i]));
        }
        QCOMPARE(index.graphs[1].nodes,
                 uint64_t(39)); // joint graph, hand-counted: 7 inputs + 31 ops + output
    }

    void interleavedRanksAreSeparated() {
        const std::string path = pastePath("multi_rank_interleaved.log");
        GraphIndex index = indexLogPaste(readFile(path), path);
        QVERIFY2(index.problems.empty(), index.problems.empty() ? "" : index.problems[0].format().c_str());
        const auto inference = tracePayloads("multi_rank_rank_1.log", "aot_inference_graph");
        QCOMPARE(index.graphs.size(), size_t(2));
        QCOMPARE(index.graphs[0].compileId, std::string("0/0"));
        QCOMPARE(index.graphs[1].compileId, std::string("0/1"));
        for (size_t i = 0; i < 2; ++i) {
            QCOMPARE(index.graphs[i].kind, std::string("forward"));
            QCOMPARE(index.graphs[i].payload, inference.at(i));
            QCOMPARE(index.graphs[i].nodes, countAotNodes(inference.at(i)));
        }
    }

    void barePastesWithoutPrefixes() {
        const std::string path = pastePath("bare_paste.txt");
        const std::string text = readFile(path);
        QVERIFY(looksLikeLogPaste(text.substr(0, 4096)));
        GraphIndex index = indexLogPaste(text, path);
        QVERIFY2(index.problems.empty(), index.problems.empty() ? "" : index.problems[0].format().c_str());
        QCOMPARE(index.graphs.size(), size_t(3));
        const std::string forward =
            tracePayloads("inductor_provenance_jit_debug_handle_log.txt", "aot_forward_graph").at(0);
        const auto inference = tracePayloads("multi_rank_rank_1.log", "aot_inference_graph");
        // A coloured message copied without its prefixes.
        QCOMPARE(index.graphs[0].kind, std::string("forward"));
        QCOMPARE(index.graphs[0].compileId, std::string());
        QCOMPARE(index.graphs[0].payload, forward);
        // print_readable() text quoted with 4 more blanks: un-indented.
        QCOMPARE(index.graphs[1].kind, std::string("fx"));
        QCOMPARE(index.graphs[1].payload, inference.at(2));
        QCOMPARE(index.graphs[1].payloadColumn, 4u);
        QCOMPARE(index.graphs[1].payloadLine, lineContaining(text, "    class <lambda>"));
        // A graph right after a glog prefix on the same line.
        QCOMPARE(index.graphs[2].compileId, std::string("0/3"));
        QCOMPARE(index.graphs[2].payload, inference.at(3));
        for (const GraphEntry& g : index.graphs)
            QCOMPARE(g.nodes, countAotNodes(g.payload));
    }

    void pythonLoggingFormatOfTorch21() {
        const std::string path = pastePath("python_logging.log");
        GraphIndex index = indexLogPaste(readFile(path), path);
        QVERIFY(index.problems.empty());
        QCOMPARE(index.graphs.size(), size_t(1));
        QCOMPARE(index.graphs[0].compileId, std::string("0/0"));
        QCOMPARE(index.graphs[0].kind, std::string("forward"));
        QCOMPARE(index.graphs[0].payload,
                 tracePayloads("inductor_provenance_jit_debug_handle_log.txt", "aot_forward_graph").at(0));
    }

    void problemsAreLocated() {
        const std::string path = pastePath("broken.log");
        const std::string text = readFile(path);
        GraphIndex index = indexLogPaste(text, path);
        for (const Diagnostic& d : index.problems)
            QCOMPARE(d.loc.file, path);
        // TORCH_LOGS=graph prints a table, not code: reported where the table starts, not listed.
        const uint32_t tableLine = lineContaining(text, "opcode");
        const Diagnostic* table = problemAt(index, tableLine);
        QVERIFY2(table, ("no problem at line " + std::to_string(tableLine)).c_str());
        QCOMPARE(table->severity, Severity::Error);
        // The damaged statement: located at its line and at the column of the stray '='.
        const uint32_t damagedLine = lineContaining(text, " = = torch");
        const Diagnostic* damaged = problemAt(index, damagedLine);
        QVERIFY2(damaged, ("no problem at line " + std::to_string(damagedLine)).c_str());
        const std::string line = splitLines(text)[damagedLine - 1];
        QCOMPARE(damaged->loc.col, uint32_t(line.find(" = = ") + 4));
        // The damaged graph stays listed with no node count; the good one after it loads.
        QCOMPARE(index.graphs.size(), size_t(2));
        QCOMPARE(index.graphs[0].kind, std::string("forward"));
        QCOMPARE(index.graphs[0].nodes, uint64_t(0));
        // ... marked failed with the located message, the same one the problems list holds.
        QVERIFY(index.graphs[0].failed());
        QCOMPARE(index.graphs[0].error, damaged->format());
        QVERIFY(index.graphs[0].error.rfind(path + ":" + std::to_string(damagedLine) + ":", 0) == 0);
        QVERIFY(!index.graphs[1].failed());
        QCOMPARE(index.graphs[1].kind, std::string("backward"));
        const std::string backward =
            tracePayloads("inductor_provenance_jit_debug_handle_log.txt", "aot_backward_graph").at(0);
        QCOMPARE(index.graphs[1].payload, backward);
        QCOMPARE(index.graphs[1].nodes, countAotNodes(backward));
        // The file ends after a header: reported at the announcement.
        const uint32_t cut = lineContaining(text, "Forward graph 1");
        QVERIFY(problemAt(index, cut) || problemAt(index, cut - 1));
        QCOMPARE(index.problems.size(), size_t(3));
    }

    // Real TORCH_LOGS="graph_code,aot_graphs,compiled_autograd_verbose" pastes: every graph torch logged is
    // listed, in order, with torch's node count; the compiled-autograd graph ("[!0]", "<eval_with_key>.N
    // class CompiledAutograd0(torch.nn.Module):") with all its nodes.
    void compiledAutogradPastesMatchTorch_data() {
        QTest::addColumn<QString>("name");
        QTest::newRow("mlp") << "compiled_autograd_mlp";
        QTest::newRow("graph break, user's script first") << "compiled_autograd_graph_break";
    }
    void compiledAutogradPastesMatchTorch() {
        QFETCH(QString, name);
        const std::string path = pastePath(name.toStdString() + ".log");
        const std::string text = readFile(path);
        QVERIFY(looksLikeLogPaste(text.substr(0, 4096)));
        GraphIndex index = indexLogPaste(text, path);
        QVERIFY2(errorCount(index) == 0, index.problems.empty() ? "" : index.problems[0].format().c_str());
        const std::vector<TorchGraph> torch = torchCounts(name.toStdString());
        QVERIFY(torch.size() >= 6);
        QCOMPARE(index.graphs.size(), torch.size());
        size_t compiledAutograd = 0;
        for (size_t i = 0; i < torch.size(); ++i) {
            const GraphEntry& g = index.graphs[i];
            QVERIFY2(!g.failed(), g.error.c_str());
            QCOMPARE(g.title(), (g.compileId.empty() ? "" : "[" + g.compileId + "] ") + torch[i].header);
            QCOMPARE(g.nodes, torch[i].nodes);
            const auto lines = splitLines(text);
            QVERIFY(lines[g.payloadLine - 1].find("class ") != std::string::npos);
            if (torch[i].header == "Compiled autograd graph") {
                ++compiledAutograd;
                QCOMPARE(g.kind, std::string("compiled_autograd"));
                QCOMPARE(g.compileId, std::string("!0")); // CompileId of the compiled-autograd graph itself
                QVERIFY(lines[g.payloadLine - 1].find("<eval_with_key>.") != std::string::npos);
                QVERIFY(g.payload.rfind("class CompiledAutograd0(torch.nn.Module):\n    def forward(", 0) ==
                        0);
            }
        }
        QCOMPARE(compiledAutograd, size_t(1));
    }

    // The user's script printed before the log (its nn.Module source) is Python, not a graph: not listed, a
    // located note says why.
    void userSourceIsNotAGraph() {
        const std::string path = pastePath("compiled_autograd_graph_break.log");
        const std::string text = readFile(path);
        GraphIndex index = indexLogPaste(text, path);
        const uint32_t classLine = lineContaining(text, "class MLP(torch.nn.Module):");
        QVERIFY(classLine > 0);
        for (const GraphEntry& g : index.graphs)
            QVERIFY(g.payload.find("class MLP") == std::string::npos);
        const Diagnostic* note = problemAt(index, classLine);
        QVERIFY2(note, ("no problem at line " + std::to_string(classLine)).c_str());
        QCOMPARE(note->severity, Severity::Note);
        QCOMPARE(note->loc.col, 1u);
        QVERIFY2(note->message.find("'def __init__'") != std::string::npos, note->message.c_str());

        // Inline: Python classes that are not print_readable() output beside a bare graph; only the graph is
        // listed. Hand-counted: x, the add, the output = 3 nodes.
        const std::string graph = "class GraphModule(torch.nn.Module):\n"
                                  "    def forward(self, x: \"f32[4]\"):\n"
                                  "        add: \"f32[4]\" = torch.ops.aten.add.Tensor(x, 1);  x = None\n"
                                  "        return (add,)\n";
        const std::string mixed = "class Config(torch.nn.Module):\n    width = 4\n\n"
                                  "class Empty(torch.nn.Module):\n    pass\n\n" +
                                  graph +
                                  "\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
                                  "        return x + 1\n\n    def extra_repr(self):\n        return ''\n";
        // print_readable(expanded_def=True) closes the signature at the method's indentation: still a graph.
        // Hand-counted: x, y, the add, the output = 4 nodes.
        const std::string expanded =
            "class GraphModule(torch.nn.Module):\n"
            "    def forward(\n"
            "        self,\n"
            "        x: \"f32[4]\",  # PlainAOTInput(idx=0)\n"
            "        y: \"f32[4]\",  # PlainAOTInput(idx=1)\n"
            "    ):\n"
            "        add: \"f32[4]\" = torch.ops.aten.add.Tensor(x, y);  x = y = None\n"
            "        return (add,)\n";
        GraphIndex expandedIndex = indexLogPaste(expanded, "expanded.txt");
        QVERIFY2(expandedIndex.problems.empty(),
                 expandedIndex.problems.empty() ? "" : expandedIndex.problems[0].format().c_str());
        QCOMPARE(expandedIndex.graphs.size(), size_t(1));
        QCOMPARE(expandedIndex.graphs[0].nodes, uint64_t(4));

        GraphIndex inlineIndex = indexLogPaste(mixed, "mixed.txt");
        QCOMPARE(inlineIndex.graphs.size(), size_t(1));
        QCOMPARE(inlineIndex.graphs[0].nodes, uint64_t(3));
        QCOMPARE(inlineIndex.graphs[0].payloadLine, 7u);
        QCOMPARE(errorCount(inlineIndex), size_t(0));
        for (uint32_t line : {1u, 4u, 12u}) {
            const Diagnostic* d = problemAt(inlineIndex, line);
            QVERIFY2(d && d->severity == Severity::Note, std::to_string(line).c_str());
        }
    }

    // Any prefix torch prints before the class: "<eval_with_key>.N ", a file path (with blanks), nothing.
    void classHeaderPrefixes_data() {
        QTest::addColumn<QString>("prefix");
        QTest::addColumn<QString>("compileId");
        QTest::newRow("eval_with_key") << "<eval_with_key>.12 "
                                       << "!0";
        QTest::newRow("path with blanks") << "/home/a user/my model.py "
                                          << "0/1";
        QTest::newRow("none") << ""
                              << "!3/1/0";
    }
    void classHeaderPrefixes() {
        QFETCH(QString, prefix);
        QFETCH(QString, compileId);
        const std::string glog = "V1125 01:02:36.970000 6358 torch/_dynamo/compiled_autograd.py:1231] [" +
                                 compileId.toStdString() + "] [__compiled_autograd_verbose] ";
        const std::string text =
            glog + "TRACED GRAPH\n" + glog + " ===== Compiled autograd graph =====\n" + glog + " " +
            prefix.toStdString() + "class CompiledAutograd0(torch.nn.Module):\n" + glog +
            "    def forward(self, inputs, sizes, scalars, hooks, packed_data):\n" + glog +
            "        getitem = inputs[0]\n" + glog + "\n" + glog +
            "        getitem_1 = inputs[1];  inputs = None\n" + glog +
            "        mul = torch.ops.aten.mul.Tensor(getitem, getitem_1);  getitem = None\n" + glog +
            "        return [mul]\n" + glog + "\n";
        GraphIndex index = indexLogPaste(text, "ca.log");
        QVERIFY2(index.problems.empty(), index.problems.empty() ? "" : index.problems[0].format().c_str());
        QCOMPARE(index.graphs.size(), size_t(1));
        QCOMPARE(index.graphs[0].kind, std::string("compiled_autograd"));
        QCOMPARE(index.graphs[0].compileId, compileId.toStdString());
        // Hand-counted: 5 placeholders, 2 getitems, mul, output.
        QCOMPARE(index.graphs[0].nodes, uint64_t(9));
    }

    void hostileInputNeverCrashes() {
        std::mt19937 rng(11);
        std::string binary(1 << 20, '\0');
        for (char& c : binary)
            c = static_cast<char>(rng());
        const std::string colored = readFile(pastePath("aot_graphs_colored.log"));
        std::vector<std::string> inputs = {
            "",
            "\x1b[",
            "\x1b[31m\x1b[0m\x1b",
            binary,
            std::string(2 << 20, 'x'),
            "TRACED GRAPH\n ===== Forward graph 0 =====\n" + std::string(1 << 20, ' '),
            colored.substr(0, colored.size() / 2),
            colored.substr(0, colored.find("class inner_f") + 8),
            "class GraphModule(torch.nn.Module):\n" + std::string(100000, '('),
        };
        for (const std::string& input : inputs) {
            GraphIndex index = indexLogPaste(input, "h.txt");
            QVERIFY(index.problems.size() <= 201);
            for (const GraphEntry& g : index.graphs) {
                QVERIFY(g.payload.size() <= input.size());
                QVERIFY(g.payload.find('\x1b') == std::string::npos);
            }
        }
        GraphIndex empty = indexLogPaste("", "e.txt");
        QVERIFY(empty.graphs.empty());
        QCOMPARE(empty.problems.size(), size_t(1));
        QCOMPARE(empty.problems[0].loc.line, 1u);
    }

    void detectsPastesOnly() {
        for (const char* name :
             {"aot_graphs_colored.log", "multi_rank_interleaved.log", "bare_paste.txt", "python_logging.log",
              "broken.log", "compiled_autograd_mlp.log", "compiled_autograd_graph_break.log"}) {
            const std::string head = readFile(pastePath(name)).substr(0, 4096);
            QVERIFY2(looksLikeLogPaste(head), name);
            QVERIFY2(!looksLikeTraceLog(head), name);
        }
        for (const char* name :
             {"simple.log", "multi_rank_rank_1.log", "inductor_provenance_jit_debug_handle_log.txt"})
            QVERIFY2(!looksLikeLogPaste(
                         readFile(sharedPath(std::string("graphs/torch-trace/") + name)).substr(0, 4096)),
                     name);
        QVERIFY(!looksLikeLogPaste(readFile(sharedPath("graphs/torch-1.13/mlp/joint.txt")).substr(0, 4096)));
    }

    // Roles follow what the log calls a graph: compiled autograd's graph and AOT's backward are backward as a
    // whole (issue 29: the compiled-autograd graph read "30 forward"); the forward stays forward.
    void backwardGraphsAreBackward() {
        Expected<GraphFile> file =
            GraphFile::open(test::sourcePath("tests/data/logs/compiled_autograd_mlp.log"));
        QVERIFY(bool(file));
        for (size_t i = 0; i < file->graphs().size(); ++i) {
            const std::string& kind = file->graphs()[i].kind;
            Expected<Graph> g = file->load(i);
            QVERIFY(bool(g));
            const GraphStats s = computeStats(*g);
            if (kind == "compiled_autograd" || kind == "backward") {
                QCOMPARE(s.forward, uint64_t(0));
                QCOMPARE(s.backward, s.callFunctions);
            } else if (kind == "forward") {
                QCOMPARE(s.backward, uint64_t(0)); // an AOT forward reads no tangent
                QVERIFY(s.forward > 0);
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestLogPaste)
#include "tst_logpaste.moc"
