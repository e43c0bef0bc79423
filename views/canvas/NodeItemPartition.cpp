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
const QColor kOverridden(0xd9, 0x77, 0x06);
const QColor kMismatch(0xdc, 0x26, 0x26);
constexpr double kBadgeHeight = 13;
constexpr double kBadgeGap = 3;

} // namespace

void NodeItem::setPartitionMark(const NodePartitionMark& mark) {
    partition_ = mark;
    layOutBadges();
    update();
}

void NodeItem::layOutBadges() {
    const NodePartitionMark& m = partition_;
    std::vector<NodeBadge> row;
    auto add = [&](QString text, const QColor& fill) { row.push_back({std::move(text), fill, QRectF()}); };
    if (m.pin != PinMark::None)
        add(m.pin == PinMark::MustSave ? QStringLiteral("pin: save") : QStringLiteral("pin: recompute"),
            kPin);
    if (m.pinOverridden)
        add(QStringLiteral("⚠ pin overridden"), kOverridden);
    if (m.banned)
        add(QStringLiteral("banned"), kBanned);
    if (m.mark == PartitionMark::Saved)
        add(QStringLiteral("saved %1").arg(formatBytes(m.bytes)), kSaved);
    else if (m.mark == PartitionMark::Recomputed)
        add(QStringLiteral("recompute"), kRecomputed);
    if (mismatch_)
        add(QStringLiteral("≠"), kMismatch);
    // One row from the left end: a row wider than the box runs past its right end rather than over itself.
    if (row.empty() && badges_.empty())
        return; // most nodes: nothing to measure (an overlay update visits every node)
    const QFontMetricsF metrics(badgeFont(7));
    const QRectF b = box();
    double x = b.left() + 4;
    for (NodeBadge& badge : row) {
        const double w = metrics.horizontalAdvance(badge.text) + 8;
        badge.rect = QRectF(x, b.top() - kBadgeHeight + 3, w, kBadgeHeight);
        x += w + kBadgeGap;
    }
    // The scene re-indexes an item whose bounds change: only when they do (an overlay update touches every
    // node).
    const auto extent = [](const std::vector<NodeBadge>& badges) {
        return badges.empty() ? QRectF() : badges.front().rect | badges.back().rect;
    };
    if (extent(row) != extent(badges_))
        prepareGeometryChange();
    badges_ = std::move(row);
}

void NodeItem::paintPartition(QPainter* painter, double lod) const {
    const NodePartitionMark& m = partition_;
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
    painter->setFont(badgeFont(7));
    for (const NodeBadge& badge : badges_) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(badge.fill);
        painter->drawRoundedRect(badge.rect, 4, 4);
        painter->setPen(Qt::white);
        painter->drawText(badge.rect, Qt::AlignCenter, badge.text);
    }
}

} // namespace jointscope::views
