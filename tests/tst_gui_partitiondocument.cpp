// PartitionDocument on every shared torch 1.13 graph: solve in the background (torch's recorded min-cut), pin
// a saved node MUST_RECOMPUTE + undo + redo, export the decision JSON and re-evaluate it, session round trip,
// an edit the engine refuses, and a newer solve superseding an older one.
#include "testutil.h"

#include "PartitionDocument.h"
#include "io/GraphFile.h"
#include "partition/CompileSettings.h"
#include "partition/Partitioner.h"

#include <QSignalSpy>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>

using namespace jointscope;
using namespace jointscope::gui;
using namespace jointscope::test;
using namespace jointscope::partition;

namespace {

struct Case {
    std::string path;
    std::shared_ptr<const Graph> graph;
};

std::vector<Case> sharedGraphs() {
    std::vector<Case> cases;
    const std::filesystem::path dir(sharedPath("graphs/torch-1.13"));
    std::vector<std::filesystem::path> models;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (std::filesystem::exists(entry.path() / "joint.txt"))
            models.push_back(entry.path());
    std::sort(models.begin(), models.end());
    for (const auto& m : models) {
        const std::string path = (m / "joint.txt").string();
        cases.push_back({path, std::make_shared<const Graph>(loadGraphAt(path))});
    }
    return cases;
}

std::vector<std::string> savedNames(const PartitionResult& r) {
    std::vector<std::string> names;
    for (const auto* list : {&r.partition->saved, &r.partition->savedSym})
        for (NodeId id : *list)
            names.push_back(r.partition->graph.node(id).name);
    return names;
}

// Waits for the solve in flight; fails on a refusal.
bool waitSolved(PartitionDocument& doc, QSignalSpy& finished, QSignalSpy& failed) {
    const qsizetype before = finished.count();
    for (int i = 0; i < 600 && finished.count() == before && failed.isEmpty(); ++i)
        finished.wait(100);
    return finished.count() > before && !doc.busy();
}

// A document solving `graph`, its finished and failed signals watched from before the solve starts.
struct Solving {
    PartitionDocument doc;
    QSignalSpy finished{&doc, &PartitionDocument::finished};
    QSignalSpy failed{&doc, &PartitionDocument::failed};

    explicit Solving(std::shared_ptr<const Graph> graph) {
        doc.setGraph(std::move(graph));
        doc.solve();
    }
};

} // namespace

