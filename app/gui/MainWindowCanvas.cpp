// MainWindow's canvas navigation: collapsed views of large graphs, the Alt+arrow edge walk, producer /
// consumer jumps, search results, and File › Export View. Apart from MainWindow.cpp to keep that file small.
#include "MainWindow.h"

#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/GroupItem.h"
#include "canvas/Minimap.h"
#include "canvas/NodeItem.h"
#include "canvas/SceneExport.h"
#include "models/Navigation.h"
#include "models/NodeFormat.h"

#include <QAction>
#include <QDateTime>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QStatusBar>
#include <QToolButton>

namespace jointscope::gui {

namespace {

// Graphs above this many nodes open collapsed; a collapsed view shows at most kExpandBudget boxes.
constexpr size_t kCollapseAbove = 1500;
constexpr size_t kFirstViewBudget = 400;
constexpr size_t kExpandBudget = 1500;

} // namespace

void MainWindow::createCanvasActions() {
    connect(scene_, &views::GraphScene::groupActivated, this, &MainWindow::onGroupActivated,
            Qt::QueuedConnection);

    collapseAction_ = viewMenu_->addAction(tr("&Collapse Groups"));
    collapseAction_->setCheckable(true);
    collapseAction_->setToolTip(
        tr("Show the graph as groups (forward / backward, HOP call, module, source line); "
           "double-click a group to expand it, its frame to collapse it"));
    connect(collapseAction_, &QAction::toggled, this, [this](bool on) {
        if (on == collapsed_)
            return;
        collapsed_ = on;
        startLayout();
    });
    QAction* minimap = viewMenu_->addAction(tr("&Minimap"));
    minimap->setCheckable(true);
    minimap->setChecked(true);
    connect(minimap, &QAction::toggled, view_->minimap(), &QWidget::setVisible);

    QMenu* navigate = menuBar()->addMenu(tr("&Navigate"));
    struct Walk {
        QString text;
        Qt::Key key;
        views::WalkStep step;
    };
    for (const Walk& w : {Walk{tr("Go to &Producer"), Qt::Key_Up, views::WalkStep::Producer},
                          Walk{tr("Go to &Consumer"), Qt::Key_Down, views::WalkStep::Consumer},
                          Walk{tr("Previous &Sibling"), Qt::Key_Left, views::WalkStep::Previous},
                          Walk{tr("Next S&ibling"), Qt::Key_Right, views::WalkStep::Next}}) {
        QAction* action = navigate->addAction(w.text, this, [this, step = w.step] { walk(int(step)); });
        action->setShortcut(QKeySequence(Qt::ALT | w.key));
    }
    navigate->addSeparator();
    jumpMenu_ = navigate->addMenu(tr("&Jump to Producers / Consumers"));
    connect(jumpMenu_, &QMenu::aboutToShow, this, [this] {
        jumpMenu_->clear();
        const Graph* graph = currentGraph();
        const NodeId id = scene_->selectedNode();
        if (!graph || id >= graph->size()) {
            jumpMenu_->addAction(tr("(select a node first)"))->setEnabled(false);
            return;
        }
        auto add = [&](const QString& heading, const std::vector<NodeId>& ids) {
            jumpMenu_->addSection(heading.arg(ids.size()));
            addJumpActions(jumpMenu_, ids);
        };
        add(tr("Producers (%1)"), views::producersOf(*graph, id));
        add(tr("Consumers (%1)"), views::consumersOf(*graph, id));
    });

    // Every match of the search, listed; a click locates it.
    searchResults_ = new QListWidget(this);
    searchResults_->setUniformItemSizes(true);
    auto* resultsDock = new QDockWidget(tr("Search Results"), this);
    resultsDock->setObjectName(QStringLiteral("searchResultsDock"));
    resultsDock->setWidget(searchResults_);
    addDockWidget(Qt::LeftDockWidgetArea, resultsDock);
    resultsDock->hide();
    viewMenu_->addAction(resultsDock->toggleViewAction());
    connect(searchResults_, &QListWidget::itemActivated, this,
            [this](QListWidgetItem* item) { selectNode(NodeId(item->data(Qt::UserRole).toUInt()), true); });
    connect(searchResults_, &QListWidget::itemClicked, this,
            [this](QListWidgetItem* item) { selectNode(NodeId(item->data(Qt::UserRole).toUInt()), true); });

    if (QMenu* file = menuBar()->actions().isEmpty() ? nullptr : menuBar()->actions().first()->menu()) {
        QAction* exportView = new QAction(tr("&Export View…"), this);
        exportView->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
        connect(exportView, &QAction::triggered, this, [this] { exportViewTo(QString()); });
        const auto actions = file->actions();
        file->insertAction(actions.size() >= 2 ? actions[actions.size() - 2] : nullptr, exportView);
    }
}

bool MainWindow::useCollapsedView() const {
    return collapsed_;
}

void MainWindow::resetGrouping() {
    groupTree_.reset();
    expanded_.clear();
    walker_.reset();
    const Graph* graph = currentGraph();
    collapsed_ = graph && graph->size() > kCollapseAbove;
    const QSignalBlocker blocker(collapseAction_);
    collapseAction_->setChecked(collapsed_);
}

void MainWindow::startCollapsedLayout() {
    const Graph* graph = currentGraph();
    if (!graph)
        return;
    layout::LayoutOptions options;
    layoutStartMs_ = QDateTime::currentMSecsSinceEpoch();
    // Font metrics are reentrant: boxes are measured on the layout thread, only for the visible nodes.
    auto measure = [](const Node& node) { return views::GraphScene::measureNode(node); };
    pendingTicket_ = runner_.startCollapsed(std::shared_ptr<const Graph>(root_, graph), groupTree_, expanded_,
                                            kFirstViewBudget, measure, std::move(options));
    busy_->setVisible(true);
    cancelButton_->setVisible(true);
    layoutLabel_->setText(groupTree_ ? tr("laying out the collapsed view…")
                                     : tr("grouping %n node(s)…", nullptr, int(graph->size())));
}

void MainWindow::onGroupActivated(int group, bool expand) {
    if (!groupTree_ || group <= 0 || size_t(group) >= groupTree_->groups.size())
        return;
    if (expand)
        layout::expandGroup(*groupTree_, expanded_, group, kExpandBudget);
    else
        layout::collapseGroup(*groupTree_, expanded_, group);
    const QString label = QString::fromStdString(groupTree_->groups[size_t(group)].label);
    log((expand ? tr("Expanded %1") : tr("Collapsed %1")).arg(label));
    const layout::Group& g = groupTree_->groups[size_t(group)];
    // Look at what changed once it is laid out: the group's first node, or its box.
    const NodeId first = g.first;
    startLayout();
    whenLayoutReady([this, first, group] {
        if (views::NodeItem* item = scene_->nodeItem(first)) {
            view_->centreOnNode(first);
            Q_UNUSED(item);
            return;
        }
        for (QGraphicsItem* item : scene_->items())
            if (item->type() == views::GroupItem::Type &&
                static_cast<views::GroupItem*>(item)->group() == group) {
                view_->centerOn(item);
                return;
            }
    });
}

bool MainWindow::revealNode(NodeId id) {
    const Graph* graph = currentGraph();
    if (!graph || id >= graph->size() || !scene_->collapsedView() || scene_->nodeItem(id) || !groupTree_)
        return false;
    layout::expandGroup(*groupTree_, expanded_, groupTree_->groupOf[id], kExpandBudget);
    startLayout();
    whenLayoutReady([this, id] {
        scene_->selectNode(id);
        view_->centreOnNode(id);
    });
    return true;
}

void MainWindow::walk(int step) {
    const Graph* graph = currentGraph();
    const NodeId current = scene_->selectedNode();
    if (!graph || current == kNoNode) {
        statusBar()->showMessage(tr("Select a node to walk from"), 3000);
        return;
    }
    if (!walker_)
        walker_ = std::make_unique<views::EdgeWalker>();
    const NodeId next = walker_->step(*graph, current, views::WalkStep(step));
    if (next == kNoNode) {
        statusBar()->showMessage(
            tr("%1: nothing that way").arg(QString::fromStdString(graph->node(current).name)), 3000);
        return;
    }
    selectNode(next, true);
}

void MainWindow::addJumpActions(QMenu* menu, const std::vector<NodeId>& ids) {
    const Graph* graph = currentGraph();
    if (!graph)
        return;
    // A menu taller than the screen is no help: a node with hundreds of consumers lists the first ones.
    constexpr size_t kMaxListed = 60;
    for (size_t i = 0; i < ids.size() && i < kMaxListed; ++i) {
        const Node& node = graph->node(ids[i]);
        menu->addAction(QString::fromStdString(node.name) + QStringLiteral("  ") + views::opLabel(node), this,
                        [this, target = ids[i]] { selectNode(target, true); });
    }
    if (ids.size() > kMaxListed)
        menu->addAction(tr("… %1 more").arg(ids.size() - kMaxListed))->setEnabled(false);
}

void MainWindow::fillSearchResults() {
    searchResults_->clear();
    const Graph* graph = currentGraph();
    if (!graph)
        return;
    constexpr size_t kMaxListed = 5000;
    for (size_t i = 0; i < matches_.size() && i < kMaxListed; ++i) {
        const Node& node = graph->node(matches_[i]);
        auto* item = new QListWidgetItem(
            QString::fromStdString(node.name) + QStringLiteral("   ") + views::opLabel(node), searchResults_);
        item->setData(Qt::UserRole, uint(matches_[i]));
    }
    if (matches_.size() > kMaxListed)
        searchResults_->addItem(tr("… %1 more").arg(matches_.size() - kMaxListed));
    if (auto* dock = qobject_cast<QDockWidget*>(searchResults_->parentWidget()); dock && !matches_.empty())
        dock->show();
}

bool MainWindow::exportViewTo(const QString& target) {
    QString path = target;
    if (path.isEmpty() && interactive_)
        path = QFileDialog::getSaveFileName(this, tr("Export View"),
                                            QFileInfo(filePath_).completeBaseName() + QStringLiteral(".svg"),
                                            tr("SVG (*.svg);;PNG image (*.png)"));
    if (path.isEmpty())
        return false;
    QString error;
    const bool png = path.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive);
    const Graph* graph = currentGraph();
    const bool ok = png ? views::exportScenePng(*scene_, path, 2.0, &error)
                        : views::exportSceneSvg(
                              *scene_, path, graph ? QString::fromStdString(graph->name) : QString(), &error);
    log(ok ? tr("Exported view to %1").arg(path) : tr("Cannot export view to %1: %2").arg(path, error));
    if (!ok && interactive_)
        QMessageBox::warning(this, tr("Export View"), error);
    return ok;
}

} // namespace jointscope::gui
