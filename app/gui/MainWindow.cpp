#include "MainWindow.h"

#include "PartitionDocument.h"
#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "graph/HopBody.h"
#include "models/GraphListModel.h"
#include "models/InspectorModel.h"
#include "models/NodeTableModel.h"
#include "panels/RuntimePanel.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDatabase>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRegularExpression>
#include <QSettings>
#include <QShortcut>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace jointscope::gui {

namespace {

constexpr int kMaxRecentFiles = 10;

QString qstr(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace

MainWindow::MainWindow(bool interactive, QWidget* parent) : QMainWindow(parent), interactive_(interactive) {
    setWindowTitle(tr("jointscope"));
    setWindowIcon(QIcon(QStringLiteral(":/icons/jointscope.svg")));
    setAcceptDrops(true);
    setDockNestingEnabled(true);
    createCentral();
    createDocks();
    createActions();
    createPartitionUi();
    createShardingUi();
    connect(&runner_, &layout::LayoutRunner::finished, this, &MainWindow::onLayoutFinished);
    connect(&runner_, &layout::LayoutRunner::cancelled, this, &MainWindow::onLayoutCancelled);
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
            [this](quint64, const QString& step) { loadBusy_->setFormat(step); });
    resize(1500, 950);
    if (interactive_)
        restoreSettings();
    updateStatus();
}

MainWindow::~MainWindow() {
    disconnect(&loader_, nullptr, this, nullptr);
    loader_.cancel();
    runner_.cancel();
    runner_.waitForDone();
}

void MainWindow::createCentral() {
    auto* central = new QWidget(this);
    auto* layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);

    breadcrumb_ = new QWidget(central);
    breadcrumbLayout_ = new QHBoxLayout(breadcrumb_);
    breadcrumbLayout_->setContentsMargins(6, 2, 6, 2);
    breadcrumb_->setVisible(false);
    layout->addWidget(breadcrumb_);

    searchBar_ = new QWidget(central);
    auto* searchLayout = new QHBoxLayout(searchBar_);
    searchLayout->setContentsMargins(6, 2, 6, 2);
    searchLayout->addWidget(new QLabel(tr("Find (regex over name, op, target, meta):"), searchBar_));
    searchEdit_ = new QLineEdit(searchBar_);
    searchEdit_->setObjectName(QStringLiteral("searchEdit"));
    searchEdit_->setClearButtonEnabled(true);
    searchEdit_->setPlaceholderText(tr("e.g. ^mm|addmm, tangents_, aten\\.view"));
    searchLayout->addWidget(searchEdit_, 1);
    searchCount_ = new QLabel(searchBar_);
    searchLayout->addWidget(searchCount_);
    auto* prev = new QToolButton(searchBar_);
    prev->setArrowType(Qt::UpArrow);
    prev->setToolTip(tr("Previous match (Shift+Enter)"));
    auto* next = new QToolButton(searchBar_);
    next->setArrowType(Qt::DownArrow);
    next->setToolTip(tr("Next match (Enter)"));
    auto* close = new QToolButton(searchBar_);
    close->setText(QStringLiteral("✕"));
    close->setToolTip(tr("Close (Esc)"));
    searchLayout->addWidget(prev);
    searchLayout->addWidget(next);
    searchLayout->addWidget(close);
    searchBar_->setVisible(false);
    layout->addWidget(searchBar_);
    connect(searchEdit_, &QLineEdit::textChanged, this, &MainWindow::runSearch);
    connect(searchEdit_, &QLineEdit::returnPressed, this,
            [this] { nextMatch(QApplication::keyboardModifiers() & Qt::ShiftModifier ? -1 : 1); });
    connect(prev, &QToolButton::clicked, this, [this] { nextMatch(-1); });
    connect(next, &QToolButton::clicked, this, [this] { nextMatch(1); });
    connect(close, &QToolButton::clicked, this, [this] {
        searchBar_->hide();
        scene_->setMatches({});
        view_->setFocus();
    });
    auto* escape =
        new QShortcut(QKeySequence(Qt::Key_Escape), searchEdit_, nullptr, nullptr, Qt::WidgetShortcut);
    connect(escape, &QShortcut::activated, close, &QToolButton::click);

