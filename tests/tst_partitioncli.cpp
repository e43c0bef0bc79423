// jointscope-cli partition / pareto end to end: torch 1.13's recorded decisions, the files --out writes, the
// explanation, the Pareto sweep, and usage / input errors with their exit codes.
#include "testutil.h"

#include <QTemporaryDir>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using namespace jointscope::test;
using Json = nlohmann::json;

namespace {

QString shared113(const char* model, const char* file = "joint.txt") {
    return QString::fromStdString(sharedPath(std::string("graphs/torch-1.13/") + model + "/" + file));
}

Json parseOut(const Run& run) {
    Json j = Json::parse(run.out, nullptr, false);
    if (j.is_discarded())
        qFatal("not JSON: %s\nstderr: %s", run.out.c_str(), run.err.c_str());
    return j;
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
}

} // namespace

class TestPartitionCli : public QObject {
    Q_OBJECT

private slots:
    void minCutJsonMatchesTorch113() {
        for (const char* model : kTorch113Models) {
            const Json reference = Json::parse(readFile(shared113(model, "reference.json").toStdString()));
            const Run run = runCli({"partition", shared113(model), "--ruleset", "torch-1.13", "--json"});
            QCOMPARE(run.exitCode, 0);
            const Json j = parseOut(run);
            QCOMPARE(j.at("saved"), reference.at("min_cut_saved"));
            QCOMPARE(j.at("saved_sym"), Json::array());
            QCOMPARE(j.at("format").get<std::string>(), std::string("jointscope-decision"));
            QVERIFY(j.at("seconds").get<double>() > 0);
            QVERIFY(j.at("cut_value").get<int64_t>() > 0);
            // Every saved node is described for apply_partition (name + target + shape).
            for (const Json& name : j.at("saved"))
                QVERIFY(j.at("nodes").contains(name.get<std::string>()));
        }
    }

    // peak_bytes and the timeline: the peaks torch measured running the shared graphs' fw.txt / bw.txt
    // (tests/python/test_memory_timeline.py), and the text line.
    void peakBytesAsTorchMeasured() {
        const std::pair<const char*, uint64_t> peaks[] = {
            {"mlp", 9792}, {"gpt_block2", 448000}, {"convnet", 51176}};
        for (const auto& [model, peak] : peaks) {
            const Run run = runCli({"partition", shared113(model), "--json"});
            QCOMPARE(run.exitCode, 0);
            const Json j = parseOut(run);
            QCOMPARE(j.at("peak_bytes").get<uint64_t>(), peak);
            const Json& t = j.at("memory_timeline");
            QCOMPARE(t.at("nodes").size(), t.at("live_bytes").size());
            QCOMPARE(t.at("live_bytes").at(t.at("peak_step").get<size_t>()).get<uint64_t>(), peak);
        }
        const Run text = runCli({"partition", shared113("mlp")});
        QVERIFY2(text.out.find("peak activation memory 9792 bytes at sum_2 (step 20 of 23)") !=
                     std::string::npos,
                 text.out.c_str());
    }

    void outWritesGraphsAndDecision() {
        QTemporaryDir dir;
        const Run run =
            runCli({"partition", shared113("mlp"), "--ruleset", "torch-1.13", "--out", dir.path()});
        QCOMPARE(run.exitCode, 0);
        for (const char* file :
             {"forward.txt", "backward.txt", "forward.json", "backward.json", "decision.json"})
            QVERIFY2(std::filesystem::exists(dir.filePath(file).toStdString()), file);
        // The written forward reads back, and returns the forward output then the saved values (torch's
        // fw.txt for this graph returns [addmm_1, primals_5, addmm, t_2, t_6]).
        const Run info = runCli({"info", dir.filePath("forward.txt"), "--json"});
        QCOMPARE(info.exitCode, 0);
        const std::string forward = readFile(dir.filePath("forward.txt").toStdString());
        QVERIFY2(forward.find("return (addmm_1, primals_5, addmm, t_2, t_6)") != std::string::npos,
                 forward.c_str());
        const Json decision = Json::parse(readFile(dir.filePath("decision.json").toStdString()));
        QCOMPARE(decision.at("ruleset").get<std::string>(), std::string("torch-1.13"));
    }

