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
#include "io/GraphFile.h"
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
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>

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

namespace {

using jointscope::gui::MainWindow;

// What the command line asks for beyond opening FILE: steps scripted once the graph is laid out, then maybe a
// screenshot.
struct LaunchOptions {
    QString file; // empty: the bundled example
    QStringList enter;
    QString select, open, diff, shard, comparePlan;
    bool expandAll = false;
    bool validate = false;
    std::optional<int> profileReps;
    QString screenshot;
    QString restoreAnswer, dumpSession;
    int scriptPins = 0;

    bool running() const { return profileReps || validate; }
};

LaunchOptions parseLaunchOptions(const QCoreApplication& app) {
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

    LaunchOptions o;
    if (!parser.positionalArguments().isEmpty())
        o.file = parser.positionalArguments().first();
    o.enter = parser.values(enter);
    o.select = parser.value(select);
    o.open = parser.value(open);
    o.diff = parser.value(diff);
    o.shard = parser.value(shard);
    o.comparePlan = parser.value(comparePlan);
    o.expandAll = parser.isSet(expandAll);
    o.validate = parser.isSet(validate);
    if (parser.isSet(profile))
        o.profileReps = parser.value(profile).toInt() > 0 ? parser.value(profile).toInt() : 10;
    o.screenshot = parser.value(screenshot);
    o.restoreAnswer = parser.value(restoreAnswer);
    o.dumpSession = parser.value(dumpSession);
    o.scriptPins = parser.isSet(scriptPins) ? parser.value(scriptPins).toInt() : 0;
    return o;
}

// --dump-session: the session as restored, written once the restored pins are applied.
void dumpSessionWhenRestored(MainWindow& window, const QString& out) {
    QObject::connect(&window, &MainWindow::restoreDone, &window, [&window, out] {
        window.whenDocumentLoaded([&window, out](bool) {
            // The restored pins are applied when the graph is shown: save after that turn of the loop.
            QTimer::singleShot(0, &window,
                               [&window, out] { QCoreApplication::exit(window.saveSession(out) ? 0 : 1); });
        });
    });
}

// --enter, --expand-all, --open and --select, in that order once the graph is shown; `ok` turns false when
// one of them names what the graph lacks.
void navigateWhenShown(MainWindow& window, const LaunchOptions& o, bool& ok) {
    // The file is read on a worker: bodies are entered once its graph is shown.
    window.whenDocumentLoaded([&window, &ok, bodies = o.enter](bool loaded) {
        ok = ok && loaded;
        for (const QString& name : bodies)
            ok = window.enterSubgraph(name) && ok;
    });
    if (o.expandAll)
        window.whenLayoutReady([&window] { window.canvasFeature()->actions().collapse->setChecked(false); });
    if (!o.open.isEmpty()) {
        window.whenLayoutReady([&window, &ok, group = o.open] {
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
    if (!o.select.isEmpty())
        window.whenLayoutReady([&window, name = o.select] { window.selectNodeByName(name); });
}

// --profile / --validate and --shard (with --compare-plan), started once laid out.
void runWhenLaidOut(MainWindow& window, const LaunchOptions& o) {
    if (o.running()) {
        jointscope::views::RuntimePanel* panel = window.feature<jointscope::gui::RuntimeFeature>()->panel();
        window.whenLayoutReady([panel, reps = o.profileReps] {
            if (!reps)
                return panel->validate();
            panel->setReps(*reps);
            panel->profile();
        });
    }
    if (o.shard.isEmpty())
        return;
    auto* sharding = window.feature<jointscope::gui::ShardingFeature>();
    window.whenLayoutReady([sharding, mesh = o.shard.split(QLatin1Char(':'))] {
        if (!sharding->solve(mesh.value(0), mesh.value(1)))
            QCoreApplication::exit(1);
    });
    if (o.comparePlan.isEmpty())
        return;
    jointscope::gui::ShardingDocument* doc = sharding->document();
    QObject::connect(doc, &jointscope::gui::ShardingDocument::finished, &window,
                     [sharding, plan = o.comparePlan] { sharding->panel()->loadAutoparallelPlan(plan); });
    QObject::connect(doc, &jointscope::gui::ShardingDocument::storedChanged, &window,
                     [sharding] { sharding->panel()->showCompare(); });
}

// --diff: the two graphs compared and the first difference selected, then `done`.
void diffThen(MainWindow& window, const QString& pair, const std::function<void()>& done) {
    window.whenDocumentLoaded([&window, done, pair](bool loaded) {
        jointscope::gui::DiffFeature* feature = window.feature<jointscope::gui::DiffFeature>();
        const QStringList ab = pair.split(QLatin1Char(','));
        if (ab.size() == 2)
            feature->pick(ab[0].toUInt(), ab[1].toUInt());
        if (!loaded)
            return done();
        feature->dock()->raise();
        feature->compare([feature, done](bool compared) {
            if (!compared)
                return done();
            feature->step(1, done);
        });
    });
}

// --screenshot: the window saved once what the other options asked for is shown, then quit (1 when something
// failed, 2 when nothing was shown within two minutes).
void shootWhenDone(QApplication& app, MainWindow& window, const LaunchOptions& o, const bool& ok) {
    auto shoot = [&window, out = o.screenshot, &ok] {
        window.screenshotWhenReady(out, [&ok](bool saved) { QCoreApplication::exit(saved && ok ? 0 : 1); });
    };
    auto* doc = window.feature<jointscope::gui::ShardingFeature>()->document();
    using jointscope::gui::ShardingDocument;
    if (o.running()) {
        QObject::connect(window.feature<jointscope::gui::RuntimeFeature>()->panel()->job(),
                         &jointscope::views::CliJob::finished, &window, shoot, Qt::QueuedConnection);
    } else if (!o.shard.isEmpty() && !o.comparePlan.isEmpty()) {
        // storedChanged also comes when the graph is set: shoot once autoparallel's plan is the stored one
        // (or was refused).
        QObject::connect(
            doc, &ShardingDocument::storedChanged, &window,
            [doc, shoot] {
                if (doc->storedComparison())
                    shoot();
            },
            Qt::QueuedConnection);
        QObject::connect(doc, &ShardingDocument::comparisonFailed, &window, shoot, Qt::QueuedConnection);
        QObject::connect(doc, &ShardingDocument::failed, &window, shoot, Qt::QueuedConnection);
    } else if (!o.shard.isEmpty()) {
        QObject::connect(doc, &ShardingDocument::finished, &window, shoot, Qt::QueuedConnection);
        QObject::connect(doc, &ShardingDocument::failed, &window, shoot, Qt::QueuedConnection);
    } else if (!o.diff.isEmpty()) {
        diffThen(window, o.diff, shoot);
    } else {
        shoot();
    }
    // A stuck layout must not hang scripted runs.
    QTimer::singleShot(120000, &app, [] { QCoreApplication::exit(2); });
}

void describeApplication() {
    QCoreApplication::setApplicationName(QStringLiteral("jointscope"));
    QCoreApplication::setOrganizationName(QStringLiteral("jointscope"));
    QCoreApplication::setApplicationVersion(QStringLiteral(JOINTSCOPE_VERSION));
}

bool argumentGiven(int argc, char* argv[], std::initializer_list<std::string_view> names) {
    for (int i = 1; i < argc; ++i)
        for (std::string_view name : names)
            if (argv[i] == name)
                return true;
    return false;
}

// --help and --version print text: they need no window system, so they answer over ssh too.
bool asksForTextOnly(int argc, char* argv[]) {
    return argumentGiven(argc, argv, {"-h", "-?", "--help", "--help-all", "-v", "--version"});
}

// Where Qt would find no display it aborts with a message about platform plugins; say what to do instead.
bool displayMissing(int argc, char* argv[]) {
    return !qEnvironmentVariableIsSet("DISPLAY") && !qEnvironmentVariableIsSet("WAYLAND_DISPLAY") &&
           !qEnvironmentVariableIsSet("QT_QPA_PLATFORM") && !argumentGiven(argc, argv, {"-platform"});
}

} // namespace

int main(int argc, char* argv[]) {
    if (asksForTextOnly(argc, argv)) {
        QCoreApplication textOnly(argc, argv);
        describeApplication();
        parseLaunchOptions(textOnly); // prints and exits
        return 0;
    }
    if (displayMissing(argc, argv)) {
        std::fprintf(stderr,
                     "jointscope: no display (DISPLAY and WAYLAND_DISPLAY are unset). Without one, use "
                     "jointscope-cli (e.g. jointscope-cli info FILE, jointscope-cli check LOG), or run "
                     "QT_QPA_PLATFORM=offscreen jointscope FILE --screenshot OUT.png.\n");
        return 2;
    }
    QApplication app(argc, argv);
    describeApplication();
    QApplication::setDesktopFileName(QStringLiteral("jointscope"));
    const LaunchOptions options = parseLaunchOptions(app);

    const bool shooting = !options.screenshot.isEmpty();
    MainWindow window(!shooting);
    if (!options.restoreAnswer.isEmpty())
        window.setRestoreAnswer(options.restoreAnswer);
    window.show();
    if (options.scriptPins > 0)
        scriptPinEdits(window, options.scriptPins);
    if (!options.dumpSession.isEmpty())
        dumpSessionWhenRestored(window, options.dumpSession);
    if (!options.file.isEmpty())
        window.setStartupFile(
            QString::fromStdString(jointscope::splitGraphReference(options.file.toStdString()).first));
    bool ok = window.openFile(options.file.isEmpty() ? bundledExample() : options.file);
    navigateWhenShown(window, options, ok);
    runWhenLaidOut(window, options);
    if (shooting)
        shootWhenDone(app, window, options, ok);
    return app.exec();
}
