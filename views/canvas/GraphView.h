// Zoomable, pannable view of a GraphScene.
#pragma once

#include "graph/Graph.h"

#include <QGraphicsView>

namespace jointscope::views {

class Minimap;

class GraphView : public QGraphicsView {
    Q_OBJECT
public:
    explicit GraphView(QWidget* parent = nullptr);

    double zoom() const { return transform().m11(); }
    void setZoom(double factor);
    // Whole graph in view (never magnified beyond 1.5x).
    void fitAll();
    // Fits the graph when its labels stay readable, else shows its start (first computation) readably.
    void showStart();
    // Centres on a node, zooming in so its label is readable.
    void centreOnNode(NodeId id);
    Minimap* minimap() const { return minimap_; }

protected:
    void wheelEvent(QWheelEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void scrollContentsBy(int dx, int dy) override;

private:
    void placeMinimap();

    Minimap* minimap_ = nullptr;
};

} // namespace jointscope::views
