// gui_open FILE...: opens each graph in the real MainWindow (offscreen) and prints
//   open_s           reading the file (on the UI thread, before any layout)
//   first_frame_s    from the start of the open to the first painted frame with the laid-out view
//   layout_stall_ms  the longest the event loop did not run while the layout thread worked
//                    (a 5 ms QTimer probe: the largest gap between its ticks, minus 5 ms)
//   apply_ms         the UI-thread event that puts the result on the canvas (items, overlays, fit)
//   paint_ms         the first repaint of the window after it
//   expand_*         the same for double-clicking the last collapsed group (re-layout off the UI thread)
//   peak_rss_MiB     VmHWM of the process after all of it
// docs/benchmarks.md ("GUI") records the numbers.
#include "MainWindow.h"

#include "canvas/GraphScene.h"
#include "canvas/GroupItem.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QGraphicsItem>
#include <QTimer>

#include <algorithm>
#include <cstdio>

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
        return double(std::max<qint64>(0, maxGap_ - 5));
    }
    // Time since the last tick: how long the event running now has held the loop.
    double currentGapMs() const { return double(clock_.elapsed()); }

private:
    QTimer timer_;
    QElapsedTimer clock_;
    qint64 maxGap_ = 0;
};

// Runs the event loop until `done` is set.
void waitFor(const bool& done) {
    while (!done)
        QCoreApplication::processEvents(QEventLoop::AllEvents | QEventLoop::WaitForMoreEvents, 5);
}

} // namespace

int main(int argc, char* argv[]) {
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: gui_open FILE...\n");
        return 2;
    }
    for (int i = 1; i < argc; ++i) {
        jointscope::gui::MainWindow window(false);
        window.show();
        QCoreApplication::processEvents();
        StallProbe probe;
        QElapsedTimer clock;
        clock.start();
        if (!window.openFile(QString::fromLocal8Bit(argv[i]))) {
            std::fprintf(stderr, "gui_open: cannot open %s\n", argv[i]);
            return 1;
        }
        const double openSeconds = clock.nsecsElapsed() / 1e9;
        probe.start();
        bool ready = false;
        double stall = 0, apply = 0, paint = 0;
        // Runs at the end of the event that applied the layout.
        auto measure = [&] {
            apply = probe.currentGapMs();
            stall = probe.stopMs();
            QElapsedTimer paintClock;
            paintClock.start();
            window.repaint(); // the first frame with the view, painted now
            paint = double(paintClock.nsecsElapsed()) / 1e6;
            ready = true;
        };
        window.whenLayoutReady(measure);
        waitFor(ready);
        const double firstFrame = double(clock.nsecsElapsed()) / 1e9;
        const double firstStall = stall, firstApply = apply, firstPaint = paint;

        // Expand the last collapsed group, as a double-click does.
        auto* scene = const_cast<jointscope::views::GraphScene*>(window.scene());
        const size_t sceneItems = size_t(scene->items().size());
        int group = -1;
        for (QGraphicsItem* item : scene->items())
            if (item->type() == jointscope::views::GroupItem::Type)
                group = std::max(group, static_cast<jointscope::views::GroupItem*>(item)->group());
        double expandSeconds = 0;
        stall = apply = paint = 0;
        if (group > 0) {
            QElapsedTimer expandClock;
            expandClock.start();
            probe.start();
            emit scene->groupActivated(group, true);
            QCoreApplication::processEvents(); // the queued activation starts the layout
            ready = false;
            window.whenLayoutReady(measure);
            waitFor(ready);
            expandSeconds = double(expandClock.nsecsElapsed()) / 1e9;
        }
        std::printf("%s\n  nodes %zu  scene_items %zu\n  open_s %.3f\n  first_frame_s %.3f\n"
                    "  layout_stall_ms %.0f  apply_ms %.0f  paint_ms %.0f\n"
                    "  expand_s %.3f\n  expand_stall_ms %.0f  expand_apply_ms %.0f  expand_paint_ms %.0f\n"
                    "  peak_rss_MiB %.0f\n",
                    argv[i], scene->graph() ? scene->graph()->size() : size_t(0), sceneItems, openSeconds,
                    firstFrame, firstStall, firstApply, firstPaint, expandSeconds, stall, apply, paint,
                    peakRssMiB());
        std::fflush(stdout);
    }
    return 0;
}
