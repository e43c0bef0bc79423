#include "CanvasFeature.h"

#include "ExportFolder.h"

#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/GroupItem.h"
#include "canvas/Minimap.h"
#include "canvas/NodeItem.h"
#include "canvas/SceneExport.h"
#include "graph/HopBody.h"
#include "models/Navigation.h"
#include "models/NodeFormat.h"

#include <QAction>
#include <QApplication>
#include <QDateTime>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QRegularExpression>
#include <QShortcut>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace jointscope::gui {

namespace {

// Graphs above this many nodes open collapsed; a collapsed view shows at most kExpandBudget boxes.
constexpr size_t kCollapseAbove = 1500;
constexpr size_t kFirstViewBudget = 400;
constexpr size_t kExpandBudget = 1500;

QString algorithmName(layout::LayoutAlgorithm algorithm) {
    switch (algorithm) {
    case layout::LayoutAlgorithm::Graphviz:
        return CanvasFeature::tr("Graphviz dot");
    case layout::LayoutAlgorithm::Ladder:
        return CanvasFeature::tr("ladder");
    default:
        return CanvasFeature::tr("layered");
    }
}

} // namespace

CanvasFeature::CanvasFeature(const FeatureContext& context, QObject* parent)
    : QObject(parent), ctx_(context) {
    createCentral();
    createActions();
    connect(&runner_, &layout::LayoutRunner::finished, this, &CanvasFeature::onLayoutFinished);
    connect(&runner_, &layout::LayoutRunner::cancelled, this, &CanvasFeature::onLayoutCancelled);
    // Queued: opening a body or a group rebuilds the scene, which must not happen inside its own handler.
    connect(ctx_.scene, &views::GraphScene::nodeActivated, this, &CanvasFeature::openBody,
            Qt::QueuedConnection);
    connect(ctx_.scene, &views::GraphScene::groupActivated, this, &CanvasFeature::onGroupActivated,
            Qt::QueuedConnection);
}

CanvasFeature::~CanvasFeature() {
    disconnect(&runner_, nullptr, this, nullptr);
    runner_.cancel();
    runner_.waitForDone();
}

void CanvasFeature::createCentral() {
    QWidget* window = ctx_.window;
    central_ = new QWidget(window);
    auto* layout = new QVBoxLayout(central_);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);

    breadcrumb_ = new QWidget(central_);
    breadcrumbLayout_ = new QHBoxLayout(breadcrumb_);
    breadcrumbLayout_->setContentsMargins(6, 2, 6, 2);
    breadcrumb_->setVisible(false);
    layout->addWidget(breadcrumb_);

    searchBar_ = new QWidget(central_);
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
    connect(searchEdit_, &QLineEdit::textChanged, this, &CanvasFeature::runSearch);
    connect(searchEdit_, &QLineEdit::returnPressed, this,
            [this] { nextMatch(QApplication::keyboardModifiers() & Qt::ShiftModifier ? -1 : 1); });
    connect(prev, &QToolButton::clicked, this, [this] { nextMatch(-1); });
    connect(next, &QToolButton::clicked, this, [this] { nextMatch(1); });
    connect(close, &QToolButton::clicked, this, [this] {
        searchBar_->hide();
        ctx_.scene->setMatches({});
        ctx_.view->setFocus();
    });
    auto* escape =
        new QShortcut(QKeySequence(Qt::Key_Escape), searchEdit_, nullptr, nullptr, Qt::WidgetShortcut);
    connect(escape, &QShortcut::activated, close, &QToolButton::click);

    ctx_.view->setParent(central_);
    layout->addWidget(ctx_.view, 1);

    layoutLabel_ = new QLabel(window);
    busy_ = new QProgressBar(window);
    busy_->setRange(0, 0);
    busy_->setMaximumWidth(140);
    busy_->setFormat(tr("laying out"));
    busy_->setVisible(false);
    cancelButton_ = new QToolButton(window);
    cancelButton_->setText(tr("Cancel layout"));
    cancelButton_->setVisible(false);
    connect(cancelButton_, &QToolButton::clicked, this, &CanvasFeature::cancelLayout);

    // Every match of the search, listed; a click locates it.
    searchResults_ = new QListWidget(window);
    searchResults_->setUniformItemSizes(true);
    searchResultsDock_ =
        newDock(tr("Search Results"), QStringLiteral("searchResultsDock"), searchResults_, window);
    auto locate = [this](QListWidgetItem* item) {
        selectNode(NodeId(item->data(Qt::UserRole).toUInt()), true);
    };
    connect(searchResults_, &QListWidget::itemActivated, this, locate);
    connect(searchResults_, &QListWidget::itemClicked, this, locate);
}

