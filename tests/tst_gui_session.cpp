// Hostile session files in the window (issue 31): a session that names itself, two that name each other, a
// session with 300,000 pins of nodes the graph lacks, and Cancel while a session is read. The window must
// stay up, say what is wrong (file:line:col, node names), and never apply a pin one by one at quadratic cost.
#include "guitestutil.h"
#include "testutil.h"

#include "MainWindow.h"
#include "PartitionDocument.h"
#include "PartitionFeature.h"
#include "canvas/GraphScene.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QPlainTextEdit>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>

#include <fstream>

using namespace jointscope;
using namespace jointscope::test;
using jointscope::gui::MainWindow;
using jointscope::partition::Policy;

namespace {

QString logText(const MainWindow& window) {
    const auto* log = window.findChild<QPlainTextEdit*>();
    return log ? log->toPlainText() : QString();
}

QString writeText(const QTemporaryDir& dir, const QString& name, const std::string& text) {
    const QString path = dir.filePath(name);
    std::ofstream(path.toStdString(), std::ios::binary) << text;
    return path;
}

std::string sessionNaming(const std::string& graphPath) {
    return nlohmann::json{
        {"format", "jointscope-session"}, {"version", 1}, {"graph", {{"path", graphPath}, {"index", 0}}}}
        .dump();
}

// Opens `path` as File › Open Session does and waits (up to `ms`) for the answer: applied or not.
bool openSessionAndWait(MainWindow& window, const QString& path, int ms = 10000) {
    bool done = false, applied = false;
    window.sessionController()->open(path, [&](bool ok) {
        done = true;
        applied = ok;
    });
    if (!QTest::qWaitFor([&] { return done; }, ms))
        qFatal("the session %s was not opened within %d ms", qPrintable(path), ms);
    return applied;
}

} // namespace

class TestGuiSession : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { test::isolateUserDirs(home_, QStringLiteral("tst_gui_session")); }

    // Before the fix: endless recursion, SIGSEGV within 0.2 s.
    void sessionNamingItselfIsRefused() {
        QTemporaryDir dir;
        const QString self =
            writeText(dir, QStringLiteral("self.jointscope"), sessionNaming("self.jointscope"));
        MainWindow window(false);
        QVERIFY(!openSessionAndWait(window, self));
        QVERIFY(!window.scene()->graph());
        // Located at graph.path: line 1, the "path" key after {"format":...,"graph":{ — counted below.
        const std::string text = sessionNaming("self.jointscope");
        const size_t col = text.find("\"path\"") + 1;
        const QString where =
            QStringLiteral("%1:1:%2: error: graph.path names this session itself").arg(self).arg(col);
        QVERIFY2(logText(window).contains(where), qPrintable(logText(window)));
    }

    void sessionsNamingEachOtherAreRefused() {
        QTemporaryDir dir;
        const QString a = writeText(dir, QStringLiteral("a.jointscope"), sessionNaming("b.jointscope"));
        writeText(dir, QStringLiteral("b.jointscope"), sessionNaming("a.jointscope"));
        MainWindow window(false);
        QVERIFY(!openSessionAndWait(window, a));
        QVERIFY2(logText(window).contains(QStringLiteral("graph.path names the session")),
                 qPrintable(logText(window)));
        // Opened from the File menu's path (openFile), by content too: a session saved as .json.
        const QString c = writeText(dir, QStringLiteral("c.json"), sessionNaming("c.json"));
        QVERIFY(window.openFile(c));
        QTRY_VERIFY_WITH_TIMEOUT(logText(window).contains(QStringLiteral("names this session itself")),
                                 10000);
        QVERIFY(!window.scene()->graph());
    }

    // Before the fix: the window did not come back within 60 s. The pins of unknown nodes are said once.
    void manyUnknownPinsOpenAndAreReportedOnce() {
        QTemporaryDir dir;
        nlohmann::json session =
            nlohmann::json::parse(sessionNaming(sharedPath("graphs/torch-1.13/mlp/joint.txt")));
        for (int i = 0; i < 300000; ++i)
            session["policies"]["missing_" + std::to_string(i)] = "MUST_SAVE";
        session["policies"]["gelu"] = "MUST_RECOMPUTE";
        for (int i = 0; i < 1000; ++i)
            session["sharding"]["pins"]["gone_" + std::to_string(i)] = "S(0)";
        session["sharding"]["mesh"] = {{"shape", {2}}, {"names", {"dp"}}};
        const QString path = writeText(dir, QStringLiteral("big.jointscope"), session.dump());
        MainWindow window(false);
        QVERIFY(openSessionAndWait(window, path, 30000));
        QCOMPARE(window.feature<gui::PartitionFeature>()->document()->edits().size(), size_t(1));
        QCOMPARE(window.feature<gui::PartitionFeature>()->document()->edits().at("gelu"),
                 Policy::MustRecompute);
        const QString log = logText(window);
        QCOMPARE(log.count(QStringLiteral("300000 partition pin(s) name no node of the graph: 'missing_0'")),
                 1);
        QCOMPARE(log.count(QStringLiteral("1000 sharding pin(s) name no node of the graph")), 1);
        window.feature<gui::PartitionFeature>()->document()->waitForIdle();
    }

    // Cancel (the status bar's button, as Esc) while a session is read: nothing is opened, `then` says so.
    void cancelWhileReading() {
        QTemporaryDir dir;
        const QString path = writeText(dir, QStringLiteral("s.jointscope"),
                                       sessionNaming(sharedPath("graphs/torch-1.13/mlp/joint.txt")));
        MainWindow window(false);
        window.show();
        bool done = false, applied = true;
        window.sessionController()->open(path, [&](bool ok) {
            done = true;
            applied = ok;
        });
        QToolButton* cancel = nullptr;
        for (QToolButton* b : window.findChildren<QToolButton*>())
            if (b->text().startsWith(QStringLiteral("Cancel")))
                cancel = b;
        QVERIFY(cancel);
        QVERIFY(cancel->isVisible());
        cancel->click();
        QVERIFY(done);
        QVERIFY(!applied);
        QVERIFY(!cancel->isVisible());
        QTest::qWait(200);
        QVERIFY(!window.scene()->graph());
        QVERIFY(logText(window).contains(QStringLiteral("Stopped reading the session")));
    }

private:
    QTemporaryDir home_;
};

QTEST_MAIN(TestGuiSession)
#include "tst_gui_session.moc"
