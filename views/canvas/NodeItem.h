// One node box on the canvas: rounded rectangle with the name and op, coloured by role.
#pragma once

#include "canvas/CachedLabel.h"
#include "canvas/PartitionOverlay.h"
#include "graph/Graph.h"
#include "models/NodeFormat.h"

#include <QColor>
#include <QGraphicsItem>

#include <vector>

namespace jointscope::views {

// A pill above the node's box: a fact about the node in a word or two ("saved 4 MiB", "pin: save", "≠").
struct NodeBadge {
    QString text;
    QColor fill;
    QRectF rect; // in item coordinates
};

class NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };
    static constexpr double kLabelLevelOfDetail = 0.45; // below this scale labels are not drawn

    NodeItem(NodeId id, NodeRole role, QString title, QString subtitle, QSizeF size, bool hasBody);

    int type() const override { return Type; }
    NodeId nodeId() const { return id_; }
    NodeRole role() const { return role_; }
    bool hasBody() const { return hasBody_; }
    void setMatched(bool matched);
    bool matched() const { return matched_; }
    // Partition overlay: saved (badge with bytes), recomputed, banned, pinned. Drawn by
    // NodeItemPartition.cpp.
    void setPartitionMark(const NodePartitionMark& mark);
    const NodePartitionMark& partitionMark() const { return partition_; }
    // Runtime overlays: measured-time heat fill (invalid colour: role colours) and a mismatch badge.
    void setHeatColor(const QColor& color);
    QColor heatColor() const { return heat_; }
    void setMismatch(bool mismatch);
    bool mismatch() const { return mismatch_; }
    // Every badge of the node, laid out left to right in one row on the box's top edge, in a fixed order
    // (pin, pin overridden, banned, decision, mismatch): however many apply, none covers another.
    const std::vector<NodeBadge>& badges() const { return badges_; }

    QRectF boundingRect() const override;
    QSizeF size() const { return size_; }
    void setSize(QSizeF size); // a refined layout's box (Graphviz rounds the measured size)
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    static QFont titleFont();
    static QFont subtitleFont();
    // The small demi-bold font of the badges and strips that overlays draw on nodes.
    static QFont badgeFont(qreal pointSize);

private:
    // Sets a look-affecting field, repainting when it changes.
    template <typename T> void change(T& field, const T& value) {
        if (field == value)
            return;
        field = value;
        update();
    }
    QRectF box() const;
    void paintPartition(QPainter* painter, double lod) const;
    void layOutBadges(); // NodeItemPartition.cpp; call before a change of the badges' geometry shows

    NodeId id_;
    NodeRole role_;
    QString title_;
    QString subtitle_;
    CachedLabel titleLabel_;
    CachedLabel subtitleLabel_;
    QSizeF size_;
    bool hasBody_;
    bool matched_ = false;
    QColor heat_;
    bool mismatch_ = false;
    NodePartitionMark partition_;
    std::vector<NodeBadge> badges_;
};

} // namespace jointscope::views
