#include "canvas/GraphView.h"

#include "canvas/GraphScene.h"
#include "canvas/Minimap.h"
#include "canvas/NodeItem.h"

#include <QKeyEvent>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace jointscope::views {

namespace {
constexpr double kMinZoom = 0.02;
constexpr double kMaxZoom = 6.0;
} // namespace

GraphView::GraphView(QWidget* parent) : QGraphicsView(parent) {
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing | QPainter::SmoothPixmapTransform);
    setDragMode(QGraphicsView::ScrollHandDrag);
    setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
    setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
    setOptimizationFlag(QGraphicsView::DontAdjustForAntialiasing);
    setFrameShape(QFrame::NoFrame);
    minimap_ = new Minimap(this);
    placeMinimap();
}

void GraphView::placeMinimap() {
    // Bottom right, clear of the scroll bars.
    const QRect area = viewport()->geometry();
    minimap_->move(area.right() - minimap_->width() - 8, area.bottom() - minimap_->height() - 8);
    minimap_->raise();
}

void GraphView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    placeMinimap();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    minimap_->update();
}

void GraphView::setZoom(double factor) {
    factor = std::clamp(factor, kMinZoom, kMaxZoom);
    setTransform(QTransform::fromScale(factor, factor));
}

void GraphView::fitAll() {
    if (!scene())
        return;
    const QRectF rect = scene()->sceneRect();
    if (rect.isEmpty())
        return;
    fitInView(rect, Qt::KeepAspectRatio);
    if (zoom() > 1.5)
        setZoom(1.5);
    centerOn(rect.center());
}

void GraphView::showStart() {
    fitAll();
    auto* graphScene = qobject_cast<GraphScene*>(scene());
    if (!graphScene || !graphScene->graph() || zoom() >= NodeItem::kLabelLevelOfDetail)
        return;
    if (graphScene->collapsedView()) {
        // Group titles stay readable down to about a quarter; below that show the start of the view at
        // half size (the minimap shows the rest).
        if (zoom() >= 0.25)
            return;
        setZoom(0.5);
        const QRectF rect = scene()->sceneRect();
        const QSizeF visible(viewport()->width() / zoom(), viewport()->height() / zoom());
        centerOn(rect.left() + visible.width() / 2, rect.top() + visible.height() / 2);
        return;
    }
    setZoom(0.8);
    const Graph& graph = *graphScene->graph();
    for (NodeId id = 0; id < graph.size(); ++id) {
        const NodeOp op = graph.node(id).op;
        if (op == NodeOp::Placeholder || op == NodeOp::GetAttr)
            continue;
        if (NodeItem* item = graphScene->nodeItem(id)) {
            // The first computation in the upper third, its inputs above it.
            centerOn(item->pos() + QPointF(0, viewport()->height() / zoom() * 0.25));
            return;
        }
    }
}

void GraphView::centreOnNode(NodeId id) {
    auto* graphScene = qobject_cast<GraphScene*>(scene());
    if (!graphScene)
        return;
    if (NodeItem* item = graphScene->nodeItem(id)) {
        if (zoom() < 0.8)
            setZoom(1.0);
        centerOn(item);
    }
}

void GraphView::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0) {
        QGraphicsView::wheelEvent(event);
        return;
    }
    const double target = std::clamp(zoom() * std::pow(1.2, steps), kMinZoom, kMaxZoom);
    scale(target / zoom(), target / zoom());
    event->accept();
}

void GraphView::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        scale(1.2, 1.2);
        return;
    case Qt::Key_Minus:
        scale(1 / 1.2, 1 / 1.2);
        return;
    default:
        QGraphicsView::keyPressEvent(event);
    }
}

} // namespace jointscope::views
