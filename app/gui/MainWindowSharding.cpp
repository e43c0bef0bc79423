// MainWindow's sharding explorer: the Sharding dock, the placement overlay on the canvas, the inspector's
// sharding facts and placement pins (undoable, on the same stack as the partition's edits).
#include "MainWindow.h"
#include "PartitionDocument.h"
#include "ShardingDocument.h"
#include "ShardingPanel.h"

#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/ShardingOverlay.h"
#include "models/InspectorModel.h"
#include "models/ShardingModel.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QTreeView>

namespace jointscope::gui {

using namespace jointscope::sharding;

void MainWindow::createShardingUi() {
    shardingDoc_ = new ShardingDocument(partitionDoc_->undoStack(), this);
    shardingPanel_ = new ShardingPanel(shardingDoc_, this);
    auto* dock = new QDockWidget(tr("Sharding"), this);
    dock->setObjectName(QStringLiteral("shardingDock"));
    dock->setWidget(shardingPanel_);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    // A tab beside the Partition dock: both need the column's height.
    if (auto* partitionDock = findChild<QDockWidget*>(QStringLiteral("partitionDock")))
        tabifyDockWidget(partitionDock, dock);
    viewMenu_->addAction(dock->toggleViewAction());
    shardingOverlay_ = viewMenu_->addAction(tr("Sharding &Overlay"));
    shardingOverlay_->setCheckable(true);
    shardingOverlay_->setChecked(true);
    connect(shardingOverlay_, &QAction::toggled, this, &MainWindow::applyShardingOverlay);

    connect(shardingPanel_, &ShardingPanel::locateNode, this, [this](NodeId id) {
        if (path_.size() > 1)
            showLevel(0);
        whenLayoutReady([this, id] { selectNode(id, true); });
    });
    connect(shardingDoc_, &ShardingDocument::finished, this, [this, dock] {
        const auto r = shardingDoc_->result();
        log(tr("Sharding on %1: %2 (compute %3, comm %4), %5 redistributing edges, in %6 s")
                .arg(QString::fromStdString(r->mesh.str()), views::formatMicros(r->report.total.totalUs()),
                     views::formatMicros(r->report.total.computeUs),
                     views::formatMicros(r->report.total.commUs))
                .arg(r->report.transitions.size())
                .arg(r->seconds, 0, 'f', 2));
        for (const std::string& w : r->problem->warnings)
            log(tr("Sharding warning: %1").arg(QString::fromStdString(w)));
        dock->raise();
        applyShardingOverlay();
    });
    connect(shardingDoc_, &ShardingDocument::failed, this,
            [this](const QString& message) { log(tr("Sharding refused: %1").arg(message)); });
    connect(shardingDoc_, &ShardingDocument::pinsChanged, this, &MainWindow::applyShardingOverlay);
    connect(shardingDoc_, &ShardingDocument::pinsChanged, this, &MainWindow::autosaveSession);
    connect(shardingDoc_, &ShardingDocument::finished, this,
            &MainWindow::autosaveSession); // mesh, plan shown

    // The inspector's context menu pins the node shown; Edit › Pin Placement the canvas selection.
    inspector_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(inspector_, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(this);
        pinPlacementMenu(&menu, inspectorModel_->node());
        if (!menu.isEmpty())
            menu.exec(inspector_->viewport()->mapToGlobal(pos));
    });
    for (QAction* a : menuBar()->actions())
        if (a->menu() && a->text() == tr("&Edit")) {
            QMenu* pinMenu = a->menu()->addMenu(tr("Pin &Placement"));
            connect(pinMenu, &QMenu::aboutToShow, this, [this, pinMenu] {
                pinMenu->clear();
                pinPlacementMenu(pinMenu, scene_->selectedNode());
                if (pinMenu->isEmpty())
                    pinMenu->addAction(tr("Select a node of a solved sharding plan"))->setEnabled(false);
            });
        }
}

