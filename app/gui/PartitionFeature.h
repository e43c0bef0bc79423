// The partition debugger in the window: the Partition dock, pins with undo, the canvas overlay (saved,
// recomputed, banned, pinned, a refused edit's ∞ path), the inspector's partition facts and the exports.
#pragma once

#include "FeatureContext.h"
#include "graph/Graph.h"
#include "io/CompileConfig.h"

#include "Feature.h"

#include <QObject>

#include <memory>
#include <optional>
#include <vector>

class QAction;
class QDockWidget;
class QMenu;

namespace jointscope::gui {

class PartitionDocument;
class PartitionPanel;

class PartitionFeature : public Feature {
    Q_OBJECT
public:
    // What the window places: Edit › pins and Re-partition, File › Export Partition.
    struct Actions {
        QAction* mustSave = nullptr; // pins act on the canvas selection
        QAction* mustRecompute = nullptr;
        QAction* clearPin = nullptr;
        QAction* repartition = nullptr;
        QList<QAction*> exports; // decision JSON, policy file, forward FX, backward FX
    };

    explicit PartitionFeature(const FeatureContext& context, QObject* parent = nullptr);
    ~PartitionFeature() override;

    PartitionDocument* document() const { return document_; }
    PartitionPanel* panel() const { return panel_; }
    QDockWidget* dock() const { return dock_; }
    const Actions& actions() const { return actions_; }

    // A new root graph: the document takes it and solves.
    void setGraph(std::shared_ptr<const Graph> root, const QString& path, int index,
                  std::optional<CompileConfig> logged = std::nullopt);
    void applyOverlay() override; // the canvas shows a new layout or level
    std::vector<DockPlacement> docks() const override;
    std::vector<MenuEntry> menuEntries() const override;
    void setGraph(const ShownGraph& shown) override;
    // kind: "decision", "policy", "forward", "backward"; asks for a path beside `documentPath` when `path`
    // is empty and interactive.
    bool exportPartition(const QString& kind, const QString& path, const QString& documentPath);

signals:
    void changed(); // edits or options: worth an autosave

private:
    void createActions();
    void pinSelected(int policy); // partition::Policy as int; 0 clears

    FeatureContext ctx_;
    Actions actions_;
    PartitionDocument* document_ = nullptr;
    PartitionPanel* panel_ = nullptr;
    QDockWidget* dock_ = nullptr;
    QMenu* exportMenu_ = nullptr; // File › Export Partition
    std::shared_ptr<const Graph> root_;
    // A refused edit's ∞ path (root graph ids), shown until a solve succeeds or Esc.
    std::vector<NodeId> infinitePath_;
};

} // namespace jointscope::gui
