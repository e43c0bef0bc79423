// The jointscope main window: canvas in the centre, graph list / node table / inspector / log docks.
#pragma once

#include "graph/Graph.h"
#include "graph/GraphStats.h"
#include "io/GraphFile.h"
#include "layout/LayoutRunner.h"
#include "models/DocumentLoader.h"
#include "models/Navigation.h"

#include <QJsonObject>
#include <QLockFile>
#include <QMainWindow>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

class QLabel;
class QLineEdit;
class QListWidget;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QShortcut;
class QSortFilterProxyModel;
class QTableView;
class QToolButton;
class QTreeView;
class QHBoxLayout;

namespace jointscope::views {
class GraphListModel;
class GraphScene;
class GraphView;
class InspectorModel;
class NodeTableModel;
class RuntimePanel;
} // namespace jointscope::views

namespace jointscope::gui {

class PartitionDocument;
class PartitionPanel;
class ShardingDocument;
struct ShardingSession;
class ShardingPanel;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Starts reading a file on a worker and shows its first graph once parsed (documentLoaded); on failure
    // logs the diagnostic and, when interactive, says so in a box. Opening another file meanwhile
    // supersedes it. False when nothing was started (a session that cannot be read).
    bool openFile(const QString& path);
    bool loading() const { return loader_.busy(); }
    // Runs `fn` once the file being read is shown (true) or failed, was cancelled or superseded (false); at
    // once with true when nothing is being read.
    void whenDocumentLoaded(std::function<void(bool)> fn);
    // Selects and centres on the node named `name` in the graph shown; false when absent.
    bool selectNodeByName(const QString& name);
    // Opens the HOP body read by get_attr node `name` of the graph shown; false when it is none.
    bool enterSubgraph(const QString& name);
    // Saves a picture of the window once the current layout is shown, then calls `done`.
    void screenshotWhenReady(const QString& path, std::function<void(bool)> done);
    bool layoutBusy() const; // also while a file is read
    // Runs `fn` once the graph shown has its layout on the canvas (at once when it has).
    void whenLayoutReady(std::function<void()> fn);
    // File › Export View: SVG, or PNG by suffix; asks for a path when `path` is empty and interactive.
    bool exportViewTo(const QString& path);
    const views::GraphScene* scene() const { return scene_; }
    views::RuntimePanel* runtimePanel() const { return runtimePanel_; } // Tools › Validate / Profile

    // Crash recovery: answer the "restore session?" question with "yes" / "no" instead of asking (scripts,
    // tests). Call before the window is shown.
    void setRestoreAnswer(const QString& answer) { restoreAnswer_ = answer; }

signals:
    // A file read by openFile is shown (true), or failed, was cancelled or superseded (false).
    void documentLoaded(bool ok);
    void autosaved();   // this instance's autosave file was written
    void restoreDone(); // the restore question is answered (and a restored session is shown)

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;

private:
    void createActions();
    void createDocks();
    void createCentral();
    void restoreSettings();
    void saveSettings();
    void updateRecentMenu();
    void addRecentFile(const QString& path);

    void loadGraph(size_t index);
    void showGraph(size_t index, Graph graph); // loadGraph once parsed
    void onDocumentLoaded(quint64 ticket, std::shared_ptr<views::OpenedFile> opened);
    void finishDocument(quint64 ticket, bool ok); // status bar, afterLoad_ callbacks, documentLoaded
    void showLevel(size_t depth);                 // show path_[depth], dropping deeper levels
    void openBody(NodeId id);                     // double click: the body of a get_attr / HOP call
    void rebuildBreadcrumb();
    void startLayout();
    void onLayoutFinished(quint64 ticket, std::shared_ptr<const layout::LayoutResult> result);
    void onLayoutCancelled(quint64 ticket);
    void onNodeSelected(NodeId id);
    void selectNode(NodeId id, bool centre);
    void updateStatus();
    void log(const QString& text);
    void reportError(const QString& title, const Diagnostic& diagnostic);

    void showSearch();
    void runSearch();
    void nextMatch(int step);

    const Graph* currentGraph() const { return path_.empty() ? nullptr : path_.back(); }

    // Collapse, edge walk, jumps, search results, export: MainWindowCanvas.cpp.
    void createCanvasActions();
    bool useCollapsedView() const;
    void resetGrouping(); // a graph is shown anew
    void startCollapsedLayout();
    void onGroupActivated(int group, bool expand);
    bool revealNode(NodeId id); // expands the groups hiding `id`, then selects it; false when it is visible
    void walk(int step);        // views::WalkStep
    void addJumpActions(QMenu* menu, const std::vector<NodeId>& ids); // a click selects the node
    void fillSearchResults();

public:
    // Partition debugger (MainWindowPartition.cpp): the document, session files and exports.
    PartitionDocument* partitionDocument() const { return partitionDoc_; }
    bool openSession(const QString& path);
    bool saveSession(const QString& path);
    // kind: "decision", "policy", "forward", "backward"; asks for a path when `path` is empty and
    // interactive.
    bool exportPartition(const QString& kind, const QString& path);

