#include "MemoryFeature.h"

#include "CanvasFeature.h"
#include "MemoryPanel.h"
#include "PartitionDocument.h"
#include "models/MemoryTimelineModel.h"

#include <QDockWidget>
#include <QMainWindow>

namespace jointscope::gui {

MemoryFeature::MemoryFeature(const FeatureContext& context, PartitionDocument* document, QObject* parent)
    : Feature(parent), ctx_(context), document_(document), model_(new views::MemoryTimelineModel(this)) {
    panel_ = new MemoryPanel(model_, ctx_.window);
    dock_ = newDock(tr("Memory Timeline"), QStringLiteral("memoryDock"), panel_, ctx_.window);
    actions_.showDock = dock_->toggleViewAction();
    actions_.showDock->setToolTip(
        tr("Live activation bytes over the forward and backward of the decision shown"));
    connect(document_, &PartitionDocument::finished, this,
            [this](std::shared_ptr<const PartitionResult> result) { show(result); });
    connect(document_, &PartitionDocument::failed, this, [this] { model_->clear(); });
    // A new graph drops the result: the previous graph's curve must not stay up meanwhile.
    connect(document_, &PartitionDocument::editsChanged, this, [this] {
        if (!document_->result())
            model_->clear();
    });
    connect(panel_, &MemoryPanel::nodeActivated, this, &MemoryFeature::selectNode);
}

void MemoryFeature::show(const std::shared_ptr<const PartitionResult>& result) {
    if (!result || !result->memoryCurve) {
        model_->clear();
        return;
    }
    model_->setCurves(*result->memoryCurve, result->torchMemoryCurve);
}

void MemoryFeature::selectNode(const QString& name) {
    if (ctx_.canvas)
        ctx_.canvas->selectNodeOrSay(name);
}

std::vector<DockPlacement> MemoryFeature::docks() const {
    // Beside the Runtime dock; the curve over hundreds of steps needs the width.
    DockPlacement place{dock_, Qt::BottomDockWidgetArea, DockPlacement::Join::Split};
    place.width = 760;
    return {place};
}

std::vector<MenuEntry> MemoryFeature::menuEntries() const {
    return {{MenuId::View, actions_.showDock}};
}

} // namespace jointscope::gui
