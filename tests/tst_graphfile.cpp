// GraphFile: format detection on every shared file, torch 1.13 sidecars, graph selection, refused inputs.
#include "graph/Graph.h"
#include "io/GraphFile.h"
#include "io/JsonFormat.h"
#include "testutil.h"

#include <QRegularExpression>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

using namespace jointscope;
namespace fs = std::filesystem;

namespace {

std::string modelPath(const std::string& model, const std::string& file) {
    return test::sharedPath("graphs/torch-1.13/" + model + "/" + file);
}

// A captured model's joint graph as GraphFile loads it (meta sidecar and reference decisions applied).
Expected<Graph> loadJoint(const QString& model) {
    Expected<GraphFile> file = GraphFile::open(modelPath(model.toStdString(), "joint.txt"));
    if (!file)
        return file.error();
    return file->load(0);
}

nlohmann::json modelJson(const QString& model, const std::string& file) {
    return nlohmann::json::parse(test::readFile(modelPath(model.toStdString(), file)));
}

// 1-based line of the first occurrence of needle in text (independent of the code under test).
int lineOf(const std::string& text, const std::string& needle) {
    const size_t at = text.find(needle);
    if (at == std::string::npos)
        return -1;
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

std::string attribute(const Graph& g, const std::string& key) {
    for (const auto& [k, v] : g.attributes)
        if (k == key)
            return v;
    return {};
}

} // namespace

class TestGraphFile : public QObject {
    Q_OBJECT
private slots:
    void detectsEverySharedFile_data() {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("expected"); // format name, or "error" for JSON files that are not graphs
        // Expected format from an independent rule: glog-prefixed JSON first line -> trace log, *.json -> not
        // a graph, other text -> FX.
        const QRegularExpression glog(R"(^[VIWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^\]]+\] \{)");
        std::vector<std::string> files;
        for (const auto& e : fs::recursive_directory_iterator(test::sharedPath("graphs")))
            if (e.is_regular_file())
                files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        QVERIFY(files.size() >= 30);
        for (const std::string& path : files) {
            std::string firstLine;
            std::ifstream in(path);
            std::getline(in, firstLine);
            QString expected = "fx";
            if (path.ends_with(".json"))
                expected = "error";
            else if (glog.match(test::q(firstLine)).hasMatch())
                expected = "trace-log";
            const std::string row =
                fs::path(path).parent_path().filename().string() + "/" + fs::path(path).filename().string();
            QTest::newRow(row.c_str()) << test::q(path) << expected;
        }
    }

    void detectsEverySharedFile() {
        QFETCH(QString, path);
        QFETCH(QString, expected);
        Expected<GraphFile> file = GraphFile::open(path.toStdString());
        if (expected == "error") {
            QVERIFY(!file);
            QCOMPARE(file.error().loc.file, path.toStdString());
            QCOMPARE(int(file.error().loc.line), 1);
            QVERIFY(file.error().message.find("not a jointscope graph") != std::string::npos);
            return;
        }
        JS_VERIFY_EXPECTED(file);
        QCOMPARE(test::q(std::string(formatName(file->format()))), expected);
        QVERIFY(!file->graphs().empty());
        if (expected == "fx")
            QCOMPARE(file->graphs().size(), size_t(1));
        Expected<Graph> g = file->load(0);
        JS_VERIFY_EXPECTED(g);
        QVERIFY(g->size() > 0);
    }

    void metaSidecarApplied_data() { test::addTorch113ModelRows("model"); }

