// TORCH_TRACE logs: every graph listed with its compile id, payload md5 checked, damage located, nothing
// crashes. Expected values come from small independent scanners below (record keys, Qt's md5, statement
// counts).
#include "io/CompileConfig.h"
#include "io/FxReader.h"
#include "io/GraphFile.h"
#include "io/Md5.h"
#include "io/TraceLog.h"
#include "testutil.h"

#include <QCryptographicHash>

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include <random>
#include <regex>
#include <set>

using namespace jointscope;
using namespace jointscope::test;

namespace {

// Reads bytes of `text` as the index's span readers read a log.
SpanReader spanOf(const std::string& text) {
    return [&text](uint64_t begin, uint64_t end) { return text.substr(begin, end - begin); };
}

std::string tracePath(const std::string& name) {
    return sharedPath("graphs/torch-trace/" + name);
}

// One record as a naive scanner sees it: `...] {"kind"...` then tab lines.
struct RawRecord {
    uint32_t line = 0;
    std::string kind;
    std::string header;
    std::string payload; // tab-stripped lines joined by '\n'
    bool hasPayloadLines = false;
};

std::vector<RawRecord> scanRecords(const std::string& text) {
    static const std::regex glog(
        "^[VIWEC]\\d{4} \\d\\d:\\d\\d:\\d\\d\\.\\d+ \\d+ \\S+:\\d+\\] \\{\"([a-z_]+)\"");
    std::vector<RawRecord> records;
    const auto lines = splitLines(text);
    for (size_t i = 0; i < lines.size(); ++i) {
        std::smatch m;
        if (lines[i].empty() || std::string_view("VIWEC").find(lines[i][0]) == std::string_view::npos ||
            !std::regex_search(lines[i], m, glog))
            continue;
        RawRecord r;
        r.line = static_cast<uint32_t>(i + 1);
        r.kind = m[1];
        r.header = lines[i];
        std::vector<std::string> body;
        while (i + 1 < lines.size() && !lines[i + 1].empty() && lines[i + 1][0] == '\t')
            body.push_back(lines[++i].substr(1));
        r.hasPayloadLines = !body.empty();
        for (size_t k = 0; k < body.size(); ++k)
            r.payload += (k ? "\n" : "") + body[k];
        records.push_back(r);
    }
    return records;
}

std::map<std::string, int> countKinds(const GraphList& graphs) {
    std::map<std::string, int> counts;
    for (const GraphEntry& g : graphs)
        ++counts[g.kind];
    return counts;
}

bool isClassLine(const std::string& payload) {
    const std::string first = payload.substr(0, payload.find('\n'));
    return first.rfind("class ", 0) == 0 && first.size() > 18 &&
           first.substr(first.size() - 18) == "(torch.nn.Module):";
}

const std::set<std::string> kFixedGraphKinds = {
    "dynamo_output_graph", "aot_joint_graph",         "aot_forward_graph",       "aot_backward_graph",
    "aot_inference_graph", "compiled_autograd_graph", "inductor_pre_grad_graph", "inductor_post_grad_graph"};

// Graph records by an independent reading: fixed graph kinds, plus string artifacts holding class text.
std::vector<RawRecord> expectedGraphRecords(const std::string& text) {
    std::vector<RawRecord> out;
    for (const RawRecord& r : scanRecords(text)) {
        if (kFixedGraphKinds.count(r.kind) ||
            (r.kind == "artifact" && r.header.find("\"encoding\": \"string\"") != std::string::npos &&
             isClassLine(r.payload)))
            out.push_back(r);
    }
    return out;
}

uint64_t parsedNodes(const GraphEntry& g, const std::string& path) {
    Expected<Graph> graph = readFxText(g.payload, FxReadOptions{path, g.payloadLine, g.payloadColumn});
    return graph ? graph->size() : 0;
}

std::set<uint32_t> md5WarningLines(const GraphIndex& index) {
    std::set<uint32_t> lines;
    for (const Diagnostic& d : index.problems)
        if (d.message.find("md5 mismatch") != std::string::npos)
            lines.insert(d.loc.line);
    return lines;
}

} // namespace

