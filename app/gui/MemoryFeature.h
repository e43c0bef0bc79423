// The memory timeline in the window: the Memory dock follows the Partition document's results (edits, undo,
// options), shows torch's decision beside the one shown, and a clicked step selects and centres its node on
// the canvas.
#pragma once

#include "FeatureContext.h"

#include "Feature.h"

#include <QObject>

#include <memory>

class QAction;
class QDockWidget;

namespace jointscope::views {
class MemoryTimelineModel;
}

namespace jointscope::gui {

class MemoryPanel;
class PartitionDocument;
struct PartitionResult;

class MemoryFeature : public Feature {
    Q_OBJECT
public:
    // What the window places: View › Memory Timeline.
    struct Actions {
        QAction* showDock = nullptr;
    };

    MemoryFeature(const FeatureContext& context, PartitionDocument* document, QObject* parent = nullptr);

    QDockWidget* dock() const { return dock_; }
    MemoryPanel* panel() const { return panel_; }
    views::MemoryTimelineModel* model() const { return model_; }
    const Actions& actions() const { return actions_; }
    std::vector<DockPlacement> docks() const override;
    std::vector<MenuEntry> menuEntries() const override;

private:
    void show(const std::shared_ptr<const PartitionResult>& result);
    void selectNode(const QString& name);

    FeatureContext ctx_;
    PartitionDocument* document_;
    views::MemoryTimelineModel* model_;
    MemoryPanel* panel_;
    QDockWidget* dock_;
    Actions actions_;
};

} // namespace jointscope::gui