    void metaSidecarApplied() {
        QFETCH(QString, model);
        Expected<Graph> g = loadJoint(model);
        JS_VERIFY_EXPECTED(g);
        const auto meta = modelJson(model, "joint.meta.json");
        QCOMPARE(g->numFwdOutputs.value_or(-1), meta["num_fwd_outputs"].get<int64_t>());
        QCOMPARE(attribute(*g, "torch_version"), meta["torch"].get<std::string>());
        size_t withShape = 0;
        std::map<std::string, nlohmann::json> entryOf;
        for (const auto& entry : meta["nodes"])
            entryOf[entry["name"].get<std::string>()] = entry;
        for (const auto& entry : meta["nodes"]) {
            const std::string name = entry["name"].get<std::string>();
            std::optional<NodeId> id = g->find(name);
            QVERIFY2(id, name.c_str());
            const Node& node = g->node(*id);
            QCOMPARE(std::string(nodeOpName(node.op)), entry["op"].get<std::string>());
            if (!entry.contains("shape")) {
                // A multi-output node: its elements are the shapes the sidecar gives the getitems reading it.
                std::map<int64_t, nlohmann::json> elements;
                for (NodeId user : node.users) {
                    const Node& u = g->node(user);
                    if (u.target.isGetItem() && entryOf.count(u.name) && entryOf[u.name].contains("shape"))
                        elements[u.args[1].asInt()] = entryOf[u.name]["shape"];
                }
                if (elements.empty()) {
                    QCOMPARE(node.outputKind, OutputKind::Unknown);
                    continue;
                }
                QCOMPARE(node.outputKind, OutputKind::Tuple);
                for (const auto& [index, shape] : elements) {
                    QVERIFY2(size_t(index) < node.outputs.size(), name.c_str());
                    QCOMPARE(node.outputs[size_t(index)].sizes.size(), shape.size());
                    for (size_t i = 0; i < shape.size(); ++i)
                        QCOMPARE(node.outputs[size_t(index)].sizes[i].value, shape[i].get<int64_t>());
                }
                continue;
            }
            ++withShape;
            const TensorMeta* t = node.tensor();
            QVERIFY2(t, name.c_str());
            QCOMPARE(std::string(torchName(t->dtype)), entry["dtype"].get<std::string>());
            QCOMPARE(t->sizes.size(), entry["shape"].size());
            for (size_t i = 0; i < t->sizes.size(); ++i)
                QCOMPARE(t->sizes[i].value, entry["shape"][i].get<int64_t>());
            QCOMPARE(t->strides.size(), entry["stride"].size());
            for (size_t i = 0; i < t->strides.size(); ++i)
                QCOMPARE(t->strides[i].value, entry["stride"][i].get<int64_t>());
        }
        QVERIFY(withShape > 0);
    }

    void referenceDecisionsAttached_data() { metaSidecarApplied_data(); }

    void referenceDecisionsAttached() {
        QFETCH(QString, model);
        Expected<Graph> g = loadJoint(model);
        JS_VERIFY_EXPECTED(g);
        const auto ref = modelJson(model, "reference.json");
        QCOMPARE(g->size(), ref["joint_nodes"].get<size_t>());
        QCOMPARE(g->decisions.size(), size_t(2));
        const PartitionDecision& minCut = g->decisions[0];
        QCOMPARE(minCut.name, std::string("torch_min_cut"));
        QCOMPARE(minCut.saved, ref["min_cut_saved"].get<std::vector<std::string>>());
        QCOMPARE(minCut.seconds.value_or(-1), ref["min_cut_seconds"].get<double>());
        QVERIFY(minCut.origin.find(ref["torch"].get<std::string>()) != std::string::npos);
        const PartitionDecision& byDefault = g->decisions[1];
        QCOMPARE(byDefault.name, std::string("torch_default_partition"));
        QCOMPARE(byDefault.saved, ref["default_partition_saved"].get<std::vector<std::string>>());

        // Not beside fw.txt (only joint.txt gets reference.json), and not when sidecars are off.
        Expected<GraphFile> fw = GraphFile::open(modelPath(model.toStdString(), "fw.txt"));
        JS_VERIFY_EXPECTED(fw);
        QVERIFY(fw->load(0)->decisions.empty());
        OpenOptions off;
        off.autoSidecars = false;
        Expected<Graph> bare = GraphFile::open(modelPath(model.toStdString(), "joint.txt"), off)->load(0);
        JS_VERIFY_EXPECTED(bare);
        QVERIFY(bare->decisions.empty());
        // Without the sidecar the forward's output count is still known (the joint's outputs less one
        // gradient per primal), and it is the one torch recorded in the sidecar.
        QVERIFY(bare->numFwdOutputs);
        QCOMPARE(*bare->numFwdOutputs, modelJson(model, "joint.meta.json")["num_fwd_outputs"].get<int64_t>());
    }

