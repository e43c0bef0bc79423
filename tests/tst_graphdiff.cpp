// The graph diff (core/graph/GraphDiff) and folders of per-rank TORCH_TRACE logs (io/RankLogs), on real
// graphs: a torch 1.13 joint graph edited by the test, a recompile of tlparse's multi-rank log, and a 2-rank
// gloo capture (tests/data/multirank, made by make_multirank.py: rank 1 adds tanh, *2 and an all_reduce to
// its second function).
#include "graph/GraphDiff.h"
#include "io/FxWriter.h"
#include "io/GraphFile.h"
#include "io/RankLogs.h"
#include "testutil.h"

#include <QTemporaryDir>
#include <QTest>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>

using namespace jointscope;
using namespace jointscope::test;

namespace {

const std::string kMlp = "graphs/torch-1.13/mlp/joint.txt";
const std::string kMultiRankLog = "graphs/torch-trace/multi_rank_rank_1.log";

std::string capturePath() {
    return sourcePath("tests/data/multirank");
}

Graph parseText(const std::string& text) {
    auto file = GraphFile::fromText(text, "edited.txt");
    auto graph = file ? file->load(0) : Expected<Graph>(file.error());
    if (!graph)
        qFatal("%s", graph.error().format().c_str());
    return graph.take();
}

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

Graph loadEntry(const GraphFile& file, const std::string& spec) {
    const auto index = file.select(spec);
    if (!index)
        qFatal("no graph %s in %s", spec.c_str(), file.fileName().c_str());
    auto graph = file.load(*index);
    if (!graph)
        qFatal("%s", graph.error().format().c_str());
    return graph.take();
}

std::set<std::string> namesOf(const GraphDiff& diff, const Graph& a, const Graph& b, DiffKind kind) {
    std::set<std::string> names;
    for (const DiffEntry& e : diff.entries)
        if (e.kind == kind)
            names.insert(kind == DiffKind::Added ? b.node(e.b).name : a.node(e.a).name);
    return names;
}

} // namespace

class TestGraphDiff : public QObject {
    Q_OBJECT
private slots:
    void graphAgainstItselfIsIdentical() {
        const Graph g = loadSharedGraph(kMlp);
        const GraphDiff diff = diffGraphs(g, g);
        QVERIFY(diff.identical());
        for (NodeId id = 0; id < g.size(); ++id)
            QCOMPARE(diff.partnerOfA[id], id);
    }

    // The test changes gelu's target: the node pairs by name and is the only difference.
    void changedTargetIsOneChangedNode() {
        const Graph a = loadSharedGraph(kMlp);
        Graph b = a;
        b.node(*b.find("gelu")).target = Target::parseFunction("torch.ops.aten.relu.default");
        const GraphDiff diff = diffGraphs(a, b);
        QCOMPARE(diff.entries.size(), size_t(1));
        QCOMPARE(diff.changed, size_t(1));
        QCOMPARE(diff.added + diff.removed + diff.renamed + diff.edges.size(), size_t(0));
        const DiffEntry& e = diff.entries[0];
        QCOMPARE(a.node(e.a).name, std::string("gelu"));
        QCOMPARE(e.changes.size(), size_t(1));
        QCOMPARE(e.changes[0].field, std::string("target"));
        QCOMPARE(e.describe(a, b),
                 std::string("changed gelu: target aten.gelu.default -> aten.relu.default"));
    }

