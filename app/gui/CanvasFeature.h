// What the canvas shows and how the user moves through it: the breadcrumb of opened HOP bodies, layouts off
// the UI thread (one cached per graph), collapsed views of large graphs, search, the Alt+arrow edge walk,
// producer / consumer jumps and File › Export View. The window places its central widget, status widgets
// and published actions.
#pragma once

#include "FeatureContext.h"
#include "graph/Graph.h"
#include "layout/LayoutRunner.h"

#include <QList>
#include <QObject>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

class QAction;
class QDockWidget;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QListWidget;
class QMenu;
class QProgressBar;
class QToolButton;
class QWidget;

namespace jointscope::views {
class EdgeWalker;
}

namespace jointscope::gui {

class CanvasFeature : public QObject {
    Q_OBJECT
public:
    // What the window places in its menus and toolbar.
    struct Actions {
        QAction* fit = nullptr;
        QAction* find = nullptr;
        QAction* up = nullptr; // to the parent graph
        QAction* collapse = nullptr;
        QAction* ladder = nullptr; // joint graphs: forward down the left, backward up the right
        QAction* minimap = nullptr;
        QAction* searchResults = nullptr; // the Search Results dock's toggle
        QList<QAction*> walk;             // producer, consumer, previous and next sibling
        QMenu* jumpMenu = nullptr;        // producers / consumers of the selected node
        QAction* exportView = nullptr;
    };

    explicit CanvasFeature(const FeatureContext& context, QObject* parent = nullptr);
    ~CanvasFeature() override;

    const Actions& actions() const { return actions_; }
    QWidget* centralWidget() const { return central_; } // breadcrumb, search bar, canvas
    QList<QWidget*> statusWidgets() const;              // layout state, busy bar, cancel
    QDockWidget* searchResultsDock() const { return searchResultsDock_; }

    // A new root graph (or none): shown at level 0 and laid out.
    void setRoot(std::shared_ptr<const Graph> root);
    const Graph* root() const { return root_.get(); }
    const Graph* currentGraph() const { return path_.empty() ? nullptr : path_.back(); }
    bool showingRoot() const { return root_ && currentGraph() == root_.get(); }
    void showLevel(size_t depth); // shows path[depth], dropping deeper levels
    bool enterSubgraph(const QString& name);
    // Shows the root graph and selects `id` of it once laid out (dock rows naming a node).
    void locateRootNode(NodeId id);

    void selectNode(NodeId id, bool centre); // expands the collapsed groups hiding it first
    // Producers / Consumers submenus of node `id` of the graph shown, whose entries select (context menus).
    void addNodeMenus(QMenu* menu, NodeId id);
    bool selectNodeByName(const QString& name);
    // selectNodeByName, else the status bar says the node is not on the canvas (a list's row naming a node
    // of another level, or of a graph no longer shown).
    void selectNodeOrSay(const QString& name);
    // View > Collapse Groups, then the group `path` opened as by a double-click: its label ("layer 1"), or
    // its labels from the top ("forward/layer 1"). False when the view has no such group.
    bool openOnlyGroup(const QString& path);
    bool layoutBusy() const { return runner_.busy() || runner_.refining(); }
    // Runs `fn` once the graph shown has its layout on the canvas (at once when it has).
    void whenLayoutReady(std::function<void()> fn);
    // While a file is read, layout-ready callbacks wait for its graph; releaseWaiting() runs them once
    // nothing new will be laid out.
    void setReading(bool reading) { reading_ = reading; }
    void releaseWaiting();
    void setLayoutStatus(const QString& text);
    void cancelLayout();

    // SVG, or PNG by suffix; asks for a path (named after `documentPath`) when `path` is empty.
    bool exportViewTo(const QString& path, const QString& documentPath);

signals:
    void levelShown(const jointscope::Graph* graph); // a graph (root or body) is on the canvas, unlaid
    void layoutApplied();                            // the canvas has its layout: overlays apply again
    void exportViewRequested();                      // File › Export View

private:
    std::optional<NodeId> findShown(const QString& name) const; // a node of the graph shown
    void createCentral();
    void createActions();
    void rebuildBreadcrumb();
    void openBody(NodeId id);
    void startLayout();
    void startCollapsedLayout();
    layout::LayoutOptions layoutOptions() const; // the ladder or the layered view, previewed
    void showLayoutBusy(const QString& text);
    void dropLayout(); // cancels the running layout without reporting it as the user's cancel
    void onLayoutFinished(quint64 ticket, std::shared_ptr<const layout::LayoutResult> result);
    void onLayoutCancelled(quint64 ticket);
    void resetGrouping();
    void onGroupActivated(int group, bool expand);
    bool revealNode(NodeId id);
    void walk(int step);
    void addJumpActions(QMenu* menu, const std::vector<NodeId>& ids);
    void showSearch();
    void runSearch();
    void nextMatch(int step);
    void fillSearchResults();

    FeatureContext ctx_;
    Actions actions_;
    std::shared_ptr<const Graph> root_;
    std::vector<const Graph*> path_; // breadcrumb: root graph, then opened bodies
    std::map<const Graph*, std::shared_ptr<const layout::LayoutResult>> layouts_;
    layout::LayoutRunner runner_;
    quint64 pendingTicket_ = 0;
    quint64 shownTicket_ = 0; // of the layout on the canvas: a second result for it is its refinement
    double lastLayoutSeconds_ = 0;
    qint64 layoutStartMs_ = 0;
    bool reading_ = false;
    std::vector<std::function<void()>> afterLayout_;
    std::shared_ptr<const layout::GroupTree> groupTree_;
    std::vector<char> expanded_;
    bool collapsed_ = false;
    bool ladder_ = true;
    std::unique_ptr<views::EdgeWalker> walker_;
    std::vector<NodeId> matches_;
    int currentMatch_ = -1;

    QWidget* central_ = nullptr;
    QWidget* breadcrumb_ = nullptr;
    QHBoxLayout* breadcrumbLayout_ = nullptr;
    QWidget* searchBar_ = nullptr;
    QLineEdit* searchEdit_ = nullptr;
    QLabel* searchCount_ = nullptr;
    QListWidget* searchResults_ = nullptr;
    QDockWidget* searchResultsDock_ = nullptr;
    QLabel* layoutLabel_ = nullptr;
    QProgressBar* busy_ = nullptr;
    QToolButton* cancelButton_ = nullptr;
};

} // namespace jointscope::gui