    void sidecarMismatchIsLocated() {
        // fw.txt with the joint's sidecar: the first sidecar node fw lacks is reported at its object in the
        // sidecar.
        const std::string metaPath = modelPath("mlp", "joint.meta.json");
        OpenOptions options;
        options.metaPath = metaPath;
        Expected<GraphFile> fw = GraphFile::open(modelPath("mlp", "fw.txt"), options);
        JS_VERIFY_EXPECTED(fw);
        Expected<Graph> g = fw->load(0);
        QVERIFY(!g);
        QCOMPARE(g.error().loc.file, metaPath);
        const std::string metaText = test::readFile(metaPath);
        // Independently: fw.txt has no tangents; the first tangent in the sidecar is the first missing node.
        QVERIFY(test::readFile(modelPath("mlp", "fw.txt")).find("tangents_1") == std::string::npos);
        QVERIFY(g.error().message.find("'tangents_1'") != std::string::npos);
        // The sidecar prints "{" on its own line before "name".
        QCOMPARE(int(g.error().loc.line), lineOf(metaText, "\"name\": \"tangents_1\"") - 1);

        // An op mismatch.
        Graph joint = *GraphFile::open(modelPath("mlp", "joint.txt"), OpenOptions{.metaPath = {},
                                                                                  .autoSidecars = false,
                                                                                  .jsonParsed = {},
                                                                                  .progress = {},
                                                                                  .graphsFound = {}})
                           ->load(0);
        const std::string bad = "{\"torch\": \"1.13\", \"nodes\": [\n"
                                "{\"name\": \"t\", \"op\": \"call_function\"},\n"
                                "  {\"name\": \"addmm\", \"op\": \"placeholder\", \"shape\": [1]}]}";
        std::optional<Diagnostic> problem = applyMetaSidecar(joint, bad, "bad.meta.json");
        QVERIFY(problem);
        QCOMPARE(int(problem->loc.line), 3);
        QCOMPARE(int(problem->loc.col), 3);
        QVERIFY(problem->message.find("addmm") != std::string::npos);
        QCOMPARE(joint.node(*joint.find("addmm")).outputKind, OutputKind::Unknown); // left untouched
        // A reference naming an unknown node.
        std::optional<Diagnostic> refProblem =
            applyReferenceDecisions(joint, "{\"min_cut_saved\": [\"nope\"]}", "reference.json");
        QVERIFY(refProblem);
        QVERIFY(refProblem->message.find("'nope'") != std::string::npos);
    }

    void selectsGraphs() {
        Expected<GraphFile> file =
            GraphFile::open(test::sharedPath("graphs/torch-trace/multi_rank_rank_1.log"));
        JS_VERIFY_EXPECTED(file);
        const auto& graphs = file->graphs();
        QVERIFY(graphs.size() > 5);
        QCOMPARE(file->select("3").value_or(999), size_t(3));
        QVERIFY(!file->select(std::to_string(graphs.size())));
        QVERIFY(!file->select("no_such_kind"));
        QVERIFY(!file->select(""));
        QVERIFY(!file->select("99999999999999999999"));
        // Expected indices by scanning the listing.
        const std::string kind = graphs[1].kind;
        size_t firstOfKind = 0;
        while (graphs[firstOfKind].kind != kind)
            ++firstOfKind;
        QCOMPARE(file->select(kind).value_or(999), firstOfKind);
        const GraphEntry& last = graphs.back();
        size_t firstWithId = 0;
        while (graphs[firstWithId].kind != last.kind || graphs[firstWithId].compileId != last.compileId)
            ++firstWithId;
        QCOMPARE(file->select(last.kind + "@" + last.compileId).value_or(999), firstWithId);
        QVERIFY(!file->select(last.kind + "@99/99"));

        Expected<GraphFile> joint = GraphFile::open(
            test::sharedPath("graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt"));
        JS_VERIFY_EXPECTED(joint);
        std::optional<size_t> index = joint->select("aot_joint_graph");
        QVERIFY(index);
        Expected<Graph> g = joint->load(*index);
        JS_VERIFY_EXPECTED(g);
        size_t tangents = 0;
        for (const Node& n : g->nodes())
            tangents += n.op == NodeOp::Placeholder && n.name.rfind("tangents", 0) == 0;
        QVERIFY(tangents > 0);
        QVERIFY(!joint->load(joint->graphs().size()));
    }

    void jsonFilesOpen() {
        QTemporaryDir dir;
        const std::string jsonPath = dir.filePath("g.json").toStdString();
        Graph g = *GraphFile::open(modelPath("gpt_block2", "joint.txt"))->load(0);
        g.attributes.emplace_back("kind", "aot_joint_graph");
        g.attributes.emplace_back("compile_id", "1/2");
        test::writeFile(jsonPath, writeJsonGraph(g));
        Expected<GraphFile> file = GraphFile::open(jsonPath);
        JS_VERIFY_EXPECTED(file);
        QCOMPARE(file->format(), FileFormat::Json);
        QCOMPARE(file->graphs().size(), size_t(1));
        QCOMPARE(file->graphs()[0].kind, std::string("aot_joint_graph"));
        QCOMPARE(file->select("aot_joint_graph@1/2").value_or(9), size_t(0));
        const auto ref = nlohmann::json::parse(test::readFile(modelPath("gpt_block2", "reference.json")));
        QCOMPARE(file->graphs()[0].nodes, ref["joint_nodes"].get<uint64_t>());
        Expected<Graph> back = file->load(0);
        JS_VERIFY_EXPECTED(back);
        QVERIFY(*back == g);
    }

