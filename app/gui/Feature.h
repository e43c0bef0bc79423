// One concern of the window (partition, sharding, runtime, memory, diff): it owns its docks, actions, canvas
// overlay and inspector section. The window iterates its features through this interface and names none;
// app/gui/Features.cpp builds them and wires what they share.
#pragma once

#include "graph/Graph.h"
#include "io/CompileConfig.h"
#include "io/GraphFile.h"

#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

class QAction;
class QDockWidget;
class QMenu;

namespace jointscope::gui {

// Where the window puts a dock: in `area`, as a new dock, a tab beside the previous dock of the area, or
// split beside it; its size on the first show (0: the layout's own).
struct DockPlacement {
    enum class Join { New, Tab, Split };
    QDockWidget* dock = nullptr;
    Qt::DockWidgetArea area = Qt::RightDockWidgetArea;
    Join join = Join::New;
    bool raised = false;       // the tab on top
    double heightFraction = 0; // of the window's height
    int width = 0;             // pixels
};

// The menus a feature's actions go to; the window builds them in this order.
enum class MenuId { File, Edit, View, Navigate, Tools, NodeContext };

// An action (or a submenu) of a menu; neither: a separator.
struct MenuEntry {
    MenuId menu = MenuId::View;
    QAction* action = nullptr;
    QMenu* submenu = nullptr;
};

// The graph the window shows: entry `index` of the file at `filePath`, with the log's record of its compile.
struct ShownGraph {
    std::shared_ptr<const Graph> root;
    QString filePath;
    size_t index = 0;
    size_t fileGraphs = 1;
    std::optional<CompileConfig> logged;
};

class Feature : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    virtual std::vector<DockPlacement> docks() const { return {}; }
    virtual std::vector<MenuEntry> menuEntries() const { return {}; }
    virtual void setFile(const std::shared_ptr<const GraphFile>& /*file*/) {}
    virtual void setGraph(const ShownGraph& /*shown*/) {}
    virtual void levelShown() {}   // the canvas shows another level (a HOP body, or the root again)
    virtual void applyOverlay() {} // the canvas has a new layout
};

} // namespace jointscope::gui
