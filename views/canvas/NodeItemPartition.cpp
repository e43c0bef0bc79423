// NodeItem's partition overlay: saved / recomputed / banned / pinned decorations.
#include "canvas/NodeItem.h"

#include <QFontMetricsF>
#include <QPainter>

namespace jointscope::views {

namespace {

const QColor kSaved(0x16, 0xa3, 0x4a);
const QColor kRecomputed(0x93, 0x33, 0xea);
const QColor kBanned(0xb9, 0x1c, 0x1c);
const QColor kPin(0x0f, 0x17, 0x2a);

// A pill on the box's top edge; `right` anchors it at the right end, else at the left; returns its width.
double drawBadge(QPainter* painter, const QRectF& box, double offset, bool right, const QString& text,
                 const QColor& fill) {
    const QFontMetricsF metrics(NodeItem::badgeFont(7));
    const double w = metrics.horizontalAdvance(text) + 8;
    const double h = 13;
    const double x = right ? box.right() - w - offset : box.left() + offset;
    const QRectF pill(x, box.top() - h + 3, w, h);
    painter->setPen(Qt::NoPen);
    painter->setBrush(fill);
    painter->drawRoundedRect(pill, 4, 4);
    painter->setPen(Qt::white);
    painter->setFont(NodeItem::badgeFont(7));
    painter->drawText(pill, Qt::AlignCenter, text);
    return w;
}

} // namespace

void NodeItem::setPartitionMark(const NodePartitionMark& mark) {
    const bool badgeBefore =
        partition_.mark != PartitionMark::None || partition_.pin != PinMark::None || partition_.banned;
    const bool badgeAfter = mark.mark != PartitionMark::None || mark.pin != PinMark::None || mark.banned;
    if (badgeBefore != badgeAfter)
        prepareGeometryChange();
    partition_ = mark;
    update();
}

void NodeItem::paintPartition(QPainter* painter, double lod) const {
    const NodePartitionMark& m = partition_;
    if (m.mark == PartitionMark::None && m.pin == PinMark::None && !m.banned)
        return;
    const QRectF b = box();
    if (m.mark == PartitionMark::Saved || m.mark == PartitionMark::Recomputed) {
        QPen ring(m.mark == PartitionMark::Saved ? kSaved : kRecomputed,
                  lod < kLabelLevelOfDetail ? 6.0 : 3.0);
        if (m.mark == PartitionMark::Recomputed)
            ring.setStyle(Qt::DashLine);
        painter->setPen(ring);
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(b.adjusted(-2, -2, 2, 2), 7, 7);
    }
    if (lod < kLabelLevelOfDetail)
        return; // badges are unreadable far away; the rings carry the decision
    if (m.mark == PartitionMark::Saved)
        drawBadge(painter, b, 4, true, QStringLiteral("saved %1").arg(formatBytes(m.bytes)), kSaved);
    else if (m.mark == PartitionMark::Recomputed)
        drawBadge(painter, b, 4, true, QStringLiteral("recompute"), kRecomputed);
    double left = 4;
    if (m.pin != PinMark::None)
        left += drawBadge(painter, b, left, false,
                          m.pin == PinMark::MustSave ? QStringLiteral("pin: save")
                                                     : QStringLiteral("pin: recompute"),
                          kPin) +
                3;
    if (m.banned)
        drawBadge(painter, b, left, false, QStringLiteral("banned"), kBanned);
}

} // namespace jointscope::views