    void explainNamesTheRule() {
        const Run run = runCli(
            {"partition", shared113("mlp"), "--ruleset", "torch-1.13", "--explain", "addmm", "--json"});
        QCOMPARE(run.exitCode, 0);
        const Json e = parseOut(run).at("explain");
        QCOMPARE(e.at("decision").get<std::string>(), std::string("saved"));
        QVERIFY(e.at("ban").get<std::string>().find("allowlist") !=
                std::string::npos); // addmm is not recomputable
        const Run text =
            runCli({"partition", shared113("mlp"), "--ruleset", "torch-1.13", "--explain", "gelu"});
        QCOMPARE(text.exitCode, 0);
        QVERIFY2(text.out.find("gelu: recomputed") != std::string::npos, text.out.c_str());
        const Run missing = runCli({"partition", shared113("mlp"), "--explain", "nope"});
        QCOMPARE(missing.exitCode, 64);
        QVERIFY(missing.err.find("'nope'") != std::string::npos);
    }

    void paretoSweep() {
        const Run run = runCli({"pareto", shared113("gpt_block2"), "--json"});
        QCOMPARE(run.exitCode, 0);
        const Json j = parseOut(run);
        const Json& points = j.at("points");
        QCOMPARE(points.size(), size_t(100));
        QCOMPARE(points.front().at("budget").get<double>(), 0.0);
        QCOMPARE(points.back().at("budget").get<double>(), 1.0);
        // Budget 0 saves only the inputs; budget 1 is the runtime-optimized cut (ratio 1 by definition).
        QCOMPARE(points.front().at("decided_by").get<std::string>(), std::string("inputs only"));
        QCOMPARE(points.back().at("memory_ratio").get<double>(), 1.0);
        QVERIFY(points.front().at("saved_bytes").get<uint64_t>() <
                points.back().at("saved_bytes").get<uint64_t>());
        QVERIFY(points.front().at("recompute_cost").get<double>() >
                points.back().at("recompute_cost").get<double>());
    }