class TestTraceLog : public QObject {
    Q_OBJECT
private slots:
    void md5KnownVectors() {
        // RFC 1321 appendix A.5.
        QCOMPARE(md5Hex(""), std::string("d41d8cd98f00b204e9800998ecf8427e"));
        QCOMPARE(md5Hex("abc"), std::string("900150983cd24fb0d6963f7d28e17f72"));
        QCOMPARE(md5Hex("message digest"), std::string("f96b697d7cb7938d525a2f31aaf161d0"));
        QCOMPARE(md5Hex("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
                 std::string("57edf4a22be3c955ac49da2e2107b67a"));
        // Every length around the 64-byte block boundary, against Qt's md5.
        std::string s;
        for (int n = 0; n < 200; ++n, s += char('a' + n % 26)) {
            const QByteArray qt =
                QCryptographicHash::hash(QByteArray::fromStdString(s), QCryptographicHash::Md5).toHex();
            QCOMPARE(md5Hex(s), qt.toStdString());
        }
        // Incremental updates in odd pieces agree with one shot.
        Md5 md5;
        for (size_t i = 0; i < s.size(); i += 7)
            md5.update(std::string_view(s).substr(i, 7));
        auto digest = md5.finish();
        QCOMPARE(QByteArray(reinterpret_cast<const char*>(digest.data()), 16).toHex().toStdString(),
                 md5Hex(s));
    }

    void listsJointForwardBackward() {
        const std::string path = tracePath("inductor_provenance_jit_debug_handle_log.txt");
        const std::string text = readFile(path);
        QVERIFY(looksLikeTraceLog(text.substr(0, 4096)));
        GraphIndex index = indexTraceLog(text, path);
        for (const char* kind : {"aot_joint_graph", "aot_forward_graph", "aot_backward_graph"}) {
            auto it = std::find_if(index.graphs.begin(), index.graphs.end(),
                                   [&](const GraphEntry& g) { return g.kind == kind; });
            QVERIFY2(it != index.graphs.end(), kind);
            const GraphEntry g = *it;
            QCOMPARE(g.compileId, std::string("0/0"));
            QCOMPARE(g.title(), "[0/0] " + std::string(kind));
            QCOMPARE(g.payloadColumn, 1u);
        }
        // Same graphs, same order, same lines and payloads as the independent scan.
        const auto expected = expectedGraphRecords(text);
        QCOMPARE(index.graphs.size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
            const GraphEntry& g = index.graphs[i];
            QCOMPARE(g.index, uint32_t(i));
            QCOMPARE(g.line, expected[i].line);
            QCOMPARE(g.payloadLine, expected[i].line + 1);
            QCOMPARE(g.payload, expected[i].payload);
            QVERIFY(g.kind == expected[i].kind || g.kind.rfind("artifact:", 0) == 0);
        }
        QVERIFY(md5WarningLines(index).empty());
    }

    void nodeCountsMatchStatementCounts() {
        for (const char* name : {"inductor_provenance_jit_debug_handle_log.txt", "multi_rank_rank_1.log",
                                 "simple.log", "collectives_parity_rank_0.log"}) {
            const std::string path = tracePath(name);
            GraphIndex index = indexTraceLog(readFile(path), path);
            int checked = 0;
            for (const GraphEntry& g : index.graphs) {
                if (g.kind.rfind("aot_", 0) != 0)
                    continue; // dynamo graphs rename placeholders ("l_x_ = L_x_"): the simple count does not
                              // apply
                const uint64_t expected = countAotNodes(g.payload);
                QVERIFY2(expected > 1, g.title().c_str());
                QCOMPARE(g.nodes, uint64_t(0)); // the index parses nothing
                const uint64_t nodes = parsedNodes(g, path);
                QVERIFY2(nodes == expected, (std::string(name) + " " + g.title() + ": " +
                                             std::to_string(nodes) + " != " + std::to_string(expected))
                                                .c_str());
                ++checked;
            }
            QVERIFY(checked > 0);
        }
        // Hand-counted: the joint graph has 7 inputs, 31 operations and the output.
        GraphIndex jit =
            indexTraceLog(readFile(tracePath("inductor_provenance_jit_debug_handle_log.txt")), "jit");
        auto joint = std::find_if(jit.graphs.begin(), jit.graphs.end(),
                                  [](const GraphEntry& g) { return g.kind == "aot_joint_graph"; });
        QVERIFY(joint != jit.graphs.end());
        QCOMPARE(parsedNodes(*joint, "jit"), uint64_t(39));
    }

    void multiRankListsAllGraphs() {
        const std::string path = tracePath("multi_rank_rank_1.log");
        const std::string text = readFile(path);
        GraphIndex index = indexTraceLog(text, path);
        auto counts = countKinds(index.graphs);
        QCOMPARE(counts["dynamo_output_graph"], 15);
        QCOMPARE(counts["aot_inference_graph"], 15);
        int expectedPostGrad = 0;
        for (const RawRecord& r : scanRecords(text))
            expectedPostGrad += r.kind == "inductor_post_grad_graph";
        QVERIFY(expectedPostGrad > 0);
        QCOMPARE(counts["inductor_post_grad_graph"], expectedPostGrad);
        QCOMPARE(index.graphs.size(), expectedGraphRecords(text).size());
        // Compile ids as tlparse shows them, from each record's own frame ids.
        static const std::regex ids(
            "\"frame_id\": (\\d+), \"frame_compile_id\": (\\d+), \"attempt\": (\\d+)");
        const auto lines = splitLines(text);
        std::set<std::string> dynamoIds;
        for (const GraphEntry& g : index.graphs) {
            std::smatch m;
            QVERIFY(std::regex_search(lines[g.line - 1], m, ids));
            std::string expected = std::string(m[1]) + "/" + std::string(m[2]);
            if (m[3] != "0")
                expected += "_" + std::string(m[3]);
            QCOMPARE(g.compileId, expected);
            if (g.kind == "dynamo_output_graph")
                dynamoIds.insert(g.compileId);
        }
        QCOMPARE(dynamoIds.size(), size_t(15));
        QVERIFY(md5WarningLines(index).empty());
    }

    void md5MismatchesAreExactlyTheAlteredPayloads() {
        // Qt's md5 of tlparse's payload (tab-stripped lines joined by '\n') decides which records were
        // altered.
        for (const char* name :
             {"simple.log", "multi_rank_rank_1.log", "collectives_parity_rank_0.log", "cache_hit_miss.log",
              "inductor_provenance_aot_cuda_log.txt", "artifacts.log"}) {
            const std::string path = tracePath(name);
            const std::string text = readFile(path);
            std::set<uint32_t> expected;
            int verified = 0;
            static const std::regex hasPayload("\"has_payload\": \"([0-9a-f]{32})\"");
            for (const RawRecord& r : scanRecords(text)) {
                std::smatch m;
                if (!std::regex_search(r.header, m, hasPayload))
                    continue;
                const QByteArray md5 =
                    QCryptographicHash::hash(QByteArray::fromStdString(r.payload), QCryptographicHash::Md5)
                        .toHex();
                if (md5.toStdString() != std::string(m[1]))
                    expected.insert(r.line);
                else
                    ++verified;
            }
            QVERIFY(verified > 0);
            GraphIndex index = indexTraceLog(text, path);
            QVERIFY2(md5WarningLines(index) == expected, name);
            for (const Diagnostic& d : index.problems)
                if (d.message.find("md5") != std::string::npos)
                    QCOMPARE(d.severity, Severity::Warning);
        }
    }

    void collectivesAreC10dFunctionalOps() {
        const std::string path = tracePath("collectives_parity_rank_0.log");
        GraphIndex index = indexTraceLog(readFile(path), path);
        QVERIFY(!index.graphs.empty());
        int collectives = 0;
        for (const GraphEntry& g : index.graphs) {
            if (g.payload.find("torch.ops._c10d_functional.") == std::string::npos ||
                g.kind == "dynamo_output_graph")
                continue;
            FxReadOptions options{path, g.payloadLine, g.payloadColumn};
            Expected<Graph> graph = readFxText(g.payload, options);
            JS_VERIFY_EXPECTED(graph);
            for (const Node& node : graph->nodes())
                collectives += node.target.ns == "_c10d_functional";
        }
        QVERIFY(collectives > 0);
    }

    void corruptedJsonIsLocatedAndTheRestLoads() {
        const std::string good = readFile(tracePath("simple.log"));
        const std::string badPath = tracePath("simple_corrupted_json.log");
        const std::string bad = readFile(badPath);
        const auto goodLines = splitLines(good);
        const auto badLines = splitLines(bad);
        uint32_t firstDiff = 0;
        for (size_t i = 0; i < std::min(goodLines.size(), badLines.size()); ++i)
            if (goodLines[i] != badLines[i]) {
                firstDiff = static_cast<uint32_t>(i + 1);
                break;
            }
        QVERIFY(firstDiff > 0);
        GraphIndex goodIndex = indexTraceLog(good, "simple.log");
        GraphIndex badIndex = indexTraceLog(bad, badPath);
        bool located = false;
        for (const Diagnostic& d : badIndex.problems) {
            QCOMPARE(d.loc.file, badPath);
            located = located || (d.severity == Severity::Error && d.loc.line == firstDiff && d.loc.col > 0);
        }
        QVERIFY2(located, ("no error at line " + std::to_string(firstDiff)).c_str());
        // The same graphs (the damage is in a chromium_event record), shifted by the removed line.
        QVERIFY(badIndex.graphs.size() + 1 >= goodIndex.graphs.size());
        QCOMPARE(badIndex.graphs.size(), goodIndex.graphs.size());
        for (size_t i = 0; i < goodIndex.graphs.size(); ++i) {
            QCOMPARE(badIndex.graphs[i].kind, goodIndex.graphs[i].kind);
            QCOMPARE(badIndex.graphs[i].compileId, goodIndex.graphs[i].compileId);
            QCOMPARE(badIndex.graphs[i].payload, goodIndex.graphs[i].payload);
            QCOMPARE(badIndex.graphs[i].line + 1, goodIndex.graphs[i].line);
        }
    }

    void corruptedRecordLineIsLocatedAtItsColumn() {
        std::string text = readFile(tracePath("simple.log"));
        auto lines = splitLines(text);
        // Damage the JSON of the aot_inference_graph record: its graph goes, the others stay.
        size_t target = 0;
        for (size_t i = 0; i < lines.size(); ++i)
            if (lines[i].find("] {\"aot_inference_graph\"") != std::string::npos)
                target = i;
        QVERIFY(target > 0);
        const size_t brace = lines[target].find("] {") + 2;
        lines[target].insert(brace + 1, "\"x\" ");
        std::string damaged;
        for (const auto& l : lines)
            damaged += l + "\n";
        GraphIndex index = indexTraceLog(damaged, "d.log");
        bool found = false;
        for (const Diagnostic& d : index.problems)
            found = found ||
                    (d.loc.line == target + 1 && d.loc.col == brace + 1 + 5 && d.severity == Severity::Error);
        QVERIFY(found);
        auto counts = countKinds(index.graphs);
        QCOMPARE(counts["aot_inference_graph"], 0);
        QCOMPARE(counts["dynamo_output_graph"], 1);
        QCOMPARE(counts["inductor_post_grad_graph"], 1);
    }

    void compileIdsAsTlparseShowsThem() {
        const std::string graph =
            "\tclass GraphModule(torch.nn.Module):\n\t    def forward(self, x):\n\t        "
            "sin = torch.ops.aten.sin.default(x);  x = None\n\t        return (sin,)\n";
        const std::string md5 =
            md5Hex("class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        sin = "
                   "torch.ops.aten.sin.default(x);  x = None\n        return (sin,)");
        auto record = [&](const std::string& ids) {
            return "V0101 00:00:00.000000 1 torch/x.py:1] {\"aot_forward_graph\": {}" + ids +
                   ", \"has_payload\": \"" + md5 + "\"}\n" + graph;
        };
        const std::string text =
            "V0101 00:00:00.000000 1 torch/_logging/structured.py:22] {\"str\": [\"/a/b.py\", 0]}\n" +
            record(", \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0") +
            record(", \"frame_id\": 1, \"frame_compile_id\": 0, \"attempt\": 1") +
            record(
                ", \"compiled_autograd_id\": 0, \"frame_id\": 2, \"frame_compile_id\": 3, \"attempt\": 0") +
            record(", \"compiled_autograd_id\": 1") +
            record(", \"compiled_autograd_id\": null, \"frame_id\": null") +
            record(", \"frame_id\": 4, \"frame_compile_id\": 1");
        GraphIndex index = indexTraceLog(text, "ids.log");
        QVERIFY2(index.problems.empty(), index.problems.empty() ? "" : index.problems[0].format().c_str());
        QCOMPARE(index.graphs.size(), size_t(6));
        const char* expected[] = {"0/0", "1/0_1", "!0/2/3", "!1/-/-", "", "4/1"};
        for (size_t i = 0; i < 6; ++i) {
            QCOMPARE(index.graphs[i].compileId, std::string(expected[i]));
            QCOMPARE(parsedNodes(index.graphs[i], "ids.log"), uint64_t(3));
            QCOMPARE(index.graphs[i].line, uint32_t(2 + 5 * i));
        }
        QCOMPARE(index.graphs[4].title(), std::string("aot_forward_graph"));
        QCOMPARE(index.graphs[1].title(), std::string("[1/0_1] aot_forward_graph"));
    }

    void junkLinesAreReportedOnce() {
        std::string text = readFile(tracePath("simple.log"));
        GraphIndex clean = indexTraceLog(text, "s.log");
        const size_t cut = text.find("\nV", text.size() / 3) + 1;
        text.insert(cut, "this is not a record\nnor is this\n\x01\x02\x03\n");
        const uint32_t junkLine =
            static_cast<uint32_t>(std::count(text.begin(), text.begin() + cut, '\n') + 1);
        GraphIndex index = indexTraceLog(text, "s.log");
        QCOMPARE(index.graphs.size(), clean.graphs.size());
        int junk = 0;
        for (const Diagnostic& d : index.problems)
            if (d.message.find("glog prefix") != std::string::npos) {
                ++junk;
                QCOMPARE(d.loc.line, junkLine);
            }
        QCOMPARE(junk, 1);
    }

    void hostileInputNeverCrashes() {
        const std::string simple = readFile(tracePath("simple.log"));
        std::mt19937 rng(7);
        std::string binary(1 << 20, '\0');
        for (char& c : binary)
            c = static_cast<char>(rng());
        std::vector<std::string> inputs = {
            "",
            "\n\n\n",
            "\t\t\t\n\t",
            binary,
            simple.substr(0, simple.size() / 2),                  // truncated mid-record
            simple.substr(0, simple.find("\"has_payload\"") + 5), // truncated inside the JSON
            "V0101 00:00:00.000000 1 a.py:1] " + std::string(200000, '[') + "\n",
            "V0101 00:00:00.000000 1 a.py:1] {\"aot_joint_graph\": {}, \"has_payload\": \"0\"}\n\t" +
                std::string(4 << 20, 'x'),
            "V0101 00:00:00.000000 1 a.py:1] {\"aot_joint_graph\": {}}\n",
            std::string(3 << 20, '\n'),
        };
        for (const std::string& input : inputs) {
            GraphIndex index = indexTraceLog(input, "h.log");
            QVERIFY(index.problems.size() <= 201);
            for (const GraphEntry& g : index.graphs)
                QVERIFY(g.payload.size() <= input.size());
        }
        GraphIndex garbage = indexTraceLog(binary, "h.log");
        QVERIFY(!garbage.problems.empty());
        QCOMPARE(garbage.problems.front().severity, Severity::Error);
        QVERIFY(!looksLikeTraceLog(binary.substr(0, 4096)));
    }

    void detectsOnlyTraceLogs() {
        for (const char* name : {"artifacts.log", "cache_hit_miss.log", "collectives_parity_rank_0.log",
                                 "comp_failure.log", "export.log", "links.log", "multi_rank_rank_1.log",
                                 "simple.log", "inductor_provenance_aot_cuda_log.txt"})
            QVERIFY2(looksLikeTraceLog(readFile(tracePath(name)).substr(0, 4096)), name);
        QVERIFY(!looksLikeTraceLog(readFile(sharedPath("graphs/torch-1.13/mlp/joint.txt")).substr(0, 4096)));
        QVERIFY(!looksLikeTraceLog(
            readFile(sourcePath("tests/data/logs/aot_graphs_colored.log")).substr(0, 4096)));
        QVERIFY(!looksLikeTraceLog(""));
    }

    void exportedProgramGraphIsListed() {
        const std::string path = tracePath("export.log");
        const std::string text = readFile(path);
        GraphIndex index = indexTraceLog(text, path);
        QCOMPARE(index.graphs.size(), size_t(1));
        const GraphEntry& g = index.graphs[0];
        QCOMPARE(g.kind, std::string("exported_program"));
        QVERIFY(g.payload.rfind("class GraphModule(torch.nn.Module):", 0) == 0);
        QVERIFY(g.payload.find("Graph signature") == std::string::npos);
        // The class line of the payload is where the listing says, at the column it says.
        const auto lines = splitLines(text);
        QCOMPARE(lines[g.payloadLine - 1].substr(g.payloadColumn),
                 std::string("class GraphModule(torch.nn.Module):"));
    }

    // A joint graph takes the static input indices of the aot_forward_graph_fw_metadata artifact that follows
    // it, also when the log is read in parts and a part boundary falls between the two. This log compiles
    // frame 0 twice (a reset in between: both compiles are "0/0"), so each artifact belongs to the newest
    // joint graph before it. Expected: the artifacts' text, read here.
    void staticInputsResolveAcrossParts() {
        const std::string path =
            sourcePath("tests/data/torch2/embedding_max_norm_budget0_aot_eager_trace.log");
        const std::string text = readFile(path);
        std::vector<size_t> joints, artifacts; // byte offsets of their header lines
        std::vector<std::vector<int64_t>> written;
        for (size_t at = 0; at < text.size();) {
            const size_t end = std::min(text.find('\n', at), text.size());
            const std::string_view line(text.data() + at, end - at);
            if (line.find("{\"aot_joint_graph\"") != std::string_view::npos)
                joints.push_back(at);
            if (line.find("aot_forward_graph_fw_metadata") != std::string_view::npos)
                artifacts.push_back(at);
            if (const size_t key = line.find("static_input_indices=["); key != std::string_view::npos) {
                std::vector<int64_t> indices;
                std::string list(line.substr(key + 22, line.find(']', key) - key - 22));
                std::replace(list.begin(), list.end(), ',', ' ');
                std::istringstream in(list);
                for (int64_t i; in >> i;)
                    indices.push_back(i);
                written.push_back(indices);
            }
            at = end + 1;
        }
        QCOMPARE(joints.size(), size_t(2));
        QCOMPARE(artifacts.size(), size_t(2));
        QCOMPARE(written, (std::vector<std::vector<int64_t>>{{0, 2, 3}, {0, 1, 3, 4}}));
        for (unsigned threads : {1u, 2u, 5u, 32u}) {
            TraceIndexOptions options;
            options.threads = threads;
            options.bytesPerThread = 1 << 10;
            // Parts start at the first record on or after each even share of the file: with 32, one starts
            // between each joint graph and its artifact.
            if (threads == 32)
                for (size_t k = 0; k < 2; ++k)
                    QVERIFY(artifacts[k] - joints[k] > text.size() / threads + 1);
            Expected<GraphIndex> index = indexTraceLogFile(path, options);
            JS_VERIFY_EXPECTED(index);
            std::vector<std::optional<std::vector<int64_t>>> found;
            for (const GraphEntry& e : index->graphs)
                if (e.kind == "aot_joint_graph")
                    found.push_back(e.staticInputIndices);
            QCOMPARE(found.size(), size_t(2));
            QCOMPARE(found[0], std::optional(written[0]));
            QCOMPARE(found[1], std::optional(written[1]));
        }
    }

    void fileIndexInPartsEqualsTheIndexInMemory_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<int>("threads");
        for (const char* name : {"multi_rank_rank_1.log", "simple_corrupted_json.log", "cache_hit_miss.log",
                                 "collectives_parity_rank_0.log", "export.log"})
            for (int threads : {1, 3, 8})
                QTest::newRow((std::string(name) + " " + std::to_string(threads)).c_str())
                    << QString::fromStdString(tracePath(name)) << threads;
        QTest::newRow("gpt_stack_ac 5")
            << QString::fromStdString(sourcePath("tests/data/torch2/gpt_stack_ac_trace.log")) << 5;
    }

