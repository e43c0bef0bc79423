#include "MainWindow.h"

#include "CanvasFeature.h"
#include "Features.h"
#include "GraphListFill.h"
#include "HelpMenu.h"
#include "ReadingIndicator.h"
#include "RecentFiles.h"
#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/NodeItem.h"
#include "graph/GraphStats.h"
#include "models/GraphListModel.h"
#include "models/InspectorModel.h"
#include "models/NodeFormat.h"
#include "models/NodeTableModel.h"
#include "panels/ResultTable.h"
#include "partition/CompileSettings.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>

#include <map>

// The icons are compiled into the static library: nothing would pull them into the binary unless referenced.
static void registerIcons() {
    Q_INIT_RESOURCE(resources);
}

namespace jointscope::gui {

namespace {} // namespace

MainWindow::MainWindow(bool interactive, QWidget* parent) : QMainWindow(parent), interactive_(interactive) {
    registerIcons();
    setWindowTitle(tr("jointscope"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/jointscope.svg")));
    setAcceptDrops(true);
    setDockNestingEnabled(true);
    scene_ = new views::GraphScene(this);
    view_ = new views::GraphView(this);
    view_->setScene(scene_);
    connect(scene_, &views::GraphScene::nodeSelected, this, &MainWindow::onNodeSelected);
    createDocks();
    createFeatures();
    placeFeatureDocks();
    createMenus();

    connect(&loader_, &views::DocumentLoader::loaded, this, &MainWindow::onDocumentLoaded);
    connect(&loader_, &views::DocumentLoader::failed, this, [this](quint64 ticket, const Diagnostic& error) {
        reportError(tr("Cannot open %1").arg(QFileInfo(QString::fromStdString(error.loc.file)).fileName()),
                    error);
        finishDocument(ticket, false);
    });
    connect(&loader_, &views::DocumentLoader::cancelled, this, [this](quint64 ticket) {
        log(tr("Stopped reading the file"));
        finishDocument(ticket, false);
    });
    connect(&loader_, &views::DocumentLoader::progress, this,
            [this](quint64, double fraction, const QString& step) { reading_->setProgress(fraction, step); });
    connect(&parseJob_, &views::BackgroundJob::failed, this, [this](quint64, const QString& message) {
        reportError(tr("Cannot load graph"),
                    makeError({filePath_.toStdString(), 0, 0}, message.toStdString()));
    });
    resize(1500, 950);
    if (interactive_)
        restoreSettings();
    updateStatus();
}

MainWindow::~MainWindow() {
    disconnect(&loader_, nullptr, this, nullptr);
    disconnect(&parseJob_, nullptr, this, nullptr);
    loader_.cancel();
    parseJob_.cancel();
}

void MainWindow::createDocks() {
    // Graphs of a multi-graph file, grouped by compile id; picking one parses it on a worker.
    graphListModel_ = new views::GraphListModel(this);
    graphList_ = new QTreeView(this);
    graphList_->setModel(graphListModel_);
    graphList_->setUniformRowHeights(true);
    graphList_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    graphsDock_ = newDock(tr("Graphs"), QStringLiteral("graphsDock"), graphList_, this);
    listFill_ = new GraphListFill(&loader_, graphListModel_, graphList_, graphsDock_, this);
    addDockWidget(Qt::LeftDockWidgetArea, graphsDock_);
    // One click picks a graph (Enter and a double click too); a double click also clicks, and the graph shown
    // or being parsed is not parsed again.
    auto pick = [this](const QModelIndex& index) {
        const QVariant entry = index.data(views::GraphListModel::EntryIndexRole);
        if (entry.isValid() && pickedEntry_ != std::optional<size_t>(entry.toUInt()))
            loadGraph(entry.toUInt());
    };
    connect(graphList_, &QTreeView::clicked, this, pick);
    connect(graphList_, &QTreeView::activated, this, pick);

    // Node table with a filter.
    nodeModel_ = new views::NodeTableModel(this);
    nodeProxy_ = new QSortFilterProxyModel(this);
    nodeProxy_->setSourceModel(nodeModel_);
    nodeProxy_->setSortRole(views::NodeTableModel::SortRole);
    nodeProxy_->setFilterRole(views::NodeTableModel::SearchTextRole);
    nodeProxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    nodeTable_ = new QTableView(this);
    nodeTable_->setModel(nodeProxy_);
    // Graph order until a header is clicked: sorting 100k names on every open took most of the UI-thread
    // event that shows a new graph (bench/gui_open show_ms).
    views::styleResultTable(nodeTable_, -1, Qt::AscendingOrder);
    // Columns fit the rows on screen and 200 more, not Qt's 1,000: measuring a cell shapes its text, and
    // fitting 1,000 rows of every column was most of the UI-thread event that shows a new graph.
    nodeTable_->horizontalHeader()->setResizeContentsPrecision(200);
    auto* nodeFilter = new QLineEdit(this);
    nodeFilter->setPlaceholderText(tr("Filter nodes (name, op, target)"));
    nodeFilter->setClearButtonEnabled(true);
    connect(nodeFilter, &QLineEdit::textChanged, nodeProxy_, &QSortFilterProxyModel::setFilterFixedString);
    auto* nodesPane = new QWidget(this);
    auto* nodesLayout = new QVBoxLayout(nodesPane);
    nodesLayout->setContentsMargins(0, 0, 0, 0);
    nodesLayout->addWidget(nodeFilter);
    nodesLayout->addWidget(nodeTable_);
    nodesDock_ = newDock(tr("Nodes"), QStringLiteral("nodesDock"), nodesPane, this);
    addDockWidget(Qt::LeftDockWidgetArea, nodesDock_);
    splitDockWidget(graphsDock_, nodesDock_, Qt::Vertical);
    resizeDocks({graphsDock_, nodesDock_}, {180, 600}, Qt::Vertical);
    resizeDocks({graphsDock_}, {460}, Qt::Horizontal);
    connect(nodeTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (syncingSelection_ || !current.isValid())
                    return;
                canvas_->selectNode(current.data(views::NodeTableModel::NodeIdRole).toUInt(), true);
            });

    // Inspector.
    inspectorModel_ = new views::InspectorModel(this);
    inspector_ = new QTreeView(this);
    inspector_->setModel(inspectorModel_);
    inspector_->setUniformRowHeights(true);
    inspector_->setWordWrap(false);
    inspector_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    inspectorDock_ = newDock(tr("Inspector"), QStringLiteral("inspectorDock"), inspector_, this);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock_);
    resizeDocks({inspectorDock_}, {380}, Qt::Horizontal);
    connect(inspector_, &QTreeView::activated, this, [this](const QModelIndex& index) {
        const QVariant ref = index.siblingAtColumn(0).data(views::InspectorModel::NodeRefRole);
        const QVariant refValue = index.siblingAtColumn(1).data(views::InspectorModel::NodeRefRole);
        if (ref.isValid())
            canvas_->selectNode(ref.toUInt(), true);
        else if (refValue.isValid())
            canvas_->selectNode(refValue.toUInt(), true);
    });

    // Log and problems.
    log_ = new QPlainTextEdit(this);
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(5000);
    log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    logDock_ = newDock(tr("Log"), QStringLiteral("logDock"), log_, this);
    addDockWidget(Qt::BottomDockWidgetArea, logDock_);
    resizeDocks({logDock_}, {110}, Qt::Vertical);
}

void MainWindow::createFeatures() {
    FeatureContext context;
    context.window = this;
    context.scene = scene_;
    context.view = view_;
    context.inspectorModel = inspectorModel_;
    context.inspector = inspector_;
    context.undoStack = &undo_;
    context.interactive = interactive_;
    context.log = [this](const QString& text) { log(text); };
    context.reportError = [this](const QString& title, const Diagnostic& d) { reportError(title, d); };
    context.showEntry = [this](size_t entry, std::function<void(bool)> done) {
        loadGraph(entry, std::move(done));
    };

    canvas_ = new CanvasFeature(context, this);
    setCentralWidget(canvas_->centralWidget());
    connect(canvas_, &CanvasFeature::levelShown, this, &MainWindow::onLevelShown);
    connect(canvas_, &CanvasFeature::exportViewRequested, this, [this] { exportViewTo(QString()); });
    context.canvas = canvas_;

    Features features = gui::createFeatures(context, this, this);
    features_ = std::move(features.all);
    sessions_ = features.sessions;
    connect(sessions_, &SessionController::autosaved, this, &MainWindow::autosaved);
    connect(sessions_, &SessionController::restoreDone, this, &MainWindow::restoreDone);
    connect(canvas_, &CanvasFeature::layoutApplied, this, [this] {
        for (Feature* f : features_)
            f->applyOverlay();
    });

    // The canvas's context menu: the partition's pins, then the node's producers and consumers.
    view_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(view_, &QWidget::customContextMenuRequested, this, &MainWindow::showCanvasMenu);

    // Reading a file runs on a worker: the bar shows the step, Esc or the button gives up on it.
    statsLabel_ = new QLabel(this);
    statusBar()->addWidget(statsLabel_, 1);
    for (QWidget* w : canvas_->statusWidgets())
        statusBar()->addPermanentWidget(w);
    reading_ = new ReadingIndicator(statusBar(), this);
    connect(reading_, &ReadingIndicator::cancelRequested, this, [this] {
        sessions_->cancelOpen();
        loader_.cancel();
    });
}

void MainWindow::placeFeatureDocks() {
    addDockWidget(Qt::LeftDockWidgetArea, canvas_->searchResultsDock());
    canvas_->searchResultsDock()->hide();
    std::map<Qt::DockWidgetArea, QDockWidget*> last; // the previous dock of each area
    std::vector<QDockWidget*> raised;
    for (const Feature* f : features_)
        for (const DockPlacement& place : f->docks()) {
            QDockWidget* previous = last[place.area];
            if (place.join == DockPlacement::Join::Split && previous)
                splitDockWidget(previous, place.dock, Qt::Horizontal);
            else
                addDockWidget(place.area, place.dock);
            if (place.join == DockPlacement::Join::Tab && previous) {
                tabifyDockWidget(previous, place.dock);
                previous->raise(); // the first tab stays on top unless the new one asks to be
            }
            last[place.area] = place.dock;
            if (place.raised)
                raised.push_back(place.dock);
        }
    for (QDockWidget* dock : raised)
        dock->raise();
}

// Sizes only take once the window has its own size: before the first show they are overridden by the docks'
// minimum sizes (the Inspector came up two rows tall). A restored layout is the user's and stays.
void MainWindow::showEvent(QShowEvent* event) {
    QMainWindow::showEvent(event);
    if (docksSized_)
        return;
    docksSized_ = true;
    if (dockStateRestored_)
        return;
    // Once the show is laid out: the docks have their minimum sizes then, and these proportions can apply.
    QTimer::singleShot(0, this, [this] {
        const int h = height();
        // The Inspector shows a node's dozen properties, the Log a line of a few words; the features' docks
        // say what they need.
        QList<QDockWidget*> column{inspectorDock_}, row{logDock_};
        QList<int> heights{h * 2 / 5}, widths{300};
        for (const Feature* f : features_)
            for (const DockPlacement& place : f->docks()) {
                if (place.heightFraction > 0) {
                    column << place.dock;
                    heights << int(h * place.heightFraction);
                }
                if (place.width > 0) {
                    row << place.dock;
                    widths << place.width;
                }
            }
        resizeDocks(column, heights, Qt::Vertical);
        resizeDocks({inspectorDock_}, {430}, Qt::Horizontal);
        resizeDocks(row, widths, Qt::Horizontal);
    });
}

void MainWindow::addFeatureEntries(QMenu* menu, MenuId id) {
    for (const Feature* f : features_)
        for (const MenuEntry& e : f->menuEntries()) {
            if (e.menu != id)
                continue;
            if (e.submenu)
                menu->addMenu(e.submenu);
            else if (e.action)
                menu->addAction(e.action);
            else
                menu->addSeparator();
        }
}

void MainWindow::createMenus() {
    const CanvasFeature::Actions& canvas = canvas_->actions();

    QMenu* file = menuBar()->addMenu(tr("&File"));
    openAction_ = file->addAction(QIcon(QStringLiteral(":/icons/open.svg")), tr("&Open…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open graph"), QFileInfo(filePath_).absolutePath(),
            tr("Graphs and logs (*.txt *.log *.json *.py *.jointscope);;All files (*)"));
        if (!path.isEmpty())
            openFile(path);
    });
    openAction_->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open Rank &Folder…"), this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(
            this, tr("Open a folder of per-rank TORCH_TRACE logs"), QFileInfo(filePath_).absolutePath());
        if (!dir.isEmpty())
            openFile(dir);
    });
    recent_ = new RecentFiles(
        file->addMenu(tr("Open &Recent")), [this](const QString& path) { openFile(path); }, this);
    file->addAction(canvas.exportView);
    file->addSeparator();
    addFeatureEntries(file, MenuId::File);
    QAction* save = file->addAction(tr("Save &Session…"), this, [this] {
        const QString path =
            QFileDialog::getSaveFileName(this, tr("Save session"), QFileInfo(filePath_).absolutePath(),
                                         tr("jointscope sessions (*.jointscope)"));
        if (!path.isEmpty())
            saveSession(path.endsWith(QLatin1String(".jointscope")) ? path
                                                                    : path + QStringLiteral(".jointscope"));
    });
    save->setShortcut(QKeySequence::Save);
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = undo_.createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence(QStringLiteral("Ctrl+Z")));
    QAction* redo = undo_.createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+Z")));
    edit->addActions({undo, redo});
    edit->addSeparator();
    addFeatureEntries(edit, MenuId::Edit);
    // Their shortcuts (F5: Re-partition) wherever the focus is.
    addActions(edit->actions());

    QMenu* view = menuBar()->addMenu(tr("&View"));
    view->addActions({graphsDock_->toggleViewAction(), nodesDock_->toggleViewAction(),
                      inspectorDock_->toggleViewAction(), logDock_->toggleViewAction()});
    addFeatureEntries(view, MenuId::View);
    view->addSeparator();
    view->addActions({canvas.fit, canvas.find, canvas.up, canvas.collapse, canvas.ladder, canvas.minimap,
                      canvas.searchResults});

    QMenu* navigate = menuBar()->addMenu(tr("&Navigate"));
    navigate->addActions(canvas.walk);
    navigate->addSeparator();
    navigate->addMenu(canvas.jumpMenu);
    navigate->addSeparator();
    addFeatureEntries(navigate, MenuId::Navigate);

    QToolBar* toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("mainToolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->addActions({openAction_, canvas.fit, canvas.find, canvas.up});

    addFeatureEntries(menuBar()->addMenu(tr("&Tools")), MenuId::Tools);

    populateHelpMenu(menuBar()->addMenu(tr("&Help")), this);
}

