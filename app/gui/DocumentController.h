// Graph files in the window: a file is read on a worker (the Graphs dock lists what a log's index finds
// meanwhile; a newer open supersedes it) and its first graph shown; a graph picked in the Graphs dock is
// parsed on a worker (a newer pick supersedes it). The window hands what is read to the features.
#pragma once

#include "Feature.h"
#include "FeatureContext.h"
#include "io/GraphFile.h"
#include "models/BackgroundJob.h"
#include "models/DocumentLoader.h"

#include <QObject>
#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QDockWidget;
class QTreeView;

namespace jointscope::views {
class GraphListModel;
} // namespace jointscope::views

namespace jointscope::gui {

class GraphListFill;
class ReadingIndicator;

class DocumentController : public QObject {
    Q_OBJECT
public:
    // `context.canvas` must be set; `reading` shows the read's progress in the status bar.
    DocumentController(const FeatureContext& context, ReadingIndicator* reading, QObject* parent = nullptr);
    ~DocumentController() override;

    QDockWidget* graphsDock() const { return dock_; }
    // Starts reading `path`, a graph file or a folder of per-rank logs (a session's graph is one).
    void read(const QString& path);
    void cancel() { loader_.cancel(); }
    bool reading() const { return loader_.busy(); }
    bool busy() const { return loader_.busy() || parseJob_.busy(); } // reading, or parsing a pick
    // Runs `fn` once the file being read is shown (true) or failed, was cancelled or superseded (false); at
    // once with whether a graph is shown when nothing is being read.
    void whenLoaded(std::function<void(bool)> fn);
    // Shows graph `index` of the file shown as if picked in the Graphs dock; `done(ok)` once it is shown.
    void show(size_t index, std::function<void(bool)> done = {});
    const QString& path() const { return path_; } // of the file shown
    // A session file is being read: the status bar stays busy until both reads end.
    void setSessionReading(bool reading);

signals:
    void fileOpened(const std::shared_ptr<const GraphFile>& file, const QString& path);
    void graphParsed(const jointscope::gui::ShownGraph& shown); // to be shown on the canvas
    // The read ended: its graph is shown (true), or it failed, was cancelled or superseded (false).
    void loaded(bool ok);

private:
    void createDock(QWidget* window);
    void onOpened(quint64 ticket, std::shared_ptr<views::OpenedFile> opened);
    void finish(quint64 ticket, bool ok); // status bar, the callbacks waiting on `ticket`, loaded()
    void showParsed(size_t index, Graph graph, std::optional<CompileConfig> logged);
    std::shared_ptr<const GraphList> shownGraphs() const; // of the file shown

    FeatureContext ctx_;
    ReadingIndicator* reading_;
    std::shared_ptr<const GraphFile> file_;
    QString path_;
    views::DocumentLoader loader_;
    views::BackgroundJob parseJob_;     // a graph picked in the Graphs dock
    std::optional<size_t> pickedEntry_; // the entry shown or being parsed
    bool sessionReading_ = false;
    std::vector<std::pair<quint64, std::function<void(bool)>>> afterLoad_; // by the ticket they wait on

    views::GraphListModel* listModel_ = nullptr;
    QTreeView* list_ = nullptr;
    QDockWidget* dock_ = nullptr;
    GraphListFill* listFill_ = nullptr; // the list while a log is indexed
};

} // namespace jointscope::gui