    scene_ = new views::GraphScene(this);
    view_ = new views::GraphView(central);
    view_->setScene(scene_);
    layout->addWidget(view_, 1);
    setCentralWidget(central);
    connect(scene_, &views::GraphScene::nodeSelected, this, &MainWindow::onNodeSelected);
    // Queued: opening a body rebuilds the scene, which must not happen inside its own event handler.
    connect(scene_, &views::GraphScene::nodeActivated, this, &MainWindow::openBody, Qt::QueuedConnection);

    statsLabel_ = new QLabel(this);
    layoutLabel_ = new QLabel(this);
    busy_ = new QProgressBar(this);
    busy_->setRange(0, 0);
    busy_->setMaximumWidth(140);
    busy_->setFormat(tr("laying out"));
    busy_->setVisible(false);
    cancelButton_ = new QToolButton(this);
    cancelButton_->setText(tr("Cancel layout"));
    cancelButton_->setVisible(false);
    connect(cancelButton_, &QToolButton::clicked, this, [this] { runner_.cancel(); });
    statusBar()->addWidget(statsLabel_, 1);
    statusBar()->addPermanentWidget(layoutLabel_);
    statusBar()->addPermanentWidget(busy_);
    statusBar()->addPermanentWidget(cancelButton_);
    // Reading a file runs on a worker: the bar shows the step, Esc or the button gives up on it.
    loadBusy_ = new QProgressBar(this);
    loadBusy_->setRange(0, 0);
    loadBusy_->setMaximumWidth(140);
    loadBusy_->setVisible(false);
    loadCancel_ = new QToolButton(this);
    loadCancel_->setText(tr("Cancel (Esc)"));
    loadCancel_->setToolTip(tr("Stop reading the file; the graph shown stays"));
    loadCancel_->setVisible(false);
    loadEscape_ = new QShortcut(QKeySequence(Qt::Key_Escape), this);
    loadEscape_->setEnabled(false);
    connect(loadCancel_, &QToolButton::clicked, &loader_, &views::DocumentLoader::cancel);
    connect(loadEscape_, &QShortcut::activated, &loader_, &views::DocumentLoader::cancel);
    statusBar()->addPermanentWidget(loadBusy_);
    statusBar()->addPermanentWidget(loadCancel_);
}

