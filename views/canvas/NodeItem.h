// One node box on the canvas: rounded rectangle with the name and op, coloured by role.
#pragma once

#include "canvas/CachedLabel.h"
#include "canvas/PartitionOverlay.h"
#include "graph/Graph.h"
#include "models/NodeFormat.h"

#include <QColor>
#include <QGraphicsItem>

namespace jointscope::views {

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

    QRectF boundingRect() const override;
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
};

} // namespace jointscope::views