    // The file is read in blocks by several threads, each from a record's line on (forced here with small
    // parts); the result must be what one pass over the text in memory gives, with payloads read back from
    // the file.
    void fileIndexInPartsEqualsTheIndexInMemory() {
        QFETCH(QString, path);
        QFETCH(int, threads);
        const std::string file = path.toStdString();
        const std::string text = readFile(file);
        const GraphIndex memory = indexTraceLog(text, file);
        TraceIndexOptions options;
        options.threads = static_cast<unsigned>(threads);
        options.bytesPerThread = 16 << 10;
        size_t calls = 0;
        options.progress = [&](uint64_t read, uint64_t total, size_t) {
            ++calls;
            return read <= total;
        };
        GraphList found; // as a list filling in while the index grows sees them
        options.found = [&](GraphList batch) {
            QVERIFY(!batch.empty());
            found.append(batch);
        };
        Expected<GraphIndex> streamed = indexTraceLogFile(file, options);
        JS_VERIFY_EXPECTED(streamed);
        QVERIFY(calls > 0);
        QCOMPARE(found.size(), memory.graphs.size());
        for (size_t i = 0; i < found.size(); ++i) {
            QCOMPARE(found[i].index, uint32_t(i));
            QCOMPARE(found[i].kind, memory.graphs[i].kind);
            QCOMPARE(found[i].line, memory.graphs[i].line);
            QCOMPARE(found[i].title(), memory.graphs[i].title());
        }
        QCOMPARE(streamed->graphs.size(), memory.graphs.size());
        for (size_t i = 0; i < memory.graphs.size(); ++i) {
            const GraphEntry& a = memory.graphs[i];
            const GraphEntry& b = streamed->graphs[i];
            QCOMPARE(b.index, uint32_t(i));
            QCOMPARE(b.kind, a.kind);
            QCOMPARE(b.compileId, a.compileId);
            QCOMPARE(b.line, a.line);
            QCOMPARE(b.payloadLine, a.payloadLine);
            QCOMPARE(b.staticInputIndices, a.staticInputIndices);
            QCOMPARE(b.digest, a.digest);
            const std::string payload =
                b.payload.empty()
                    ? payloadFromLines(std::string_view(text).substr(b.payloadOffset, b.payloadBytes))
                    : b.payload;
            QCOMPARE(payload, a.payload);
            QCOMPARE(md5Hex(payload), b.digestHex());
        }
        QCOMPARE(streamed->problems.size(), memory.problems.size());
        for (size_t i = 0; i < memory.problems.size(); ++i)
            QCOMPARE(streamed->problems[i].format(), memory.problems[i].format());
        QCOMPARE(streamed->collectives.size(), memory.collectives.size());
        for (size_t i = 0; i < memory.collectives.size(); ++i) {
            QCOMPARE(streamed->collectives[i].line, memory.collectives[i].line);
            QCOMPARE(streamed->collectives[i].ops, memory.collectives[i].ops);
        }
        // The configurations, read from the records the parts noted: what a pass over every line reads.
        const std::vector<CompileConfig> scanned = scanCompileConfigs(text);
        QVERIFY(memory.configs == scanned);
        QVERIFY(scanCompileConfigRecords(streamed->configRecords, spanOf(text)) == scanned);
    }

