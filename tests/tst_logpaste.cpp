// TORCH_LOGS pastes: every graph listed with kind and compile id, ANSI stripped, payload equal to the real
// graph text it was printed from (the TORCH_TRACE payload), damage located. The pastes in tests/data/logs are
// built by tests/data/logs/make_pastes.py from shared/graphs/torch-trace the way torch's logging prints
// graphs.
#include "io/TraceLog.h"
#include "testutil.h"

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
            QCOMPARE(g.title, std::string(titles[i]));
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
        for (const char* name : {"aot_graphs_colored.log", "multi_rank_interleaved.log", "bare_paste.txt",
                                 "python_logging.log", "broken.log"}) {
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
};

QTEST_GUILESS_MAIN(TestLogPaste)
#include "tst_logpaste.moc"