class TestPartitionDocument : public QObject {
    Q_OBJECT
private slots:
    void everySharedGraph() {
        const auto cases = sharedGraphs();
        QVERIFY(cases.size() >= 3);
        for (const Case& c : cases) {
            PartitionDocument doc;
            QSignalSpy finished(&doc, &PartitionDocument::finished);
            QSignalSpy failed(&doc, &PartitionDocument::failed);
            doc.setGraph(c.graph, QString::fromStdString(c.path), 0);
            QCOMPARE(doc.effectiveRuleset(), QStringLiteral("torch-1.13"));
            doc.solve();
            QVERIFY(doc.busy());
            QVERIFY2(waitSolved(doc, finished, failed), c.path.c_str());
            const auto original = doc.result();
            const std::vector<std::string> saved = savedNames(*original);
            // torch's recorded decision: the file's own, and reference.json beside it.
            const auto torch = doc.torchSaved();
            QVERIFY2(torch, c.path.c_str());
            QCOMPARE(saved, *torch);
            const auto reference = nlohmann::json::parse(
                readFile((std::filesystem::path(c.path).parent_path() / "reference.json").string()));
            QCOMPARE(saved, reference.at("min_cut_saved").get<std::vector<std::string>>());

            // MUST_RECOMPUTE on saved nodes in turn until the engine accepts one: it leaves the saved set. A
            // refused pin names the node; undo restores the original saved set either way.
            std::string pinned;
            std::vector<std::string> edited;
            for (NodeId id : original->partition->saved) {
                const std::string name = original->partition->graph.node(id).name;
                if (original->partition->graph.node(id).op == NodeOp::Placeholder)
                    continue;
                const qsizetype before = finished.count();
                doc.setPolicy(name, Policy::MustRecompute);
                QVERIFY(doc.busy());
                for (int i = 0; i < 600 && finished.count() == before && failed.isEmpty(); ++i)
                    finished.wait(100);
                if (!failed.isEmpty()) {
                    QVERIFY2(
                        failed.front().front().toString().contains(QString::fromStdString("'" + name + "'")),
                        qPrintable(failed.front().front().toString()));
                    QCOMPARE(savedNames(*doc.result()), saved); // the last good result stays
                    failed.clear();
                    doc.undoStack()->undo();
                    QVERIFY(waitSolved(doc, finished, failed));
                    QCOMPARE(savedNames(*doc.result()), saved);
                    continue;
                }
                QCOMPARE(doc.undoStack()->count(), 1);
                pinned = name;
                edited = savedNames(*doc.result());
                break;
            }
            QVERIFY2(!pinned.empty(), c.path.c_str());
            QVERIFY(std::find(edited.begin(), edited.end(), pinned) == edited.end());
            QVERIFY(doc.previous() != nullptr);
            QCOMPARE(savedNames(*doc.previous()), saved);
            doc.undoStack()->undo();
            QVERIFY(doc.edits().empty());
            QVERIFY(waitSolved(doc, finished, failed));
            QCOMPARE(savedNames(*doc.result()), saved);
            doc.undoStack()->redo();
            QCOMPARE(doc.edits().at(pinned), Policy::MustRecompute);
            QVERIFY(waitSolved(doc, finished, failed));
            QCOMPARE(savedNames(*doc.result()), edited);

            // The exported decision JSON re-evaluates to the same saved set.
            const auto decision = nlohmann::json::parse(doc.decisionJson());
            QCOMPARE(decision.at("format").get<std::string>(), std::string("jointscope-decision"));
            std::vector<std::string> names = decision.at("saved").get<std::vector<std::string>>();
            for (const auto& s : decision.at("saved_sym"))
                names.push_back(s.get<std::string>());
            auto evaluated = evaluateSaved(Graph(*c.graph), loadRuleset("torch-1.13").take(), names, BuildGraphs::No);
            QVERIFY2(evaluated, evaluated ? "" : evaluated.error().format().c_str());
            std::vector<std::string> again;
            for (NodeId id : evaluated->saved)
                again.push_back(evaluated->graph.node(id).name);
            for (NodeId id : evaluated->savedSym)
                again.push_back(evaluated->graph.node(id).name);
            QCOMPARE(again, edited);

            // The policy file is what readPolicyFile reads.
            QTemporaryDir dir;
            const QString policyPath = dir.filePath(QStringLiteral("policy.json"));
            QVERIFY(PartitionDocument::writeFileAtomically(policyPath,
                                                           QByteArray::fromStdString(doc.policyJson())));
            auto policies = readPolicyFile(policyPath.toStdString());
            QVERIFY(policies);
            QCOMPARE(policies->size(), size_t(1));
            QCOMPARE(policies->front().first, pinned);
            QCOMPARE(policies->front().second, Policy::MustRecompute);
            QVERIFY(doc.forwardFx().find("def forward") != std::string::npos);
            QVERIFY(!doc.backwardFx().empty());

            // Session round trip into a fresh document.
            EngineOptions options = doc.options();
            options.solver = KnapsackSolver::Greedy;
            doc.setOptions(options);
            QVERIFY(waitSolved(doc, finished, failed));
            const QString sessionPath = dir.filePath(QStringLiteral("s.jointscope"));
            QVERIFY(PartitionDocument::writeFileAtomically(
                sessionPath, QByteArray::fromStdString(writeSession(doc.sessionFile()))));
            const auto session = PartitionDocument::readSession(sessionPath);
            QVERIFY2(session, session ? "" : session.error().format().c_str());
            QCOMPARE(session->graphPath, QString::fromStdString(c.path));
            QCOMPARE(session->graphIndex, 0);
            PartitionDocument fresh;
            QSignalSpy freshFinished(&fresh, &PartitionDocument::finished);
            QSignalSpy freshFailed(&fresh, &PartitionDocument::failed);
            fresh.setGraph(c.graph, session->graphPath, session->graphIndex);
            fresh.restore(session->options, session->edits);
            QVERIFY(waitSolved(fresh, freshFinished, freshFailed));
            QVERIFY(fresh.options() == doc.options());
            QVERIFY(fresh.edits() == doc.edits());
            QCOMPARE(savedNames(*fresh.result()), savedNames(*doc.result()));
            // The restore is one step of the history: undo takes the graph back to no pins, redo restores.
            QCOMPARE(fresh.undoStack()->count(), 1); // doc holds one pin
            fresh.undoStack()->undo();
            QVERIFY(fresh.edits().empty());
            QVERIFY(fresh.options() == EngineOptions{});
            fresh.undoStack()->redo();
            QVERIFY(fresh.edits() == doc.edits());
            QVERIFY(fresh.options() == doc.options());
            QVERIFY(waitSolved(fresh, freshFinished, freshFailed));
        }
    }