    // Each of inductor's post-grad records says inductor compiled the compile (its joint-graph passes ran
    // where no compilation_metrics says so). torch 2.15 writes the artifacts before_post_grad_graph and
    // inductor_post_grad_graph: the record lines below are from a live torch 2.15 log, payloads cut short.
    void postGradRecordsMeanInductor_data() {
        QTest::addColumn<QString>("record");
        QTest::newRow("before_post_grad_graph")
            << "V1129 12:21:57.804000 5425 torch/_inductor/compile_fx.py:1687] {\"artifact\": {\"name\": "
               "\"before_post_grad_graph\", \"encoding\": \"string\"}, \"frame_id\": 0, "
               "\"frame_compile_id\": 0, "
               "\"attempt\": 1, \"has_payload\": \"0eab37e12c2c52a58d513d90ed4f93d4\"}";
        QTest::newRow("inductor_post_grad_graph")
            << "V1129 12:21:57.883000 5425 torch/_inductor/compile_fx.py:1725] {\"artifact\": {\"name\": "
               "\"inductor_post_grad_graph\", \"encoding\": \"string\"}, \"frame_id\": 0, "
               "\"frame_compile_id\": "
               "0, \"attempt\": 1, \"has_payload\": \"ce41feec891594a98102da343f8eff93\"}";
    }
    void postGradRecordsMeanInductor() {
        QFETCH(QString, record);
        const std::string text = record.toStdString() + "\n\tclass <lambda>(torch.nn.Module):\n";
        const std::vector<CompileConfig> scanned = scanCompileConfigs(text);
        QCOMPARE(scanned.size(), size_t(1));
        QCOMPARE(scanned[0].compileId, std::string("0/0_1"));
        QVERIFY(scanned[0].inductorRecords);
        QVERIFY(!scanned[0].fromMetrics);
    }

