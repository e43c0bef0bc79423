// gui_open [--layered] FILE...: opens each graph in the real MainWindow (offscreen; --layered: with View ›
// Ladder Layout off) and prints
//   open_s           reading and parsing the file (on a worker thread) until the window shows its graph
//   load_stall_ms    the longest the event loop did not run while the file was read (a 5 ms QTimer probe:
//                    the largest gap between its ticks, minus 5 ms)
//   show_ms          the UI-thread event that takes the parsed graph (models, scene, partition document)
//   first_frame_s    from the start of the open to the first painted frame with the laid-out view
//   layout_stall_ms  the same probe while the grouping and layout thread works
//   apply_ms         the UI-thread event that puts the result on the canvas (items, overlays, fit)
//   paint_ms         the first repaint of the window after it
//   settle_stall_ms  the probe for 1 s after that frame (minimap, deferred item batches, panels)
//   refined_s        from the start of the open until a background refinement (Graphviz) of that first frame
//                    is on the canvas; 0 when the first frame was final (the ladder, big graphs)
//   refine_stall_ms  the probe while the refinement runs and is applied
//   max_stall_ms     the longest the UI thread was held at any point above
//   expand_*         the same for double-clicking the last collapsed layer, else group (re-layout off the UI
//                    thread); expand_refined_s and expand_refine_stall_ms for dot's refinement inside it
//   peak_rss_MiB     VmHWM of the process after all of it
// docs/benchmarks.md ("GUI") records the numbers.
#include "CanvasFeature.h"
#include "MainWindow.h"

#include "canvas/GraphScene.h"
#include "canvas/GroupItem.h"
#include "layout/Grouping.h"

#include <QAction>
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QFile>
#include <QGraphicsItem>
#include <QLabel>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double peakRssMiB() {
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray& line : status.readAll().split('\n'))
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').front().toDouble() / 1024.0;
    return -1;
}

// Largest gap between ticks of a 5 ms timer while it runs.
class StallProbe {
public:
    StallProbe() {
        timer_.setTimerType(Qt::PreciseTimer);
        timer_.setInterval(5);
        QObject::connect(&timer_, &QTimer::timeout,
                         [this] { maxGap_ = std::max(maxGap_, clock_.restart()); });
    }
    void start() {
        maxGap_ = 0;
        clock_.start();
        timer_.start();
    }
    // Stops; the largest gap between ticks before now (the event running now is not counted).
    double stopMs() {
        timer_.stop();
        return takeMs();
    }
    // The largest gap so far; counting starts again, from now (the event running now is reported apart).
    double takeMs() {
        const double gap = double(std::max<qint64>(0, maxGap_ - 5));
        maxGap_ = 0;
        clock_.restart();
        return gap;
    }
    // Time since the last tick: how long the event running now has held the loop.
    double currentGapMs() const { return double(clock_.elapsed()); }

private:
    QTimer timer_;
    QElapsedTimer clock_;
    qint64 maxGap_ = 0;
};

// Sleeps until an event comes (the probe ticks every 5 ms) and handles what is due. The deadline form of
// QCoreApplication::processEvents drops WaitForMoreEvents and would spin a core the workers need.
void waitForEvents() {
    QEventLoop loop;
    loop.processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents);
}

// Runs the event loop until `done` is set; a hang says where and exits.
void waitFor(const bool& done, const char* what) {
    QElapsedTimer clock;
    clock.start();
    while (!done) {
        waitForEvents();
        if (clock.elapsed() > 120000) {
            std::fprintf(stderr, "gui_open: no %s after 120 s\n", what);
            std::exit(1);
        }
    }
}

// Runs the event loop for `ms`.
void spin(int ms) {
    QElapsedTimer clock;
    clock.start();
    while (clock.elapsed() < ms)
        waitForEvents();
}

} // namespace

