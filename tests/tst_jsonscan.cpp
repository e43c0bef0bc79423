// json_scan: what the fast scan accepts, nlohmann's parser accepts with the same events. Checked on every
// record line of the real TORCH_TRACE logs in the tree and the shared data, on those lines cut and with a
// byte changed, and on JSON's corner cases. Expected events: nlohmann's own.
#include "JsonScanEvents.h"
#include "testutil.h"

#include <QProcess>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace jointscope;

namespace {

using namespace json_scan_events;

// The JSON of every record line (after the glog prefix's "] ") of the logs under `dir`.
std::vector<std::string> recordJsonLines(const std::filesystem::path& dir) {
    std::vector<std::string> out;
    if (!std::filesystem::exists(dir))
        return out;
    for (const auto& file : std::filesystem::recursive_directory_iterator(dir)) {
        if (!file.is_regular_file() ||
            (file.path().extension() != ".log" && file.path().extension() != ".xz"))
            continue;
        std::string text;
        if (file.path().extension() == ".xz") { // the recorded logs
            QProcess xz;
            xz.start("xz", {"-dc", QString::fromStdString(file.path().string())});
            if (!xz.waitForFinished(60000) || xz.exitCode() != 0)
                continue;
            text = xz.readAllStandardOutput().toStdString();
        } else {
            std::ifstream in(file.path(), std::ios::binary);
            text.assign(std::istreambuf_iterator<char>(in), {});
        }
        std::istringstream in(text);
        for (std::string line; std::getline(in, line);) {
            const size_t bracket = line.find("] {");
            if (!line.empty() && line[0] != '\t' && bracket != std::string::npos && bracket < 200)
                out.push_back(line.substr(bracket + 2));
        }
    }
    return out;
}

} // namespace

class TestJsonScan : public QObject {
    Q_OBJECT
private slots:
    // Every record line of the real logs: accepted with nlohmann's events, or left to nlohmann.
    void realRecordLines() {
        std::vector<std::string> lines = recordJsonLines(test::sourcePath("tests/data"));
        const std::vector<std::string> shared = recordJsonLines(test::sharedPath("graphs"));
        lines.insert(lines.end(), shared.begin(), shared.end());
        QVERIFY2(lines.size() > 10000, qPrintable(QString::number(lines.size())));
        size_t fast = 0, leftToFull = 0;
        for (const std::string& line : lines) {
            const Outcome o = compare(line);
            if (o.fastAccepted) {
                QVERIFY2(o.fullAccepted && o.sameEvents, line.substr(0, 300).c_str());
                ++fast;
            } else {
                leftToFull += o.fullAccepted;
            }
        }
        // The fast scan is the common path: most records have no escaped or non-ASCII string.
        QVERIFY2(fast > 9 * leftToFull, qPrintable(QString("%1 fast, %2 left").arg(fast).arg(leftToFull)));
        qInfo("%zu record lines: %zu scanned fast, %zu left to nlohmann", lines.size(), fast, leftToFull);
    }

    // Those lines cut short and with one byte changed: whatever the fast scan accepts, nlohmann accepts
    // alike.
    void damagedRecordLines() {
        const std::vector<std::string> lines = recordJsonLines(test::sourcePath("tests/data/torch2"));
        QVERIFY(!lines.empty());
        const char replacements[] = {'"', '\\', 'u', '/', '{', '}', '[',    ']', ',',
                                     ':', '0',  '-', 'e', '.', ' ', '\x01', 'x'};
        size_t checked = 0, invalid = 0, fast = 0;
        for (size_t n = 0; n < lines.size(); n += 7) {
            const std::string& line = lines[n];
            for (size_t cut = 0; cut < line.size(); cut += 1 + line.size() / 40) {
                const Outcome o = compare(std::string_view(line).substr(0, cut));
                QVERIFY2(!o.fastAccepted || (o.fullAccepted && o.sameEvents), line.substr(0, cut).c_str());
                invalid += !o.fullAccepted;
                fast += o.fastAccepted;
                ++checked;
            }
            for (size_t at = 0; at < line.size(); at += 1 + line.size() / 25)
                for (char c : replacements) {
                    std::string changed = line;
                    changed[at] = c;
                    const Outcome o = compare(changed);
                    QVERIFY2(!o.fastAccepted || (o.fullAccepted && o.sameEvents), changed.c_str());
                    invalid += !o.fullAccepted;
                    fast += o.fastAccepted;
                    ++checked;
                }
        }
        qInfo("%zu damaged lines: %zu not JSON, %zu scanned fast", checked, invalid, fast);
        // Both kinds were met: not JSON, and JSON the fast scan takes.
        QVERIFY(checked > 10000);
        QVERIFY(invalid > checked / 4);
        QVERIFY(fast > checked / 4);
    }

