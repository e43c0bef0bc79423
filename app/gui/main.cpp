// jointscope [FILE]: the desktop graph inspector. With no FILE it opens the bundled example graph.
#include "CanvasFeature.h"
#include "DiffFeature.h"
#include "MainWindow.h"
#include "PartitionDocument.h"
#include "PartitionFeature.h"
#include "RuntimeFeature.h"
#include "ShardingDocument.h"
#include "ShardingFeature.h"
#include "ShardingPanel.h"
#include "models/CliJob.h"
#include "panels/RuntimePanel.h"

#include <QAction>
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QTimer>

#include <cstdio>
#include <memory>

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

constexpr bool kHidden = true;

// A command-line option NAME (with a value called `valueName` when not empty), hidden from --help when
// `hidden`.
QCommandLineOption option(const char* name, const char* help, const char* valueName = "",
                          bool hidden = false) {
    QCommandLineOption o(QString::fromLatin1(name), QString::fromUtf8(help), QString::fromLatin1(valueName));
    if (hidden)
        o.setFlags(QCommandLineOption::HiddenFromHelp);
    return o;
}

} // namespace

// --script-pins N: once the graph is shown, pins its first N call_function nodes MUST_SAVE, one every 25 ms,
// and prints "autosaved K" each time the autosave holding the first K pins is on disk.
static void scriptPinEdits(jointscope::gui::MainWindow& window, int count) {
    auto pinned = std::make_shared<int>(0);
    QObject::connect(&window, &jointscope::gui::MainWindow::autosaved, &window, [pinned] {
        std::printf("autosaved %d\n", *pinned);
        std::fflush(stdout);
    });
    QObject::connect(&window, &jointscope::gui::MainWindow::restoreDone, &window, [&window, count, pinned] {
        window.whenDocumentLoaded([&window, count, pinned](bool loaded) {
            if (!loaded)
                return;
            auto names = std::make_shared<std::vector<std::string>>();
            for (const jointscope::Node& n :
                 window.feature<jointscope::gui::PartitionFeature>()->document()->graph()->nodes())
                if (n.op == jointscope::NodeOp::CallFunction && int(names->size()) < count)
                    names->push_back(n.name);
            auto* timer = new QTimer(&window);
            QObject::connect(timer, &QTimer::timeout, &window, [&window, timer, names, pinned] {
                if (*pinned >= int(names->size())) {
                    timer->stop();
                    std::printf("done %d\n", *pinned);
                    std::fflush(stdout);
                    return;
                }
                const std::string name = (*names)[size_t(*pinned)];
                ++*pinned;
                std::printf("pin %d %s\n", *pinned, name.c_str());
                std::fflush(stdout);
                window.feature<jointscope::gui::PartitionFeature>()->document()->setPolicy(
                    name, jointscope::partition::Policy::MustSave);
            });
            timer->start(25);
        });
    });
}

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
    const QCommandLineOption enter = option("enter", "Open the HOP body read by get_attr node NAME.", "NAME");
    const QCommandLineOption select = option("select", "Select and centre on node NAME.", "NAME");
    // Scripted runs: a screenshot once laid out; Tools › Profile Graph / Validate Partition and sharding on
    // MESH ("2x2", "2x2:dp,tp") once laid out (the screenshot waits for their results).
    const QCommandLineOption screenshot =
        option("screenshot",
               "Save the window to OUT.png once laid out (and what the other options ask for is "
               "shown), then quit.",
               "OUT.png");
    const QCommandLineOption profile =
        option("profile",
               "Profile the graph on this machine once laid out, with REPS reps (Tools › Profile).", "REPS");
    const QCommandLineOption validate =
        option("validate", "Validate the partition numerically once laid out (Tools › Validate).", "");
    const QCommandLineOption shard =
        option("shard", "Solve the sharding on MESH[:NAMES] once laid out.", "MESH");
    // With --shard: load autoparallel's plan into the Compare tab once solved (the screenshot shows it).
    const QCommandLineOption comparePlan =
        option("compare-plan", "With --shard: compare with autoparallel's plan in PLAN.", "PLAN");
    // Crash-recovery scripting (tests): answer the restore question; pin N nodes one by one, printing
    // "autosaved K" once the K-th edit is on disk; write the session once the restore question is settled.
    const QCommandLineOption restoreAnswer =
        option("restore-answer", "Answer the restore question: yes or no.", "ANSWER", kHidden);
    const QCommandLineOption scriptPins =
        option("script-pins", "Pin the first N call nodes MUST_SAVE, one every 25 ms.", "N", kHidden);
    const QCommandLineOption dumpSession =
        option("dump-session", "Save the session to OUT once shown, then quit.", "OUT", kHidden);
    // Screenshots of a large graph laid out whole (View › Collapse Groups off once the first view is up).
    const QCommandLineOption expandAll =
        option("expand-all", "Show every node, not the collapsed view, once laid out.", "");
    // Scripted Tools › Compare Graphs: "auto" (the preset pair) or "A,B" entry indexes, then the first
    // difference selected; the screenshot waits for it.
    const QCommandLineOption diff =
        option("diff",
               "Compare two graphs of the file (entry indexes A,B, or auto: the joint graph and the "
               "one torch partitioned), the first difference selected.",
               "A,B|auto");
    const QCommandLineOption open =
        option("open",
               "Collapse the groups, then open GROUP (its label, or labels from the top: forward/layer 1) "
               "once laid out.",
               "GROUP");
    parser.addOptions({screenshot, enter, select, profile, validate, shard, comparePlan, restoreAnswer,
                       scriptPins, dumpSession, expandAll, open, diff});
    parser.process(app);

    const bool shooting = parser.isSet(screenshot);
    jointscope::gui::MainWindow window(!shooting);
    if (parser.isSet(restoreAnswer))
        window.setRestoreAnswer(parser.value(restoreAnswer));
    window.show();
    if (parser.isSet(scriptPins))
        scriptPinEdits(window, parser.value(scriptPins).toInt());
    if (parser.isSet(dumpSession)) {
        const QString out = parser.value(dumpSession);
        QObject::connect(&window, &jointscope::gui::MainWindow::restoreDone, &window, [&window, out] {
            window.whenDocumentLoaded([&window, out](bool) {
                // The restored pins are applied when the graph is shown: save after that turn of the loop.
                QTimer::singleShot(
                    0, &window, [&window, out] { QCoreApplication::exit(window.saveSession(out) ? 0 : 1); });
            });
        });
    }
    const QString file =
        parser.positionalArguments().isEmpty() ? bundledExample() : parser.positionalArguments().first();
    if (!parser.positionalArguments().isEmpty())
        window.setStartupFile(file);
    bool ok = window.openFile(file);
    // The file is read on a worker: bodies are entered once its graph is shown.
    window.whenDocumentLoaded([&window, &ok, bodies = parser.values(enter)](bool loaded) {
        ok = ok && loaded;
        for (const QString& name : bodies)
            ok = window.enterSubgraph(name) && ok;
    });
    if (parser.isSet(expandAll))
        window.whenLayoutReady([&window] { window.canvasFeature()->actions().collapse->setChecked(false); });
    if (parser.isSet(open)) {
        const QString group = parser.value(open);
        window.whenLayoutReady([&window, &ok, group] {
            jointscope::gui::CanvasFeature* canvas = window.canvasFeature();
            canvas->actions().collapse->setChecked(true); // a small graph opens expanded
            canvas->whenLayoutReady([canvas, &ok, group] {
                if (!canvas->openOnlyGroup(group)) {
                    std::fprintf(stderr, "jointscope: --open: no group '%s' in the view\n",
                                 qPrintable(group));
                    ok = false;
                }
            });
        });
    }
    if (parser.isSet(select)) {
        const QString name = parser.value(select);
        window.whenLayoutReady([&window, name] { window.selectNodeByName(name); });
    }
    jointscope::views::RuntimePanel* panel = window.feature<jointscope::gui::RuntimeFeature>()->panel();
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
            if (!window.feature<jointscope::gui::ShardingFeature>()->solve(mesh.value(0), mesh.value(1)))
                QCoreApplication::exit(1);
        });
        if (parser.isSet(comparePlan)) {
            const QString plan = parser.value(comparePlan);
            jointscope::gui::ShardingDocument* doc =
                window.feature<jointscope::gui::ShardingFeature>()->document();
            QObject::connect(doc, &jointscope::gui::ShardingDocument::finished, &window, [&window, plan] {
                window.feature<jointscope::gui::ShardingFeature>()->panel()->loadAutoparallelPlan(plan);
            });
            QObject::connect(doc, &jointscope::gui::ShardingDocument::storedChanged, &window, [&window] {
                window.feature<jointscope::gui::ShardingFeature>()->panel()->showCompare();
            });
        }
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
        else if (sharding && parser.isSet(comparePlan)) {
            // Shot once autoparallel's plan is in the Compare tab (or refused).
            jointscope::gui::ShardingDocument* doc =
                window.feature<jointscope::gui::ShardingFeature>()->document();
            // storedChanged also comes when the graph is set: shoot once autoparallel's plan is the stored
            // one.
            QObject::connect(
                doc, &jointscope::gui::ShardingDocument::storedChanged, &window,
                [doc, shoot] {
                    if (doc->storedComparison())
                        shoot();
                },
                Qt::QueuedConnection);
            QObject::connect(doc, &jointscope::gui::ShardingDocument::comparisonFailed, &window, shoot,
                             Qt::QueuedConnection);
            QObject::connect(doc, &jointscope::gui::ShardingDocument::failed, &window, shoot,
                             Qt::QueuedConnection);
        } else if (sharding) {
            jointscope::gui::ShardingDocument* doc =
                window.feature<jointscope::gui::ShardingFeature>()->document();
            QObject::connect(doc, &jointscope::gui::ShardingDocument::finished, &window, shoot,
                             Qt::QueuedConnection);
            QObject::connect(doc, &jointscope::gui::ShardingDocument::failed, &window, shoot,
                             Qt::QueuedConnection);
        } else if (parser.isSet(diff)) {
            window.whenDocumentLoaded([&window, shoot, pair = parser.value(diff)](bool loaded) {
                jointscope::gui::DiffFeature* feature = window.feature<jointscope::gui::DiffFeature>();
                const QStringList ab = pair.split(QLatin1Char(','));
                if (ab.size() == 2)
                    feature->pick(ab[0].toUInt(), ab[1].toUInt());
                if (!loaded)
                    return shoot();
                feature->dock()->raise();
                feature->compare([feature, shoot](bool compared) {
                    if (!compared)
                        return shoot();
                    feature->step(1, shoot);
                });
            });
        } else
            shoot();
        // A stuck layout must not hang scripted runs.
        QTimer::singleShot(120000, &app, [] { QCoreApplication::exit(2); });
    }
    return app.exec();
}