    // A node inserted between gelu and addmm_1: one added node, addmm_1's arguments changed, and the edge
    // gelu -> addmm_1 gone (the new edge neg -> addmm_1 comes with the added node).
    void insertedNodeIsAddedAndRewiresItsUser() {
        const std::string text = readFile(sharedPath(kMlp));
        const std::string edited =
            replaceAll(text, "        addmm_1 = torch.ops.aten.addmm.default(primals_4, gelu, t_1);",
                       "        neg = torch.ops.aten.neg.default(gelu)\n"
                       "        addmm_1 = torch.ops.aten.addmm.default(primals_4, neg, t_1);");
        QVERIFY(edited != text);
        const Graph a = parseText(text);
        const Graph b = parseText(edited);
        const GraphDiff diff = diffGraphs(a, b);
        QCOMPARE(namesOf(diff, a, b, DiffKind::Added), std::set<std::string>{"neg"});
        QCOMPARE(namesOf(diff, a, b, DiffKind::Changed), std::set<std::string>{"addmm_1"});
        QCOMPARE(diff.removed, size_t(0));
        QCOMPARE(diff.edges.size(), size_t(1));
        QVERIFY(!diff.edges[0].added);
        QCOMPARE(a.node(diff.edges[0].producer).name, std::string("gelu"));
        QCOMPARE(a.node(diff.edges[0].consumer).name, std::string("addmm_1"));
        // Listed along B: neg comes before addmm_1.
        QCOMPARE(diff.entries[0].kind, DiffKind::Added);
        QCOMPARE(diff.entries[1].describe(a, b),
                 std::string("changed addmm_1: args (primals_4, gelu, t_1) -> (primals_4, neg, t_1)"));
    }

    // A renamed node (the only gelu_backward) pairs by position and differs in its name only.
    void renamedNodePairsByPosition() {
        const std::string text = readFile(sharedPath(kMlp));
        const Graph a = parseText(text);
        // The node's name, not its target aten.gelu_backward.default.
        const std::string renamed =
            std::regex_replace(text, std::regex("\\bgelu_backward\\b(?!\\.default)"), "gb");
        QVERIFY(renamed.find("gb = torch.ops.aten.gelu_backward.default(") != std::string::npos);
        const Graph b = parseText(renamed);
        const GraphDiff diff = diffGraphs(a, b);
        QCOMPARE(diff.renamed, size_t(1));
        QCOMPARE(diff.entries.size(), size_t(1));
        QCOMPARE(diff.entries[0].describe(a, b),
                 std::string("changed gelu_backward: name gelu_backward -> gb"));
        QVERIFY(diff.edges.empty());
    }

    // A checkpointed joint graph against the same graph without its tags (FX text written by jointscope
    // carries no checkpoint summaries): every tagged node is a checkpoint change, paired by name, nothing
    // else differs (issue 29: a plain vs SAC diff reported renames and none of the tags).
    void checkpointTagsAreChanges() {
        auto file = GraphFile::open(sourcePath("tests/data/torch2/gpt_stack_ac_trace.log"));
        QVERIFY(file);
        const Graph tagged = loadEntry(*file, "aot_joint_graph");
        const Graph plain = parseText(writeFxText(tagged));
        const size_t tags =
            size_t(std::count_if(tagged.nodes().begin(), tagged.nodes().end(), [](const Node& n) {
                return !n.meta.recompute.empty() || n.meta.acGraphId >= 0;
            }));
        QVERIFY(tags > 20);
        const GraphDiff diff = diffGraphs(plain, tagged);
        QCOMPARE(diff.checkpoint, tags);
        QCOMPARE(diff.changed, tags);
        QCOMPARE(diff.renamed, size_t(0));
        QCOMPARE(diff.added + diff.removed, size_t(0));
        for (const DiffEntry& e : diff.entries) {
            QCOMPARE(e.changes.size(), size_t(1));
            QCOMPARE(e.changes[0].field, std::string("checkpoint"));
            QCOMPARE(e.changes[0].before, std::string("none"));
        }
    }

    // A dynamo input named after another source (a module renamed) pairs with its old self by position and
    // shape: one rename, not an input removed and another added.
    void renamedInputPairsByPosition() {
        auto file = GraphFile::open(sharedPath(kMultiRankLog));
        QVERIFY(file);
        const Graph a = loadEntry(*file, "dynamo_output_graph@0/0");
        const Graph b = parseText(replaceAll(writeFxText(a), "l_x_", "l_input_"));
        const GraphDiff diff = diffGraphs(a, b);
        QCOMPARE(diff.entries.size(), size_t(1));
        QCOMPARE(diff.entries[0].describe(a, b), std::string("changed l_x_: name l_x_ -> l_input_"));
        QCOMPARE(diff.renamed, size_t(1));
    }