QList<QWidget*> CanvasFeature::statusWidgets() const {
    return {layoutLabel_, busy_, cancelButton_};
}

void CanvasFeature::createActions() {
    QObject* owner = ctx_.window;
    actions_.fit = new QAction(QIcon(QStringLiteral(":/icons/fit.svg")), tr("&Fit Graph"), owner);
    actions_.fit->setShortcut(QKeySequence(Qt::Key_Space));
    connect(actions_.fit, &QAction::triggered, ctx_.view, &views::GraphView::fitAll);
    actions_.find = new QAction(QIcon(QStringLiteral(":/icons/search.svg")), tr("&Find Nodes…"), owner);
    actions_.find->setShortcut(QKeySequence::Find);
    connect(actions_.find, &QAction::triggered, this, &CanvasFeature::showSearch);
    actions_.up = new QAction(QIcon(QStringLiteral(":/icons/up.svg")), tr("&Up to Parent Graph"), owner);
    actions_.up->setShortcut(QKeySequence(Qt::Key_Backspace));
    connect(actions_.up, &QAction::triggered, this, [this] {
        if (path_.size() > 1)
            showLevel(path_.size() - 2);
    });

    actions_.collapse = new QAction(tr("&Collapse Groups"), owner);
    actions_.collapse->setCheckable(true);
    actions_.collapse->setToolTip(
        tr("Show the graph as groups (forward / backward, HOP call, module, source line); "
           "double-click a group to expand it, its frame to collapse it"));
    connect(actions_.collapse, &QAction::toggled, this, [this](bool on) {
        if (on == collapsed_)
            return;
        collapsed_ = on;
        startLayout();
    });
    actions_.ladder = new QAction(tr("&Ladder Layout"), owner);
    actions_.ladder->setCheckable(true);
    actions_.ladder->setChecked(ladder_);
    actions_.ladder->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    actions_.ladder->setToolTip(
        tr("Joint graphs: the forward down the left, the backward up the right, saved "
           "activations as rungs between them; off: the plain layered view"));
    connect(actions_.ladder, &QAction::toggled, this, [this](bool on) {
        if (on == ladder_)
            return;
        ladder_ = on;
        layouts_.clear(); // cached under the other choice
        ctx_.log(on ? tr("Ladder layout on") : tr("Ladder layout off: layered view"));
        startLayout();
    });
    actions_.minimap = new QAction(tr("&Minimap"), owner);
    actions_.minimap->setCheckable(true);
    actions_.minimap->setChecked(true);
    connect(actions_.minimap, &QAction::toggled, ctx_.view->minimap(), &QWidget::setVisible);
    actions_.searchResults = searchResultsDock_->toggleViewAction();

    struct Walk {
        QString text;
        Qt::Key key;
        views::WalkStep step;
    };
    for (const Walk& w : {Walk{tr("Go to &Producer"), Qt::Key_Up, views::WalkStep::Producer},
                          Walk{tr("Go to &Consumer"), Qt::Key_Down, views::WalkStep::Consumer},
                          Walk{tr("Previous &Sibling"), Qt::Key_Left, views::WalkStep::Previous},
                          Walk{tr("Next S&ibling"), Qt::Key_Right, views::WalkStep::Next}}) {
        auto* action = new QAction(w.text, owner);
        action->setShortcut(QKeySequence(Qt::ALT | w.key));
        connect(action, &QAction::triggered, this, [this, step = w.step] { walk(int(step)); });
        actions_.walk << action;
    }
    actions_.jumpMenu = new QMenu(tr("&Jump to Producers / Consumers"), ctx_.window);
    connect(actions_.jumpMenu, &QMenu::aboutToShow, this, [this] {
        QMenu* menu = actions_.jumpMenu;
        menu->clear();
        const Graph* graph = currentGraph();
        const NodeId id = ctx_.scene->selectedNode();
        if (!graph || id >= graph->size()) {
            menu->addAction(tr("(select a node first)"))->setEnabled(false);
            return;
        }
        auto add = [&](const QString& heading, const std::vector<NodeId>& ids) {
            menu->addSection(heading.arg(ids.size()));
            addJumpActions(menu, ids);
        };
        add(tr("Producers (%1)"), views::producersOf(*graph, id));
        add(tr("Consumers (%1)"), views::consumersOf(*graph, id));
    });

    actions_.exportView = new QAction(tr("&Export View…"), owner);
    actions_.exportView->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_E));
    connect(actions_.exportView, &QAction::triggered, this, &CanvasFeature::exportViewRequested);
}