    void bundledExampleMatchesSharedGraph() {
        // resources/examples/gpt_block2.json is `jointscope-cli convert` of the shared joint.txt with its
        // sidecars.
        Expected<GraphFile> file = GraphFile::open(test::sourcePath("resources/examples/gpt_block2.json"));
        JS_VERIFY_EXPECTED(file);
        Expected<Graph> example = file->load(0);
        JS_VERIFY_EXPECTED(example);
        Expected<Graph> shared = GraphFile::open(modelPath("gpt_block2", "joint.txt"))->load(0);
        JS_VERIFY_EXPECTED(shared);
        QCOMPARE(example->size(), shared->size());
        for (NodeId id = 0; id < shared->size(); ++id) {
            const Node& a = example->node(id);
            const Node& b = shared->node(id);
            QCOMPARE(a.name, b.name);
            QVERIFY2(a.op == b.op && a.target == b.target && a.args == b.args && a.kwargs == b.kwargs,
                     a.name.c_str());
            QVERIFY2(a.outputKind == b.outputKind && a.outputs == b.outputs, a.name.c_str());
        }
        QVERIFY(example->decisions == shared->decisions);
        QCOMPARE(example->numFwdOutputs, shared->numFwdOutputs);
    }

    void opensLogPastes() {
        // A TORCH_LOGS=graph_code paste: glog prefix, compile id, artifact name, then the indented graph.
        const std::string prefix =
            "I1122 10:00:00.123000 1234 torch/_dynamo/output_graph.py:1353] [0/0] [__graph_code] ";
        const std::string paste =
            prefix + "TRACED GRAPH\n" + prefix + " ===== __compiled_fn_1 =====\n" + prefix +
            " class GraphModule(torch.nn.Module):\n" + prefix + "    def forward(self, L_x_: \"f32[4]\"):\n" +
            prefix + "        l_x_ = L_x_\n" + prefix +
            "        sin: \"f32[4]\" = torch.sin(l_x_);  l_x_ = None\n" + prefix + "        return (sin,)\n";
        Expected<GraphFile> file = GraphFile::fromText(paste, "paste.txt");
        JS_VERIFY_EXPECTED(file);
        QCOMPARE(file->format(), FileFormat::LogPaste);
        QCOMPARE(file->graphs().size(), size_t(1));
        QCOMPARE(file->graphs()[0].compileId, std::string("0/0"));
        Expected<Graph> g = file->load(0);
        JS_VERIFY_EXPECTED(g);
        QCOMPARE(g->size(), size_t(3)); // L_x_, sin, output (counted by hand)
        QVERIFY(g->find("sin"));
        QCOMPARE(int(g->node(*g->find("sin")).meta.sourceLine), 6);
    }

    void refusesBadFiles_data() {
        test::addBadInputColumns();
        QTest::newRow("empty") << QByteArray() << 1 << 1 << "empty";
        QTest::newRow("blank") << QByteArray("\n  \n\t\n") << 1 << 1 << "empty";
        QTest::newRow("nul") << QByteArray("class A:\n  ab\0cd\n", 17) << 2 << 5 << "binary";
        QTest::newRow("bad utf8") << QByteArray("x = 1\ny = 2\nz = \xff\xfe\n") << 3 << 5 << "binary";
        QTest::newRow("elf") << QByteArray("\x7f"
                                           "ELF\x02\x01\x01\0\0\0",
                                           10)
                             << 1 << 5 << "binary";
        QTest::newRow("truncated json")
            << QByteArray("{\"format\": \"jointscope-graph\", \"version\": 1,\n \"graph\": {\"nodes\": [")
            << 2 << 22 << "invalid JSON";
    }

    void refusesBadFiles() {
        const test::BadGraphInput bad = test::fetchBadInput();
        QTemporaryDir dir;
        const std::string path = dir.filePath("bad.txt").toStdString();
        test::writeFile(path, bad.bytes);
        Expected<GraphFile> file = GraphFile::open(path);
        QVERIFY(!file);
        QCOMPARE(file.error().loc.file, path);
        QCOMPARE(int(file.error().loc.line), bad.line);
        QCOMPARE(int(file.error().loc.col), bad.col);
        QVERIFY2(file.error().message.find(bad.message) != std::string::npos, file.error().format().c_str());
    }