void MainWindow::showCanvasMenu(const QPoint& pos) {
    QGraphicsItem* item = view_->itemAt(pos);
    while (item && item->type() != views::NodeItem::Type)
        item = item->parentItem();
    if (!item)
        return;
    const NodeId id = static_cast<views::NodeItem*>(item)->nodeId();
    scene_->selectNode(id);
    QMenu menu(this);
    addFeatureEntries(&menu, MenuId::NodeContext);
    canvas_->addNodeMenus(&menu, id);
    menu.exec(view_->viewport()->mapToGlobal(pos));
}

void MainWindow::restoreSettings() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    dockStateRestored_ = restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    recent_->refresh();
}

void MainWindow::saveSettings() {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (interactive_)
        saveSettings();
    sessions_->closing();
    event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.first().isLocalFile()) {
        openFile(urls.first().toLocalFile());
        event->acceptProposedAction();
    }
}

void MainWindow::log(const QString& text) {
    log_->appendPlainText(QDateTime::currentDateTime().toString(QStringLiteral("hh:mm:ss  ")) + text);
}

void MainWindow::reportError(const QString& title, const Diagnostic& diagnostic) {
    const QString text = QString::fromStdString(diagnostic.format());
    log(text);
    if (interactive_)
        QMessageBox::warning(this, title, text);
}

