// The sharding explorer in the window: the Sharding dock, the placement overlay on the canvas, the
// inspector's sharding facts and its context menu, and placement pins (undoable, on the window's stack).
#pragma once

#include "FeatureContext.h"
#include "graph/Graph.h"

#include "Feature.h"

#include <QObject>

#include <memory>

class QAction;
class QDockWidget;
class QMenu;

namespace jointscope::gui {

class ShardingDocument;
struct ShardingSession;
class ShardingPanel;

class ShardingFeature : public Feature {
    Q_OBJECT
public:
    // What the window places: View › Sharding Overlay, Edit › Pin Placement.
    struct Actions {
        QAction* overlay = nullptr;        // checkable
        QMenu* pinPlacementMenu = nullptr; // pins the canvas selection
    };

    explicit ShardingFeature(const FeatureContext& context, QObject* parent = nullptr);
    ~ShardingFeature() override;

    ShardingDocument* document() const { return document_; }
    ShardingPanel* panel() const { return panel_; }
    QDockWidget* dock() const { return dock_; }
    const Actions& actions() const { return actions_; }

    void setGraph(std::shared_ptr<const Graph> root); // a new root graph: pins and plans are dropped
    void applyOverlay() override;                     // the canvas shows a new layout or level
    std::vector<DockPlacement> docks() const override;
    std::vector<MenuEntry> menuEntries() const override;
    void setGraph(const ShownGraph& shown) override { setGraph(shown.root); }
    // A scripted solve on mesh "2x2" with `names`; topology h100 unless given.
    bool solve(const QString& mesh, const QString& names = {}, const QString& topology = {});
    // A session's sharding: the dock's mesh fields, the pins, and a re-solve when the session had a plan.
    void restore(const ShardingSession& session);

signals:
    void changed(); // pins or a new plan: worth an autosave

private:
    void pinPlacementMenu(QMenu* menu, NodeId id); // "Pin placement" entries for node `id` of the root

    FeatureContext ctx_;
    Actions actions_;
    ShardingDocument* document_ = nullptr;
    ShardingPanel* panel_ = nullptr;
    QDockWidget* dock_ = nullptr;
    std::shared_ptr<const Graph> root_;
};

} // namespace jointscope::gui