    // Sharding explorer (MainWindowSharding.cpp): the document and a scripted solve on mesh "2x2" / names.
    ShardingDocument* shardingDocument() const { return shardingDoc_; }
    bool solveSharding(const QString& mesh, const QString& names = {}, const QString& topology = {});
    // A session's sharding: the dock's mesh fields, the pins, and a re-solve when the session had a plan.
    void restoreSharding(const ShardingSession& session);

private:
    void createShardingUi();
    void shardingGraphLoaded(); // loadGraph: the document takes the new root graph
    void applyShardingOverlay();
    void pinPlacementMenu(QMenu* menu, NodeId id); // "Pin placement" entries for node `id` of the root

    void createPartitionUi();
    void partitionGraphLoaded(size_t index); // loadGraph: the document takes the new root graph
    void applyPartitionOverlay();
    void pinSelected(int policy); // partition::Policy as int; 0 clears
    void autosaveSession();
    void offerRestore();
    void partitionClosing(); // a clean exit: the autosave is no crash
    QJsonObject viewSettings() const;

    bool interactive_;
    std::unique_ptr<QLockFile> autosaveLock_; // held while this instance runs: its autosave is no orphan
    QString autosavePath_;                    // <AppData>/autosave/session-<pid>-<random>.jointscope
    bool restoreAnswered_ = false;            // autosaves start once the restore question is answered
    QString restoreAnswer_;                   // "yes" / "no": answer the question without asking (scripts)
    std::optional<GraphFile> file_;
    QString filePath_;
    std::shared_ptr<Graph> root_;
    std::vector<const Graph*> path_; // breadcrumb: root graph, then opened bodies
    std::map<const Graph*, std::shared_ptr<const layout::LayoutResult>> layouts_;
    quint64 pendingTicket_ = 0;
    double lastLayoutSeconds_ = 0;
    qint64 layoutStartMs_ = 0;
    std::vector<std::function<void()>> afterLayout_;

    layout::LayoutRunner runner_;
    views::DocumentLoader loader_;
    std::vector<std::pair<quint64, std::function<void(bool)>>> afterLoad_; // by the ticket they wait on
    QProgressBar* loadBusy_ = nullptr;
    QToolButton* loadCancel_ = nullptr;
    QShortcut* loadEscape_ = nullptr;
    views::GraphScene* scene_ = nullptr;
    views::GraphView* view_ = nullptr;
    views::NodeTableModel* nodeModel_ = nullptr;
    QSortFilterProxyModel* nodeProxy_ = nullptr;
    QTableView* nodeTable_ = nullptr;
    views::InspectorModel* inspectorModel_ = nullptr;
    QTreeView* inspector_ = nullptr;
    views::GraphListModel* graphListModel_ = nullptr;
    QTreeView* graphList_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QWidget* breadcrumb_ = nullptr;
    QHBoxLayout* breadcrumbLayout_ = nullptr;
    QWidget* searchBar_ = nullptr;
    QLineEdit* searchEdit_ = nullptr;
    QLabel* searchCount_ = nullptr;
    std::vector<NodeId> matches_;
    int currentMatch_ = -1;
    QLabel* statsLabel_ = nullptr;
    QLabel* layoutLabel_ = nullptr;
    QProgressBar* busy_ = nullptr;
    QToolButton* cancelButton_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QMenu* viewMenu_ = nullptr;
    bool syncingSelection_ = false;
    std::shared_ptr<const layout::GroupTree> groupTree_;
    std::vector<char> expanded_;
    bool collapsed_ = false;
    std::unique_ptr<views::EdgeWalker> walker_;
    QListWidget* searchResults_ = nullptr;
    QAction* collapseAction_ = nullptr;
    QMenu* jumpMenu_ = nullptr;
    PartitionDocument* partitionDoc_ = nullptr;
    PartitionPanel* partitionPanel_ = nullptr;
    QString pendingSelection_; // a restored session's selected node, selected once laid out
    // A refused edit's ∞ path (root graph ids), shown until a solve succeeds or Esc.
    std::vector<NodeId> infinitePath_;
    views::RuntimePanel* runtimePanel_ = nullptr;
    ShardingDocument* shardingDoc_ = nullptr;
    ShardingPanel* shardingPanel_ = nullptr;
    QAction* shardingOverlay_ = nullptr; // View › Sharding Overlay
};

} // namespace jointscope::gui