int main(int argc, char* argv[]) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    int first = 1;
    const bool layered = argc > 1 && std::strcmp(argv[1], "--layered") == 0;
    first += layered ? 1 : 0;
    if (argc <= first) {
        std::fprintf(stderr, "usage: gui_open [--layered] FILE...\n");
        return 2;
    }
    for (int i = first; i < argc; ++i) {
        jointscope::gui::MainWindow window(false);
        window.canvasFeature()->actions().ladder->setChecked(!layered);
        window.show();
        QCoreApplication::processEvents();
        StallProbe probe;
        QElapsedTimer clock;
        probe.start();
        clock.start();
        // The probe runs while the worker reads the file: the UI thread must keep ticking.
        bool loaded = false, loadOk = false;
        double openSeconds = 0, loadStall = 0, show = 0;
        window.openFile(QString::fromLocal8Bit(argv[i]));
        window.whenDocumentLoaded([&](bool ok) {
            openSeconds = double(clock.nsecsElapsed()) / 1e9;
            show = probe.currentGapMs();
            loadStall = probe.takeMs();
            loadOk = ok;
            loaded = true;
        });
        waitFor(loaded, "document");
        if (!loadOk) {
            std::fprintf(stderr, "gui_open: cannot open %s\n", argv[i]);
            return 1;
        }
        bool ready = false;
        double stall = 0, apply = 0, paint = 0;
        // Runs at the end of the event that applied the layout.
        auto measure = [&] {
            apply = probe.currentGapMs();
            stall = probe.takeMs();
            QElapsedTimer paintClock;
            paintClock.start();
            window.repaint(); // the first frame with the view, painted now
            paint = double(paintClock.nsecsElapsed()) / 1e6;
            ready = true;
        };
        window.whenLayoutReady(measure);
        waitFor(ready, "layout");
        const double firstFrame = double(clock.nsecsElapsed()) / 1e9;
        const double firstStall = stall, firstApply = apply, firstPaint = paint;
        const auto* label = qobject_cast<QLabel*>(window.canvasFeature()->statusWidgets().value(0));
        const QString firstLayout = label ? label->text() : QString();
        // A provisional first frame is refined in the background: the canvas is replaced once more.
        double refinedSeconds = 0, refineStall = 0;
        probe.takeMs();
        if (firstLayout.contains(QStringLiteral("refining"))) {
            while (window.layoutBusy() && clock.elapsed() < 300000)
                waitForEvents();
            refinedSeconds = double(clock.nsecsElapsed()) / 1e9;
            refineStall = probe.takeMs();
        }
        // What the last frame left queued (minimap, deferred batches) still runs on the UI thread.
        spin(1000);
        const double settle = probe.stopMs();

        // Expand the last collapsed layer (else the last collapsed group), as a double-click does.
        auto* scene = const_cast<jointscope::views::GraphScene*>(window.scene());
        const size_t sceneItems = size_t(scene->items().size());
        int group = -1, layer = -1;
        for (QGraphicsItem* item : scene->items())
            if (item->type() == jointscope::views::GroupItem::Type) {
                const int g = static_cast<jointscope::views::GroupItem*>(item)->group();
                group = std::max(group, g);
                const auto* view = scene->collapsedView();
                if (view && view->tree->groups[size_t(g)].kind == jointscope::layout::GroupKind::Layer)
                    layer = std::max(layer, g);
            }
        group = layer >= 0 ? layer : group;
        double expandSeconds = 0, expandSettle = 0, expandRefined = 0, expandRefineStall = 0;
        stall = apply = paint = 0;
        if (group > 0) {
            QElapsedTimer expandClock;
            expandClock.start();
            probe.start();
            emit scene->groupActivated(group, true);
            QCoreApplication::processEvents(); // the queued activation starts the layout
            ready = false;
            window.whenLayoutReady(measure);
            waitFor(ready, "expanded layout");
            expandSeconds = double(expandClock.nsecsElapsed()) / 1e9;
            probe.takeMs();
            if (label && label->text().contains(QStringLiteral("refining"))) {
                while (window.layoutBusy() && expandClock.elapsed() < 300000)
                    waitForEvents();
                expandRefined = double(expandClock.nsecsElapsed()) / 1e9;
                expandRefineStall = probe.takeMs();
            }
            spin(1000);
            expandSettle = probe.stopMs();
        }
        const double maxStall = std::max({loadStall, show, firstStall, firstApply, firstPaint, settle,
                                          refineStall, stall, apply, paint, expandRefineStall, expandSettle});
        std::printf("%s%s\n  nodes %zu  scene_items %zu\n  open_s %.3f  load_stall_ms %.0f  show_ms %.0f\n"
                    "  first_frame_s %.3f  layout %s\n"
                    "  layout_stall_ms %.0f  apply_ms %.0f  paint_ms %.0f  settle_stall_ms %.0f\n"
                    "  refined_s %.3f  refine_stall_ms %.0f\n"
                    "  expand_s %.3f\n  expand_stall_ms %.0f  expand_apply_ms %.0f  expand_paint_ms %.0f"
                    "  expand_settle_stall_ms %.0f\n  expand_refined_s %.3f  expand_refine_stall_ms %.0f\n"
                    "  max_stall_ms %.0f\n  peak_rss_MiB %.0f\n",
                    argv[i], layered ? " (--layered)" : "",
                    scene->graph() ? scene->graph()->size() : size_t(0), sceneItems, openSeconds, loadStall,
                    show, firstFrame, qPrintable(firstLayout), firstStall, firstApply, firstPaint, settle,
                    refinedSeconds, refineStall, expandSeconds, stall, apply, paint, expandSettle,
                    expandRefined, expandRefineStall, maxStall, peakRssMiB());
        std::fflush(stdout);
    }
    return 0;
}