bool MainWindow::openFile(const QString& path) {
    if (path.endsWith(QLatin1String(".jointscope")) || isSessionFile(path.toStdString()))
        return openSession(path);
    return readGraphFile(path);
}

bool MainWindow::readGraphFile(const QString& path) {
    parseJob_.cancel(); // a graph picked in the old file is no longer wanted
    loader_.open(path); // a file still being read is superseded: it reports cancelled
    canvas_->setReading(true);
    showReading(true);
    reading_->setStep(tr("reading"));
    canvas_->setLayoutStatus(tr("reading %1…").arg(QFileInfo(path).fileName()));
    return true;
}

void MainWindow::showSessionReading(bool reading) {
    showReading(reading || loader_.busy());
    if (reading)
        reading_->setStep(tr("reading session"));
}

void MainWindow::showReading(bool reading) {
    reading_->setShown(reading);
}

void MainWindow::onDocumentLoaded(quint64 ticket, std::shared_ptr<views::OpenedFile> opened) {
    const QString path = opened->path;
    canvas_->setReading(loader_.busy());
    file_ = std::make_shared<const GraphFile>(std::move(opened->file));
    filePath_ = path;
    log(tr("Opened %1 (%2, %n graph(s), read in %3 s)", nullptr, int(file_->graphs().size()))
            .arg(path, qstr(formatName(file_->format())))
            .arg(opened->seconds, 0, 'f', 2));
    for (const Diagnostic& problem : file_->problems())
        log(QString::fromStdString(problem.format()));
    listFill_->end(nullptr); // the new file's list replaces the partial one
    graphListModel_->setEntries(shownGraphs());
    for (Feature* f : features_)
        f->setFile(file_);
    pickedEntry_.reset();
    graphList_->expandAll();
    // The list only helps for multi-graph files (TORCH_TRACE logs, pastes).
    graphsDock_->setVisible(file_->graphs().size() > 1);
    if (interactive_)
        recent_->add(path);
    if (file_->graphs().empty()) {
        log(tr("%1: no graphs found").arg(path));
        finishDocument(ticket, false);
        return;
    }
    if (!opened->graph) {
        reportError(tr("Cannot load graph"), opened->problem.value_or(Diagnostic{}));
        finishDocument(ticket, false);
        return;
    }
    pickedEntry_ = opened->index;
    showGraph(opened->index, std::move(*opened->graph), std::move(opened->logged));
    finishDocument(ticket, canvas_->root() != nullptr);
}

