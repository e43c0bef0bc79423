// Inputs the fuzzers (fuzz/, docs/fuzzing.md) once crashed on: each must now give a located error, or read
// and round-trip. File names say which reader: fx-*.txt, json-*.json, trace-*.log, paste-*.txt.
#include "io/FxReader.h"
#include "io/FxWriter.h"
#include "io/JsonFormat.h"
#include "io/TraceLog.h"
#include "testutil.h"

#include <QDir>

using namespace jointscope;
using namespace jointscope::test;

namespace {

QStringList findings(const QString& pattern) {
    return QDir(q(sourcePath("tests/data/fuzz"))).entryList({pattern}, QDir::Files, QDir::Name);
}

void verifyLocated(const Diagnostic& d, const std::string& file) {
    QVERIFY2(d.loc.file == file && d.loc.line > 0 && d.loc.col > 0, d.format().c_str());
}

} // namespace

class TestFuzzFindings : public QObject {
    Q_OBJECT
private slots:
    void findingsExist() { QVERIFY(findings("*").size() >= 2); }

    void fxInputsFailLocatedOrRoundTrip() {
        for (const QString& name : findings("fx-*.txt")) {
            const std::string path = sourcePath("tests/data/fuzz/" + name.toStdString());
            const std::string text = readFile(path);
            Expected<Graph> g = readFxText(text, {path, 1, 0});
            if (!g) {
                verifyLocated(g.error(), path);
                continue;
            }
            Expected<Graph> again = readFxText(writeFxText(*g), {"written", 1, 0});
            JS_VERIFY_EXPECTED(again);
            QCOMPARE(again->size(), g->size());
        }
    }

    void jsonInputsFailLocated() {
        for (const QString& name : findings("json-*.json")) {
            const std::string path = sourcePath("tests/data/fuzz/" + name.toStdString());
            Expected<Graph> g = readJsonGraph(readFile(path), path);
            QVERIFY2(!g, "a corrupted graph file was accepted");
            verifyLocated(g.error(), path);
        }
    }

    void logInputsIndexWithoutCrashing() {
        for (const QString& name : findings("trace-*.log") + findings("paste-*.txt")) {
            const std::string path = sourcePath("tests/data/fuzz/" + name.toStdString());
            const std::string text = readFile(path);
            GraphIndex index =
                name.startsWith("trace-") ? indexTraceLog(text, path) : indexLogPaste(text, path);
            for (const Diagnostic& d : index.problems)
                verifyLocated(d, path);
        }
    }
};

QTEST_GUILESS_MAIN(TestFuzzFindings)
#include "tst_fuzzfindings.moc"
