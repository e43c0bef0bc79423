#include "RuntimeFeature.h"

#include "CanvasFeature.h"
#include "canvas/GraphView.h"
#include "panels/RuntimePanel.h"

#include <QAction>
#include <QDockWidget>
#include <QMainWindow>

namespace jointscope::gui {

RuntimeFeature::RuntimeFeature(const FeatureContext& context, std::function<std::string()> decision,
                               QObject* parent)
    : Feature(parent), ctx_(context) {
    panel_ = new views::RuntimePanel(ctx_.scene, ctx_.view, ctx_.window);
    dock_ = newDock(tr("Runtime"), QStringLiteral("runtimeDock"), panel_, ctx_.window);
    connect(panel_, &views::RuntimePanel::nodeRequested, this,
            [this](NodeId id) { ctx_.canvas->selectNode(id, true); });
    connect(panel_, &views::RuntimePanel::message, this, [this](const QString& text) { ctx_.log(text); });
    panel_->setDecisionSource(std::move(decision));
    panel_->listDevices();

    actions_.validate = new QAction(tr("&Validate Partition"), ctx_.window);
    actions_.validate->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_V));
    connect(actions_.validate, &QAction::triggered, panel_, &views::RuntimePanel::validate);
    actions_.profile = new QAction(tr("&Profile Graph"), ctx_.window);
    actions_.profile->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_P));
    connect(actions_.profile, &QAction::triggered, panel_, &views::RuntimePanel::profile);
    actions_.remeasure = new QAction(tr("&Re-measure Profile"), ctx_.window);
    connect(actions_.remeasure, &QAction::triggered, panel_, &views::RuntimePanel::remeasure);
}

std::vector<DockPlacement> RuntimeFeature::docks() const {
    DockPlacement place{dock_, Qt::BottomDockWidgetArea};
    place.width = 420;
    return {place};
}

std::vector<MenuEntry> RuntimeFeature::menuEntries() const {
    return {{MenuId::View, dock_->toggleViewAction()},
            {MenuId::Tools, actions_.validate},
            {MenuId::Tools, actions_.profile},
            {MenuId::Tools, actions_.remeasure}};
}

void RuntimeFeature::setGraph(const ShownGraph& shown) {
    panel_->setGraph(shown.filePath, shown.fileGraphs > 1 ? QString::number(shown.index) : QString(),
                     shown.root.get());
}

void RuntimeFeature::levelShown() {
    panel_->sceneGraphChanged();
}

} // namespace jointscope::gui