std::shared_ptr<const std::vector<GraphEntry>> MainWindow::shownGraphs() const {
    if (!file_)
        return nullptr;
    return {file_, &file_->graphs()}; // the list lives as long as the file: nothing copied
}

void MainWindow::finishDocument(quint64 ticket, bool ok) {
    if (!loader_.busy()) // a log that did not open: the list goes back to the file shown
        listFill_->end(shownGraphs());
    canvas_->setReading(loader_.busy());
    if (!loader_.busy()) {
        showReading(sessions_->reading());
        if (!ok && !canvas_->layoutBusy())
            canvas_->setLayoutStatus(QString());
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
    emit documentLoaded(ok);
    // Nothing new will be laid out: what waited for the layout gets the view that stays.
    if (!ok)
        canvas_->releaseWaiting();
}

void MainWindow::whenDocumentLoaded(std::function<void(bool)> fn) {
    if (loader_.busy())
        afterLoad_.emplace_back(loader_.ticket(), std::move(fn));
    else
        fn(canvas_->root() != nullptr);
}

void MainWindow::loadGraph(size_t index, std::function<void(bool)> done) {
    if (!file_) {
        if (done)
            done(false);
        return;
    }
    pickedEntry_ = index;
    canvas_->setLayoutStatus(tr("parsing graph %1…").arg(index));
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
            if (parsed.graph)
                showGraph(index, std::move(*parsed.graph), std::move(parsed.logged));
            else
                reportError(tr("Cannot load graph"), parsed.problem.value_or(Diagnostic{}));
            if (!parsed.graph) {
                pickedEntry_.reset(); // picking it again tries again
                graphListModel_->setLoaded(uint32_t(index), 0,
                                           parsed.problem.value_or(Diagnostic{}).format());
            }
            if (done)
                done(parsed.graph.has_value());
        });
}