void MainWindow::createDocks() {
    // Graphs of a multi-graph file, grouped by compile id.
    graphListModel_ = new views::GraphListModel(this);
    graphList_ = new QTreeView(this);
    graphList_->setModel(graphListModel_);
    graphList_->setUniformRowHeights(true);
    graphList_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* graphsDock = new QDockWidget(tr("Graphs"), this);
    graphsDock->setObjectName(QStringLiteral("graphsDock"));
    graphsDock->setWidget(graphList_);
    addDockWidget(Qt::LeftDockWidgetArea, graphsDock);
    connect(graphList_, &QTreeView::activated, this, [this](const QModelIndex& index) {
        const QVariant entry = index.data(views::GraphListModel::EntryIndexRole);
        if (entry.isValid())
            loadGraph(entry.toUInt());
    });

    // Node table with a filter.
    nodeModel_ = new views::NodeTableModel(this);
    nodeProxy_ = new QSortFilterProxyModel(this);
    nodeProxy_->setSourceModel(nodeModel_);
    nodeProxy_->setSortRole(views::NodeTableModel::SortRole);
    nodeProxy_->setFilterRole(views::NodeTableModel::SearchTextRole);
    nodeProxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    nodeTable_ = new QTableView(this);
    nodeTable_->setModel(nodeProxy_);
    nodeTable_->setSortingEnabled(true);
    // Graph order until a header is clicked: sorting 100k names on every open took most of the UI-thread
    // event that shows a new graph (bench/gui_open show_ms).
    nodeTable_->sortByColumn(-1, Qt::AscendingOrder);
    nodeTable_->setSelectionBehavior(QAbstractItemView::SelectRows);
    nodeTable_->setSelectionMode(QAbstractItemView::SingleSelection);
    nodeTable_->verticalHeader()->setVisible(false);
    nodeTable_->verticalHeader()->setDefaultSectionSize(20);
    nodeTable_->horizontalHeader()->setStretchLastSection(true);
    nodeTable_->setWordWrap(false);
    auto* nodeFilter = new QLineEdit(this);
    nodeFilter->setPlaceholderText(tr("Filter nodes (name, op, target)"));
    nodeFilter->setClearButtonEnabled(true);
    connect(nodeFilter, &QLineEdit::textChanged, nodeProxy_, &QSortFilterProxyModel::setFilterFixedString);
    auto* nodesPane = new QWidget(this);
    auto* nodesLayout = new QVBoxLayout(nodesPane);
    nodesLayout->setContentsMargins(0, 0, 0, 0);
    nodesLayout->addWidget(nodeFilter);
    nodesLayout->addWidget(nodeTable_);
    auto* nodesDock = new QDockWidget(tr("Nodes"), this);
    nodesDock->setObjectName(QStringLiteral("nodesDock"));
    nodesDock->setWidget(nodesPane);
    addDockWidget(Qt::LeftDockWidgetArea, nodesDock);
    splitDockWidget(graphsDock, nodesDock, Qt::Vertical);
    resizeDocks({graphsDock, nodesDock}, {180, 600}, Qt::Vertical);
    resizeDocks({graphsDock}, {460}, Qt::Horizontal);
    connect(nodeTable_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (syncingSelection_ || !current.isValid())
                    return;
                selectNode(current.data(views::NodeTableModel::NodeIdRole).toUInt(), true);
            });

    // Inspector.
    inspectorModel_ = new views::InspectorModel(this);
    inspector_ = new QTreeView(this);
    inspector_->setModel(inspectorModel_);
    inspector_->setUniformRowHeights(true);
    inspector_->setWordWrap(false);
    inspector_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    auto* inspectorDock = new QDockWidget(tr("Inspector"), this);
    inspectorDock->setObjectName(QStringLiteral("inspectorDock"));
    inspectorDock->setWidget(inspector_);
    addDockWidget(Qt::RightDockWidgetArea, inspectorDock);
    resizeDocks({inspectorDock}, {380}, Qt::Horizontal);
    connect(inspector_, &QTreeView::activated, this, [this](const QModelIndex& index) {
        const QVariant ref = index.siblingAtColumn(0).data(views::InspectorModel::NodeRefRole);
        const QVariant refValue = index.siblingAtColumn(1).data(views::InspectorModel::NodeRefRole);
        if (ref.isValid())
            selectNode(ref.toUInt(), true);
        else if (refValue.isValid())
            selectNode(refValue.toUInt(), true);
    });

    // Log and problems.
    log_ = new QPlainTextEdit(this);
    log_->setReadOnly(true);
    log_->setMaximumBlockCount(5000);
    log_->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto* logDock = new QDockWidget(tr("Log"), this);
    logDock->setObjectName(QStringLiteral("logDock"));
    logDock->setWidget(log_);
    addDockWidget(Qt::BottomDockWidgetArea, logDock);
    resizeDocks({logDock}, {110}, Qt::Vertical);

    viewMenu_ = new QMenu(tr("&View"), this);
    for (QDockWidget* dock : {graphsDock, nodesDock, inspectorDock, logDock})
        viewMenu_->addAction(dock->toggleViewAction());

    // Validate / profile run jointscope-cli as a child process (views/panels/RuntimePanel).
    runtimePanel_ = new views::RuntimePanel(scene_, view_, this);
    auto* runtimeDock = new QDockWidget(tr("Runtime"), this);
    runtimeDock->setObjectName(QStringLiteral("runtimeDock"));
    runtimeDock->setWidget(runtimePanel_);
    addDockWidget(Qt::BottomDockWidgetArea, runtimeDock);
    viewMenu_->addAction(runtimeDock->toggleViewAction());
    connect(runtimePanel_, &views::RuntimePanel::nodeRequested, this,
            [this](NodeId id) { selectNode(id, true); });
    connect(runtimePanel_, &views::RuntimePanel::message, this, &MainWindow::log);
    runtimePanel_->setDecisionSource(
        [this] { return partitionDoc_ ? partitionDoc_->decisionJson() : std::string(); });
    runtimePanel_->listDevices();
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(QIcon(QStringLiteral(":/icons/open.svg")), tr("&Open…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            this, tr("Open graph"), QFileInfo(filePath_).absolutePath(),
            tr("Graphs and logs (*.txt *.log *.json *.py *.jointscope);;All files (*)"));
        if (!path.isEmpty())
            openFile(path);
    });
    open->setShortcut(QKeySequence::Open);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    file->addSeparator();
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    menuBar()->addMenu(viewMenu_);
    viewMenu_->addSeparator();
    QAction* fit = viewMenu_->addAction(QIcon(QStringLiteral(":/icons/fit.svg")), tr("&Fit Graph"), view_,
                                        &views::GraphView::fitAll);
    fit->setShortcut(QKeySequence(Qt::Key_Space));
    QAction* find = viewMenu_->addAction(QIcon(QStringLiteral(":/icons/search.svg")), tr("&Find Nodes…"),
                                         this, &MainWindow::showSearch);
    find->setShortcut(QKeySequence::Find);
    QAction* up = viewMenu_->addAction(QIcon(QStringLiteral(":/icons/up.svg")), tr("&Up to Parent Graph"),
                                       this, [this] {
                                           if (path_.size() > 1)
                                               showLevel(path_.size() - 2);
                                       });
    up->setShortcut(QKeySequence(Qt::Key_Backspace));
    createCanvasActions();

    QToolBar* toolbar = addToolBar(tr("Main"));
    toolbar->setObjectName(QStringLiteral("mainToolbar"));
    toolbar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    toolbar->addAction(open);
    toolbar->addAction(fit);
    toolbar->addAction(find);
    toolbar->addAction(up);

    QMenu* tools = menuBar()->addMenu(tr("&Tools"));
    tools->addAction(tr("&Validate Partition"), runtimePanel_, &views::RuntimePanel::validate)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V));
    tools->addAction(tr("&Profile Graph"), runtimePanel_, &views::RuntimePanel::profile)
        ->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About jointscope"), this, [this] {
        QMessageBox::about(
            this, tr("About jointscope"),
            tr("<b>jointscope %1</b><p>Graph inspector and partition debugger for torch.compile joint "
               "graphs.</p>"
               "<p>Colours: <span style='color:#2563eb'>forward</span>, <span "
               "style='color:#ea580c'>backward</span> "
               "(tangent closure), <span style='color:#059669'>primals</span>, <span "
               "style='color:#7c3aed'>tangents</span>, "
               "<span style='color:#b45309'>parameters</span>, <span style='color:#be185d'>HOP bodies</span> "
               "(double-click to open).</p>")
                .arg(QApplication::applicationVersion()));
    });
}