    void cornerCases_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<bool>("fast"); // the fast scan takes it (else it is left to nlohmann)
        const std::vector<std::pair<const char*, bool>> cases = {
            {"{\"a\": 1}", true},
            {" {\"a\" : [1, 2.5, -3, 1e9, 0, true, false, null, {}, []]} ", true},
            {"{\"a\":\t1}\r\n", true},
            {"{\"id\": 18446744073709551615}", false}, // 20 digits: left to nlohmann
            {"{\"id\": 9999999999999999999}", true},
            {"{\"x\": -0}", false},
            {"{\"x\": -0.5}", true},
            {"{\"x\": 231e+943}", false}, // past a double's range: nlohmann refuses it
            {"{\"x\": -1.5e400}", false},
            {"{\"x\": 1e-400}", false}, // below it: left to nlohmann, which takes it
            {"{\"x\": 1.7976931348623157e308}", true},
            {"{\"x\": 01}", false},
            {"{\"x\": 1.}", false},
            {"{\"x\": .5}", false},
            {"{\"x\": 1e}", false},
            {"{\"x\": 1e+}", false},
            {"{\"x\": +1}", false},
            {"{\"x\": -}", false},
            {"[1,]", false},
            {"{\"a\":1,}", false},
            {"{\"a\" 1}", false},
            {"{a: 1}", false},
            {"{\"a\": \"b\\\"c\"}", true},
            {"{\"k\\ney\": \"\\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\u20AC \\u0000\"}", true},
            {"{\"a\": \"\\ud83d\\ude00\"}", true},  // a surrogate pair
            {"{\"a\": \"\\ud83d\"}", false},        // a high surrogate alone
            {"{\"a\": \"\\ud83d\\u0041\"}", false}, // followed by no low one
            {"{\"a\": \"\\ude00\"}", false},        // a low surrogate first
            {"{\"a\": \"\\x\"}", false},
            {"{\"a\": \"\\u12\"}", false},
            {"{\"a\": \"\\u00zz\"}", false},
            {"{\"a\": \"b\\\"}", false},      // the escape takes the closing quote
            {"{\"a\": \"\xc3\xa9\"}", false}, // UTF-8: left to nlohmann
            {"{\"a\": \"\x01\"}", false},
            {"\xef\xbb\xbf{}", false}, // a byte-order mark
            {"{\"a\": tru}", false},
            {"{\"a\": nulll}", false},
            {"{\"a\": 1} x", false},
            {"{\"a\": 1}}", false},
            {"", false},
            {"   ", false},
            {"\"just a string\"", true},
            {"12", true},
            {"{\"a\": [[[[[[]]]]]]}", true},
        };
        for (const auto& [text, fast] : cases)
            QTest::newRow(text) << QByteArray(text) << fast;
    }

    void cornerCases() {
        QFETCH(QByteArray, text);
        QFETCH(bool, fast);
        const std::string bytes = text.toStdString();
        const Outcome o = compare(bytes);
        QCOMPARE(o.fastAccepted, fast);
        if (o.fastAccepted) {
            QVERIFY(o.fullAccepted);
            QVERIFY(o.sameEvents);
        }
    }

    // Nesting past the depth given stops the scan before it recurses further.
    void depthLimit() {
        const std::string deep = std::string(300, '[') + std::string(300, ']');
        ScanRecorder recorder;
        QVERIFY(!json_scan::scan(deep, recorder, 256));
        QCOMPARE(recorder.events.size(), size_t(256));
        ScanRecorder shallow;
        QVERIFY(json_scan::scan(deep, shallow, 300));
    }
};

QTEST_GUILESS_MAIN(TestJsonScan)
#include "tst_jsonscan.moc"