    // The index notes the records that may carry a compile's configuration, with the compile each belongs
    // to; a compile's configuration is read from its own records only. On every real log, in one part or
    // many, the result is what a pass over every line of the log reads — all compiles, and each graph's
    // compile as GraphFile gives it — and the live torch 2 logs do record configurations
    // (compilation_metrics, functorch config).
    void indexReadsEachCompilesConfig() {
        std::vector<std::string> logs;
        for (const char* name : {"artifacts.log", "cache_hit_miss.log", "collectives_parity_rank_0.log",
                                 "comp_failure.log", "export.log", "inductor_provenance_aot_cuda_log.txt",
                                 "inductor_provenance_jit_debug_handle_log.txt", "links.log",
                                 "multi_rank_rank_1.log", "simple.log", "simple_corrupted_json.log"})
            logs.push_back(tracePath(name));
        for (const char* name : {"dyn_gpt_inductor_budget05_trace.log", "gpt_stack_ac_trace.log",
                                 "nested_compile_region_aot_eager_trace.log"})
            logs.push_back(sourcePath(std::string("tests/data/torch2/") + name));
        size_t withMetrics = 0, withBudget = 0, withJointConfig = 0;
        for (const std::string& path : logs) {
            const std::string text = readFile(path);
            const std::vector<CompileConfig> scanned = scanCompileConfigs(text);
            QVERIFY2(indexTraceLog(text, path).configs == scanned, path.c_str());
            for (unsigned threads : {1u, 4u}) {
                TraceIndexOptions options;
                options.threads = threads;
                options.bytesPerThread = 8 << 10;
                Expected<GraphIndex> streamed = indexTraceLogFile(path, options);
                JS_VERIFY_EXPECTED(streamed);
                QVERIFY2(scanCompileConfigRecords(streamed->configRecords, spanOf(text)) == scanned,
                         path.c_str());
                for (const GraphEntry& e : streamed->graphs) {
                    const CompileConfig* expected = findCompileConfig(scanned, e.compileId, e.line);
                    const std::optional<CompileConfig> own =
                        compileConfigFromRecords(streamed->configRecords, e.compileId, e.line, spanOf(text));
                    QVERIFY2(bool(expected) == own.has_value() && (!expected || *expected == *own),
                             (path + " " + e.title()).c_str());
                }
            }
            Expected<GraphFile> file = GraphFile::open(path);
            JS_VERIFY_EXPECTED(file);
            for (const GraphEntry& e : file->graphs()) {
                const CompileConfig* expected = findCompileConfig(scanned, e.compileId, e.line);
                const std::optional<CompileConfig> own = file->compileConfigFor(e);
                QVERIFY2(bool(expected) == own.has_value() && (!expected || *expected == *own),
                         (path + " " + e.title()).c_str());
                withJointConfig += e.kind == "aot_joint_graph" && own && own->fromMetrics;
            }
            QVERIFY(file->compileConfigsOf(file->graphs().empty() ? GraphEntry{} : file->graphs()[0]) ==
                    scanned);
            for (const CompileConfig& c : scanned) {
                withMetrics += c.fromMetrics;
                withBudget += c.functorch.activationMemoryBudget.has_value();
            }
        }
        QVERIFY(withMetrics > 0);
        QVERIFY(withBudget > 0);
        QVERIFY(withJointConfig > 0);
    }

    void cancelledIndexSaysSo() {
        TraceIndexOptions options;
        options.threads = 2;
        options.bytesPerThread = 16 << 10;
        options.progress = [](uint64_t, uint64_t, size_t) { return false; };
        Expected<GraphIndex> index = indexTraceLogFile(tracePath("multi_rank_rank_1.log"), options);
        JS_VERIFY_EXPECTED(index);
        QVERIFY(index->cancelled);
        Expected<GraphIndex> missing = indexTraceLogFile(tracePath("no_such.log"));
        QVERIFY(!missing);
        QVERIFY(missing.error().format().find("no_such.log") != std::string::npos);
    }

    void indexesLargestLogWithoutProblems() {
        // Speed is measured in bench/ (bench_readers); here the 3.5 MB log must index cleanly.
        const std::string path = tracePath("multi_rank_rank_1.log");
        const std::string text = readFile(path);
        GraphIndex index = indexTraceLog(text, path);
        QVERIFY(index.graphs.size() >= 30);
        QVERIFY2(index.problems.empty(),
                 index.problems.empty() ? "" : index.problems.front().format().c_str());
    }
};

QTEST_GUILESS_MAIN(TestTraceLog)
#include "tst_tracelog.moc"