void MainWindow::restoreSettings() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    updateRecentMenu();
}

void MainWindow::saveSettings() {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
}

void MainWindow::addRecentFile(const QString& path) {
    if (!interactive_)
        return;
    QSettings settings;
    QStringList files = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), files);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    recentMenu_->clear();
    const QStringList files = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& path : files)
        recentMenu_->addAction(QFileInfo(path).fileName() + QStringLiteral("  —  ") +
                                   QFileInfo(path).absolutePath(),
                               this, [this, path] { openFile(path); });
    recentMenu_->setEnabled(!files.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (interactive_)
        saveSettings();
    partitionClosing();
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
    if (path.endsWith(QLatin1String(".jointscope")))
        return openSession(path);
    loader_.open(path); // a file still being read is superseded: it reports cancelled
    loadBusy_->setFormat(tr("reading"));
    loadBusy_->setVisible(true);
    loadCancel_->setVisible(true);
    loadEscape_->setEnabled(true);
    layoutLabel_->setText(tr("reading %1…").arg(QFileInfo(path).fileName()));
    return true;
}

void MainWindow::onDocumentLoaded(quint64 ticket, std::shared_ptr<views::OpenedFile> opened) {
    const QString path = opened->path;
    runner_.cancel();
    file_.emplace(std::move(opened->file));
    filePath_ = path;
    layouts_.clear();
    setWindowTitle(tr("%1 — jointscope").arg(QFileInfo(path).fileName()));
    log(tr("Opened %1 (%2, %n graph(s), read in %3 s)", nullptr, int(file_->graphs().size()))
            .arg(path, qstr(formatName(file_->format())))
            .arg(opened->seconds, 0, 'f', 2));
    for (const Diagnostic& problem : file_->problems())
        log(QString::fromStdString(problem.format()));
    graphListModel_->setEntries(file_->graphs());
    graphList_->expandAll();
    // The list only helps for multi-graph files (TORCH_TRACE logs, pastes).
    if (auto* dock = qobject_cast<QDockWidget*>(graphList_->parentWidget()))
        dock->setVisible(file_->graphs().size() > 1);
    addRecentFile(path);
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
    showGraph(opened->index, std::move(*opened->graph));
    finishDocument(ticket, root_ != nullptr);
}

