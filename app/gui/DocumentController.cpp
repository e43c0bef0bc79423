#include "DocumentController.h"

#include "CanvasFeature.h"
#include "GraphListFill.h"
#include "ReadingIndicator.h"
#include "models/GraphListModel.h"
#include "partition/CompileSettings.h"

#include <QDockWidget>
#include <QMainWindow>
#include <QFileInfo>
#include <QHeaderView>
#include <QTreeView>

namespace jointscope::gui {
namespace {

constexpr size_t kExpandAllGraphs = 5000; // more and the Graphs dock opens with its compiles collapsed

} // namespace

DocumentController::DocumentController(const FeatureContext& context, ReadingIndicator* reading,
                                       QObject* parent)
    : QObject(parent), ctx_(context), reading_(reading) {
    createDock(ctx_.window);
    connect(&loader_, &views::DocumentLoader::loaded, this, &DocumentController::onOpened);
    connect(&loader_, &views::DocumentLoader::failed, this, [this](quint64 ticket, const Diagnostic& error) {
        ctx_.reportError(
            tr("Cannot open %1").arg(QFileInfo(QString::fromStdString(error.loc.file)).fileName()), error);
        finish(ticket, false);
    });
    connect(&loader_, &views::DocumentLoader::cancelled, this, [this](quint64 ticket) {
        ctx_.log(tr("Stopped reading the file"));
        finish(ticket, false);
    });
    connect(&loader_, &views::DocumentLoader::progress, this,
            [this](quint64, double fraction, const QString& step) { reading_->setProgress(fraction, step); });
    connect(&parseJob_, &views::BackgroundJob::failed, this, [this](quint64, const QString& message) {
        ctx_.reportError(tr("Cannot load graph"),
                         makeError({path_.toStdString(), 0, 0}, message.toStdString()));
    });
}

DocumentController::~DocumentController() {
    disconnect(&loader_, nullptr, this, nullptr);
    disconnect(&parseJob_, nullptr, this, nullptr);
    loader_.cancel();
    parseJob_.cancel();
}

// Graphs of a multi-graph file, grouped by compile id; picking one parses it on a worker.
void DocumentController::createDock(QWidget* window) {
    listModel_ = new views::GraphListModel(this);
    list_ = new QTreeView(window);
    list_->setModel(listModel_);
    list_->setUniformRowHeights(true);
    list_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    dock_ = newDock(tr("Graphs"), QStringLiteral("graphsDock"), list_, window);
    listFill_ = new GraphListFill(&loader_, listModel_, list_, dock_, this);
    // One click picks a graph (Enter and a double click too); a double click also clicks, and the graph shown
    // or being parsed is not parsed again.
    auto pick = [this](const QModelIndex& index) {
        const QVariant entry = index.data(views::GraphListModel::EntryIndexRole);
        if (entry.isValid() && pickedEntry_ != std::optional<size_t>(entry.toUInt()))
            show(entry.toUInt());
    };
    connect(list_, &QTreeView::clicked, this, pick);
    connect(list_, &QTreeView::activated, this, pick);
}

void DocumentController::read(const QString& path) {
    parseJob_.cancel(); // a graph picked in the old file is no longer wanted
    loader_.open(path); // a file still being read is superseded: it reports cancelled
    ctx_.canvas->setReading(true);
    reading_->setShown(true);
    reading_->setStep(tr("reading"));
    ctx_.canvas->setLayoutStatus(tr("reading %1…").arg(QFileInfo(path).fileName()));
}

void DocumentController::setSessionReading(bool reading) {
    sessionReading_ = reading;
    reading_->setShown(reading || loader_.busy());
    if (reading)
        reading_->setStep(tr("reading session"));
}

void DocumentController::onOpened(quint64 ticket, std::shared_ptr<views::OpenedFile> opened) {
    ctx_.canvas->setReading(loader_.busy());
    file_ = std::make_shared<const GraphFile>(std::move(opened->file));
    path_ = opened->path;
    ctx_.log(tr("Opened %1 (%2, %n graph(s), read in %3 s)", nullptr, int(file_->graphs().size()))
                 .arg(path_, qstr(formatName(file_->format())))
                 .arg(opened->seconds, 0, 'f', 2));
    for (const Diagnostic& problem : file_->problems())
        ctx_.log(QString::fromStdString(problem.format()));
    listFill_->end(nullptr); // the new file's list replaces the partial one
    listModel_->setEntries(shownGraphs());
    pickedEntry_.reset();
    emit fileOpened(file_, path_);
    // Every compile's graphs shown, unless there are so many that laying out the expanded tree would stall
    // the window (a 10 GB log: 225 thousand rows, 9 s); then only the shown graph's compile (showParsed).
    if (file_->graphs().size() <= kExpandAllGraphs)
        list_->expandAll();
    // The list only helps for multi-graph files (TORCH_TRACE logs, pastes).
    dock_->setVisible(file_->graphs().size() > 1);
    if (file_->graphs().empty()) {
        ctx_.log(tr("%1: no graphs found").arg(path_));
        finish(ticket, false);
        return;
    }
    if (!opened->graph) {
        ctx_.reportError(tr("Cannot load graph"), opened->problem.value_or(Diagnostic{}));
        finish(ticket, false);
        return;
    }
    pickedEntry_ = opened->index;
    showParsed(opened->index, std::move(*opened->graph), std::move(opened->logged));
    finish(ticket, ctx_.canvas->root() != nullptr);
}

std::shared_ptr<const GraphList> DocumentController::shownGraphs() const {
    if (!file_)
        return nullptr;
    return {file_, &file_->graphs()}; // the list lives as long as the file: nothing copied
}

void DocumentController::finish(quint64 ticket, bool ok) {
    if (!loader_.busy()) // a log that did not open: the list goes back to the file shown
        listFill_->end(shownGraphs());
    ctx_.canvas->setReading(loader_.busy());
    if (!loader_.busy()) {
        reading_->setShown(sessionReading_);
        if (!ok && !ctx_.canvas->layoutBusy())
            ctx_.canvas->setLayoutStatus(QString());
    }
    std::vector<std::function<void(bool)>> due;
    for (auto it = afterLoad_.begin(); it != afterLoad_.end();) {
        if (it->first <= ticket) {
            due.push_back(std::move(it->second));
            it = afterLoad_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& fn : due)
        fn(ok);
    emit loaded(ok);
    // Nothing new will be laid out: what waited for the layout gets the view that stays.
    if (!ok)
        ctx_.canvas->releaseWaiting();
}

void DocumentController::whenLoaded(std::function<void(bool)> fn) {
    if (loader_.busy())
        afterLoad_.emplace_back(loader_.ticket(), std::move(fn));
    else
        fn(ctx_.canvas->root() != nullptr);
}

void DocumentController::show(size_t index, std::function<void(bool)> done) {
    if (!file_) {
        if (done)
            done(false);
        return;
    }
    pickedEntry_ = index;
    ctx_.canvas->setLayoutStatus(tr("parsing graph %1…").arg(index));
    // Parsed on a worker (a 100k-node graph takes seconds); a newer pick supersedes this one.
    struct Parsed {
        std::optional<Graph> graph;
        std::optional<Diagnostic> problem;
        std::optional<CompileConfig> logged;
    };
    parseJob_.run(
        [file = file_, index](views::JobControl&) -> Parsed {
            auto loaded = file->load(index);
            if (!loaded)
                return {std::nullopt, loaded.error(), std::nullopt};
            return {loaded.take(), std::nullopt, partition::loggedConfigFor(*file, index)};
        },
        [this, index, done](Parsed parsed) {
            if (parsed.graph) {
                showParsed(index, std::move(*parsed.graph), std::move(parsed.logged));
            } else {
                const Diagnostic problem = parsed.problem.value_or(Diagnostic{});
                ctx_.reportError(tr("Cannot load graph"), problem);
                pickedEntry_.reset(); // picking it again tries again
                listModel_->setLoaded(uint32_t(index), 0, problem.format());
            }
            if (done)
                done(parsed.graph.has_value());
        });
}

void DocumentController::showParsed(size_t index, Graph graph, std::optional<CompileConfig> logged) {
    auto root = std::make_shared<const Graph>(std::move(graph));
    listModel_->setLoaded(uint32_t(index), root->size()); // a log's index has no count before
    const QModelIndex row = listModel_->indexOfEntry(uint32_t(index));
    if (row.isValid()) {
        list_->setCurrentIndex(row);
        list_->scrollTo(row); // expands its compile when the list is collapsed
    }
    ctx_.log(tr("Loaded graph %1: %2 nodes").arg(index).arg(root->size()));
    emit graphParsed(ShownGraph{root, path_, index, file_->graphs().size(), std::move(logged)});
}

} // namespace jointscope::gui
