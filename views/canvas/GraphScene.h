// Scene of one graph: node boxes and edges placed by a LayoutResult.
#pragma once

#include "graph/Graph.h"
#include "layout/GraphLayout.h"
#include "models/NodeFormat.h"

#include <QGraphicsScene>
#include <QImage>

#include <vector>

namespace jointscope::views {

class EdgeItem;
class NodeItem;

class GraphScene : public QGraphicsScene {
    Q_OBJECT
public:
    explicit GraphScene(QObject* parent = nullptr);
    ~GraphScene() override;

    // Shows nothing until applyLayout(); the graph must outlive the scene or be replaced first.
    void setGraph(const Graph* graph);
    const Graph* graph() const { return graph_; }
    // Box sizes measured with the canvas fonts, for LayoutOptions::sizes.
    std::vector<layout::NodeSize> measureNodes() const;
    void applyLayout(const layout::LayoutResult& result);
    bool hasLayout() const { return !nodes_.empty(); }

    NodeItem* nodeItem(NodeId id) const { return id < nodes_.size() ? nodes_[id] : nullptr; }
    NodeId selectedNode() const;
    void selectNode(NodeId id);
    void setMatches(const std::vector<NodeId>& ids);

    // Renders the whole scene at `scale` on white (screenshots, tests).
    QImage renderImage(double scale) const;

signals:
    void nodeSelected(jointscope::NodeId id); // kNoNode when the selection was cleared
    void nodeActivated(jointscope::NodeId id); // double click

protected:
    void mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) override;

private:
    void onSelectionChanged();

    const Graph* graph_ = nullptr;
    std::vector<NodeRole> roles_;
    std::vector<NodeItem*> nodes_;
    std::vector<EdgeItem*> edges_;
    std::vector<std::vector<EdgeItem*>> incident_;
    std::vector<EdgeItem*> emphasised_;
};

} // namespace jointscope::views