    // The summary's recompute cost is FLOPs, counted as torch's flop counter does: pointwise ops count none.
    void recomputeCostIsFlops() {
        const auto cases = sharedGraphs();
        const auto mlp = std::find_if(cases.begin(), cases.end(), [](const Case& c) {
            return c.path.find("/mlp/") != std::string::npos;
        });
        QVERIFY(mlp != cases.end());
        Solving solving(mlp->graph);
        auto& [doc, finished, failed] = solving;
        QVERIFY(waitSolved(doc, finished, failed));
        // torch 1.13 recomputes gelu alone (reference.json): 0 FLOP.
        QCOMPARE(doc.result()->partition->recomputed.size(), size_t(1));
        QCOMPARE(doc.result()->recomputeCost, 0.0);
        // At budget 0.1 addmm is recomputed too: [4, 16] @ [16, 64] is 2 * 4 * 16 * 64 = 8192 FLOP (the bias
        // add counts none, as in torch's addmm_flop).
        doc.setBudget(0.1);
        QVERIFY(waitSolved(doc, finished, failed));
        QCOMPARE(doc.result()->partition->recomputed.size(), size_t(2));
        QCOMPARE(doc.result()->recomputeCost, 8192.0);
    }

    void budgetEditIsUndoable() {
        const auto cases = sharedGraphs();
        Solving solving(cases.front().graph);
        auto& [doc, finished, failed] = solving;
        QVERIFY(waitSolved(doc, finished, failed));
        const uint64_t full = doc.result()->partition->savedBytes;
        doc.setBudget(0.0);
        QVERIFY(waitSolved(doc, finished, failed));
        QCOMPARE(doc.result()->partition->memoryBudget, 0.0);
        QVERIFY(doc.result()->partition->savedBytes <= full);
        doc.undoStack()->undo();
        QCOMPARE(doc.options().memoryBudget, 1.0);
        QVERIFY(waitSolved(doc, finished, failed));
        QCOMPARE(doc.result()->partition->savedBytes, full);
    }

    void refusedEditNamesNodesAndUndoRestores() {
        // gpt_block2 under torch 1.13's rules: native_layer_norm may not be recomputed and, returning a
        // tuple, cannot be saved, so its getitem cannot be MUST_RECOMPUTE; a node that does not exist is
        // refused too.
        std::shared_ptr<const Graph> graph;
        for (const Case& c : sharedGraphs())
            if (c.path.find("gpt_block2") != std::string::npos)
                graph = c.graph;
        QVERIFY(graph);
        Solving solving(graph);
        auto& [doc, finished, failed] = solving;
        QVERIFY(waitSolved(doc, finished, failed));
        const auto good = doc.result();
        for (const char* node : {"getitem_1", "no_such_node_xyz"}) {
            doc.setPolicy(node, Policy::MustRecompute);
            QVERIFY(failed.wait(30000));
            const QString message = failed.front().front().toString();
            QVERIFY2(message.contains(QStringLiteral("'%1'").arg(QLatin1String(node))), qPrintable(message));
            QCOMPARE(doc.lastError(), message);
            QCOMPARE(savedNames(*doc.result()), savedNames(*good)); // the last good result stays
            QVERIFY(!doc.busy());
            failed.clear();
            doc.undoStack()->undo();
            QVERIFY(doc.edits().empty());
            QVERIFY(waitSolved(doc, finished, failed));
            QCOMPARE(savedNames(*doc.result()), savedNames(*good));
            QVERIFY(doc.lastError().isEmpty());
        }
        QVERIFY(finished.count() == 3);
    }

