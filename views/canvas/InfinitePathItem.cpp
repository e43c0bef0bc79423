#include "canvas/InfinitePathItem.h"

#include "canvas/EdgeItem.h"
#include "canvas/GraphScene.h"
#include "canvas/GroupItem.h"
#include "canvas/NodeItem.h"
#include "layout/Grouping.h"

#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <map>
#include <set>

namespace jointscope::views {

QColor InfinitePathItem::color() {
    return QColor(0xc0, 0x26, 0xd3); // fuchsia: not a role, partition, heat or group colour
}

QRectF InfinitePathItem::boundingRect() const {
    return bounds_;
}

void InfinitePathItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    // Cosmetic pens: the path stays visible when the whole graph is zoomed out to fit.
    QPen stroke(color(), 4.0);
    stroke.setCosmetic(true);
    stroke.setCapStyle(Qt::RoundCap);
    painter->setPen(stroke);
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(strokes_);
    QColor fill = color();
    fill.setAlpha(40);
    painter->setBrush(fill);
    for (const QRectF& ring : rings_)
        painter->drawRoundedRect(ring, 8, 8);
}

InfinitePathItem* infinitePathItem(const GraphScene& scene) {
    for (QGraphicsItem* item : scene.items())
        if (item->type() == InfinitePathItem::Type)
            return static_cast<InfinitePathItem*>(item);
    return nullptr;
}

InfinitePathItem* showInfinitePath(GraphScene& scene, const std::vector<NodeId>& path) {
    delete infinitePathItem(scene);
    const Graph* graph = scene.graph();
    if (!graph || path.empty())
        return nullptr;

    // Collapsed groups standing for hidden path nodes: the box of each, by group.
    std::map<int32_t, GroupItem*> groupBoxes;
    if (scene.collapsedView())
        for (QGraphicsItem* item : scene.items())
            if (auto* box = qgraphicsitem_cast<GroupItem*>(item))
                groupBoxes.emplace(box->group(), box);

    auto* overlay = new InfinitePathItem;
    std::set<const QGraphicsItem*> ringed;
    for (NodeId id : path) {
        if (id >= graph->size())
            continue;
        QGraphicsItem* box = scene.nodeItem(id);
        QRectF rect;
        if (box) {
            rect = box->mapRectToScene(box->shape().boundingRect());
        } else if (const layout::CollapsedView* view = scene.collapsedView();
                   view && id < view->itemOfNode.size() && view->itemOfNode[id] < view->items.size()) {
            const auto found = groupBoxes.find(view->items[view->itemOfNode[id]].group);
            if (found == groupBoxes.end())
                continue;
            box = found->second;
            rect = box->mapRectToScene(box->boundingRect().adjusted(6, 6, -6, -6));
        }
        if (!box || !ringed.insert(box).second)
            continue;
        overlay->nodes_.push_back(id);
        overlay->rings_.push_back(rect.adjusted(-5, -5, 5, 5));
    }
    std::set<std::pair<NodeId, NodeId>> links;
    for (size_t i = 0; i + 1 < path.size(); ++i)
        links.emplace(path[i], path[i + 1]);
    for (QGraphicsItem* item : scene.items())
        if (auto* edge = qgraphicsitem_cast<EdgeItem*>(item))
            if (links.count({edge->from(), edge->to()})) {
                overlay->edges_.emplace_back(edge->from(), edge->to());
                overlay->strokes_.addPath(edge->mapToScene(edge->path()));
            }
    // scene.items() is in stacking order; tests and tooltips want the path's order.
    std::sort(overlay->edges_.begin(), overlay->edges_.end(), [&](const auto& a, const auto& b) {
        return std::find(path.begin(), path.end(), a.first) < std::find(path.begin(), path.end(), b.first);
    });
    if (overlay->nodes_.empty() && overlay->edges_.empty()) {
        delete overlay;
        return nullptr;
    }
    QRectF bounds = overlay->strokes_.boundingRect();
    for (const QRectF& ring : overlay->rings_)
        bounds = bounds.united(ring);
    // Room for the cosmetic pen at any zoom the view allows.
    overlay->bounds_ = bounds.adjusted(-40, -40, 40, 40);
    // Above nodes, edges and every other overlay, yet not in the way of clicks on the nodes below.
    overlay->setZValue(50);
    overlay->setAcceptedMouseButtons(Qt::NoButton);
    scene.addItem(overlay);
    return overlay;
}

} // namespace jointscope::views
