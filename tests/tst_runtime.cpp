// core/runtime through jointscope-cli validate / profile, on the real torch 1.13 graphs of shared/.
//
// Expected values come from torch (the saved lists in reference.json), from the graphs' text (output counts,
// op names counted here) and from the documented exit codes; never from the runtime itself.
#include "testutil.h"

#include <nlohmann/json.hpp>

#include <QProcess>
#include <QTemporaryDir>

#include <fstream>
#include <map>
#include <regex>
#include <set>

using namespace jointscope;
using namespace jointscope::test;
using Json = nlohmann::json;

namespace {

std::string jointPath(const std::string& name) {
    return sharedPath("graphs/torch-1.13/" + name + "/joint.txt");
}

Json reference(const std::string& name) {
    return Json::parse(readFile(sharedPath("graphs/torch-1.13/" + name + "/reference.json")));
}

// The number of values the joint graph returns, counted from its `return [...]` line.
size_t returnedValues(const std::string& name) {
    for (const std::string& line : splitLines(readFile(jointPath(name)))) {
        // torch 1.13 prints `return pytree.tree_unflatten([a, b, ...], self._out_spec)`.
        if (line.find("return ") == std::string::npos)
            continue;
        const size_t open = line.find('['), close = line.rfind(']');
        if (open == std::string::npos || close < open)
            qFatal("unexpected return line in %s", name.c_str());
        const std::string inner = line.substr(open + 1, close - open - 1);
        return static_cast<size_t>(std::count(inner.begin(), inner.end(), ',')) + 1;
    }
    qFatal("no return line in %s", name.c_str());
}

std::string writeDecision(const QTemporaryDir& dir, const std::string& file, const Json& saved) {
    const std::string path = dir.filePath(QString::fromStdString(file)).toStdString();
    std::ofstream(path) << Json{{"saved", saved}}.dump();
    return path;
}

// The call_function nodes of a graph, from its FX text: name -> op (e.g. "aten.addmm.default").
std::vector<std::pair<std::string, std::string>> callNodes(const std::string& name) {
    std::vector<std::pair<std::string, std::string>> nodes;
    const std::regex call(R"(^\s+(\w+) = torch\.ops\.(\w+\.\w+\.\w+)\()");
    const std::regex item(R"(^\s+(\w+) = \w+\[\d+\])");
    std::smatch m;
    for (const std::string& line : splitLines(readFile(jointPath(name)))) {
        if (std::regex_search(line, m, call))
            nodes.emplace_back(m[1], m[2]);
        else if (std::regex_search(line, m, item))
            nodes.emplace_back(m[1], "getitem");
    }
    return nodes;
}

} // namespace

class TestRuntime : public QObject {
    Q_OBJECT

private slots:
    // jointscope-cli lists the LibTorch commands and hands them to jointscope-cli-runtime: it does not load
    // LibTorch itself (every other command starts at once), and the hand-over keeps arguments and exit codes.
    void libtorchCommandsRunInTheRuntimeProgram() {
        QProcess ldd;
        ldd.start("ldd", {test::cliPath()});
        QVERIFY(ldd.waitForFinished(30000));
        const QByteArray libs = ldd.readAllStandardOutput();
        QVERIFY2(!libs.isEmpty() && !libs.contains("libtorch") && !libs.contains("libc10"), libs.constData());
        const Run help = runCli({"--help"});
        for (const char* name : {"validate", "profile", "run"})
            QVERIFY2(help.out.find(std::string("  ") + name + " ") != std::string::npos, name);
        const Run usage = runCli({"validate"}); // missing FILE: the runtime program's usage error
        QCOMPARE(usage.exitCode, 64);
        QVERIFY(usage.err.find("missing arguments") != std::string::npos);
    }

