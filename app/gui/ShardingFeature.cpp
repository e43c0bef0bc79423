#include "ShardingFeature.h"

#include "CanvasFeature.h"
#include "ShardingDocument.h"
#include "ShardingPanel.h"

#include "canvas/GraphScene.h"
#include "canvas/ShardingOverlay.h"
#include "models/InspectorModel.h"
#include "models/NodeFormat.h"
#include "models/ShardingModel.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenu>
#include <QTreeView>

namespace jointscope::gui {

using namespace jointscope::sharding;

ShardingFeature::ShardingFeature(const FeatureContext& context, QObject* parent)
    : Feature(parent), ctx_(context) {
    document_ = new ShardingDocument(ctx_.undoStack, this);
    panel_ = new ShardingPanel(document_, ctx_.window);
    dock_ = newDock(tr("Sharding"), QStringLiteral("shardingDock"), panel_, ctx_.window);

    actions_.overlay = new QAction(tr("Sharding &Overlay"), ctx_.window);
    actions_.overlay->setCheckable(true);
    actions_.overlay->setChecked(true);
    connect(actions_.overlay, &QAction::toggled, this, &ShardingFeature::applyOverlay);
    actions_.pinPlacementMenu = new QMenu(tr("Pin &Placement"), ctx_.window);
    connect(actions_.pinPlacementMenu, &QMenu::aboutToShow, this, [this] {
        QMenu* menu = actions_.pinPlacementMenu;
        menu->clear();
        pinPlacementMenu(menu, ctx_.scene->selectedNode());
        if (menu->isEmpty())
            menu->addAction(tr("Select a node of a solved sharding plan"))->setEnabled(false);
    });

    connect(panel_, &ShardingPanel::locateNode, ctx_.canvas, &CanvasFeature::locateRootNode);
    connect(document_, &ShardingDocument::finished, this, [this] {
        const auto r = document_->result();
        ctx_.log(tr("Sharding on %1: %2 (compute %3, comm %4), %5 redistributing edges, in %6 s")
                     .arg(QString::fromStdString(r->mesh.str()),
                          views::formatMicros(r->report.total.totalUs()),
                          views::formatMicros(r->report.total.computeUs),
                          views::formatMicros(r->report.total.commUs))
                     .arg(r->report.transitions.size())
                     .arg(r->seconds, 0, 'f', 2));
        for (const std::string& w : r->problem->warnings)
            ctx_.log(tr("Sharding warning: %1").arg(QString::fromStdString(w)));
        dock_->raise();
        applyOverlay();
        emit changed(); // the mesh and the plan shown
    });
    connect(document_, &ShardingDocument::failed, this,
            [this](const QString& message) { ctx_.log(tr("Sharding refused: %1").arg(message)); });
    connect(document_, &ShardingDocument::storedChanged, this, &ShardingFeature::applyOverlay);
    connect(document_, &ShardingDocument::pinsChanged, this, [this] {
        applyOverlay();
        emit changed();
    });

    // The inspector's context menu pins the node shown.
    ctx_.inspector->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(ctx_.inspector, &QWidget::customContextMenuRequested, this, [this](const QPoint& pos) {
        QMenu menu(ctx_.window);
        pinPlacementMenu(&menu, ctx_.inspectorModel->node());
        if (!menu.isEmpty())
            menu.exec(ctx_.inspector->viewport()->mapToGlobal(pos));
    });
}

ShardingFeature::~ShardingFeature() = default;

void ShardingFeature::pinPlacementMenu(QMenu* menu, NodeId id) {
    const Graph* root = root_.get();
    if (!root || ctx_.canvas->currentGraph() != root || id >= root->size() || !document_->result())
        return;
    const std::string name = root->node(id).name;
    const std::vector<Placements> choices = document_->pinChoices(id);
    if (choices.empty())
        return;
    const auto& pins = document_->pins();
    const auto pinned = pins.find(name);
    QMenu* sub = menu->addMenu(tr("Pin placement of %1").arg(QString::fromStdString(name)));
    const auto r = document_->result();
    const NodeReport& now = r->report.nodes[id];
    for (const Placements& p : choices) {
        QString text = QString::fromStdString(toString(p));
        if (now.placed && !now.outputs.empty() && now.outputs[0] == p)
            text += tr("  (current)");
        QAction* a = sub->addAction(text, this, [this, name, p] { document_->pin(name, p); });
        a->setCheckable(true);
        a->setChecked(pinned != pins.end() && pinned->second == p);
    }
    QAction* clear =
        menu->addAction(tr("Clear placement pin"), this, [this, name] { document_->clearPin(name); });
    clear->setEnabled(pinned != pins.end());
}

void ShardingFeature::setGraph(std::shared_ptr<const Graph> root) {
    root_ = std::move(root);
    document_->setGraph(root_);
    panel_->refresh();
    applyOverlay();
}

bool ShardingFeature::solve(const QString& mesh, const QString& names, const QString& topology) {
    panel_->setMeshFields(mesh, names, topology.isEmpty() ? QStringLiteral("h100") : topology);
    return panel_->solveWithFields();
}

void ShardingFeature::restore(const ShardingSession& session) {
    QStringList shape, names;
    for (int64_t d : session.mesh.shape)
        shape.append(QString::number(d));
    for (const std::string& n : session.mesh.names)
        names.append(QString::fromStdString(n));
    panel_->setMeshFields(shape.join(QLatin1Char('x')), names.join(QLatin1Char(',')),
                          QString::fromStdString(session.mesh.topology));
    document_->restore(session);
}

void ShardingFeature::applyOverlay() {
    const Graph* root = root_.get();
    const auto r = document_->result();
    if (!root || !r || ctx_.canvas->currentGraph() != root || r->report.nodes.size() != root->size()) {
        views::applyShardingOverlay(*ctx_.scene, nullptr);
        ctx_.inspectorModel->setShardingFacts(nullptr);
        return;
    }
    if (actions_.overlay->isChecked()) {
        views::ShardingOverlay overlay;
        overlay.meshNames = r->mesh.names;
        overlay.nodes.resize(root->size());
        for (NodeId id = 0; id < root->size(); ++id) {
            const NodeReport& n = r->report.nodes[id];
            if (!n.placed || n.outputs.empty())
                continue;
            overlay.nodes[id] = {true, n.outputs[0], r->pinnedBy.count(root->node(id).name) > 0, {}};
        }
        // autoparallel's plan beside ours: its placement under each node it places differently.
        if (const auto c = document_->storedComparison())
            for (NodeId id = 0; id < root->size() && id < c->mapped.output.size(); ++id)
                if (overlay.nodes[id].placed)
                    overlay.nodes[id].compared = c->mapped.output[id];
        for (const EdgeTransition& t : r->report.transitions)
            overlay.edges.push_back({t.producer, t.consumer, t.redistribution});
        views::applyShardingOverlay(*ctx_.scene, &overlay);
    } else {
        views::applyShardingOverlay(*ctx_.scene, nullptr);
    }

    ctx_.inspectorModel->setShardingFacts([this, r, root](NodeId id) -> std::optional<views::ShardingFacts> {
        if (ctx_.canvas->currentGraph() != root || id >= root->size() || id >= r->report.nodes.size())
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
    ctx_.inspector->expandAll();
}

std::vector<DockPlacement> ShardingFeature::docks() const {
    // A tab beside the Partition dock: both need the column's height.
    return {{dock_, Qt::RightDockWidgetArea, DockPlacement::Join::Tab}};
}

std::vector<MenuEntry> ShardingFeature::menuEntries() const {
    return {{MenuId::Edit, nullptr, actions_.pinPlacementMenu},
            {MenuId::View, dock_->toggleViewAction()},
            {MenuId::View, actions_.overlay}};
}

} // namespace jointscope::gui