void MainWindow::showGraphIndex(int index, std::function<void(bool)> done) {
    loadGraph(size_t(index), std::move(done));
}

void MainWindow::showGraph(size_t index, Graph graph, std::optional<CompileConfig> logged) {
    nodeModel_->setGraph(nullptr);
    inspectorModel_->setNode(nullptr, kNoNode);
    auto root = std::make_shared<const Graph>(std::move(graph));
    graphListModel_->setLoaded(uint32_t(index), root->size()); // a log's index has no count before
    const QModelIndex row = graphListModel_->indexOfEntry(uint32_t(index));
    if (row.isValid())
        graphList_->setCurrentIndex(row);
    // The title names the file of the graph shown: a file whose graphs fail to read leaves it as it was.
    setWindowTitle(tr("%1 — jointscope").arg(QFileInfo(filePath_).fileName()));
    log(tr("Loaded graph %1: %2 nodes").arg(index).arg(root->size()));
    const ShownGraph shown{root, filePath_, index, file_->graphs().size(), std::move(logged)};
    for (Feature* f : features_)
        f->setGraph(shown);
    canvas_->setRoot(root);
}

void MainWindow::onLevelShown(const Graph* graph) {
    for (Feature* f : features_)
        f->levelShown();
    nodeModel_->setGraph(graph, graph == scene_->graph() ? scene_->roles() : std::vector<views::NodeRole>{});
    nodeTable_->resizeColumnsToContents();
    inspectorModel_->setNode(nullptr, kNoNode);
    updateStatus();
}