    // torch's own min-cut (recorded in reference.json, which the loader attaches) computes the joint's
    // outputs and gradients bit for bit on the CPU.
    void validateTorchMinCut_data() { test::addTorch113ModelRows("graph"); }
    void validateTorchMinCut() {
        QFETCH(QString, graph);
        const std::string name = graph.toStdString();
        const Run run = runCli({"validate", QString::fromStdString(jointPath(name)), "--json"});
        QVERIFY2(run.exitCode == 0, (run.err + run.out).c_str());
        const Json j = Json::parse(run.out);
        QCOMPARE(j["ok"].get<bool>(), true);
        QVERIFY(j["decision"]["source"].get<std::string>().find("torch_min_cut") != std::string::npos);
        std::set<std::string> saved(j["decision"]["saved"].begin(), j["decision"]["saved"].end());
        const Json torchSaved = reference(name)["min_cut_saved"];
        QCOMPARE(saved, std::set<std::string>(torchSaved.begin(), torchSaved.end()));
        QCOMPARE(j["outputs"].size(), returnedValues(name));
        for (const Json& o : j["outputs"]) {
            const std::string status = o["status"];
            QVERIFY2(status == "bitwise" || status == "none", o.dump().c_str());
        }
    }

    // torch's default partition, handed over as a decision file.
    void validateDefaultPartition_data() { validateTorchMinCut_data(); }
    void validateDefaultPartition() {
        QFETCH(QString, graph);
        const std::string name = graph.toStdString();
        QTemporaryDir dir;
        const std::string decision =
            writeDecision(dir, "default.json", reference(name)["default_partition_saved"]);
        const Run run = runCli({"validate", QString::fromStdString(jointPath(name)), "--partition",
                                QString::fromStdString(decision), "--json"});
        QVERIFY2(run.exitCode == 0, (run.err + run.out).c_str());
        const Json j = Json::parse(run.out);
        QCOMPARE(j["ok"].get<bool>(), true);
        QCOMPARE(j["outputs"].size(), returnedValues(name));
    }

    // Without a saved primal the backward cannot run: exit 3, and the message names the missing value.
    void validateMissingPrimal_data() { validateTorchMinCut_data(); }
    void validateMissingPrimal() {
        QFETCH(QString, graph);
        const std::string name = graph.toStdString();
        Json saved = reference(name)["min_cut_saved"];
        std::string removed;
        for (auto it = saved.begin(); it != saved.end(); ++it)
            if (it->get<std::string>().rfind("primals_", 0) == 0) {
                removed = *it;
                saved.erase(it);
                break;
            }
        QVERIFY(!removed.empty());
        QTemporaryDir dir;
        const std::string decision = writeDecision(dir, "bad.json", saved);
        const Run run = runCli({"validate", QString::fromStdString(jointPath(name)), "--partition",
                                QString::fromStdString(decision)});
        QCOMPARE(run.exitCode, 3);
        QVERIFY2(run.err.find("'" + removed + "'") != std::string::npos, run.err.c_str());
        QVERIFY2(run.err.find("joint.txt") != std::string::npos, run.err.c_str());
    }

    // A backward that draws a random op again gets different random numbers: exit 1, the output named.
    void validateRecomputedDropoutDiffers() {
        const std::string path = sourcePath("tests/data/runtime/dropout_joint.txt");
        QTemporaryDir dir;
        const std::string onlyInputs =
            writeDecision(dir, "inputs.json", Json::array({"primals_1", "primals_2"}));
        const Run bad = runCli({"validate", QString::fromStdString(path), "--partition",
                                QString::fromStdString(onlyInputs), "--num-fwd-outputs", "1", "--json"});
        QVERIFY2(bad.exitCode == 1, (bad.err + bad.out).c_str());
        const Json j = Json::parse(bad.out);
        QCOMPARE(j["ok"].get<bool>(), false);
        QVERIFY2(j["first_mismatch"].get<std::string>().find("grad of primals_") == 0, bad.out.c_str());
        // Saving the mask fixes it.
        const std::string withMask =
            writeDecision(dir, "mask.json", Json::array({"primals_1", "primals_2", "getitem_1"}));
        const Run good = runCli({"validate", QString::fromStdString(path), "--partition",
                                 QString::fromStdString(withMask), "--num-fwd-outputs", "1"});
        QVERIFY2(good.exitCode == 0, (good.err + good.out).c_str());
    }