    // tlparse's multi-rank log recompiles `kernel` for a new input size: [0/0] sums a 2x2 tensor, [0/1] a
    // 3x3 one (the record's "sizes"); nothing else changes.
    void recompileChangesOnlyTheInputShape() {
        auto file = GraphFile::open(sharedPath(kMultiRankLog));
        QVERIFY(file);
        const Graph a = loadEntry(*file, "dynamo_output_graph@0/0");
        const Graph b = loadEntry(*file, "dynamo_output_graph@0/1");
        const GraphDiff diff = diffGraphs(a, b);
        QCOMPARE(diff.entries.size(), size_t(1));
        QCOMPARE(diff.entries[0].describe(a, b), std::string("changed l_x_: shape [2, 2] -> [3, 3]"));
    }

    void folderTagsEveryGraphWithItsRank() {
        auto folder = GraphFile::open(capturePath());
        QVERIFY2(folder, folder ? "" : folder.error().format().c_str());
        QCOMPARE(folder->ranks().size(), size_t(2));
        size_t offset = 0;
        for (int rank = 0; rank < 2; ++rank) {
            const std::string path = capturePath() + "/rank_" + std::to_string(rank) + ".log";
            // The capture's records carry the rank themselves.
            QVERIFY(readFile(path).find("\"rank\": " + std::to_string(rank) + ",") != std::string::npos);
            auto alone = GraphFile::open(path);
            QVERIFY(alone);
            QCOMPARE(folder->ranks()[rank].rank, rank);
            QCOMPARE(folder->ranks()[rank].graphs, alone->graphs().size());
            for (size_t i = 0; i < alone->graphs().size(); ++i) {
                const GraphEntry& entry = folder->graphs()[offset + i];
                QCOMPARE(entry.rank, rank);
                QCOMPARE(entry.file, path);
                QCOMPARE(entry.kind, alone->graphs()[i].kind);
                QCOMPARE(entry.payload, alone->graphs()[i].payload);
            }
            offset += alone->graphs().size();
        }
        QCOMPARE(folder->graphs().size(), offset);
        // rankN: selects among that rank's graphs.
        const auto index = folder->select("rank1:aot_inference_graph@1/0");
        QVERIFY(index);
        QCOMPARE(folder->graphs()[*index].rank, 1);
        QCOMPARE(folder->graphs()[*index].kind, std::string("aot_inference_graph"));
    }

    // Records without a rank: the file name says it; a log whose name says nothing is skipped with a warning.
    void rankFromFileNameWhenRecordsHaveNone() {
        QCOMPARE(rankFromFileName("dedicated_log_torch_trace_rank_3_blptgqy6.log"),
                 std::optional<int32_t>(3));
        QCOMPARE(rankFromFileName("rank12.log"), std::optional<int32_t>(12));
        QCOMPARE(rankFromFileName("trace.log"), std::optional<int32_t>());
        const std::string log = readFile(sharedPath(kMultiRankLog));
        QVERIFY(log.find("\"rank\"") == std::string::npos);
        QTemporaryDir dir;
        namespace fs = std::filesystem;
        const std::string root = dir.path().toStdString();
        fs::copy_file(sharedPath(kMultiRankLog), root + "/multi_rank_rank_1.log");
        fs::copy_file(sharedPath("graphs/torch-trace/collectives_parity_rank_0.log"), root + "/a_rank_0.log");
        fs::copy_file(sharedPath("graphs/torch-trace/simple.log"), root + "/simple.log");
        auto folder = GraphFile::open(root);
        QVERIFY(folder);
        QCOMPARE(folder->ranks().size(), size_t(2));
        QCOMPARE(folder->ranks()[0].file, root + "/a_rank_0.log");
        QCOMPARE(folder->ranks()[1].rank, 1);
        const bool warned =
            std::any_of(folder->problems().begin(), folder->problems().end(), [&](const Diagnostic& d) {
                return d.loc.file == root + "/simple.log" && d.message.find("rank") != std::string::npos;
            });
        QVERIFY(warned);
    }