bool MainWindow::enterSubgraph(const QString& name) {
    return canvas_->enterSubgraph(name);
}

bool MainWindow::layoutBusy() const {
    return canvas_->layoutBusy() || loader_.busy() || parseJob_.busy();
}

void MainWindow::onNodeSelected(NodeId id) {
    inspectorModel_->setNode(canvas_->currentGraph(), id);
    inspector_->expandAll();
    if (id == kNoNode)
        return;
    syncingSelection_ = true;
    const QModelIndex source = nodeModel_->index(int(id), 0);
    const QModelIndex proxy = nodeProxy_->mapFromSource(source);
    if (proxy.isValid()) {
        nodeTable_->selectionModel()->setCurrentIndex(proxy, QItemSelectionModel::ClearAndSelect |
                                                                 QItemSelectionModel::Rows);
        nodeTable_->scrollTo(proxy);
    }
    syncingSelection_ = false;
}

bool MainWindow::selectNodeByName(const QString& name) {
    return canvas_->selectNodeByName(name);
}

void MainWindow::updateStatus() {
    const Graph* graph = canvas_->currentGraph();
    if (!graph) {
        statsLabel_->setText(tr("Open a graph with File › Open (Ctrl+O) or drop a file here"));
        return;
    }
    // The canvas classified the graph it shows already: its backward nodes are the backward mask.
    std::vector<bool> backward;
    if (graph == scene_->graph()) {
        backward.reserve(graph->size());
        for (views::NodeRole role : scene_->roles())
            backward.push_back(role == views::NodeRole::Backward);
    }
    const GraphStats stats =
        backward.size() == graph->size() ? computeStats(*graph, backward) : computeStats(*graph);
    statsLabel_->setText(views::graphStatsText(stats));
}

void MainWindow::whenLayoutReady(std::function<void()> fn) {
    canvas_->whenLayoutReady(std::move(fn));
}

bool MainWindow::exportViewTo(const QString& path) {
    return canvas_->exportViewTo(path, filePath_);
}

QJsonObject MainWindow::viewSettings() const {
    QJsonObject view;
    view[QStringLiteral("geometry")] = QString::fromLatin1(saveGeometry().toBase64());
    view[QStringLiteral("state")] = QString::fromLatin1(saveState().toBase64());
    // Session view settings are strings.
    view[QStringLiteral("ladder")] =
        canvas_->actions().ladder->isChecked() ? QStringLiteral("on") : QStringLiteral("off");
    const Graph* graph = canvas_->currentGraph();
    const NodeId selected = scene_->selectedNode();
    if (graph && selected < graph->size())
        view[QStringLiteral("selected")] = QString::fromStdString(graph->node(selected).name);
    return view;
}

void MainWindow::restoreViewSettings(const QJsonObject& view) {
    if (interactive_ && view.contains(QStringLiteral("state")))
        restoreState(QByteArray::fromBase64(view.value(QStringLiteral("state")).toString().toLatin1()));
    if (view.contains(QStringLiteral("ladder")))
        canvas_->actions().ladder->setChecked(view.value(QStringLiteral("ladder")).toString() !=
                                              QStringLiteral("off"));
    const QString selected = view.value(QStringLiteral("selected")).toString();
    if (!selected.isEmpty())
        whenLayoutReady([this, selected] { selectNodeByName(selected); });
}

void MainWindow::screenshotWhenReady(const QString& path, std::function<void(bool)> done) {
    auto shoot = [this, path, done] {
        // Let the window paint its final state first.
        QTimer::singleShot(300, this, [this, path, done] {
            if (layoutBusy()) { // something (--select of a node in a collapsed group) started another layout
                screenshotWhenReady(path, done);
                return;
            }
            const bool ok = grab().save(path);
            log(ok ? tr("Saved screenshot %1").arg(path) : tr("Cannot save screenshot %1").arg(path));
            done(ok);
        });
    };
    whenLayoutReady(shoot);
}

} // namespace jointscope::gui