    // torch 2 runs a random op it recomputes under a checkpoint again with the forward's RNG state
    // (functionalize_rng_ops). Its own decision for an MLP with dropout under torch.utils.checkpoint,
    // recorded by torch 2.15 on the CPU (it saves only the inputs and draws the dropout again in the
    // backward), is bitwise right; the forced recompute of an untagged dropout above still differs.
    void validateReplaysCheckpointedDropout() {
        const std::string path = sourcePath("tests/data/torch2/checkpointed_dropout.json");
        const Run run = runCli({"validate", QString::fromStdString(path), "--json"});
        QVERIFY2(run.exitCode == 0, (run.err + run.out).c_str());
        const Json j = Json::parse(run.out);
        QVERIFY(j["decision"]["source"].get<std::string>().find("torch_min_cut") != std::string::npos);
        QCOMPARE(j["decision"]["saved"], Json::array({"primals_1", "primals_2", "primals_3", "primals_4"}));
        QCOMPARE(j["decision"]["replayed_random_ops"], Json::array({"native_dropout"}));
        for (const Json& o : j["outputs"]) {
            const std::string status = o["status"];
            QVERIFY2(status == "bitwise" || status == "none", o.dump().c_str());
        }
    }

    // An op the interpreter cannot run is named, not a crash.
    void validateUnrunnableOpIsNamed() {
        const std::string path = sharedPath("graphs/snippets/hop_checkpoint_wrap.txt");
        const Run run = runCli(
            {"profile", QString::fromStdString(path), "--no-db", "--reps", "1", "--warmup", "0", "--json"});
        QVERIFY2(run.exitCode == 0, (run.err + run.out).c_str());
        const Json j = Json::parse(run.out);
        bool named = false;
        for (const Json& n : j["nodes"])
            if (n["name"] == "tag_activation_checkpoint")
                named = n.contains("error") && n["error"].get<std::string>().find("sin") != std::string::npos;
        QVERIFY2(named, run.out.c_str());
    }