    // make_multirank.py: the first function is the same on both ranks, the second diverges on rank 1, whose
    // inductor schedule has a second all_reduce + wait.
    void divergenceOfTheCapture() {
        auto folder = GraphFile::open(capturePath());
        QVERIFY(folder);
        const RankDivergence d = summarizeRanks(*folder);
        QVERIFY(d.diverges());
        QVERIFY(!d.graphCountsDiffer);
        size_t rank0Second = 0;
        for (const GraphEntry& e : folder->graphs())
            rank0Second += e.rank == 0 && e.compileId == "1/0";
        QVERIFY(rank0Second > 0);
        QCOMPARE(d.graphs.size(), rank0Second);
        for (const auto& split : d.graphs) {
            QCOMPARE(split.compileId, std::string("1/0"));
            QCOMPARE(split.groups.size(), size_t(2));
            QCOMPARE(split.groups[0].ranks, std::vector<int32_t>{0});
            QCOMPARE(split.groups[1].ranks, std::vector<int32_t>{1});
        }
        QCOMPARE(d.collectives.size(), size_t(1));
        QCOMPARE(d.collectives[0].compileId, std::string("1/0"));
        const std::vector<std::string> once{"torch.ops._c10d_functional.all_reduce_.default",
                                            "torch.ops._c10d_functional.wait_tensor.default"};
        std::vector<std::string> twice = once;
        twice.insert(twice.end(), once.begin(), once.end());
        QCOMPARE(d.collectives[0].groups[0].ops, once);
        QCOMPARE(d.collectives[0].groups[1].ops, twice);
    }

    // Rank 1's inference graph of the second function has tanh, mul and a second all_reduce + wait more.
    void diffAcrossRanks() {
        auto folder = GraphFile::open(capturePath());
        QVERIFY(folder);
        const Graph a = loadEntry(*folder, "rank0:aot_inference_graph@1/0");
        const Graph b = loadEntry(*folder, "rank1:aot_inference_graph@1/0");
        const GraphDiff diff = diffGraphs(a, b);
        QCOMPARE(namesOf(diff, a, b, DiffKind::Added),
                 (std::set<std::string>{"tanh", "mul", "all_reduce_1", "wait_tensor_1"}));
        QCOMPARE(diff.removed, size_t(0));
        QCOMPARE(b.size() - a.size(), size_t(4));
    }

