// The chain of nodes a refused partition edit runs into (the min-cut's infinite-capacity path, see
// PartitionDocument::errorPath), drawn over the canvas: a ring around each node on it and a thick stroke
// along the edges joining consecutive ones, in a colour no other overlay uses.
#pragma once

#include "graph/Graph.h"

#include <QGraphicsItem>
#include <QPainterPath>

#include <vector>

namespace jointscope::views {

class GraphScene;

class InfinitePathItem : public QGraphicsItem {
public:
    enum { Type = UserType + 7 };

    static QColor color();

    int type() const override { return Type; }
    // The path's nodes drawn, in path order: those with a box on the canvas (a node hidden in a collapsed
    // group is drawn as that group's box, listed once).
    const std::vector<NodeId>& nodes() const { return nodes_; }
    // Edges drawn: (from, to) of each canvas edge between consecutive path nodes.
    const std::vector<std::pair<NodeId, NodeId>>& edges() const { return edges_; }

    QRectF boundingRect() const override;
    QPainterPath shape() const override { return {}; } // never hit: clicks and tooltips reach the nodes
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    friend InfinitePathItem* showInfinitePath(GraphScene& scene, const std::vector<NodeId>& path);
    InfinitePathItem() = default;

    std::vector<NodeId> nodes_;
    std::vector<std::pair<NodeId, NodeId>> edges_;
    std::vector<QRectF> rings_;
    QPainterPath strokes_;
    QRectF bounds_;
};

// Replaces the scene's path highlight with `path` (ids of the scene's graph, in order); an empty path, or
// one with nothing on the canvas, just removes it. Returns the new item, or null. Call again after a
// relayout.
InfinitePathItem* showInfinitePath(GraphScene& scene, const std::vector<NodeId>& path);
// The scene's path highlight, or null.
InfinitePathItem* infinitePathItem(const GraphScene& scene);

} // namespace jointscope::views
