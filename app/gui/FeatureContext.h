// What the window shares with its features (canvas, partition, sharding, runtime, sessions): the canvas, the
// inspector, the undo stack and the log. Each feature receives it in its constructor and owns its dock,
// actions, overlay and inspector section; the window places the actions each publishes.
#pragma once

#include "support/Diagnostic.h"

#include <QDockWidget>
#include <QString>

#include <functional>
#include <string_view>

class QMainWindow;
class QTreeView;
class QUndoStack;

namespace jointscope::views {
class GraphScene;
class GraphView;
class InspectorModel;
} // namespace jointscope::views

namespace jointscope::gui {

class CanvasFeature;

struct FeatureContext {
    QMainWindow* window = nullptr; // parent of docks and dialogs
    views::GraphScene* scene = nullptr;
    views::GraphView* view = nullptr;
    views::InspectorModel* inspectorModel = nullptr;
    QTreeView* inspector = nullptr;
    QUndoStack* undoStack = nullptr; // one history for every feature's edits
    CanvasFeature* canvas = nullptr; // what is shown on the canvas; null for the canvas feature itself
    bool interactive = true;         // false: scripts and tests, no dialogs
    std::function<void(const QString&)> log;
    // Logs the diagnostic and, when interactive, says so in a box titled `title`.
    std::function<void(const QString& title, const Diagnostic&)> reportError;
    // Shows graph `entry` of the open file as if picked in the Graphs dock; `done(ok)` once it is shown.
    std::function<void(size_t entry, std::function<void(bool)> done)> showEntry;
};

// A dock holding `widget`, not yet placed. The object name is what QMainWindow::saveState keys the dock's
// place by, so every dock needs a distinct, stable one.
inline QDockWidget* newDock(const QString& title, const QString& objectName, QWidget* widget,
                            QWidget* window) {
    auto* dock = new QDockWidget(title, window);
    dock->setObjectName(objectName);
    dock->setWidget(widget);
    return dock;
}

// Engine names (ops, policies, formats) are UTF-8 string views.
inline QString qstr(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace jointscope::gui
