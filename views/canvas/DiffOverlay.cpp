#include "canvas/DiffOverlay.h"

#include "canvas/EdgeItem.h"
#include "canvas/GraphScene.h"
#include "canvas/NodeItem.h"
#include "canvas/OverlayItems.h"
#include "models/DiffModel.h"

#include <QGraphicsItem>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <set>

namespace jointscope::views {
namespace {

QString kindTip(DiffKind kind) {
    switch (kind) {
    case DiffKind::Added:
        return QStringLiteral("added: only in graph B");
    case DiffKind::Removed:
        return QStringLiteral("removed: only in graph A");
    case DiffKind::Changed:
        break;
    }
    return QStringLiteral("changed between graph A and B");
}

// A thick frame just outside the node's box.
class DiffFrame : public QGraphicsItem {
public:
    enum { Type = UserType + 50 };

    DiffFrame(const QRectF& box, DiffKind kind) : rect_(box.adjusted(-4, -4, 4, 4)), kind_(kind) {
        setToolTip(kindTip(kind));
        setAcceptedMouseButtons(Qt::NoButton);
        setFlag(ItemStacksBehindParent); // under the box: the frame shows around it
    }
    int type() const override { return Type; }
    QRectF boundingRect() const override { return rect_.adjusted(-3, -3, 3, 3); }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
        QColor fill = DiffModel::kindColor(kind_);
        fill.setAlpha(70);
        painter->setBrush(fill);
        painter->setPen(QPen(DiffModel::kindColor(kind_), lod < NodeItem::kLabelLevelOfDetail ? 8.0 : 3.5));
        painter->drawRoundedRect(rect_, 8, 8);
    }

private:
    QRectF rect_;
    DiffKind kind_;
};

class DiffEdgeMark : public QGraphicsItem {
public:
    enum { Type = UserType + 51 };

    DiffEdgeMark(const QPainterPath& path, DiffKind kind) : path_(path), kind_(kind) {
        setToolTip(kind == DiffKind::Added ? QStringLiteral("edge only in graph B")
                                           : QStringLiteral("edge only in graph A"));
        setAcceptedMouseButtons(Qt::NoButton);
        setZValue(2);
    }
    int type() const override { return Type; }
    QRectF boundingRect() const override { return path_.boundingRect().adjusted(-4, -4, 4, 4); }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        QPen pen(DiffModel::kindColor(kind_), 3.0, Qt::DashLine);
        painter->setPen(pen);
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(path_);
    }

private:
    QPainterPath path_;
    DiffKind kind_;
};

} // namespace

DiffOverlay makeDiffOverlay(const GraphDiff& diff, bool sideB, size_t nodeCount) {
    DiffOverlay overlay;
    overlay.nodes.resize(nodeCount);
    for (const DiffEntry& e : diff.entries) {
        const NodeId id = sideB ? e.b : e.a;
        if (id != kNoNode && id < nodeCount)
            overlay.nodes[id] = e.kind;
    }
    for (const EdgeChange& edge : diff.edges)
        if (edge.added == sideB)
            (edge.added ? overlay.addedEdges : overlay.removedEdges)
                .push_back({edge.producer, edge.consumer});
    return overlay;
}

void applyDiffOverlay(GraphScene& scene, const DiffOverlay* overlay) {
    const SceneItems shown = clearOverlayItems(scene, {DiffFrame::Type, DiffEdgeMark::Type});
    if (!overlay)
        return;
    for (NodeItem* node : shown.nodes) {
        const NodeId id = node->nodeId();
        if (id < overlay->nodes.size() && overlay->nodes[id])
            (new DiffFrame(node->shape().boundingRect(), *overlay->nodes[id]))->setParentItem(node);
    }
    const std::set<std::pair<NodeId, NodeId>> added(overlay->addedEdges.begin(), overlay->addedEdges.end());
    const std::set<std::pair<NodeId, NodeId>> removed(overlay->removedEdges.begin(),
                                                      overlay->removedEdges.end());
    for (EdgeItem* edge : shown.edges) {
        const std::pair<NodeId, NodeId> key{edge->from(), edge->to()};
        if (added.count(key) || removed.count(key))
            scene.addItem(new DiffEdgeMark(edge->mapToScene(edge->path()),
                                           added.count(key) ? DiffKind::Added : DiffKind::Removed));
    }
}

} // namespace jointscope::views