    void cliDiffJson() {
        const QString log = QString::fromStdString(sharedPath(kMultiRankLog));
        Run run =
            runCli({"diff", log + "#dynamo_output_graph@0/0", log + "#dynamo_output_graph@0/1", "--json"});
        QCOMPARE(run.exitCode, 0);
        const auto j = nlohmann::json::parse(run.out);
        QCOMPARE(j["changed"].get<int>(), 1);
        QCOMPARE(j["nodes"][0]["a"].get<std::string>(), std::string("l_x_"));
        QCOMPARE(j["nodes"][0]["changes"][0]["after"].get<std::string>(), std::string("[3, 3]"));

        run = runCli({"diff", QString::fromStdString(capturePath()), "--json"});
        QCOMPARE(run.exitCode, 0);
        const auto ranks = nlohmann::json::parse(run.out);
        QVERIFY(ranks["diverges"].get<bool>());
        QCOMPARE(ranks["collectives"].size(), size_t(1));
        QCOMPARE(ranks["graphs"][0]["diffs"][0]["added"].get<int>(), 4);

        run = runCli({"diff", log});
        QCOMPARE(run.exitCode, 64);
        QVERIFY(run.err.find("per-rank") != std::string::npos);
        run = runCli({"diff", log + "#no_such_graph", log + "#0"});
        QCOMPARE(run.exitCode, 64);
        QVERIFY(run.err.find("no graph 'no_such_graph'") != std::string::npos);

        run = runCli({"info", QString::fromStdString(capturePath())});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.find("rank  compile_id") != std::string::npos);
        QVERIFY(run.out.find("1 compiles schedule different collectives") != std::string::npos);
    }

    // Two decisions of one torch 2.15 joint graph (budget 1.0 and 0.3): what moved, counted here from the two
    // documents' own lists.
    void cliDiffOfTwoDecisions() {
        const QString joint = QString::fromStdString(sourcePath("tests/data/torch2/llama_stack3.json"));
        QTemporaryDir dir;
        std::vector<nlohmann::json> docs;
        std::vector<QString> paths;
        for (const char* budget : {"1.0", "0.3"}) {
            Run run = runCli({"partition", joint, "--json", "--memory-budget", budget});
            QCOMPARE(run.exitCode, 0);
            paths.push_back(dir.filePath(QString("d_%1.json").arg(budget)));
            writeFile(paths.back().toStdString(), run.out);
            docs.push_back(nlohmann::json::parse(run.out));
        }
        auto onlyIn = [](const nlohmann::json& from, const nlohmann::json& other, const char* key) {
            std::set<std::string> drop;
            for (const auto& n : other[key])
                drop.insert(n.get<std::string>());
            std::vector<std::string> out;
            for (const auto& n : from[key])
                if (!drop.count(n.get<std::string>()))
                    out.push_back(n.get<std::string>());
            return out;
        };
        const auto savedOnlyA = onlyIn(docs[0], docs[1], "saved");
        const auto savedOnlyB = onlyIn(docs[1], docs[0], "saved");
        QVERIFY(!savedOnlyA.empty()); // the lower budget saves less
        Run run = runCli({"diff", paths[0], paths[1], "--json"});
        QCOMPARE(run.exitCode, 0);
        const auto j = nlohmann::json::parse(run.out);
        QCOMPARE(j["saved_only_a"].get<std::vector<std::string>>(), savedOnlyA);
        QCOMPARE(j["saved_only_b"].get<std::vector<std::string>>(), savedOnlyB);
        QCOMPARE(j["recomputed_only_b"].get<std::vector<std::string>>(),
                 onlyIn(docs[1], docs[0], "recomputed"));
        QCOMPARE(j["a"]["saved"].get<size_t>(), docs[0]["saved"].size());
        QCOMPARE(j["b"]["memory_budget"].get<double>(), 0.3);
        QVERIFY(j["same_graph"].get<bool>());
        QVERIFY(!j["identical"].get<bool>());
        // In words: every moved node named with what it is.
        run = runCli({"diff", paths[0], paths[1]});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(run.out.find("saved only in A (" + std::to_string(savedOnlyA.size()) + "):") !=
                std::string::npos);
        for (const std::string& name : savedOnlyA)
            QVERIFY2(run.out.find("  " + name + "  torch.ops.") != std::string::npos ||
                         run.out.find("  " + name + "  placeholder") != std::string::npos,
                     name.c_str());
        run = runCli({"diff", paths[0], paths[0], "--json"});
        QVERIFY(nlohmann::json::parse(run.out)["identical"].get<bool>());
        // A decision against a graph is a usage error; a broken decision is located.
        run = runCli({"diff", paths[0], joint});
        QCOMPARE(run.exitCode, 64);
        const std::string broken = dir.filePath("broken.json").toStdString();
        writeFile(broken, "{\"format\": \"jointscope-decision\", \"saved\": [1, 2]}\n");
        run = runCli({"diff", paths[0], QString::fromStdString(broken)});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.rfind(broken + ":1:1: error: ", 0) == 0, run.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestGraphDiff)
#include "tst_graphdiff.moc"