    void policyFile() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, R"({"gelu": "MUST_SAVE"})");
        const Run run =
            runCli({"partition", shared113("mlp"), "--policy", QString::fromStdString(policy), "--json"});
        QCOMPARE(run.exitCode, 0);
        const Json saved = parseOut(run).at("saved");
        QVERIFY(std::find(saved.begin(), saved.end(), Json("gelu")) != saved.end());

        writeText(policy, R"({"no_such_node": "MUST_SAVE"})");
        const Run unknown =
            runCli({"partition", shared113("mlp"), "--policy", QString::fromStdString(policy)});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY2(unknown.err.find("'no_such_node'") != std::string::npos, unknown.err.c_str());

        writeText(policy, R"({"gelu": "SOMETIMES"})");
        const Run bad = runCli({"partition", shared113("mlp"), "--policy", QString::fromStdString(policy)});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.find("policy.json:1:1: error:") != std::string::npos, bad.err.c_str());

        // 100k nested arrays under "policies": refused, not a stack overflow (the map was copied
        // recursively).
        writeText(policy,
                  "{\"policies\": {\"gelu\": " + std::string(100000, '[') + std::string(100000, ']') + "}}");
        const Run deep = runCli({"partition", shared113("mlp"), "--policy", QString::fromStdString(policy)});
        QCOMPARE(deep.exitCode, 2);
        QVERIFY2(deep.err.find("policy.json:1:1: error: node 'gelu': policy must be") != std::string::npos,
                 deep.err.c_str());
    }

    // A MUST_SAVE pin the budget overrides: torch's choose_saved_values_set returns only the inputs at budget
    // 0, so addmm (saved by torch at budget 1, reference.json) is recomputed against its pin, and said so.
    void overriddenPinIsWarned() {
        QTemporaryDir dir;
        const std::string policy = dir.filePath("policy.json").toStdString();
        writeText(policy, R"({"addmm": "MUST_SAVE"})");
        const Json reference = Json::parse(readFile(shared113("mlp", "reference.json").toStdString()));
        const Json torchSaved = reference.at("min_cut_saved");
        QVERIFY(std::find(torchSaved.begin(), torchSaved.end(), Json("addmm")) != torchSaved.end());
        const QStringList args{"partition", shared113("mlp"), "--policy", QString::fromStdString(policy)};
        const Run kept = runCli(args);
        QCOMPARE(kept.exitCode, 0);
        QVERIFY2(kept.err.find("overridden") == std::string::npos, kept.err.c_str());
        const Run overridden = runCli(args + QStringList{"--memory-budget", "0"});
        QCOMPARE(overridden.exitCode, 0);
        QVERIFY2(overridden.err.find("MUST_SAVE pin on 'addmm' overridden: recomputed") != std::string::npos,
                 overridden.err.c_str());
    }

    void editedDecisionIsCheckedLikeTorchsExtraction() {
        QTemporaryDir dir;
        QCOMPARE(
            runCli({"partition", shared113("mlp"), "--ruleset", "torch-1.13", "--out", dir.path()}).exitCode,
            0);
        const std::string decisionPath = dir.filePath("decision.json").toStdString();
        Json decision = Json::parse(readFile(decisionPath));
        // Unchanged, the decision evaluates to itself.
        const Run same =
            runCli({"partition", shared113("mlp"), "--decision", dir.filePath("decision.json"), "--json"});
        QCOMPARE(same.exitCode, 0);
        QCOMPARE(parseOut(same).at("saved"), decision.at("saved"));
        QCOMPARE(parseOut(same).at("strategy").get<std::string>(), std::string("edited"));
        // Without addmm the backward (gelu_backward reads it) cannot run: refused, naming addmm and what
        // recomputing it would need.
        Json edited = decision;
        edited["saved"].erase(std::find(edited["saved"].begin(), edited["saved"].end(), Json("addmm")));
        const std::string editedPath = dir.filePath("edited.json").toStdString();
        writeText(editedPath, edited.dump());
        const Run bad =
            runCli({"partition", shared113("mlp"), "--decision", QString::fromStdString(editedPath)});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.find("joint.txt:7: error: the backward needs 'addmm'") != std::string::npos,
                 bad.err.c_str());
        QVERIFY2(bad.err.find("'primals_1'") != std::string::npos, bad.err.c_str());
        edited["saved"].push_back("no_such_value");
        writeText(editedPath, edited.dump());
        const Run unknown =
            runCli({"partition", shared113("mlp"), "--decision", QString::fromStdString(editedPath)});
        QCOMPARE(unknown.exitCode, 2);
        QVERIFY2(unknown.err.find("'no_such_value'") != std::string::npos, unknown.err.c_str());
    }

    void rulesetFromFile() {
        // A ruleset file in the built-in format: torch 1.13's, with t made recomputable. t then stops being
        // banned ("not in the allowlist") in the MLP, which changes the cut.
        QTemporaryDir dir;
        Json rules = Json::parse(readFile(sourcePath("resources/rulesets/torch-1.13.json")));
        rules["name"] = "torch-1.13-t";
        rules["ops"]["recomputable"].push_back("aten.t");
        const std::string path = dir.filePath("rules.json").toStdString();
        writeText(path, rules.dump());
        const Run run =
            runCli({"partition", shared113("mlp"), "--ruleset", QString::fromStdString(path), "--json"});
        QCOMPARE(run.exitCode, 0);
        const Json j = parseOut(run);
        QCOMPARE(j.at("ruleset").get<std::string>(), std::string("torch-1.13-t"));
        QVERIFY(!j.at("banned").contains("t"));
        const Json builtin =
            parseOut(runCli({"partition", shared113("mlp"), "--ruleset", "torch-1.13", "--json"}));
        QVERIFY(builtin.at("banned").contains("t"));
        writeText(path, "{\"format\": \"something-else\"}");
        const Run bad = runCli({"partition", shared113("mlp"), "--ruleset", QString::fromStdString(path)});
        QCOMPARE(bad.exitCode, 2);
        QVERIFY2(bad.err.find("rules.json:1:1: error:") != std::string::npos, bad.err.c_str());
    }

    void usageAndInputErrors() {
        QCOMPARE(runCli({"partition", shared113("mlp"), "--memory-budget", "2"}).exitCode, 64);
        QCOMPARE(runCli({"partition", shared113("mlp"), "--strategy", "greedy"}).exitCode, 64);
        QCOMPARE(runCli({"partition", shared113("mlp"), "--solver", "magic"}).exitCode, 64);
        QCOMPARE(runCli({"partition", shared113("mlp"), "--ruleset", "torch-0.4"}).exitCode, 2);
        QCOMPARE(runCli({"partition", "/nonexistent/joint.txt"}).exitCode, 2);
        // A forward graph alone has no tangents and no declared forward outputs: a named error with the way
        // out.
        const Run fw = runCli({"partition", shared113("mlp", "fw.txt")});
        QCOMPARE(fw.exitCode, 2);
        QVERIFY2(fw.err.find("--num-fwd-outputs N") != std::string::npos, fw.err.c_str());
        const Run counted =
            runCli({"partition", shared113("mlp", "fw.txt"), "--num-fwd-outputs", "1", "--json"});
        QCOMPARE(counted.exitCode, 2); // then the next thing it lacks: shapes (fw.txt has no sidecar)
        QVERIFY2(counted.err.find("no tensor metadata") != std::string::npos, counted.err.c_str());
        QCOMPARE(runCli({"partition", shared113("mlp", "fw.txt"), "--num-fwd-outputs", "-1"}).exitCode, 64);
    }
};

QTEST_MAIN(TestPartitionCli)
#include "tst_partitioncli.moc"
