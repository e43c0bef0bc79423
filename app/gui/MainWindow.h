// The jointscope main window: it hosts the features (canvas, partition, sharding, runtime, sessions), places
// their docks and the actions they publish, and hands them the files its DocumentController reads; graph
// list / node table / inspector / log are its own docks.
#pragma once

#include "Feature.h"
#include "SessionController.h"
#include "graph/Graph.h"

#include <QMainWindow>
#include <QUndoStack>

#include <functional>
#include <vector>

class QLabel;
class QMenu;
class QPlainTextEdit;
class QTreeView;

namespace jointscope::views {
class GraphScene;
class GraphView;
class InspectorModel;
class NodeTablePanel;
} // namespace jointscope::views

namespace jointscope::gui {

class CanvasFeature;
class DocumentController;
class ReadingIndicator;
class RecentFiles;

class MainWindow : public QMainWindow, private SessionHost {
    Q_OBJECT
public:
    explicit MainWindow(bool interactive = true, QWidget* parent = nullptr);
    ~MainWindow() override;

    // Starts reading a file on a worker and shows its first graph once parsed (documentLoaded); on failure
    // logs the diagnostic and, when interactive, says so in a box. Opening another file meanwhile
    // supersedes it. False when nothing was started (a session that cannot be read).
    bool openFile(const QString& path);
    bool loading() const;
    // Runs `fn` once the file being read is shown (true) or failed, was cancelled or superseded (false); at
    // once with true when nothing is being read.
    void whenDocumentLoaded(std::function<void(bool)> fn);
    // Selects and centres on the node named `name` in the graph shown; false when absent.
    bool selectNodeByName(const QString& name);
    // Opens the HOP body read by get_attr node `name` of the graph shown; false when it is none.
    bool enterSubgraph(const QString& name);
    // Saves a picture of the window once the current layout is shown, then calls `done`.
    void screenshotWhenReady(const QString& path, std::function<void(bool)> done);
    bool layoutBusy() const; // also while a file is read or a graph parsed
    // Runs `fn` once the graph shown has its layout on the canvas (at once when it has).
    void whenLayoutReady(std::function<void()> fn);
    // File › Export View: SVG, or PNG by suffix; asks for a path when `path` is empty and interactive.
    bool exportViewTo(const QString& path);
    const views::GraphScene* scene() const { return scene_; }

    // The canvas, and the feature of type F (null when there is none), for scripts (main.cpp) and tests.
    CanvasFeature* canvasFeature() const { return canvas_; }
    const std::vector<Feature*>& features() const { return features_; }
    template <typename F> F* feature() const {
        for (Feature* f : features_)
            if (auto* found = qobject_cast<F*>(f))
                return found;
        return nullptr;
    }

    // Sessions (*.jointscope): graph, partition and sharding edits, view.
    bool openSession(const QString& path) { return sessions_->open(path); }
    bool saveSession(const QString& path) { return sessions_->save(path); }
    SessionController* sessionController() const { return sessions_; }
    // Crash recovery: answer the "restore session?" question with "yes" / "no" instead of asking (scripts,
    // tests). Call before the window is shown.
    void setRestoreAnswer(const QString& answer) { sessions_->setRestoreAnswer(answer); }
    void setStartupFile(const QString& path) { sessions_->setStartupFile(path); }

signals:
    // A file read by openFile is shown (true), or failed, was cancelled or superseded (false).
    void documentLoaded(bool ok);
    void autosaved();   // this instance's autosave file was written
    void restoreDone(); // the restore question is answered (and a restored session is shown)

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    void closeEvent(QCloseEvent* event) override;
    void showEvent(QShowEvent* event) override;

private:
    // SessionHost
    bool openGraphFile(const QString& path) override;
    void showSessionReading(bool reading) override;
    void whenGraphFileLoaded(std::function<void(bool)> fn) override { whenDocumentLoaded(std::move(fn)); }
    void showGraphIndex(int index, std::function<void(bool)> done) override;
    QJsonObject viewSettings() const override;
    void restoreViewSettings(const QJsonObject& view) override;

    void createDocks();
    void createFeatures();
    void placeFeatureDocks();
    void createMenus();
    void addFeatureEntries(QMenu* menu, MenuId id); // the features' entries for menu `id`, in their order
    void restoreSettings();
    void saveSettings();

    void createDocuments(); // after the canvas: it shows what they read
    void onFileOpened(const std::shared_ptr<const GraphFile>& file, const QString& path);
    void onGraphParsed(const ShownGraph& shown);
    void onLevelShown(const Graph* graph);
    void onNodeSelected(NodeId id);
    void showCanvasMenu(const QPoint& pos);
    void updateStatus();
    void log(const QString& text);
    void reportError(const QString& title, const Diagnostic& diagnostic);

    bool interactive_;
    QUndoStack undo_; // one history for the partition's and the sharding's edits
    DocumentController* documents_ = nullptr;

    views::GraphScene* scene_ = nullptr;
    views::GraphView* view_ = nullptr;
    views::NodeTablePanel* nodes_ = nullptr;
    views::InspectorModel* inspectorModel_ = nullptr;
    QTreeView* inspector_ = nullptr;
    QPlainTextEdit* log_ = nullptr;
    QDockWidget* nodesDock_ = nullptr;
    QDockWidget* inspectorDock_ = nullptr;
    QDockWidget* logDock_ = nullptr;
    QLabel* statsLabel_ = nullptr;
    ReadingIndicator* reading_ = nullptr;
    RecentFiles* recent_ = nullptr;
    QAction* openAction_ = nullptr;

    CanvasFeature* canvas_ = nullptr;
    std::vector<Feature*> features_; // children of the window
    SessionController* sessions_ = nullptr;
    bool docksSized_ = false;        // the first show sized the docks
    bool dockStateRestored_ = false; // the settings held the user's dock layout
};

} // namespace jointscope::gui