void CanvasFeature::setRoot(std::shared_ptr<const Graph> root) {
    dropLayout();
    ctx_.scene->setGraph(nullptr);
    layouts_.clear();
    root_ = std::move(root);
    path_.clear();
    if (root_)
        path_.push_back(root_.get());
    showLevel(0);
}

void CanvasFeature::showLevel(size_t depth) {
    if (depth >= path_.size())
        return;
    path_.resize(depth + 1);
    const Graph* graph = currentGraph();
    matches_.clear();
    currentMatch_ = -1;
    ctx_.scene->setGraph(graph);
    emit levelShown(graph);
    rebuildBreadcrumb();
    resetGrouping();
    startLayout();
}

void CanvasFeature::locateRootNode(NodeId id) {
    if (path_.size() > 1)
        showLevel(0);
    whenLayoutReady([this, id] { selectNode(id, true); });
}

void CanvasFeature::rebuildBreadcrumb() {
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

void CanvasFeature::openBody(NodeId id) {
    const Graph* graph = currentGraph();
    if (!graph || id >= graph->size())
        return;
    // A HOP call opens the body it reads through its get_attr argument.
    const Graph* body = bodyOf(*graph, id);
    if (!body)
        return;
    path_.push_back(body);
    ctx_.log(tr("Opened body %1 (%2 nodes)")
                 .arg(QString::fromStdString(path_.back()->name))
                 .arg(path_.back()->size()));
    showLevel(path_.size() - 1);
}

std::optional<NodeId> CanvasFeature::findShown(const QString& name) const {
    const Graph* graph = currentGraph();
    return graph ? graph->find(name.toStdString()) : std::nullopt;
}

bool CanvasFeature::enterSubgraph(const QString& name) {
    const std::optional<NodeId> id = findShown(name);
    if (!id)
        return false;
    const size_t depth = path_.size();
    openBody(*id);
    return path_.size() > depth;
}

void CanvasFeature::dropLayout() {
    pendingTicket_ = 0; // its cancelled() is no news to the user
    runner_.cancel();
}

void CanvasFeature::cancelLayout() {
    runner_.cancel();
}

void CanvasFeature::setLayoutStatus(const QString& text) {
    layoutLabel_->setText(text);
}

layout::LayoutOptions CanvasFeature::layoutOptions() const {
    layout::LayoutOptions options;
    options.algorithm = ladder_ ? layout::LayoutAlgorithm::Ladder : layout::LayoutAlgorithm::Auto;
    // Never a blank canvas: a slow layout (dot) shows a fast placement first and replaces it when done.
    options.preview = true;
    // Inside an open layer of the ladder, dot reads best; its layouts are kept by the runner per layer shape.
    options.frameAlgorithm = layout::LayoutAlgorithm::Graphviz;
    // Recomputed nodes go to the ladder's backward side, under the decision shown when laid out.
    if (const views::PartitionOverlay* overlay = ctx_.scene->partitionOverlay(); ladder_ && overlay) {
        options.recomputed.resize(overlay->nodes.size());
        for (size_t i = 0; i < overlay->nodes.size(); ++i)
            options.recomputed[i] = overlay->nodes[i].mark == views::PartitionMark::Recomputed;
    }
    return options;
}

void CanvasFeature::showLayoutBusy(const QString& text) {
    busy_->setVisible(true);
    cancelButton_->setVisible(true);
    layoutLabel_->setText(text);
}

void CanvasFeature::startLayout() {
    const Graph* graph = currentGraph();
    if (!graph)
        return;
    if (collapsed_) {
        startCollapsedLayout();
        return;
    }
    if (auto it = layouts_.find(graph); it != layouts_.end()) {
        dropLayout();
        onLayoutFinished(0, it->second);
        return;
    }
    layout::LayoutOptions options = layoutOptions();
    options.sizes = ctx_.scene->measureNodes();
    layoutStartMs_ = QDateTime::currentMSecsSinceEpoch();
    dropLayout();
    // Aliasing pointer: keeps the root (which owns every body) alive while the layout runs.
    pendingTicket_ = runner_.start(std::shared_ptr<const Graph>(root_, graph), std::move(options));
    showLayoutBusy(tr("laying out %n node(s)…", nullptr, int(graph->size())));
}

void CanvasFeature::startCollapsedLayout() {
    const Graph* graph = currentGraph();
    if (!graph)
        return;
    layoutStartMs_ = QDateTime::currentMSecsSinceEpoch();
    // Font metrics are reentrant: boxes are measured on the layout thread, only for the visible nodes.
    auto measure = [](const Node& node) { return views::GraphScene::measureNode(node); };
    dropLayout();
    pendingTicket_ = runner_.startCollapsed(std::shared_ptr<const Graph>(root_, graph), groupTree_, expanded_,
                                            kFirstViewBudget, measure, layoutOptions());
    showLayoutBusy(groupTree_ ? tr("laying out the collapsed view…")
                              : tr("grouping %n node(s)…", nullptr, int(graph->size())));
}

void CanvasFeature::onLayoutFinished(quint64 ticket, std::shared_ptr<const layout::LayoutResult> result) {
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
    // A refinement replaces the provisional placement under the user's eyes: the view stays where it is.
    const bool refinement = ticket != 0 && ticket == shownTicket_;
    shownTicket_ = ticket;
    if (ticket != 0) {
        lastLayoutSeconds_ = double(QDateTime::currentMSecsSinceEpoch() - layoutStartMs_) / 1000.0;
        if (!collapsedView && !result->provisional)
            layouts_[graph] = result;
        ctx_.log(tr("Layout of %1 %2: %3 in %4 s%5")
                     .arg(result->nodes.size())
                     .arg(collapsedView ? tr("boxes (collapsed view)") : tr("nodes"))
                     .arg(algorithmName(result->algorithm))
                     .arg(lastLayoutSeconds_, 0, 'f', 2)
                     .arg(result->provisional ? tr(", refining with Graphviz dot") : QString()));
    }
    busy_->setVisible(result->provisional);
    cancelButton_->setVisible(result->provisional);
    layoutLabel_->setText(result->provisional
                              ? tr("layout: %1, refining…").arg(algorithmName(result->algorithm))
                              : tr("layout: %1").arg(algorithmName(result->algorithm)));
    // The refinement builds new items: the node the user (or a waiting step) selected stays selected.
    const NodeId selected = refinement ? ctx_.scene->selectedNode() : kNoNode;
    if (collapsedView)
        ctx_.scene->applyCollapsedLayout(*result);
    else if (!refinement || !ctx_.scene->moveToLayout(*result))
        ctx_.scene->applyLayout(*result);
    if (selected != kNoNode)
        ctx_.scene->selectNode(selected);
    emit layoutApplied();
    if (!refinement)
        ctx_.view->showStart();
    if (!searchEdit_->text().isEmpty() && searchBar_->isVisible()) {
        if (collapsedView)
            ctx_.scene->setMatches(matches_); // searching again would jump to the first match, maybe hidden
        else
            runSearch();
    }
    if (reading_)
        return; // what waits is for the file being read
    auto pending = std::move(afterLayout_);
    afterLayout_.clear();
    for (auto& fn : pending)
        fn();
}

void CanvasFeature::onLayoutCancelled(quint64 ticket) {
    if (ticket != pendingTicket_)
        return;
    busy_->setVisible(false);
    cancelButton_->setVisible(false);
    layoutLabel_->setText(ctx_.scene->hasLayout() ? tr("layout refinement cancelled")
                                                  : tr("layout cancelled"));
    ctx_.log(tr("Layout cancelled"));
}

void CanvasFeature::whenLayoutReady(std::function<void()> fn) {
    if (runner_.busy() || reading_ || (currentGraph() && !ctx_.scene->hasLayout()))
        afterLayout_.push_back(std::move(fn));
    else
        fn();
}

void CanvasFeature::releaseWaiting() {
    if (reading_ || runner_.busy())
        return;
    auto pending = std::move(afterLayout_);
    afterLayout_.clear();
    for (auto& fn : pending)
        fn();
}

void CanvasFeature::resetGrouping() {
    groupTree_.reset();
    expanded_.clear();
    walker_.reset();
    const Graph* graph = currentGraph();
    collapsed_ = graph && graph->size() > kCollapseAbove;
    const QSignalBlocker blocker(actions_.collapse);
    actions_.collapse->setChecked(collapsed_);
}

bool CanvasFeature::openOnlyGroup(const QString& path) {
    if (!groupTree_)
        return false;
    const std::vector<layout::Group>& groups = groupTree_->groups;
    const QStringList labels = path.split(QLatin1Char('/'));
    for (size_t g = 1; g < groups.size(); ++g) {
        // the group's labels from the top, as many as `path` names
        QStringList own;
        for (int32_t a = int32_t(g); a > 0 && own.size() < labels.size(); a = groups[size_t(a)].parent)
            own.prepend(QString::fromStdString(groups[size_t(a)].label));
        if (own != labels)
            continue;
        std::fill(expanded_.begin(), expanded_.end(), 0);
        expanded_[0] = 1;
        onGroupActivated(int(g), true);
        return true;
    }
    return false;
}

void CanvasFeature::onGroupActivated(int group, bool expand) {
    if (!groupTree_ || group <= 0 || size_t(group) >= groupTree_->groups.size())
        return;
    if (expand)
        layout::expandGroup(*groupTree_, expanded_, group, kExpandBudget);
    else
        layout::collapseGroup(*groupTree_, expanded_, group);
    const layout::Group& g = groupTree_->groups[size_t(group)];
    ctx_.log((expand ? tr("Expanded %1") : tr("Collapsed %1")).arg(QString::fromStdString(g.label)));
    // Look at what changed once it is laid out: the group's first node, or its box.
    const NodeId first = g.first;
    startLayout();
    whenLayoutReady([this, first, group] {
        if (ctx_.scene->nodeItem(first)) {
            ctx_.view->centreOnNode(first);
            return;
        }
        for (QGraphicsItem* item : ctx_.scene->items())
            if (item->type() == views::GroupItem::Type &&
                static_cast<views::GroupItem*>(item)->group() == group) {
                ctx_.view->centerOn(item);
                return;
            }
    });
}

bool CanvasFeature::revealNode(NodeId id) {
    const Graph* graph = currentGraph();
    if (!graph || id >= graph->size() || !ctx_.scene->collapsedView() || ctx_.scene->nodeItem(id) ||
        !groupTree_)
        return false;
    layout::expandGroup(*groupTree_, expanded_, groupTree_->groupOf[id], kExpandBudget);
    startLayout();
    whenLayoutReady([this, id] {
        ctx_.scene->selectNode(id);
        ctx_.view->centreOnNode(id);
    });
    return true;
}

void CanvasFeature::selectNode(NodeId id, bool centre) {
    if (revealNode(id))
        return;
    ctx_.scene->selectNode(id);
    if (centre)
        ctx_.view->centreOnNode(id);
}

bool CanvasFeature::selectNodeByName(const QString& name) {
    const std::optional<NodeId> id = findShown(name);
    if (!id)
        return false;
    selectNode(*id, true);
    return true;
}

void CanvasFeature::selectNodeOrSay(const QString& name) {
    if (!selectNodeByName(name))
        ctx_.window->statusBar()->showMessage(tr("%1 is not on the canvas shown").arg(name), 3000);
}

void CanvasFeature::walk(int step) {
    const Graph* graph = currentGraph();
    const NodeId current = ctx_.scene->selectedNode();
    if (!graph || current == kNoNode) {
        ctx_.window->statusBar()->showMessage(tr("Select a node to walk from"), 3000);
        return;
    }
    if (!walker_)
        walker_ = std::make_unique<views::EdgeWalker>();
    const NodeId next = walker_->step(*graph, current, views::WalkStep(step));
    if (next == kNoNode) {
        ctx_.window->statusBar()->showMessage(
            tr("%1: nothing that way").arg(QString::fromStdString(graph->node(current).name)), 3000);
        return;
    }
    selectNode(next, true);
}

void CanvasFeature::addJumpActions(QMenu* menu, const std::vector<NodeId>& ids) {
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

void CanvasFeature::addNodeMenus(QMenu* menu, NodeId id) {
    const Graph* graph = currentGraph();
    if (!graph || id >= graph->size())
        return;
    const std::vector<NodeId> producers = views::producersOf(*graph, id);
    const std::vector<NodeId> consumers = views::consumersOf(*graph, id);
    QMenu* up = menu->addMenu(tr("&Producers (%1)").arg(producers.size()));
    addJumpActions(up, producers);
    up->setEnabled(!producers.empty());
    QMenu* down = menu->addMenu(tr("C&onsumers (%1)").arg(consumers.size()));
    addJumpActions(down, consumers);
    down->setEnabled(!consumers.empty());
}

void CanvasFeature::showSearch() {
    searchBar_->setVisible(true);
    searchEdit_->setFocus();
    searchEdit_->selectAll();
    runSearch();
}

void CanvasFeature::runSearch() {
    matches_.clear();
    currentMatch_ = -1;
    const Graph* graph = currentGraph();
    const QString pattern = searchEdit_->text();
    const QRegularExpression regex(pattern, QRegularExpression::CaseInsensitiveOption);
    if (!graph || pattern.isEmpty() || !regex.isValid()) {
        searchCount_->setText(regex.isValid() || pattern.isEmpty() ? QString() : tr("bad regex"));
        ctx_.scene->setMatches({});
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
    ctx_.scene->setMatches(matches_);
    searchCount_->setText(matches_.empty() ? tr("no match")
                                           : tr("%n match(es)", nullptr, int(matches_.size())));
    if (!matches_.empty())
        nextMatch(1);
}

void CanvasFeature::nextMatch(int step) {
    if (matches_.empty())
        return;
    const int count = int(matches_.size());
    currentMatch_ = currentMatch_ < 0 ? 0 : ((currentMatch_ + step) % count + count) % count;
    searchCount_->setText(tr("%1 / %2").arg(currentMatch_ + 1).arg(count));
    selectNode(matches_[size_t(currentMatch_)], true);
}

void CanvasFeature::fillSearchResults() {
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
    if (!matches_.empty())
        searchResultsDock_->show();
}

bool CanvasFeature::exportViewTo(const QString& target, const QString& documentPath) {
    QString path = target;
    if (path.isEmpty() && ctx_.interactive)
        path = QFileDialog::getSaveFileName(
            ctx_.window, tr("Export View"),
            QDir(exportFolder(documentPath))
                .filePath(QFileInfo(documentPath).completeBaseName() + QStringLiteral(".svg")),
            tr("SVG (*.svg);;PNG image (*.png)"));
    if (path.isEmpty())
        return false;
    if (target.isEmpty())
        rememberExportFolder(path);
    const bool png = path.endsWith(QStringLiteral(".png"), Qt::CaseInsensitive);
    const Graph* graph = currentGraph();
    const Expected<Done> written =
        png ? views::exportScenePng(*ctx_.scene, path, 2.0)
            : views::exportSceneSvg(*ctx_.scene, path,
                                    graph ? QString::fromStdString(graph->name) : QString());
    if (!written) {
        ctx_.reportError(tr("Cannot export view"), written.error());
        return false;
    }
    ctx_.log(tr("Exported view to %1").arg(path));
    return true;
}

} // namespace jointscope::gui