    void newerSolveSupersedes() {
        const auto cases = sharedGraphs();
        Solving solving(cases.back().graph);
        auto& [doc, finished, failed] = solving;
        EngineOptions o = doc.options();
        o.strategy = Strategy::Default;
        doc.setOptions(o); // supersedes the min-cut solve
        QVERIFY(waitSolved(doc, finished, failed));
        doc.waitForIdle();
        QTest::qWait(50);
        QCOMPARE(finished.count(), 1); // the older result was dropped
        QCOMPARE(doc.result()->options.strategy, Strategy::Default);
        doc.solve();
        doc.cancel();
        QVERIFY(!doc.busy());
        doc.waitForIdle();
        QTest::qWait(50);
        QCOMPARE(finished.count(), 1);
    }

    void badSessionsAreRefused() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.jointscope"));
        QVERIFY(PartitionDocument::writeFileAtomically(
            path, "{\"format\": \"jointscope-session\", \"version\": 1, \"graph\": {\"path\": \"x\"}, "
                  "\"policies\": {\"mm\": \"SAVE_PLEASE\"}}"));
        auto refusal = [&path] {
            const Expected<gui::Session> session = PartitionDocument::readSession(path);
            return session ? QString() : QString::fromStdString(session.error().format());
        };
        QString error = refusal();
        QVERIFY2(error.contains(QStringLiteral("mm")) && error.contains(QStringLiteral("SAVE_PLEASE")) &&
                     error.startsWith(path),
                 qPrintable(error));
        QVERIFY(PartitionDocument::writeFileAtomically(path, "{not json"));
        error = refusal();
        QVERIFY(error.contains(path));
        // A session from a newer jointscope is refused, naming both versions.
        QVERIFY(PartitionDocument::writeFileAtomically(
            path, "{\"format\": \"jointscope-session\", \"version\": 2, \"graph\": {\"path\": \"x\"}}"));
        error = refusal();
        QVERIFY2(error.contains(path + QStringLiteral(":1:34:")) &&
                     error.contains(QStringLiteral("version 2")),
                 qPrintable(error));
    }

    // A joint graph from an inductor TORCH_TRACE log (captured live, torch 2.15, activation_memory_budget
    // 0.5) is partitioned as torch ran it: the budget comes from the log, inductor's joint-graph passes are
    // replayed and listed, and the saved list is the one torch's forward returns (read here from the log's
    // aot_forward_graph: its outputs after the joint graph's forward outputs).
    void loggedCompileIsPartitionedAsTorchRanIt() {
        const std::string log = test::sourcePath("tests/data/torch2/dyn_gpt_inductor_budget05_trace.log");
        Expected<GraphFile> file = GraphFile::open(log);
        QVERIFY(bool(file));
        Expected<Graph> joint = file->load(0);
        Expected<Graph> forward = file->load(1);
        QVERIFY(joint && forward);
        QCOMPARE(file->graphs()[1].kind, std::string("aot_forward_graph"));
        std::vector<std::string> torchSaved;
        const std::vector<const Value*> leaves = forward->outputLeaves();
        for (size_t i = size_t(joint->numFwdOutputs.value_or(0)); i < leaves.size(); ++i)
            if (leaves[i]->kind() == ValueKind::NodeRef)
                torchSaved.push_back(forward->node(leaves[i]->asNode()).name);
        QVERIFY(!torchSaved.empty());

        auto graph = std::make_shared<const Graph>(joint.take());
        std::optional<CompileConfig> logged = partition::loggedConfigFor(*file, 0);
        QVERIFY(logged);
        PartitionDocument doc;
        QSignalSpy finished(&doc, &PartitionDocument::finished);
        QSignalSpy failed(&doc, &PartitionDocument::failed);
        doc.setGraph(graph, QString::fromStdString(log), 0, logged);
        QCOMPARE(doc.options().memoryBudget, 0.5); // from the log, not the default 1.0
        doc.solve();
        QVERIFY(waitSolved(doc, finished, failed));
        const auto r = doc.result();
        QVERIFY(r->logged);
        QVERIFY(r->logged->settings.replayJointPasses);
        QVERIFY(r->logged->passes.changed());
        QCOMPARE(savedNames(*r), torchSaved);

        // The same graph without the log's facts: another decision (the GUI showed that before).
        PartitionDocument plain;
        QSignalSpy plainFinished(&plain, &PartitionDocument::finished);
        QSignalSpy plainFailed(&plain, &PartitionDocument::failed);
        plain.setGraph(graph, QString::fromStdString(log), 0);
        EngineOptions options = plain.options();
        options.memoryBudget = 0.5;
        plain.setOptions(options);
        QVERIFY(waitSolved(plain, plainFinished, plainFailed));
        QVERIFY(savedNames(*plain.result()) != torchSaved);
    }

    // A torch 2.13 log (aot_eager, budget 0.5, no recomputable banned node left for the knapsack): "auto"
    // takes the ruleset of the torch the log records, torch-2.13, whose empty knapsack saves the inputs and
    // the MUST_SAVE nodes; torch-2.15's would take the aggressive cut (tst_logcheck
    // torch213DecidesAsItsRuleset).
    void loggedCompileTakesTheLogsTorchRuleset() {
        const std::string log =
            test::sourcePath("tests/data/torch2.13-cpu/sac_must_recompute_aot_eager_budget05_trace.log");
        Expected<GraphFile> file = GraphFile::open(log);
        QVERIFY(bool(file));
        std::optional<size_t> jointIndex, forwardIndex;
        for (const GraphEntry& e : file->graphs()) {
            if (e.kind == "aot_joint_graph")
                jointIndex = e.index;
            else if (e.kind == "aot_forward_graph")
                forwardIndex = e.index;
        }
        QVERIFY(jointIndex && forwardIndex);
        Expected<Graph> joint = file->load(*jointIndex);
        Expected<Graph> forward = file->load(*forwardIndex);
        QVERIFY(joint && forward);
        std::vector<std::string> torchSaved;
        const std::vector<const Value*> leaves = forward->outputLeaves();
        for (size_t i = size_t(joint->numFwdOutputs.value_or(0)); i < leaves.size(); ++i)
            if (leaves[i]->kind() == ValueKind::NodeRef &&
                forward->node(leaves[i]->asNode()).outputKind == OutputKind::Tensor)
                torchSaved.push_back(forward->node(leaves[i]->asNode()).name);
        QVERIFY(!torchSaved.empty());

        PartitionDocument doc;
        QSignalSpy finished(&doc, &PartitionDocument::finished);
        QSignalSpy failed(&doc, &PartitionDocument::failed);
        doc.setGraph(std::make_shared<const Graph>(joint.take()), QString::fromStdString(log),
                     int(*jointIndex), partition::loggedConfigFor(*file, *jointIndex));
        QCOMPARE(doc.effectiveRuleset(), QStringLiteral("torch-2.13"));
        doc.solve();
        QVERIFY(waitSolved(doc, finished, failed));
        QCOMPARE(savedNames(*doc.result()), torchSaved);
    }
};

QTEST_MAIN(TestPartitionDocument)
#include "tst_gui_partitiondocument.moc"