    // Files that open (the format is clear) but hold a graph no engine may see: load() refuses it, located.
    // Issue 14: opening a JSON graph parsed it twice (once for the picker's summary, once for the graph).
    void jsonParsedOnceForListingAndLoad() {
        QTemporaryDir dir;
        const std::string jsonPath = dir.filePath("g.json").toStdString();
        Graph g = *GraphFile::open(modelPath("mlp", "joint.txt"))->load(0);
        g.attributes.emplace_back("kind", "aot_joint_graph");
        test::writeFile(jsonPath, writeJsonGraph(g));
        int parses = 0;
        OpenOptions options;
        options.jsonParsed = [&parses] { ++parses; };
        Expected<GraphFile> file = GraphFile::open(jsonPath, options);
        JS_VERIFY_EXPECTED(file);
        QCOMPARE(parses, 1);
        // The listing still comes from the document: kind and node count.
        QCOMPARE(file->graphs()[0].kind, std::string("aot_joint_graph"));
        const auto ref = nlohmann::json::parse(test::readFile(modelPath("mlp", "reference.json")));
        QCOMPARE(file->graphs()[0].nodes, ref["joint_nodes"].get<uint64_t>());
        const GraphFile copy = *file; // the window shares one file between threads
        Expected<Graph> first = copy.load(0);
        JS_VERIFY_EXPECTED(first);
        QVERIFY(*first == g);
        QCOMPARE(parses, 1); // the graph read at open, not a copy of it nor a second parse
        // Loading it again (the graph picked again) reads the text again: the same graph.
        Expected<Graph> again = file->load(0);
        JS_VERIFY_EXPECTED(again);
        QVERIFY(*again == g);
        QCOMPARE(parses, 2);
    }

    void refusesBadGraphsOnLoad_data() {
        test::addBadInputColumns();
        test::addBadGraphRows();
    }

    void refusesBadGraphsOnLoad() {
        const test::BadGraphInput bad = test::fetchBadInput();
        Expected<GraphFile> file = GraphFile::fromText(bad.bytes, "bad.graph");
        JS_VERIFY_EXPECTED(file);
        Expected<Graph> graph = file->load(0);
        QVERIFY(!graph);
        QCOMPARE(graph.error().loc.file, std::string("bad.graph"));
        QCOMPARE(int(graph.error().loc.line), bad.line);
        QCOMPARE(int(graph.error().loc.col), bad.col);
        QVERIFY2(graph.error().message.find(bad.message) != std::string::npos,
                 graph.error().format().c_str());
    }

    void refusesBadSidecarSizes() {
        // A torch 1.13 sidecar shape no tensor can have is an error at that sidecar entry; the graph is
        // untouched.
        QTemporaryDir dir;
        const std::string graphPath = dir.filePath("joint.txt").toStdString();
        test::writeFile(graphPath, test::readFile(modelPath("mlp", "joint.txt")));
        for (const auto& [shape, message] : std::vector<std::pair<std::string, std::string>>{
                 {"[-4, 16]", "shape: negative size -4 in dimension 0"},
                 {"[4611686018427387904, 16]", "element count overflows"},
                 {"[9223372036854775808]", "expected an array of int64"}}) {
            const std::string meta = "{\"torch\": \"1.13.0a0\", \"nodes\": [\n"
                                     " {\"name\": \"t\", \"op\": \"call_function\", \"shape\": " +
                                     shape + ", \"dtype\": \"torch.float32\"}]}\n";
            test::writeFile(dir.filePath("joint.meta.json").toStdString(), meta);
            Expected<GraphFile> file = GraphFile::open(graphPath);
            JS_VERIFY_EXPECTED(file);
            Expected<Graph> graph = file->load(0);
            QVERIFY(!graph);
            QVERIFY2(graph.error().message.find(message) != std::string::npos,
                     graph.error().format().c_str());
            QCOMPARE(int(graph.error().loc.line), 2);
            QCOMPARE(int(graph.error().loc.col), 2);
        }
    }

    void refusesHugeAndMissingFiles() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("huge.txt").toStdString();
        test::writeFile(path, "x");
        fs::resize_file(path, (uint64_t(2) << 30) + 1); // sparse: no disk used
        Expected<GraphFile> huge = GraphFile::open(path);
        QVERIFY(!huge);
        QVERIFY(huge.error().message.find("2 GiB") != std::string::npos);
        Expected<GraphFile> missing = GraphFile::open(dir.filePath("missing.txt").toStdString());
        QVERIFY(!missing);
        QVERIFY(missing.error().format().find("missing.txt") != std::string::npos);
        Expected<GraphFile> directory = GraphFile::open(dir.path().toStdString());
        QVERIFY(!directory);
    }
};

QTEST_GUILESS_MAIN(TestGraphFile)
#include "tst_graphfile.moc"
