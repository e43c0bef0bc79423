// Scene of one graph: node boxes and edges placed by a LayoutResult.
#pragma once

#include "canvas/GroupFacts.h"
#include "canvas/HeatScale.h"
#include "canvas/PartitionOverlay.h"
#include "graph/Graph.h"
#include "layout/GraphLayout.h"
#include "models/NodeFormat.h"

#include <QGraphicsScene>
#include <QImage>

#include <memory>
#include <vector>

namespace jointscope::views {

class EdgeItem;
class GroupItem;
class NodeItem;

class GraphScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit GraphScene(QObject* parent = nullptr);
    ~GraphScene() override;

    // Shows nothing until applyLayout(); the graph must outlive the scene or be replaced first.
    void setGraph(const Graph* graph);
    const Graph* graph() const { return graph_; }
    const std::vector<NodeRole>& roles() const { return roles_; } // classifyNodes(*graph())
    // Box sizes measured with the canvas fonts, for LayoutOptions::sizes.
    std::vector<layout::NodeSize> measureNodes() const;
    static layout::NodeSize measureNode(const Node& node); // reentrant: layout threads call it
    void applyLayout(const layout::LayoutResult& result);
    // A refinement of the placement on the canvas (the same nodes and edges, placed anew): moves the
    // items instead of building new ones, so overlays, tooltips and the selection stay and the UI thread does
    // a fraction of applyLayout's work. False, with nothing changed, when the result is not such a
    // refinement.
    bool moveToLayout(const layout::LayoutResult& result);
    // Lays out a collapsed view (result.view set): group boxes, frames of expanded groups, visible nodes only
    // (nodeItem() is null for a node inside a collapsed group). Defined in GraphSceneGroups.cpp.
    void applyCollapsedLayout(const layout::LayoutResult& result);
    const layout::CollapsedView* collapsedView() const { return view_.get(); }
    bool hasLayout() const { return !nodes_.empty(); }

    NodeItem* nodeItem(NodeId id) const { return id < nodes_.size() ? nodes_[id] : nullptr; }
    NodeId selectedNode() const;
    void selectNode(NodeId id);
    void setMatches(const std::vector<NodeId>& ids);
    // Partition overlay on the items shown (null clears); call again after a new layout. Edges from a saved
    // node into the backward (or a recomputed node) are drawn as the cut. Defined in GraphScenePartition.cpp.
    void setPartitionOverlay(std::shared_ptr<const PartitionOverlay> overlay);
    const PartitionOverlay* partitionOverlay() const { return partition_.get(); }
    // Runtime overlays (GraphSceneRuntime.cpp) of the graph shown when they were set: kept across relayouts
    // and shown again when that graph comes back (a HOP body was visited); the owner clears them when the
    // graph goes. setHeat: per NodeId measured time (negative: none), nodes filled by their place on the
    // log scale between the fastest and the slowest op; empty clears.
    void setHeat(const std::vector<double>& timesUs);
    const std::vector<double>& heat() const { return heat_; }
    const HeatScale& heatScale() const { return heatScale_; }
    // The scale collapsed group boxes are coloured on: their members' summed times, over the boxes shown.
    const HeatScale& groupHeatScale() const { return groupHeatScale_; }
    void setMismatches(const std::vector<NodeId>& ids); // outputs that differ get a marker
    const std::vector<NodeId>& mismatches() const { return mismatches_; }
    const Graph* runtimeOverlayGraph() const { return overlayGraph_; }
    static QColor heatColor(double fraction); // HeatScale::fraction, in [0, 1]

    // Renders the whole scene at `scale` on white (screenshots, tests).
    QImage renderImage(double scale) const;

signals:
    void nodeSelected(jointscope::NodeId id);    // kNoNode when the selection was cleared
    void nodeActivated(jointscope::NodeId id);   // double click
    void groupActivated(int group, bool expand); // double click on a collapsed group (expand) or a frame

protected:
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

private:
    void onSelectionChanged();
    NodeItem* addNodeItem(NodeId id, const layout::NodePlacement& placement);
    void applyRuntimeOverlays(NodeItem* item) const;
    // Facts and heat of the collapsed group boxes (GroupFacts) under the current overlays.
    void applyGroupOverlays();
    void applyGroupOverlays(const std::vector<GroupFacts>& facts);
    // Facts of every group of the view shown under the current overlays: one pass over the graph.
    std::vector<GroupFacts> overlayGroupFacts() const;
    // applyCollapsedLayout's steps: the view's boxes (returning each frame's members' extent), the frames,
    // the edges between boxes.
    std::vector<QRectF> addViewItems(const layout::LayoutResult& result,
                                     const std::vector<GroupFacts>& facts);
    void addGroupFrames(const layout::LayoutResult& result, const std::vector<QRectF>& memberRects);
    void addViewEdges(const layout::LayoutResult& result);

    const Graph* graph_ = nullptr;
    std::vector<NodeRole> roles_;
    std::vector<NodeItem*> nodes_;
    std::vector<EdgeItem*> edges_;
    std::vector<GroupItem*> groups_; // collapsed group boxes of the collapsed view shown
    std::vector<std::vector<EdgeItem*>> incident_;
    std::vector<EdgeItem*> emphasised_;
    std::shared_ptr<const layout::CollapsedView> view_;
    std::shared_ptr<const PartitionOverlay> partition_;
    std::vector<double> heat_;
    HeatScale heatScale_;
    HeatScale groupHeatScale_;
    std::vector<NodeId> mismatches_;
    const Graph* overlayGraph_ = nullptr; // compared, never dereferenced
};

} // namespace jointscope::views