    // A CPU's peaks are measured once, kept in the profile DB, and what the roofline assumes for
    // --target-device cpu; without them the user is told how to get them.
    void cpuPeaksMeasuredOnce() {
        QTemporaryDir dir;
        const QString db = dir.filePath("peaks.sqlite");
        const QString graph = QString::fromStdString(test::sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        const Run before = runCli({"cost", graph, "--target-device", "cpu", "--db", db, "--json"});
        QCOMPARE(before.exitCode, 64);
        QVERIFY2(before.err.find("devices --measure") != std::string::npos, before.err.c_str());

        const Run measure = runCli({"devices", "--measure", "--db", db, "--json"});
        QVERIFY2(measure.exitCode == 0, (measure.err + measure.out).c_str());
        const Json devices = Json::parse(measure.out);
        const Json& cpu = devices.at("devices").at(0);
        QCOMPARE(cpu.at("kind").get<std::string>(), std::string("cpu"));
        const double gflops = cpu.at("measured").at("fp32_gflops").get<double>();
        const double gbps = cpu.at("measured").at("gb_per_s").get<double>();
        QVERIFY(gflops > 0.1 && gflops < 1e5);
        QVERIFY(gbps > 0.1 && gbps < 1e4);

        const Run after = runCli({"cost", graph, "--target-device", "cpu", "--db", db, "--json"});
        QVERIFY2(after.exitCode == 0, after.err.c_str());
        const Json device = Json::parse(after.out).at("device");
        QCOMPARE(device.at("name").get<std::string>(), cpu.at("name").get<std::string>());
        QCOMPARE(device.at("source").get<std::string>(), std::string("measured"));
        QCOMPARE(device.at("fp32_tflops").get<double>(), gflops / 1e3);
        QCOMPARE(device.at("bandwidth_gbs").get<double>(), gbps);
    }

    // Only aten and prims ops run: a file cannot make the interpreter call collectives or custom ops.
    void otherNamespacesAreNotRun() {
        QTemporaryDir dir;
        const QString path = dir.filePath("c10d.txt");
        std::ofstream(path.toStdString()) << R"(class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[4]"):
        all_reduce: "f32[4]" = torch.ops._c10d_functional.all_reduce.default(primals_1, "sum", "0")
        relu: "f32[4]" = torch.ops.aten.relu.default(primals_1)
        return (all_reduce, relu)
)";
        const Run run = runCli({"profile", path, "--no-db", "--reps", "1", "--warmup", "0", "--json"});
        QVERIFY2(run.exitCode == 0, (run.err + run.out).c_str());
        const Json j = Json::parse(run.out);
        int seen = 0;
        for (const Json& n : j["nodes"]) {
            if (n["name"] == "all_reduce") {
                ++seen;
                QVERIFY2(n.value("error", "").find("namespace '_c10d_functional'") != std::string::npos,
                         n.dump().c_str());
            }
            if (n["name"] == "relu") {
                ++seen;
                QVERIFY2(n.contains("time_us"), n.dump().c_str());
            }
        }
        QCOMPARE(seen, 2);
    }

    // Every call_function node gets a time or a reason; views and getitem are skipped, compute ops timed.
    void profileCoversEveryNode_data() { validateTorchMinCut_data(); }
    void profileCoversEveryNode() {
        QFETCH(QString, graph);
        const std::string name = graph.toStdString();
        const Run run = runCli({"profile", QString::fromStdString(jointPath(name)), "--no-db", "--reps", "2",
                                "--warmup", "1", "--json"});
        QVERIFY2(run.exitCode == 0, (run.err + run.out).c_str());
        const Json j = Json::parse(run.out);
        std::map<std::string, Json> byName;
        for (const Json& n : j["nodes"])
            byName[n["name"]] = n;
        const std::set<std::string> views = {
            "aten.view.default",   "aten.t.default",         "aten.transpose.int",
            "aten.expand.default", "aten.unsqueeze.default", "aten._reshape_alias.default",
            "aten.detach.default", "aten.split.Tensor",      "aten._unsafe_view.default"};
        const std::set<std::string> compute = {"aten.addmm.default",   "aten.mm.default",
                                               "aten.bmm.default",     "aten.convolution.default",
                                               "aten.gelu.default",    "aten.native_layer_norm.default",
                                               "aten._softmax.default"};
        const auto nodes = callNodes(name);
        QVERIFY(nodes.size() > 10);
        size_t timed = 0;
        for (const auto& [node, op] : nodes) {
            QVERIFY2(byName.count(node), node.c_str());
            const Json& n = byName[node];
            QVERIFY2(!n.contains("error"), n.dump().c_str());
            QVERIFY2(n.contains("time_us") != n.contains("skipped"), n.dump().c_str());
            if (op == "getitem")
                QCOMPARE(n["skipped"].get<std::string>(), std::string("getitem"));
            else if (views.count(op))
                QVERIFY2(n.value("skipped", "") == "view", n.dump().c_str());
            else if (compute.count(op))
                QVERIFY2(n.contains("time_us") && n["time_us"].get<double>() > 0, n.dump().c_str());
            timed += n.contains("time_us");
        }
        QVERIFY(timed > 0);
        QCOMPARE(j["cached"].get<int>(), 0);
    }

    // The second run with the same DB measures nothing; the DB travels through JSON to a fresh one.
    void profileDbCachesAndRoundTrips() {
        QTemporaryDir dir;
        const QString db = dir.filePath("p.sqlite"), db2 = dir.filePath("q.sqlite"),
                      js = dir.filePath("p.json");
        const QString file = QString::fromStdString(jointPath("gpt_block2"));
        const QStringList fast = {"--reps", "2", "--warmup", "0", "--json"};
        const Run first = runCli(QStringList{"profile", file, "--db", db} + fast);
        QVERIFY2(first.exitCode == 0, first.err.c_str());
        const Json a = Json::parse(first.out);
        const int measured = a["measured"];
        QVERIFY(measured > 0);
        QCOMPARE(a["cached"].get<int>(), 0);
        const Run second = runCli(QStringList{"profile", file, "--db", db} + fast);
        const Json b = Json::parse(second.out);
        QCOMPARE(b["measured"].get<int>(), 0);
        QCOMPARE(b["cached"].get<int>(), measured);
        // Cached nodes report the first run's times.
        for (size_t i = 0; i < a["nodes"].size(); ++i)
            if (a["nodes"][i].contains("time_us"))
                QCOMPARE(b["nodes"][i]["time_us"].get<double>(), a["nodes"][i]["time_us"].get<double>());
        QCOMPARE(runCli({"profile-db", "export", "--db", db, "--out", js}).exitCode, 0);
        QCOMPARE(runCli({"profile-db", "import", js, "--db", db2}).exitCode, 0);
        const Run third = runCli(QStringList{"profile", file, "--db", db2} + fast);
        const Json c = Json::parse(third.out);
        QCOMPARE(c["measured"].get<int>(), 0);
        QCOMPARE(c["cached"].get<int>(), measured);
    }

    // The two transformer layers of gpt_block2 are measured once: the number of signatures measured equals
    // the number of distinct (op, argument text with every node name replaced by its dtype, shape and stride
    // from joint.meta.json) among the nodes that run a kernel, counted here from the FX text.
    void profileDeduplicatesLayers() {
        const Json meta = Json::parse(readFile(sharedPath("graphs/torch-1.13/gpt_block2/joint.meta.json")));
        std::map<std::string, std::string> described;
        for (const Json& n : meta["nodes"])
            if (n.contains("shape"))
                described[n["name"]] =
                    n["dtype"].dump() + n["shape"].dump() + n.value("stride", Json()).dump();
        const std::set<std::string> views = {"view",   "t",         "transpose",
                                             "expand", "unsqueeze", "_reshape_alias",
                                             "detach", "split",     "_unsafe_view"};
        const std::regex call(R"(^\s+\w+ = torch\.ops\.aten\.(\w+)\.(\w+)\((.*)\)(;.*)?$)");
        const std::regex word(R"(\b[A-Za-z_]\w*\b)");
        std::set<std::string> keys;
        size_t calls = 0;
        std::smatch m;
        for (const std::string& line : splitLines(readFile(jointPath("gpt_block2")))) {
            if (!std::regex_match(line, m, call) || views.count(m[1]))
                continue;
            ++calls;
            std::string args = m[3], key = std::string(m[1]) + "." + std::string(m[2]) + "(";
            for (std::sregex_iterator it(args.begin(), args.end(), word), end; it != end; ++it) {
                key += it->prefix();
                auto d = described.find(it->str());
                key += d != described.end() ? d->second : it->str();
                if (std::next(it) == end)
                    key += it->suffix();
            }
            keys.insert(key);
        }
        QVERIFY(keys.size() < calls); // the graph does repeat itself
        const Run run = runCli({"profile", QString::fromStdString(jointPath("gpt_block2")), "--no-db",
                                "--reps", "1", "--warmup", "0", "--json"});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        const Json j = Json::parse(run.out);
        size_t timed = 0;
        for (const Json& n : j["nodes"])
            timed += n.contains("time_us");
        QCOMPARE(timed, calls);
        QCOMPARE(j["measured"].get<size_t>(), keys.size());
    }

    // Bad input: a located error and exit 2, no crash.
    void badInputs() {
        QTemporaryDir dir;
        const QString bad = dir.filePath("bad.txt");
        std::ofstream(bad.toStdString())
            << "class f(torch.nn.Module):\n    def forward(self, x):\n        y = (\n";
        const Run run = runCli({"profile", bad, "--no-db"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.find("bad.txt:") != std::string::npos, run.err.c_str());
        const Run dev = runCli({"validate", QString::fromStdString(jointPath("mlp")), "--device", "tpu:0"});
        QVERIFY(dev.exitCode != 0);
        QVERIFY2(dev.err.find("tpu:0") != std::string::npos, dev.err.c_str());
    }
};

QTEST_GUILESS_MAIN(TestRuntime)
#include "tst_runtime.moc"
