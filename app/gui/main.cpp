// jointscope [FILE]: the desktop graph inspector. With no FILE it opens the bundled example graph.
#include "MainWindow.h"
#include "ShardingDocument.h"
#include "models/CliJob.h"
#include "panels/RuntimePanel.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QTimer>

namespace {

// ../share/jointscope/examples beside an installed binary, else the source tree's resources/examples.
QString bundledExample() {
    const QString name = QStringLiteral("gpt_block2.json");
    const QString appDir = QCoreApplication::applicationDirPath();
    const QStringList candidates = {
        QDir(appDir).filePath(QStringLiteral("../share/jointscope/examples/") + name),
        QStringLiteral(JOINTSCOPE_SOURCE_EXAMPLES_DIR "/") + name,
        QStringLiteral(JOINTSCOPE_SHARED_EXAMPLE),
    };
    for (const QString& path : candidates)
        if (QFileInfo::exists(path))
            return QFileInfo(path).canonicalFilePath();
    return candidates.front();
}

} // namespace

int main(int argc, char* argv[]) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("jointscope"));
    QApplication::setOrganizationName(QStringLiteral("jointscope"));
    QApplication::setApplicationVersion(QStringLiteral(JOINTSCOPE_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("jointscope"));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Graph inspector and partition debugger for torch.compile"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(
        QStringLiteral("FILE"),
        QStringLiteral("FX text, TORCH_TRACE log, TORCH_LOGS paste or jointscope JSON"));
    QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                  QStringLiteral("Save the window to OUT.png once laid out, then quit."),
                                  QStringLiteral("OUT.png"));
    QCommandLineOption enter(QStringLiteral("enter"),
                             QStringLiteral("Open the HOP body read by get_attr node NAME."),
                             QStringLiteral("NAME"));
    QCommandLineOption select(QStringLiteral("select"), QStringLiteral("Select and centre on node NAME."),
                              QStringLiteral("NAME"));
    screenshot.setFlags(QCommandLineOption::HiddenFromHelp);
    // Scripted runs of Tools › Profile Graph / Validate Partition (the screenshot waits for the result).
    QCommandLineOption profile(QStringLiteral("profile"),
                               QStringLiteral("Profile the graph once laid out, with REPS reps."),
                               QStringLiteral("REPS"));
    QCommandLineOption validate(QStringLiteral("validate"),
                                QStringLiteral("Validate the partition once laid out."));
    profile.setFlags(QCommandLineOption::HiddenFromHelp);
    validate.setFlags(QCommandLineOption::HiddenFromHelp);
    // Scripted sharding: solve on MESH ("2x2", "2x2:dp,tp") once laid out; the screenshot waits for it.
    QCommandLineOption shard(QStringLiteral("shard"),
                             QStringLiteral("Solve the sharding on MESH[:NAMES] once laid out."),
                             QStringLiteral("MESH"));
    parser.addOptions({screenshot, enter, select, profile, validate, shard});
    parser.process(app);

    const bool shooting = parser.isSet(screenshot);
    jointscope::gui::MainWindow window(!shooting);
    window.show();
    const QString file =
        parser.positionalArguments().isEmpty() ? bundledExample() : parser.positionalArguments().first();
    bool ok = window.openFile(file);
    // The file is read on a worker: bodies are entered once its graph is shown.
    window.whenDocumentLoaded([&window, &ok, bodies = parser.values(enter)](bool loaded) {
        ok = ok && loaded;
        for (const QString& name : bodies)
            ok = window.enterSubgraph(name) && ok;
    });
    if (parser.isSet(select)) {
        const QString name = parser.value(select);
        window.whenLayoutReady([&window, name] { window.selectNodeByName(name); });
    }
    jointscope::views::RuntimePanel* panel = window.runtimePanel();
    const bool running = parser.isSet(profile) || parser.isSet(validate);
    if (running) {
        const int reps = parser.value(profile).toInt();
        const bool profiling = parser.isSet(profile);
        window.whenLayoutReady([panel, reps, profiling] {
            if (profiling) {
                panel->setReps(reps > 0 ? reps : 10);
                panel->profile();
            } else {
                panel->validate();
            }
        });
    }
    const bool sharding = parser.isSet(shard);
    if (sharding) {
        const QStringList mesh = parser.value(shard).split(QLatin1Char(':'));
        window.whenLayoutReady([&window, mesh] {
            if (!window.solveSharding(mesh.value(0), mesh.value(1)))
                QCoreApplication::exit(1);
        });
    }
    if (shooting) {
        const QString out = parser.value(screenshot);
        auto shoot = [&window, out, &ok] {
            window.screenshotWhenReady(out,
                                       [&ok](bool saved) { QCoreApplication::exit(saved && ok ? 0 : 1); });
        };
        if (running)
            QObject::connect(panel->job(), &jointscope::views::CliJob::finished, &window, shoot,
                             Qt::QueuedConnection);
        else if (sharding) {
            jointscope::gui::ShardingDocument* doc = window.shardingDocument();
            QObject::connect(doc, &jointscope::gui::ShardingDocument::finished, &window, shoot,
                             Qt::QueuedConnection);
            QObject::connect(doc, &jointscope::gui::ShardingDocument::failed, &window, shoot,
                             Qt::QueuedConnection);
        } else
            shoot();
        // A stuck layout must not hang scripted runs.
        QTimer::singleShot(120000, &app, [] { QCoreApplication::exit(2); });
    }
    return app.exec();
}
