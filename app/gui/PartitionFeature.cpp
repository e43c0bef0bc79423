#include "PartitionFeature.h"

#include "ExportFolder.h"

#include "CanvasFeature.h"
#include "PartitionDocument.h"
#include "PartitionPanel.h"

#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/InfinitePathItem.h"
#include "models/InspectorModel.h"
#include "models/PartitionModel.h"
#include "partition/Partitioner.h"

#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QMainWindow>
#include <QMenu>
#include <QShortcut>
#include <QTreeView>

namespace jointscope::gui {

using namespace jointscope::partition;

PartitionFeature::PartitionFeature(const FeatureContext& context, QObject* parent)
    : Feature(parent), ctx_(context) {
    document_ = new PartitionDocument(ctx_.undoStack, this);
    panel_ = new PartitionPanel(document_, ctx_.window);
    dock_ = newDock(tr("Partition"), QStringLiteral("partitionDock"), panel_, ctx_.window);
    connect(panel_, &PartitionPanel::locateNode, ctx_.canvas, &CanvasFeature::locateRootNode);
    createActions();

    connect(document_, &PartitionDocument::finished, this, [this] {
        const auto r = document_->result();
        ctx_.log(tr("Partition: %1 saved (%2 bytes), %3 recomputed, %4 in %5 ms")
                     .arg(r->partition->saved.size())
                     .arg(r->partition->savedBytes)
                     .arg(r->partition->recomputed.size())
                     .arg(qstr(escalationName(r->partition->escalation)))
                     .arg(r->partition->seconds * 1e3, 0, 'f', 1));
        // What of torch's run could not be followed changes the answer: said where the user reads, not only
        // deep in the Decision tree.
        if (r->logged)
            for (const std::string& reason : r->logged->settings.unsupported)
                ctx_.log(tr("⚠ Not followed: %1").arg(qstr(reason)));
        infinitePath_.clear(); // the edit that hit it is gone
        applyOverlay();
    });
    connect(document_, &PartitionDocument::failed, this, [this](const QString& message) {
        ctx_.log(tr("Partition refused: %1").arg(message));
        infinitePath_ = document_->errorPath();
        views::showInfinitePath(*ctx_.scene,
                                ctx_.canvas->showingRoot() ? infinitePath_ : std::vector<NodeId>{});
    });
    // Esc on the canvas puts the refused edit's path away (the search box keeps its own Esc).
    auto* dismissPath = new QShortcut(QKeySequence(Qt::Key_Escape), ctx_.view, nullptr, nullptr,
                                      Qt::WidgetWithChildrenShortcut);
    connect(dismissPath, &QShortcut::activated, this, [this] {
        infinitePath_.clear();
        views::showInfinitePath(*ctx_.scene, {});
    });
    connect(document_, &PartitionDocument::editsChanged, this, [this] {
        applyOverlay();
        emit changed();
    });
    connect(document_, &PartitionDocument::optionsChanged, this, &PartitionFeature::changed);
}

PartitionFeature::~PartitionFeature() = default;

void PartitionFeature::createActions() {
    QObject* owner = ctx_.window;
    auto pin = [this, owner](const QString& text, Qt::Key key, int policy) {
        auto* a = new QAction(text, owner);
        a->setShortcut(QKeySequence(key));
        // Scoped to the canvas so typing S or R in a text field still types.
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        ctx_.view->addAction(a);
        connect(a, &QAction::triggered, this, [this, policy] { pinSelected(policy); });
        return a;
    };
    actions_.mustSave = pin(tr("Must &Save"), Qt::Key_S, int(Policy::MustSave));
    actions_.mustRecompute = pin(tr("Must &Recompute"), Qt::Key_R, int(Policy::MustRecompute));
    actions_.clearPin = pin(tr("&Clear Pin"), Qt::Key_Delete, 0);
    actions_.repartition = new QAction(tr("Re-&partition"), owner);
    actions_.repartition->setShortcut(QKeySequence(Qt::Key_F5));
    connect(actions_.repartition, &QAction::triggered, document_, &PartitionDocument::solve);

    const std::pair<QString, QString> exports[] = {{tr("&Decision JSON…"), QStringLiteral("decision")},
                                                   {tr("&Policy File…"), QStringLiteral("policy")},
                                                   {tr("&Forward FX Text…"), QStringLiteral("forward")},
                                                   {tr("&Backward FX Text…"), QStringLiteral("backward")}};
    for (const auto& [text, kind] : exports) {
        auto* a = new QAction(text, owner);
        connect(a, &QAction::triggered, this,
                [this, kind] { exportPartition(kind, {}, document_->graphPath()); });
        actions_.exports << a;
    }
    exportMenu_ = new QMenu(tr("Export &Partition"), ctx_.window);
    exportMenu_->addActions(actions_.exports);
}

std::vector<DockPlacement> PartitionFeature::docks() const {
    // The Inspector above it keeps 2/5 of the column; the summary and chart get the rest.
    DockPlacement place{dock_, Qt::RightDockWidgetArea};
    place.raised = true; // the partition is what a joint graph opens on
    place.heightFraction = 0.6;
    return {place};
}

std::vector<MenuEntry> PartitionFeature::menuEntries() const {
    return {{MenuId::File, nullptr, exportMenu_},
            {MenuId::Edit, actions_.mustSave},
            {MenuId::Edit, actions_.mustRecompute},
            {MenuId::Edit, actions_.clearPin},
            {MenuId::Edit},
            {MenuId::Edit, actions_.repartition},
            {MenuId::View, dock_->toggleViewAction()},
            {MenuId::NodeContext, actions_.mustSave},
            {MenuId::NodeContext, actions_.mustRecompute},
            {MenuId::NodeContext, actions_.clearPin},
            {MenuId::NodeContext}};
}

void PartitionFeature::setGraph(const ShownGraph& shown) {
    setGraph(shown.root, shown.filePath, int(shown.index), shown.logged);
}

void PartitionFeature::setGraph(std::shared_ptr<const Graph> root, const QString& path, int index,
                                std::optional<CompileConfig> logged) {
    infinitePath_.clear();
    root_ = std::move(root);
    document_->setGraph(root_, path, index, std::move(logged));
    panel_->syncFromDocument();
    if (root_ && root_->numFwdOutputs)
        document_->solve();
    else
        panel_->model()->clear();
}

void PartitionFeature::applyOverlay() {
    const Graph* root = root_.get();
    const bool showingRoot = root && ctx_.canvas->currentGraph() == root;
    views::showInfinitePath(*ctx_.scene, showingRoot ? infinitePath_ : std::vector<NodeId>{});
    const auto result = document_->result();
    if (!showingRoot) {
        ctx_.scene->setPartitionOverlay(nullptr);
        ctx_.inspectorModel->setPartitionFacts(nullptr);
        return;
    }
    auto overlay = std::make_shared<views::PartitionOverlay>();
    overlay->nodes.resize(root->size());
    if (result && result->partition->graph.size() > 0) {
        const Partition& p = *result->partition;
        const bool mapped = result->solvedIn == root && result->solvedIds.size() == p.graph.size();
        auto shown = [&](NodeId id) -> std::optional<NodeId> {
            if (!mapped)
                return root->find(p.graph.node(id).name);
            const NodeId s = result->solvedIds[id];
            return s < root->size() ? std::optional<NodeId>(s) : std::nullopt;
        };
        for (NodeId id = 0; id < p.graph.size(); ++id)
            if (p.info.requiredBw.size() > id && p.info.requiredBw[id])
                if (auto s = shown(id))
                    overlay->nodes[*s].mark = views::PartitionMark::Backward;
        for (const auto* list : {&p.saved, &p.savedSym})
            for (NodeId id : *list)
                if (auto s = shown(id)) {
                    overlay->nodes[*s].mark = views::PartitionMark::Saved;
                    overlay->nodes[*s].bytes = id < p.info.bytes.size() ? p.info.bytes[id] : 0;
                }
        for (NodeId id : p.recomputed)
            if (auto s = shown(id))
                overlay->nodes[*s].mark = views::PartitionMark::Recomputed;
        // Inputs are never recomputed and a saved node's badge says enough: "banned" marks only the forward
        // nodes the ban keeps out of the backward.
        if (p.cut)
            for (NodeId id : p.cut->banned)
                if (auto s = shown(id))
                    overlay->nodes[*s].banned = overlay->nodes[*s].mark != views::PartitionMark::Saved &&
                                                p.graph.node(id).op != NodeOp::Placeholder;
    }
    for (const auto& [name, policy] : document_->edits())
        if (auto s = root->find(name))
            overlay->nodes[*s].pin =
                mustRecompute(policy) ? views::PinMark::MustRecompute : views::PinMark::MustSave;
    if (result)
        for (const PinConflict& c : result->pinConflicts)
            if (auto s = root->find(c.node))
                overlay->nodes[*s].pinOverridden = true;
    ctx_.scene->setPartitionOverlay(overlay);

    const PolicyEdits edits = document_->edits();
    ctx_.inspectorModel->setPartitionFacts(
        [this, result, root, edits](NodeId id) -> std::optional<views::PartitionFacts> {
            if (!result || ctx_.canvas->currentGraph() != root || id >= root->size())
                return std::nullopt;
            const Partition& p = *result->partition;
            const std::string& name = root->node(id).name;
            views::PartitionFacts facts;
            if (auto it = edits.find(name); it != edits.end())
                facts.pin = qstr(policyName(it->second));
            const auto pid = p.graph.find(name);
            if (!pid) {
                facts.decision = tr("removed");
                facts.rule = tr("dead code (not needed by any output)");
                for (const auto& [removed, kept] : p.merged)
                    if (removed == name)
                        facts.rule = tr("CSE merged it into %1").arg(QString::fromStdString(kept));
                return facts;
            }
            const NodeExplanation e = explainNode(p, *pid);
            facts.decision = QString::fromStdString(e.decision);
            facts.rule = QString::fromStdString(e.rule);
            facts.banReason = QString::fromStdString(e.banReason);
            facts.policy = QString::fromStdString(e.policy);
            facts.weight = e.weight >= kInfiniteCapacity ? QStringLiteral("inf")
                           : e.weight >= 0               ? QString::number(e.weight)
                                                         : QString();
            facts.distFromBw = e.distFromBw;
            facts.bytes = e.bytes;
            return facts;
        });
    ctx_.inspector->expandAll();
}

void PartitionFeature::pinSelected(int policy) {
    const NodeId id = ctx_.scene->selectedNode();
    if (!root_ || ctx_.canvas->currentGraph() != root_.get() || id >= root_->size()) {
        ctx_.log(tr("Pins apply to a node of the joint graph: select one on the canvas first"));
        return;
    }
    const std::string& name = root_->node(id).name;
    if (policy == 0)
        document_->clearPolicy(name);
    else
        document_->setPolicy(name, Policy(policy));
}

bool PartitionFeature::exportPartition(const QString& kind, const QString& pathIn,
                                       const QString& documentPath) {
    std::string text;
    QString filter = tr("JSON (*.json)");
    QString suggested = QStringLiteral("decision.json");
    if (kind == QLatin1String("decision")) {
        text = document_->decisionJson();
    } else if (kind == QLatin1String("policy")) {
        text = document_->policyJson();
        suggested = QStringLiteral("policy.json");
    } else if (kind == QLatin1String("forward") || kind == QLatin1String("backward")) {
        text = kind == QLatin1String("forward") ? document_->forwardFx() : document_->backwardFx();
        filter = tr("FX text (*.txt)");
        suggested = kind + QStringLiteral(".txt");
    }
    if (text.empty()) {
        ctx_.log(tr("Nothing to export: partition the graph first (F5)"));
        return false;
    }
    QString path = pathIn;
    if (path.isEmpty() && ctx_.interactive)
        path = QFileDialog::getSaveFileName(ctx_.window, tr("Export"),
                                            QDir(exportFolder(documentPath)).filePath(suggested), filter);
    if (path.isEmpty())
        return false;
    if (pathIn.isEmpty())
        rememberExportFolder(path);
    if (const Expected<Done> written =
            PartitionDocument::writeFileAtomically(path, QByteArray::fromStdString(text));
        !written) {
        ctx_.reportError(tr("Cannot export"), written.error());
        return false;
    }
    ctx_.log(tr("Exported %1 to %2").arg(kind, path));
    return true;
}

} // namespace jointscope::gui
