// jointscope-cli end to end: info on every shared file against independent counts, convert round trips, exit
// codes and located errors for bad input.
#include "testutil.h"

#include <QProcess>

#include <QRegularExpression>
#include <QTemporaryDir>
#include <sstream>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace jointscope::test;

namespace {

std::string trim(const std::string& s) {
    const size_t b = s.find_first_not_of(" \t\r");
    const size_t e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

size_t indentOf(const std::string& line) {
    return line.find_first_not_of(' ');
}

// Splits on commas outside quotes and brackets.
std::vector<std::string> splitTopLevel(const std::string& text) {
    std::vector<std::string> parts;
    std::string current;
    int depth = 0;
    bool quoted = false;
    for (char c : text) {
        if (c == '\"')
            quoted = !quoted;
        else if (!quoted && (c == '[' || c == '('))
            ++depth;
        else if (!quoted && (c == ']' || c == ')'))
            --depth;
        if (c == ',' && depth == 0 && !quoted) {
            parts.push_back(trim(current));
            current.clear();
        } else {
            current += c;
        }
    }
    if (!trim(current).empty())
        parts.push_back(trim(current));
    return parts;
}

struct FxCounts {
    int nodes = 0;
    std::vector<std::string> placeholders;
    int withPrefix(const std::string& prefix) const {
        return int(std::count_if(placeholders.begin(), placeholders.end(),
                                 [&](const std::string& n) { return n.rfind(prefix, 0) == 0; }));
    }
};

// Independent count of the top-level graph of FX readable text: placeholders from the signature (or
// torch 1.13's tree_flatten_spec line), one node per statement at the body's indentation, one output per
// return.
FxCounts countFx(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    FxCounts counts;
    size_t i = 0;
    while (i < lines.size() && lines[i].find("def forward(self") == std::string::npos)
        ++i;
    if (i == lines.size())
        return counts;
    const std::string& def = lines[i];
    const size_t open = def.find("(self") + 5;
    const size_t close = def.rfind(')');
    std::vector<std::string> params;
    for (const std::string& p : splitTopLevel(def.substr(open, close - open)))
        if (!p.empty())
            params.push_back(trim(p.substr(0, p.find(':'))));
    std::vector<std::string> flattened;
    size_t bodyIndent = std::string::npos;
    static const QRegularExpression assign("^(\\w+)(: \"[^\"]*\")? = (.*)$");
    for (++i; i < lines.size(); ++i) {
        const std::string stripped = trim(lines[i]);
        if (stripped.empty() || stripped[0] == '#')
            continue;
        const size_t indent = indentOf(lines[i]);
        if (bodyIndent == std::string::npos)
            bodyIndent = indent;
        if (indent < bodyIndent)
            break;
        if (indent > bodyIndent)
            continue;
        if (stripped.rfind("return", 0) == 0) {
            ++counts.nodes;
            continue;
        }
        if (stripped.find("tree_flatten_spec(") != std::string::npos) {
            for (const std::string& name : splitTopLevel(stripped.substr(0, stripped.find('='))))
                flattened.push_back(name);
            continue;
        }
        const QRegularExpressionMatch m = assign.match(q(stripped));
        if (!m.hasMatch())
            continue;
        const std::string rhs = m.captured(3).toStdString();
        const std::string firstStatement = trim(rhs.substr(0, rhs.find(';')));
        if (std::find(params.begin(), params.end(), firstStatement) != params.end())
            continue; // "l_x_ = L_x_": FX's rename of a placeholder, not a node
        ++counts.nodes;
    }
    counts.placeholders = flattened.empty() ? params : flattened;
    counts.nodes += int(counts.placeholders.size());
    return counts;
}

std::vector<std::string> sharedFiles() {
    std::vector<std::string> files;
    for (const auto& e : fs::recursive_directory_iterator(sharedPath("graphs")))
        if (e.is_regular_file())
            files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

std::string rowName(const std::string& path) {
    return fs::path(path).parent_path().filename().string() + "/" + fs::path(path).filename().string();
}

bool isLocatedError(const std::string& err, const std::string& path) {
    const QRegularExpression re("^" + QRegularExpression::escape(q(path)) + R"(:\d+:\d+: error: \S)");
    return re.match(q(err)).hasMatch();
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT
private slots:
    void versionAndHelp() {
        Run version = runCli({"--version"});
        QCOMPARE(version.exitCode, 0);
        QVERIFY(version.out.rfind("jointscope-cli ", 0) == 0);
        Run help = runCli({"--help"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.find("info") != std::string::npos && help.out.find("convert") != std::string::npos);
        Run helpInfo = runCli({"help", "info"});
        QCOMPARE(helpInfo.exitCode, 0);
        QVERIFY(helpInfo.out.find("--graph") != std::string::npos);
        QCOMPARE(runCli({"convert", "--help"}).exitCode, 0);
    }

    // Every command's usage line names every option its help lists (issue 29: `shard`'s synopsis lacked
    // --cost-model and --torch-version): the synopsis comes from the option table.
    void synopsisNamesEveryOption() {
        const QStringList commands{"info", "convert", "partition", "pareto",     "check",  "split-dw",
                                   "cost", "shard",   "diff",      "profile-db", "devices"};
        for (const QString& command : commands) {
            const Run help = runCli({command, "--help"});
            QCOMPARE(help.exitCode, 0);
            const size_t options = help.out.find("\noptions:\n");
            QVERIFY2(options != std::string::npos, qPrintable(command));
            const std::string usage = help.out.substr(0, help.out.find("\n\n"));
            std::istringstream table(help.out.substr(options + 10));
            std::string line;
            int listed = 0;
            while (std::getline(table, line)) {
                const size_t dash = line.find("--");
                if (line.rfind("  ", 0) != 0 || dash == std::string::npos || dash > 8)
                    continue;
                const std::string option = line.substr(dash, line.find_first_of(" ,", dash) - dash);
                ++listed;
                QVERIFY2(usage.find(option) != std::string::npos,
                         qPrintable(command + ": " + QString::fromStdString(option) + " not in\n" +
                                    QString::fromStdString(usage)));
            }
            QVERIFY2(listed > 0, qPrintable(command));
        }
        const Run shard = runCli({"shard", "--help"});
        QVERIFY(shard.out.find("[--cost-model M]") != std::string::npos);
        QVERIFY(shard.out.find("--mesh SHAPE") != std::string::npos);
        QVERIFY(shard.out.find("[--mesh SHAPE]") == std::string::npos); // required: no brackets
    }

    void usageErrors_data() {
        QTest::addColumn<QStringList>("args");
        const QString joint = q(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        QTest::newRow("no args") << QStringList{};
        QTest::newRow("unknown command") << QStringList{"frobnicate"};
        QTest::newRow("help unknown") << QStringList{"help", "frobnicate"};
        QTest::newRow("info no file") << QStringList{"info"};
        QTest::newRow("info two files") << QStringList{"info", joint, joint};
        QTest::newRow("unknown option") << QStringList{"info", joint, "--bogus"};
        QTest::newRow("missing value") << QStringList{"info", joint, "--graph"};
        QTest::newRow("bad graph") << QStringList{"info", joint, "--graph", "7"};
        QTest::newRow("flag with value") << QStringList{"info", joint, "--json=yes"};
        QTest::newRow("convert no --to") << QStringList{"convert", joint, "-o", "/dev/null"};
        QTest::newRow("convert bad --to") << QStringList{"convert", joint, "--to", "xml", "-o", "/dev/null"};
        QTest::newRow("convert no -o") << QStringList{"convert", joint, "--to", "json"};
        QTest::newRow("convert log without --graph") << QStringList{
            "convert", q(sharedPath("graphs/torch-trace/simple.log")), "--to", "json", "-o", "-"};
    }

    void usageErrors() {
        QFETCH(QStringList, args);
        Run run = runCli(args);
        QCOMPARE(run.exitCode, 64);
        QVERIFY(run.err.find("error") != std::string::npos || run.err.find("usage") != std::string::npos);
    }

    // Typed options (CliArgs.h integerOption / numberOption): every malformed or out-of-range value is a
    // usage error (exit 1) naming the option and what was given; values at the ends of the range are taken.
    void typedOptions_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("exitCode");
        QTest::addColumn<QString>("message");
        const QString joint = q(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        const QString budget = "--memory-budget takes a number in [0, 1]";
        // 64: a usage error (EX_USAGE), never the 1 of a result that differs.
        QTest::newRow("budget 0") << QStringList{"partition", joint, "--memory-budget", "0"} << 0 << "";
        QTest::newRow("budget 1") << QStringList{"partition", joint, "--memory-budget", "1"} << 0 << "";
        QTest::newRow("budget 1.5") << QStringList{"partition", joint, "--memory-budget", "1.5"} << 64
                                    << budget;
        QTest::newRow("budget -0.1") << QStringList{"partition", joint, "--memory-budget", "-0.1"} << 64
                                     << budget;
        QTest::newRow("budget nan") << QStringList{"partition", joint, "--memory-budget", "nan"} << 64
                                    << budget;
        QTest::newRow("budget 0.5x") << QStringList{"partition", joint, "--memory-budget", "0.5x"} << 64
                                     << budget;
        QTest::newRow("budget empty") << QStringList{"partition", joint, "--memory-budget="} << 64 << budget;
        QTest::newRow("repeat 0") << QStringList{"partition", joint, "--repeat", "0"} << 64
                                  << "--repeat takes an integer in [1, 1000]";
        QTest::newRow("repeat 2.5") << QStringList{"partition", joint, "--repeat", "2.5"} << 64
                                    << "--repeat takes an integer in [1, 1000]";
        QTest::newRow("points 1") << QStringList{"pareto", joint, "--points", "1"} << 64
                                  << "--points takes an integer in [2, 10000]";
        QTest::newRow("num-fwd-outputs -1") << QStringList{"partition", joint, "--num-fwd-outputs", "-1"}
                                            << 64 << "--num-fwd-outputs takes an integer in [0, ";
        QTest::newRow("weight grads huge")
            << QStringList{"split-dw", joint, "--num-weight-grads", "99999999999999999999", "--out", "/tmp"}
            << 64 << "--num-weight-grads takes an integer in [0, ";
        QTest::newRow("cluster rounds 65")
            << QStringList{"shard", joint, "--mesh", "2x2", "--cluster-rounds", "65"} << 64
            << "--cluster-rounds takes an integer in [0, 64]";
        QTest::newRow("time limit 0") << QStringList{"shard", joint, "--mesh", "2x2", "--time-limit", "0"}
                                      << 64 << "--time-limit takes a number in (0, ";
        QTest::newRow("gap 200") << QStringList{"shard", joint, "--mesh", "2x2x2", "--gap", "200"} << 64
                                 << "--gap takes a number in [0, 100]";
    }

    void typedOptions() {
        QFETCH(QStringList, args);
        QFETCH(int, exitCode);
        QFETCH(QString, message);
        Run run = runCli(args);
        QCOMPARE(run.exitCode, exitCode);
        QVERIFY2(run.err.find(message.toStdString()) != std::string::npos, run.err.c_str());
    }

    void infoOnEverySharedFile_data() {
        QTest::addColumn<QString>("path");
        for (const std::string& path : sharedFiles())
            QTest::newRow(rowName(path).c_str()) << q(path);
    }

    void infoOnEverySharedFile() {
        QFETCH(QString, path);
        const std::string file = path.toStdString();
        Run run = runCli({"info", "--json", path, "--nodes"});
        if (file.ends_with(".json")) {
            // torch 1.13 sidecars are not graphs: a located error that says what the file looks like.
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(isLocatedError(run.err, file), run.err.c_str());
            return;
        }
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        const auto info = nlohmann::json::parse(run.out);
        if (info.contains("graphs")) {
            QVERIFY(!info["graphs"].empty());
            for (const auto& g : info["graphs"]) {
                QVERIFY(g.contains("index") && g.contains("kind") && g.contains("compile_id"));
                QVERIFY(g["nodes"].get<int>() > 0);
            }
            // Without --nodes a log lists the same graphs from its index alone: where each one starts, no
            // count.
            Run indexed = runCli({"info", "--json", path});
            QCOMPARE(indexed.exitCode, 0);
            const auto listed = nlohmann::json::parse(indexed.out)["graphs"];
            QCOMPARE(listed.size(), info["graphs"].size());
            const auto lines = splitLines(readFile(file));
            for (size_t i = 0; i < listed.size(); ++i) {
                QCOMPARE(listed[i]["kind"], info["graphs"][i]["kind"]);
                QCOMPARE(listed[i]["compile_id"], info["graphs"][i]["compile_id"]);
                if (file.find("torch-trace") != std::string::npos) {
                    QVERIFY(!listed[i].contains("nodes"));
                    const std::string& header = lines.at(listed[i]["line"].get<size_t>() - 1);
                    QVERIFY2(header.find("] {\"") != std::string::npos, header.c_str());
                }
            }
            if (info.contains("problems"))
                for (const auto& p : info["problems"])
                    QVERIFY2(QRegularExpression(R"(:\d+:\d+: (error|warning): )")
                                 .match(q(p.get<std::string>()))
                                 .hasMatch(),
                             p.get<std::string>().c_str());
            // Choosing a graph gives the same count as the listing, by index and by KIND@COMPILE_ID.
            const auto& last = info["graphs"].back();
            Run one = runCli({"info", "--json", path, "--graph", QString::number(last["index"].get<int>())});
            QCOMPARE(one.exitCode, 0);
            QCOMPARE(nlohmann::json::parse(one.out)["nodes"], last["nodes"]);
            const std::string spec =
                last["kind"].get<std::string>() + "@" + last["compile_id"].get<std::string>();
            Run byKind = runCli({"info", "--json", path, "--graph", q(spec)});
            QCOMPARE(byKind.exitCode, 0);
            QVERIFY(nlohmann::json::parse(byKind.out).contains("nodes"));
            return;
        }
        const FxCounts expected = countFx(readFile(file));
        QVERIFY(expected.nodes > 0);
        QCOMPARE(info["nodes"].get<int>(), expected.nodes);
        QCOMPARE(info["placeholders"].get<int>(), int(expected.placeholders.size()));
        QCOMPARE(info["tangents"].get<int>(), expected.withPrefix("tangents"));
        // Nested HOP body classes, any depth.
        const QRegularExpression nestedClass("^[ \\t]+class \\w+\\(torch\\.nn\\.Module\\):",
                                             QRegularExpression::MultilineOption);
        QCOMPARE(info["subgraphs"].get<int>(), int(q(readFile(file)).count(nestedClass)));
        if (file.find("torch-1.13") != std::string::npos) {
            // No seed / offset inputs here: every non-tangent placeholder is a primal (saved values in
            // bw.txt).
            QCOMPARE(info["primals"].get<int>() + info["tangents"].get<int>(),
                     int(expected.placeholders.size()));
            if (!file.ends_with("bw.txt"))
                QCOMPARE(info["primals"].get<int>(), expected.withPrefix("primals"));
            if (file.ends_with("joint.txt")) {
                const auto ref =
                    nlohmann::json::parse(readFile(fs::path(file).parent_path() / "reference.json"));
                QCOMPARE(info["nodes"].get<int>(), ref["joint_nodes"].get<int>());
                const auto meta =
                    nlohmann::json::parse(readFile(fs::path(file).parent_path() / "joint.meta.json"));
                QCOMPARE(info["num_fwd_outputs"], meta["num_fwd_outputs"]);
                QVERIFY(info["tensor_bytes"].get<uint64_t>() > 0);
            }
        }
    }

    void humanReadableInfo() {
        const std::string joint = sharedPath("graphs/torch-1.13/mlp/joint.txt");
        Run run = runCli({"info", q(joint)});
        QCOMPARE(run.exitCode, 0);
        QVERIFY(QRegularExpression(R"(\n\s*nodes\s+29\n)").match(q(run.out)).hasMatch());
        Run list = runCli({"info", q(sharedPath("graphs/torch-trace/simple.log"))});
        QCOMPARE(list.exitCode, 0);
        QVERIFY(list.out.find("compile_id") != std::string::npos);
    }

    void convertRoundTrips_data() {
        QTest::addColumn<QString>("path");
        for (const std::string& path : sharedFiles())
            if (path.ends_with(".txt") && path.find("torch-trace") == std::string::npos)
                QTest::newRow(rowName(path).c_str()) << q(path);
    }

    void convertRoundTrips() {
        QFETCH(QString, path);
        QTemporaryDir dir;
        const QString json = dir.filePath("graph.json");
        const QString json2 = dir.filePath("graph2.json");
        const QString fx = dir.filePath("graph.txt");
        Run toJson = runCli({"convert", path, "--to", "json", "-o", json});
        QVERIFY2(toJson.exitCode == 0, toJson.err.c_str());
        Run toFx = runCli({"convert", json, "--to", "fx", "-o", fx});
        QVERIFY2(toFx.exitCode == 0, toFx.err.c_str());
        Run again = runCli({"convert", json, "--to", "json", "-o", json2});
        QCOMPARE(again.exitCode, 0);
        QCOMPARE(readFile(json2.toStdString()), readFile(json.toStdString())); // JSON -> JSON is the identity

        Run original = runCli({"info", "--json", path});
        Run roundTripped = runCli({"info", "--json", fx});
        QVERIFY2(roundTripped.exitCode == 0, roundTripped.err.c_str());
        auto a = nlohmann::json::parse(original.out);
        auto b = nlohmann::json::parse(roundTripped.out);
        for (const char* key : {"nodes", "placeholders", "call_function", "primals", "tangents", "forward",
                                "backward", "subgraphs", "tensor_bytes"})
            QVERIFY2(a[key] == b[key],
                     (std::string(key) + ": " + a[key].dump() + " vs " + b[key].dump()).c_str());
        // The written FX text, counted independently, has the original's nodes.
        QCOMPARE(countFx(readFile(fx.toStdString())).nodes, countFx(readFile(path.toStdString())).nodes);
    }

    void convertFromLog() {
        QTemporaryDir dir;
        const QString log = q(sharedPath("graphs/torch-trace/inductor_provenance_jit_debug_handle_log.txt"));
        const QString json = dir.filePath("joint.json");
        Run run = runCli({"convert", log, "--graph", "aot_joint_graph", "--to", "json", "-o", json});
        QVERIFY2(run.exitCode == 0, run.err.c_str());
        Run info = runCli({"info", "--json", json});
        QCOMPARE(info.exitCode, 0);
        Run fromLog = runCli({"info", "--json", log, "--graph", "aot_joint_graph"});
        QCOMPARE(nlohmann::json::parse(info.out), nlohmann::json::parse(fromLog.out));
        QVERIFY(nlohmann::json::parse(fromLog.out)["tangents"].get<int>() > 0);
        // The JSON remembers the graph's kind: it lists as aot_joint_graph.
        const auto doc = nlohmann::json::parse(readFile(json.toStdString()));
        QCOMPARE(doc["graph"]["attributes"]["kind"].get<std::string>(), std::string("aot_joint_graph"));
    }

    void badInputsAreLocated_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("line"); // 0: any line
        const std::string joint = readFile(sharedPath("graphs/torch-1.13/mlp/joint.txt"));
        // Cut inside the call on line 7: "addmm = torch.ops.aten.addmm.default(primals_2, primals_5" ...
        const size_t cut = joint.find("primals_5, t)");
        QTest::newRow("truncated fx") << QByteArray::fromStdString(joint.substr(0, cut + 9)) << 0;
        QTest::newRow("unbalanced fx")
            << QByteArray("def forward(self, x):\n    y = torch.ops.aten.relu.default(x\n    return (y,)\n")
            << 0;
        QTest::newRow("empty") << QByteArray() << 1;
        QTest::newRow("binary") << QByteArray("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16) << 1;
        QTest::newRow("nul in text") << QByteArray("def forward(self, x):\n    return (x,)\0\n", 38) << 2;
        QTest::newRow("truncated json")
            << QByteArray("{\"format\": \"jointscope-graph\", \"version\": 1,\n \"gra") << 2;
        QTest::newRow("truncated log")
            << QByteArray(
                   "V1206 15:18:15.925000 1500233 torch/_dynamo/utils.py:1288] {\"dynamo_output_graph\": "
                   "{\"sizes\": {}}, \"frame_id\": 0, \"frame_compile_id\": 0, \"attempt\": 0, "
                   "\"has_payload\": "
                   "\"490a3a38ce10390374e403dd6e063c7f\"}\n\tclass GraphModule(torch.nn.Module):\n\t    def "
                   "forward(self, L_x_: \"f32[2]\"):\n\t        y = torch.sin(L_x_\n")
            << 0;
    }

    void badInputsAreLocated() {
        QFETCH(QByteArray, bytes);
        QFETCH(int, line);
        QTemporaryDir dir;
        const std::string path = dir.filePath("bad.txt").toStdString();
        writeFile(path, bytes.toStdString());
        Run run = runCli({"info", "--json", q(path)});
        if (QTest::currentDataTag() == QString("truncated log")) {
            // A log still lists; the broken graph is reported as a located problem, and choosing it fails
            // located.
            QCOMPARE(run.exitCode, 0);
            QVERIFY(run.out.find(path + ":") != std::string::npos);
            Run chosen = runCli({"info", "--json", q(path), "--graph", "0"});
            QCOMPARE(chosen.exitCode, 2);
            QVERIFY2(isLocatedError(chosen.err, path), chosen.err.c_str());
            return;
        }
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(isLocatedError(run.err, path), run.err.c_str());
        if (line > 0)
            QVERIFY2(run.err.rfind(path + ":" + std::to_string(line) + ":", 0) == 0, run.err.c_str());
        Run convert = runCli({"convert", q(path), "--to", "json", "-o", dir.filePath("out.json")});
        QCOMPARE(convert.exitCode, 2);
        QVERIFY(isLocatedError(convert.err, path));
    }

    // docs/formats.md "Bad input": every class exits 2 with a file:line:col message, for info and convert.
    void badGraphsExitTwo_data() {
        addBadInputColumns();
        addBadGraphRows();
    }

    void badGraphsExitTwo() {
        const BadGraphInput bad = fetchBadInput();
        QTemporaryDir dir;
        const std::string path = dir.filePath("bad.graph").toStdString();
        writeFile(path, bad.bytes);
        const std::string where =
            path + ":" + std::to_string(bad.line) + ":" + std::to_string(bad.col) + ": error: ";
        for (const QStringList& args :
             {QStringList{"info", q(path)}, QStringList{"info", "--json", q(path)},
              QStringList{"convert", q(path), "--to", "json", "-o", dir.filePath("o.json")}}) {
            Run run = runCli(args);
            QCOMPARE(run.exitCode, 2);
            QVERIFY2(run.err.rfind(where, 0) == 0, run.err.c_str());
            QVERIFY2(run.err.find(bad.message) != std::string::npos, run.err.c_str());
        }
    }

    void missingFile() {
        Run run = runCli({"info", "/nonexistent/graph.txt"});
        QCOMPARE(run.exitCode, 2);
        QVERIFY(run.err.find("/nonexistent/graph.txt") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