void MainWindow::finishDocument(quint64 ticket, bool ok) {
    if (!loader_.busy()) {
        loadBusy_->setVisible(false);
        loadCancel_->setVisible(false);
        loadEscape_->setEnabled(false);
        if (!ok && !runner_.busy())
            layoutLabel_->clear();
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
    if (!ok && !loader_.busy() && !runner_.busy()) {
        auto pending = std::move(afterLayout_);
        afterLayout_.clear();
        for (auto& fn : pending)
            fn();
    }
}

void MainWindow::whenDocumentLoaded(std::function<void(bool)> fn) {
    if (loader_.busy())
        afterLoad_.emplace_back(loader_.ticket(), std::move(fn));
    else
        fn(root_ != nullptr);
}

void MainWindow::loadGraph(size_t index) {
    if (!file_)
        return;
    auto loaded = file_->load(index);
    if (!loaded) {
        reportError(tr("Cannot load graph"), loaded.error());
        return;
    }
    showGraph(index, loaded.take());
}

void MainWindow::showGraph(size_t index, Graph graph) {
    runner_.cancel();
    scene_->setGraph(nullptr);
    nodeModel_->setGraph(nullptr);
    inspectorModel_->setNode(nullptr, kNoNode);
    layouts_.clear();
    root_ = std::make_shared<Graph>(std::move(graph));
    path_ = {root_.get()};
    const QModelIndex row = graphListModel_->indexOfEntry(uint32_t(index));
    if (row.isValid())
        graphList_->setCurrentIndex(row);
    log(tr("Loaded graph %1: %2 nodes").arg(index).arg(root_->size()));
    partitionGraphLoaded(index);
    shardingGraphLoaded();
    runtimePanel_->setGraph(filePath_, file_->graphs().size() > 1 ? QString::number(index) : QString(),
                            root_.get());
    showLevel(0);
}

void MainWindow::showLevel(size_t depth) {
    if (depth >= path_.size())
        return;
    path_.resize(depth + 1);
    const Graph* graph = currentGraph();
    matches_.clear();
    currentMatch_ = -1;
    scene_->setGraph(graph);
    runtimePanel_->sceneGraphChanged();
    nodeModel_->setGraph(graph);
    nodeTable_->resizeColumnsToContents();
    inspectorModel_->setNode(nullptr, kNoNode);
    rebuildBreadcrumb();
    updateStatus();
    resetGrouping();
    startLayout();
}

void MainWindow::rebuildBreadcrumb() {
    while (QLayoutItem* item = breadcrumbLayout_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    breadcrumb_->setVisible(path_.size() > 1);
    for (size_t i = 0; i < path_.size(); ++i) {
        if (i > 0)
            breadcrumbLayout_->addWidget(new QLabel(QStringLiteral("›"), breadcrumb_));
        auto* button = new QToolButton(breadcrumb_);
        const QString name = QString::fromStdString(path_[i]->name);
        button->setText(name.isEmpty() ? tr("graph") : name);
        button->setAutoRaise(true);
        button->setEnabled(i + 1 < path_.size());
        connect(button, &QToolButton::clicked, this, [this, i] { showLevel(i); });
        breadcrumbLayout_->addWidget(button);
    }
    breadcrumbLayout_->addStretch(1);
}

void MainWindow::openBody(NodeId id) {
    const Graph* graph = currentGraph();
    if (!graph || id >= graph->size())
        return;
    // A HOP call opens the body it reads through its get_attr argument.
    const Graph* body = bodyOf(*graph, id);
    if (!body)
        return;
    path_.push_back(body);
    log(tr("Opened body %1 (%2 nodes)")
            .arg(QString::fromStdString(path_.back()->name))
            .arg(path_.back()->size()));
    showLevel(path_.size() - 1);
}

bool MainWindow::enterSubgraph(const QString& name) {
    const Graph* graph = currentGraph();
    if (!graph)
        return false;
    const auto id = graph->find(name.toStdString());
    if (!id)
        return false;
    const size_t depth = path_.size();
    openBody(*id);
    return path_.size() > depth;
}

void MainWindow::startLayout() {
    const Graph* graph = currentGraph();
    if (!graph)
        return;
    if (useCollapsedView()) {
        startCollapsedLayout();
        return;
    }
    if (auto it = layouts_.find(graph); it != layouts_.end()) {
        onLayoutFinished(0, it->second);
        return;
    }
    layout::LayoutOptions options;
    options.sizes = scene_->measureNodes();
    layoutStartMs_ = QDateTime::currentMSecsSinceEpoch();
    // Aliasing pointer: keeps the root (which owns every body) alive while the layout runs.
    pendingTicket_ = runner_.start(std::shared_ptr<const Graph>(root_, graph), std::move(options));
    busy_->setVisible(true);
    cancelButton_->setVisible(true);
    layoutLabel_->setText(tr("laying out %n node(s)…", nullptr, int(graph->size())));
}

void MainWindow::onLayoutFinished(quint64 ticket, std::shared_ptr<const layout::LayoutResult> result) {
    if (ticket != 0 && ticket != pendingTicket_)
        return; // an older layout that finished after a newer one started
    const Graph* graph = currentGraph();
    const auto& collapsedView = result->view;
    if (!graph || (collapsedView ? collapsedView->itemOfNode.size() : result->nodes.size()) != graph->size())
        return;
    if (collapsedView) {
        groupTree_ = collapsedView->tree;
        expanded_ = collapsedView->expanded;
    }
    if (ticket != 0) {
        lastLayoutSeconds_ = double(QDateTime::currentMSecsSinceEpoch() - layoutStartMs_) / 1000.0;
        if (!collapsedView)
            layouts_[graph] = result;
        log(tr("Layout of %1 %2: %3 in %4 s")
                .arg(result->nodes.size())
                .arg(collapsedView ? tr("boxes (collapsed view)") : tr("nodes"))
                .arg(result->algorithm == layout::LayoutAlgorithm::Graphviz ? tr("Graphviz dot")
                                                                            : tr("layered"))
                .arg(lastLayoutSeconds_, 0, 'f', 2));
    }
    busy_->setVisible(false);
    cancelButton_->setVisible(false);
    layoutLabel_->setText(result->algorithm == layout::LayoutAlgorithm::Graphviz ? tr("layout: Graphviz dot")
                                                                                 : tr("layout: layered"));
    if (collapsedView)
        scene_->applyCollapsedLayout(*result);
    else
        scene_->applyLayout(*result);
    applyPartitionOverlay();
    applyShardingOverlay();
    view_->showStart();
    if (!searchEdit_->text().isEmpty() && searchBar_->isVisible()) {
        if (collapsedView)
            scene_->setMatches(matches_); // searching again would jump to the first match, maybe hidden again
        else
            runSearch();
    }
    if (loader_.busy())
        return; // what waits is for the file being read
    auto pending = std::move(afterLayout_);
    afterLayout_.clear();
    for (auto& fn : pending)
        fn();
}

void MainWindow::onLayoutCancelled(quint64 ticket) {
    if (ticket != pendingTicket_)
        return;
    busy_->setVisible(false);
    cancelButton_->setVisible(false);
    layoutLabel_->setText(tr("layout cancelled"));
    log(tr("Layout cancelled"));
}

bool MainWindow::layoutBusy() const {
    return runner_.busy() || loader_.busy();
}

void MainWindow::onNodeSelected(NodeId id) {
    const Graph* graph = currentGraph();
    inspectorModel_->setNode(graph, id);
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

void MainWindow::selectNode(NodeId id, bool centre) {
    if (revealNode(id))
        return;
    scene_->selectNode(id);
    if (centre)
        view_->centreOnNode(id);
}

bool MainWindow::selectNodeByName(const QString& name) {
    const Graph* graph = currentGraph();
    if (!graph)
        return false;
    const auto id = graph->find(name.toStdString());
    if (!id)
        return false;
    selectNode(*id, true);
    return true;
}

void MainWindow::updateStatus() {
    const Graph* graph = currentGraph();
    if (!graph) {
        statsLabel_->setText(tr("Open a graph with File › Open (Ctrl+O) or drop a file here"));
        return;
    }
    const GraphStats stats = computeStats(*graph);
    QString text = tr("%1 nodes · %2 forward · %3 backward · %4 primals · %5 tangents · %6 tensor data")
                       .arg(stats.nodes)
                       .arg(stats.forward)
                       .arg(stats.backward)
                       .arg(stats.primals)
                       .arg(stats.tangents)
                       .arg(views::formatBytes(stats.tensorBytes));
    if (stats.subgraphs > 0)
        text += tr(" · %1 HOP bodies").arg(stats.subgraphs);
    statsLabel_->setText(text);
}

void MainWindow::showSearch() {
    searchBar_->setVisible(true);
    searchEdit_->setFocus();
    searchEdit_->selectAll();
    runSearch();
}

void MainWindow::runSearch() {
    matches_.clear();
    currentMatch_ = -1;
    const Graph* graph = currentGraph();
    const QString pattern = searchEdit_->text();
    const QRegularExpression regex(pattern, QRegularExpression::CaseInsensitiveOption);
    if (!graph || pattern.isEmpty() || !regex.isValid()) {
        searchCount_->setText(regex.isValid() || pattern.isEmpty() ? QString() : tr("bad regex"));
        scene_->setMatches({});
        return;
    }
    for (NodeId id = 0; id < graph->size(); ++id) {
        const Node& node = graph->node(id);
        if (regex.match(QString::fromStdString(node.name)).hasMatch() ||
            regex.match(qstr(nodeOpName(node.op))).hasMatch() ||
            regex.match(QString::fromStdString(node.target.text)).hasMatch() ||
            regex.match(QString::fromStdString(views::metaSearchText(node))).hasMatch())
            matches_.push_back(id);
    }
    fillSearchResults();
    scene_->setMatches(matches_);
    searchCount_->setText(matches_.empty() ? tr("no match")
                                           : tr("%n match(es)", nullptr, int(matches_.size())));
    if (!matches_.empty())
        nextMatch(1);
}

void MainWindow::nextMatch(int step) {
    if (matches_.empty())
        return;
    const int count = int(matches_.size());
    currentMatch_ = currentMatch_ < 0 ? 0 : ((currentMatch_ + step) % count + count) % count;
    searchCount_->setText(tr("%1 / %2").arg(currentMatch_ + 1).arg(count));
    selectNode(matches_[size_t(currentMatch_)], true);
}

void MainWindow::whenLayoutReady(std::function<void()> fn) {
    if (runner_.busy() || loader_.busy() || (currentGraph() && !scene_->hasLayout()))
        afterLayout_.push_back(std::move(fn));
    else
        fn();
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