void MainWindow::pinPlacementMenu(QMenu* menu, NodeId id) {
    const Graph* root = root_.get();
    if (!root || currentGraph() != root || id >= root->size() || !shardingDoc_->result())
        return;
    const std::string name = root->node(id).name;
    const std::vector<Placements> choices = shardingDoc_->pinChoices(id);
    if (choices.empty())
        return;
    const auto& pins = shardingDoc_->pins();
    const auto pinned = pins.find(name);
    QMenu* sub = menu->addMenu(tr("Pin placement of %1").arg(QString::fromStdString(name)));
    const auto r = shardingDoc_->result();
    const NodeReport& now = r->report.nodes[id];
    for (const Placements& p : choices) {
        QString text = QString::fromStdString(toString(p));
        if (now.placed && !now.outputs.empty() && now.outputs[0] == p)
            text += tr("  (current)");
        QAction* a = sub->addAction(text, this, [this, name, p] { shardingDoc_->pin(name, p); });
        a->setCheckable(true);
        a->setChecked(pinned != pins.end() && pinned->second == p);
    }
    QAction* clear =
        menu->addAction(tr("Clear placement pin"), this, [this, name] { shardingDoc_->clearPin(name); });
    clear->setEnabled(pinned != pins.end());
}

void MainWindow::shardingGraphLoaded() {
    shardingDoc_->setGraph(root_);
    shardingPanel_->refresh();
    applyShardingOverlay();
}

bool MainWindow::solveSharding(const QString& mesh, const QString& names, const QString& topology) {
    shardingPanel_->setMeshFields(mesh, names, topology.isEmpty() ? QStringLiteral("h100") : topology);
    return shardingPanel_->solveWithFields();
}

void MainWindow::restoreSharding(const ShardingSession& session) {
    QStringList shape, names;
    for (int64_t d : session.mesh.shape)
        shape.append(QString::number(d));
    for (const std::string& n : session.mesh.names)
        names.append(QString::fromStdString(n));
    shardingPanel_->setMeshFields(shape.join(QLatin1Char('x')), names.join(QLatin1Char(',')),
                                  QString::fromStdString(session.mesh.topology));
    shardingDoc_->restore(session);
}

void MainWindow::applyShardingOverlay() {
    const Graph* root = root_.get();
    const auto r = shardingDoc_ ? shardingDoc_->result() : nullptr;
    if (!root || !r || currentGraph() != root || r->report.nodes.size() != root->size()) {
        views::applyShardingOverlay(*scene_, nullptr);
        inspectorModel_->setShardingFacts(nullptr);
        return;
    }
    if (shardingOverlay_->isChecked()) {
        views::ShardingOverlay overlay;
        overlay.meshNames = r->mesh.names;
        overlay.nodes.resize(root->size());
        for (NodeId id = 0; id < root->size(); ++id) {
            const NodeReport& n = r->report.nodes[id];
            if (!n.placed || n.outputs.empty())
                continue;
            overlay.nodes[id] = {true, n.outputs[0], r->pinnedBy.count(root->node(id).name) > 0};
        }
        for (const EdgeTransition& t : r->report.transitions)
            overlay.edges.push_back({t.producer, t.consumer, t.redistribution});
        views::applyShardingOverlay(*scene_, &overlay);
    } else {
        views::applyShardingOverlay(*scene_, nullptr);
    }

    inspectorModel_->setShardingFacts([this, r, root](NodeId id) -> std::optional<views::ShardingFacts> {
        if (currentGraph() != root || id >= root->size() || id >= r->report.nodes.size())
            return std::nullopt;
        const NodeReport& n = r->report.nodes[id];
        views::ShardingFacts facts;
        facts.options = int(n.options);
        if (!n.placed) {
            facts.output = tr("no placement (reads tensors without producing one)");
            return facts;
        }
        facts.output = views::formatPlacements(n.outputs);
        facts.inputs = views::formatPlacements(n.inputs);
        facts.compute = views::formatMicros(n.computeUs);
        facts.comm = views::formatMicros(n.commUs);
        if (auto it = r->pinnedBy.find(root->node(id).name); it != r->pinnedBy.end())
            facts.pinnedBy = QString::fromStdString(it->second);
        for (const EdgeTransition& t : r->report.transitions)
            if (t.consumer == id)
                facts.transitions << tr("from %1: %2")
                                         .arg(QString::fromStdString(root->node(t.producer).name),
                                              views::transitionLabel(t.redistribution, r->mesh.names));
        facts.explanation = QString::fromStdString(explainPlacement(*root, *r, id)).trimmed();
        return facts;
    });
    inspector_->expandAll();
}

} // namespace jointscope::gui
