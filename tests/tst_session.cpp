// Session files (core/io/Session.h): what version 1 wrote reads back, round trips, and refusals of other
// versions, truncated and hostile files, each at the file:line:col of the offending key or token.
#include "io/Session.h"
#include "testutil.h"

#include <nlohmann/json.hpp>

#include <QTemporaryDir>
#include <QTest>

#include <fstream>
#include <map>

using namespace jointscope;

namespace {

const std::string kFile = "s.jointscope";

// The error of parsing `text`; a session that parses gives an empty diagnostic, which every check fails on.
Diagnostic refusal(const std::string& text) {
    const Expected<SessionFile> s = parseSession(text, kFile);
    return s ? Diagnostic{} : s.error();
}

} // namespace

class TestSession : public QObject {
    Q_OBJECT

private slots:
    // What the Qt writer of version 1 put on disk (keys sorted, four-space indent) reads field by field.
    void readsWhatVersionOneWrote() {
        const std::string text = R"js({
    "format": "jointscope-session",
    "graph": {
        "index": 1,
        "path": "/data/joint.txt"
    },
    "options": {
        "memory_budget": 0.5,
        "ruleset": "torch-1.13",
        "solver": "greedy",
        "strategy": "default"
    },
    "policies": {
        "gelu": "MUST_RECOMPUTE",
        "mm": "MUST_SAVE"
    },
    "sharding": {
        "mesh": {
            "names": [
                "dp",
                "tp"
            ],
            "shape": [
                2,
                4
            ],
            "topology": "a100"
        },
        "pins": {
            "primals_5": "S(0)S(0)"
        },
        "solved": true
    },
    "version": 1,
    "view": {
        "geometry": "AdnQywAD",
        "selected": "addmm"
    }
}
)js";
        const Expected<SessionFile> s = parseSession(text, kFile);
        JS_VERIFY_EXPECTED(s);
        QCOMPARE(s->version, int64_t(1));
        QCOMPARE(s->graphPath, std::string("/data/joint.txt"));
        QCOMPARE(s->graphIndex, int64_t(1));
        QCOMPARE(s->ruleset, std::string("torch-1.13"));
        QCOMPARE(s->strategy, std::string("default"));
        QCOMPARE(s->memoryBudget, 0.5);
        QCOMPARE(s->solver, std::string("greedy"));
        QCOMPARE(s->policies.size(), size_t(2));
        QCOMPARE(s->policies.at("gelu"), std::string("MUST_RECOMPUTE"));
        QCOMPARE(s->policies.at("mm"), std::string("MUST_SAVE"));
        QVERIFY(s->sharding);
        QCOMPARE(s->sharding->shape, (std::vector<int64_t>{2, 4}));
        QCOMPARE(s->sharding->names, (std::vector<std::string>{"dp", "tp"}));
        QCOMPARE(s->sharding->topology, std::string("a100"));
        QCOMPARE(s->sharding->pins.size(), size_t(1));
        QCOMPARE(s->sharding->pins.at("primals_5"), std::string("S(0)S(0)"));
        QVERIFY(s->sharding->solved);
        QCOMPARE(s->view.size(), size_t(2));
        QCOMPARE(s->view.at("geometry"), std::string("AdnQywAD"));
        QCOMPARE(s->view.at("selected"), std::string("addmm"));
    }

    // Sessions written before the sharding explorer have no "sharding"; options and policies may be absent.
    void optionalPartsDefault() {
        const Expected<SessionFile> s = parseSession(
            R"js({"format": "jointscope-session", "version": 1, "graph": {"path": "j.txt"}})js", kFile);
        JS_VERIFY_EXPECTED(s);
        QCOMPARE(s->graphPath, std::string("j.txt"));
        QCOMPARE(s->graphIndex, int64_t(0));
        QCOMPARE(s->ruleset, std::string());
        QCOMPARE(s->strategy, std::string("min-cut"));
        QCOMPARE(s->memoryBudget, 1.0);
        QCOMPARE(s->solver, std::string("dp"));
        QVERIFY(s->policies.empty());
        QVERIFY(!s->sharding);
        QVERIFY(s->view.empty());
    }

    void roundTrip() {
        SessionFile s;
        s.graphPath = "/tmp/joint graph.txt";
        s.graphIndex = 3;
        s.ruleset = "torch-2";
        s.strategy = "default";
        s.memoryBudget = 0.25;
        s.solver = "ilp";
        s.policies = {{"addmm", "MUST_SAVE"}, {"gelu", "MUST_RECOMPUTE"}};
        s.sharding = SessionSharding{{8, 8}, {"dp", "tp"}, "gb200", {{"primals_1", "S(0)R"}}, true};
        s.view = {{"state", "AAAA/w=="}, {"selected", "relu_1"}};
        const std::string text = writeSession(s);

        // The keys and values version 1 readers look for, checked on the text itself.
        const nlohmann::json j = nlohmann::json::parse(text);
        QCOMPARE(j.at("format").get<std::string>(), std::string("jointscope-session"));
        QCOMPARE(j.at("version").get<int>(), 1);
        QCOMPARE(j.at("graph").at("path").get<std::string>(), std::string("/tmp/joint graph.txt"));
        QCOMPARE(j.at("graph").at("index").get<int>(), 3);
        QCOMPARE(j.at("options").at("memory_budget").get<double>(), 0.25);
        QCOMPARE(j.at("options").at("solver").get<std::string>(), std::string("ilp"));
        QCOMPARE(j.at("policies").at("gelu").get<std::string>(), std::string("MUST_RECOMPUTE"));
        QVERIFY(j.at("sharding").at("mesh").at("shape") == nlohmann::json::parse("[8, 8]"));
        QCOMPARE(j.at("sharding").at("mesh").at("topology").get<std::string>(), std::string("gb200"));
        QCOMPARE(j.at("sharding").at("pins").at("primals_1").get<std::string>(), std::string("S(0)R"));
        QCOMPARE(j.at("sharding").at("solved").get<bool>(), true);
        QCOMPARE(j.at("view").at("state").get<std::string>(), std::string("AAAA/w=="));

        const Expected<SessionFile> back = parseSession(text, kFile);
        JS_VERIFY_EXPECTED(back);
        QVERIFY(*back == s);

        // Through a file as well.
        QTemporaryDir dir;
        const std::string path = dir.filePath(QStringLiteral("r.jointscope")).toStdString();
        std::ofstream(path, std::ios::binary) << text;
        const Expected<SessionFile> fromFile = readSession(path);
        JS_VERIFY_EXPECTED(fromFile);
        QVERIFY(*fromFile == s);
    }

    void newerVersionIsRefused() {
        const Diagnostic d = refusal(R"js({
    "format": "jointscope-session",
    "version": 2,
    "graph": {"path": "/g/joint.txt", "index": 0}
}
)js");
        // At the "version" key: line 3, column 5.
        QCOMPARE(d.loc.file, kFile);
        QCOMPARE(d.loc.line, 3u);
        QCOMPARE(d.loc.col, 5u);
        QVERIFY2(d.message.find("version 2") != std::string::npos, d.message.c_str());
        QVERIFY2(d.message.find("reads version 1") != std::string::npos, d.message.c_str());
        QVERIFY2(d.format().rfind("s.jointscope:3:5: error: ", 0) == 0, d.format().c_str());
    }

    void missingVersionIsRefused() {
        const Diagnostic d =
            refusal("\n  {\"format\": \"jointscope-session\", \"graph\": {\"path\": \"x\"}}");
        // At the session's opening brace: line 2, column 3.
        QCOMPARE(d.loc.file, kFile);
        QCOMPARE(d.loc.line, 2u);
        QCOMPARE(d.loc.col, 3u);
        QVERIFY2(d.message.find("no \"version\"") != std::string::npos, d.message.c_str());
        QVERIFY2(d.message.find("version 1") != std::string::npos, d.message.c_str());
    }

    void versionOfTheWrongTypeIsRefused() {
        // "version" starts at column 34: '{' 1, "format" 2-9, ':' 10, the format string 12-31, ',' 32.
        Diagnostic d =
            refusal(R"js({"format": "jointscope-session", "version": "1", "graph": {"path": "x"}})js");
        QCOMPARE(d.loc.line, 1u);
        QCOMPARE(d.loc.col, 34u);
        QVERIFY2(d.message.find("not an integer") != std::string::npos, d.message.c_str());
        d = refusal(
            R"js({"format": "jointscope-session", "version": 18446744073709551615, "graph": {"path": "x"}})js");
        QCOMPARE(d.loc.col, 34u);
        QVERIFY2(d.message.find("not an integer") != std::string::npos, d.message.c_str());
        d = refusal(R"js({"format": "jointscope-session", "version": 1.0, "graph": {"path": "x"}})js");
        QCOMPARE(d.loc.col, 34u);
        QVERIFY2(d.message.find("not an integer") != std::string::npos, d.message.c_str());
    }

    void truncatedFileIsLocated() {
        const std::string text = "{\n"
                                 "    \"format\": \"jointscope-session\",\n"
                                 "    \"version\": 1,\n"
                                 "    \"graph\": {\"path\": \"x\", \"in";
        const Diagnostic d = refusal(text);
        // The unterminated string "in starts at column 28 of line 4.
        QCOMPARE(d.loc.line, 4u);
        QCOMPARE(d.loc.col, 28u);
        QVERIFY2(d.message.find("invalid JSON") != std::string::npos, d.message.c_str());
        QVERIFY2(d.format().rfind("s.jointscope:4:28: error: ", 0) == 0, d.format().c_str());

        // Cut after a complete member: at the end of the text, line 4 column 1.
        const Diagnostic end = refusal("{\n  \"format\": \"jointscope-session\",\n  \"version\": 1,\n");
        QCOMPARE(end.loc.line, 4u);
        QCOMPARE(end.loc.col, 1u);
        QVERIFY2(end.message.find("invalid JSON") != std::string::npos, end.message.c_str());
    }

    void hostileFilesAreLocated() {
        // A policy that is not a string: at its key, line 2 column 15.
        Diagnostic d =
            refusal("{\"format\": \"jointscope-session\", \"version\": 1, \"graph\": {\"path\": \"x\"},\n"
                    " \"policies\": {\"mm\": 3}}");
        QCOMPARE(d.loc.line, 2u);
        QCOMPARE(d.loc.col, 15u);
        QVERIFY2(d.message.find("policies.mm") != std::string::npos, d.message.c_str());

        // A mesh size that is text: at "shape", line 3 column 13.
        d = refusal("{\"format\": \"jointscope-session\", \"version\": 1, \"graph\": {\"path\": \"x\"},\n"
                    " \"sharding\": {\n"
                    "   \"mesh\": {\"shape\": [\"2\", 2]}}}");
        QCOMPARE(d.loc.line, 3u);
        QCOMPARE(d.loc.col, 13u);
        QVERIFY2(d.message.find("\"2\"") != std::string::npos, d.message.c_str());

        // "graph" that is not an object: at its key, column 48.
        d = refusal(R"js({"format": "jointscope-session", "version": 1, "graph": "joint.txt"})js");
        QCOMPARE(d.loc.line, 1u);
        QCOMPARE(d.loc.col, 48u);
        QVERIFY2(d.message.find("not an object") != std::string::npos, d.message.c_str());

        // No graph path: at the graph object that lacks it, its '{' at column 57 ("graph" 48-54, ':' 55).
        d = refusal(R"js({"format": "jointscope-session", "version": 1, "graph": {"index": 2}})js");
        QCOMPARE(d.loc.line, 1u);
        QCOMPARE(d.loc.col, 57u);
        QVERIFY2(d.message.find("graph.path") != std::string::npos, d.message.c_str());

        // Another format: at "format", column 2.
        d = refusal(R"js({"format": "jointscope-graph", "version": 1})js");
        QCOMPARE(d.loc.line, 1u);
        QCOMPARE(d.loc.col, 2u);
        QVERIFY2(d.message.find("not a jointscope session") != std::string::npos, d.message.c_str());

        // Not an object at all: at the array, line 1 column 2.
        d = refusal(" [1, 2]");
        QCOMPARE(d.loc.line, 1u);
        QCOMPARE(d.loc.col, 2u);
        QVERIFY2(d.message.find("JSON object") != std::string::npos, d.message.c_str());

        // Nesting deep enough to exhaust a recursive reader: refused before parsing, at the 257th bracket.
        d = refusal(std::string(300, '[') + std::string(300, ']'));
        QCOMPARE(d.loc.line, 1u);
        QCOMPARE(d.loc.col, 257u);

        // Not a file.
        const Expected<SessionFile> missing = readSession("/nonexistent/dir/s.jointscope");
        QVERIFY(!missing);
        QCOMPARE(missing.error().loc.file, std::string("/nonexistent/dir/s.jointscope"));
    }

    // A session's graph must be a graph file: one naming itself, or two naming each other, are refused at
    // graph.path (line and column counted by hand below), whatever the target's name.
    void sessionNamingASessionIsRefused() {
        QTemporaryDir dir;
        auto write = [&](const QString& name, const std::string& text) {
            const std::string path = dir.filePath(name).toStdString();
            std::ofstream(path, std::ios::binary) << text;
            return path;
        };
        // "path" at line 3, column 13: two spaces, "graph" (3-9), ':' and a space, '{' at 12.
        const std::string self = write(QStringLiteral("self.jointscope"),
                                       "{\"format\": \"jointscope-session\", \"version\": 1,\n"
                                       "\n"
                                       "  \"graph\": {\"path\": \"self.jointscope\", \"index\": 0}}\n");
        Expected<SessionFile> s = readSession(self);
        QVERIFY(!s);
        QCOMPARE(s.error().loc.file, self);
        QCOMPARE(s.error().loc.line, 3u);
        QCOMPARE(s.error().loc.col, 13u);
        QVERIFY2(s.error().message.find("this session itself") != std::string::npos,
                 s.error().message.c_str());

        const std::string a =
            write(QStringLiteral("a.jointscope"),
                  R"({"format": "jointscope-session", "version": 1, "graph": {"path": "b.json"}})");
        // b has another name and puts "format" last: found by its content, not its suffix.
        write(QStringLiteral("b.json"),
              R"({"graph": {"path": "a.jointscope"}, "version": 1, "format": "jointscope-session"})");
        s = readSession(a);
        QVERIFY(!s);
        QCOMPARE(s.error().loc.line, 1u);
        QCOMPARE(s.error().loc.col, 58u);
        QVERIFY2(s.error().message.find("b.json") != std::string::npos, s.error().message.c_str());
        QVERIFY(isSessionFile(dir.filePath(QStringLiteral("b.json")).toStdString()));

        // A graph file beside it is fine, and resolves against the session's folder.
        write(QStringLiteral("g.txt"), "def forward(self, x):\n    return (x,)\n");
        const std::string ok =
            write(QStringLiteral("ok.jointscope"),
                  R"({"format": "jointscope-session", "version": 1, "graph": {"path": "g.txt"}})");
        s = readSession(ok);
        QVERIFY2(bool(s), s ? "" : s.error().format().c_str());
        QCOMPARE(sessionGraphFile(*s, ok), dir.filePath(QStringLiteral("g.txt")).toStdString());
        QVERIFY(!isSessionFile(sessionGraphFile(*s, ok)));
    }

    // Every collection has a limit, refused at its key; a session under the limits reads whole.
    void collectionsHaveLimits() {
        SessionLimits limits;
        limits.policies = 3;
        limits.shardingPins = 2;
        limits.meshDims = 2;
        limits.stringBytes = 12; // "MUST_SAVE" fits, a 21-byte node name does not
        const std::string head =
            "{\"format\": \"jointscope-session\", \"version\": 1, \"graph\": {\"path\": \"g\"},\n";
        auto refused = [&](const std::string& tail) {
            Expected<SessionFile> s = parseSession(head + tail, kFile, limits);
            return s ? Diagnostic{} : s.error();
        };
        Diagnostic d = refused(
            R"( "policies": {"a": "MUST_SAVE", "b": "MUST_SAVE", "c": "MUST_SAVE", "d": "MUST_SAVE"}})");
        QCOMPARE(d.loc.line, 2u);
        QCOMPARE(d.loc.col, 2u);
        QVERIFY2(d.message.find("holds 4 policies; a session holds at most 3") != std::string::npos,
                 d.message.c_str());
        d = refused(R"( "sharding": {"mesh": {"shape": [2, 2, 2]}}})");
        QVERIFY2(d.message.find("mesh dimensions") != std::string::npos, d.message.c_str());
        d = refused(R"( "sharding": {"pins": {"a": "R", "b": "R", "c": "R"}}})");
        QVERIFY2(d.message.find("3 sharding pins") != std::string::npos, d.message.c_str());
        d = refused(R"( "policies": {"a_very_long_node_name": "MUST_SAVE"}})");
        QVERIFY2(d.message.find("bytes long") != std::string::npos, d.message.c_str());
        QVERIFY(bool(
            parseSession(head + R"( "policies": {"a": "MUST_SAVE", "b": "MUST_SAVE"}})", kFile, limits)));

        // The default limits take a session with 300,000 policies (a hostile but well-formed file).
        nlohmann::json big = {{"format", "jointscope-session"}, {"version", 1}, {"graph", {{"path", "g"}}}};
        for (int i = 0; i < 300000; ++i)
            big["policies"]["n" + std::to_string(i)] = "MUST_SAVE";
        Expected<SessionFile> s = parseSession(big.dump(), kFile);
        QVERIFY(bool(s));
        QCOMPARE(s->policies.size(), size_t(300000));
    }

    // Pins that name no node are taken out in one pass and summarised once, with a few names.
    void unknownNodesAreTakenOutOnce() {
        std::map<std::string, std::string> pins;
        for (int i = 0; i < 1000; ++i)
            pins["n" + std::to_string(i)] = "MUST_SAVE";
        pins["mm"] = "MUST_SAVE";
        UnknownNodes unknown;
        takeUnknownNodes(
            pins, [](const std::string& name) { return name == "mm"; }, unknown);
        QCOMPARE(pins.size(), size_t(1));
        QCOMPARE(unknown.count, size_t(1000));
        QCOMPARE(unknown.examples.size(), size_t(5));
        const std::string summary = unknown.summary("partition pins");
        QVERIFY2(summary.rfind("1000 partition pins name no node of the graph: 'n0', 'n1'", 0) == 0,
                 summary.c_str());
    }
};

QTEST_MAIN(TestSession)
#include "tst_session.moc"
