#include "MainWindow.h"

#include "CanvasFeature.h"
#include "DocumentController.h"
#include "Features.h"
#include "HelpMenu.h"
#include "ReadingIndicator.h"
#include "RecentFiles.h"
#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/NodeItem.h"
#include "graph/GraphStats.h"
#include "models/InspectorModel.h"
#include "models/NodeFormat.h"
#include "panels/NodeTablePanel.h"

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
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSettings>
#include <QStatusBar>
#include <QTimer>
#include <QToolBar>
#include <QTreeView>

#include <map>

// The icons are compiled into the static library: nothing would pull them into the binary unless referenced.
static void registerIcons() {
    Q_INIT_RESOURCE(resources);
}

namespace jointscope::gui {

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
    createDocuments();
    placeFeatureDocks();
    createMenus();
    resize(1500, 950);
    if (interactive_)
        restoreSettings();
    updateStatus();
}

MainWindow::~MainWindow() {
    delete documents_; // its workers stop before the features they feed go
}

void MainWindow::createDocks() {
    nodes_ = new views::NodeTablePanel(this);
    nodesDock_ = newDock(tr("Nodes"), QStringLiteral("nodesDock"), nodes_, this);
    addDockWidget(Qt::LeftDockWidgetArea, nodesDock_);
    connect(nodes_, &views::NodeTablePanel::nodePicked, this,
            [this](NodeId id) { canvas_->selectNode(id, true); });

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
        documents_->show(entry, std::move(done));
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
        documents_->cancel();
    });
}

void MainWindow::createDocuments() {
    FeatureContext context;
    context.window = this;
    context.canvas = canvas_;
    context.log = [this](const QString& text) { log(text); };
    context.reportError = [this](const QString& title, const Diagnostic& d) { reportError(title, d); };
    documents_ = new DocumentController(context, reading_, this);
    connect(documents_, &DocumentController::fileOpened, this, &MainWindow::onFileOpened);
    connect(documents_, &DocumentController::graphParsed, this, &MainWindow::onGraphParsed);
    connect(documents_, &DocumentController::loaded, this, &MainWindow::documentLoaded);
    // The Graphs dock above the Nodes dock.
    addDockWidget(Qt::LeftDockWidgetArea, documents_->graphsDock());
    splitDockWidget(documents_->graphsDock(), nodesDock_, Qt::Vertical);
    resizeDocks({documents_->graphsDock(), nodesDock_}, {180, 600}, Qt::Vertical);
    resizeDocks({documents_->graphsDock()}, {460}, Qt::Horizontal);
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
            this, tr("Open graph"), QFileInfo(documents_->path()).absolutePath(),
            tr("Graphs and logs (*.txt *.log *.json *.py *.jointscope);;All files (*)"));
        if (!path.isEmpty())
            openFile(path);
    });
    openAction_->setShortcut(QKeySequence::Open);
    file->addAction(tr("Open Rank &Folder…"), this, [this] {
        const QString dir =
            QFileDialog::getExistingDirectory(this, tr("Open a folder of per-rank TORCH_TRACE logs"),
                                              QFileInfo(documents_->path()).absolutePath());
        if (!dir.isEmpty())
            openFile(dir);
    });
    recent_ = new RecentFiles(
        file->addMenu(tr("Open &Recent")), [this](const QString& path) { openFile(path); }, this);
    file->addAction(canvas.exportView);
    file->addSeparator();
    addFeatureEntries(file, MenuId::File);
    QAction* save = file->addAction(tr("Save &Session…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Save session"),
                                                          QFileInfo(documents_->path()).absolutePath(),
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
    view->addActions({documents_->graphsDock()->toggleViewAction(), nodesDock_->toggleViewAction(),
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
    return openGraphFile(path);
}

bool MainWindow::openGraphFile(const QString& path) {
    documents_->read(path);
    return true;
}

bool MainWindow::loading() const {
    return documents_->reading();
}

void MainWindow::showSessionReading(bool reading) {
    documents_->setSessionReading(reading);
}

void MainWindow::whenDocumentLoaded(std::function<void(bool)> fn) {
    documents_->whenLoaded(std::move(fn));
}

void MainWindow::showGraphIndex(int index, std::function<void(bool)> done) {
    documents_->show(size_t(index), std::move(done));
}

void MainWindow::onFileOpened(const std::shared_ptr<const GraphFile>& file, const QString& path) {
    for (Feature* f : features_)
        f->setFile(file);
    if (interactive_)
        recent_->add(path);
}

void MainWindow::onGraphParsed(const ShownGraph& shown) {
    nodes_->setGraph(nullptr);
    inspectorModel_->setNode(nullptr, kNoNode);
    // The title names the file of the graph shown: a file whose graphs fail to read leaves it as it was.
    setWindowTitle(tr("%1 — jointscope").arg(QFileInfo(shown.filePath).fileName()));
    for (Feature* f : features_)
        f->setGraph(shown);
    canvas_->setRoot(shown.root);
}

void MainWindow::onLevelShown(const Graph* graph) {
    for (Feature* f : features_)
        f->levelShown();
    nodes_->setGraph(graph, graph == scene_->graph() ? scene_->roles() : std::vector<views::NodeRole>{});
    inspectorModel_->setNode(nullptr, kNoNode);
    updateStatus();
}

bool MainWindow::enterSubgraph(const QString& name) {
    return canvas_->enterSubgraph(name);
}

bool MainWindow::layoutBusy() const {
    return canvas_->layoutBusy() || documents_->busy();
}

void MainWindow::onNodeSelected(NodeId id) {
    inspectorModel_->setNode(canvas_->currentGraph(), id);
    inspector_->expandAll();
    if (id != kNoNode)
        nodes_->showNode(id);
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
    return canvas_->exportViewTo(path, documents_->path());
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
