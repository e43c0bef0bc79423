#include "canvas/NodeItem.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace jointscope::views {

NodeItem::NodeItem(NodeId id, NodeRole role, QString title, QString subtitle, QSizeF size, bool hasBody)
    : id_(id), role_(role), title_(std::move(title)), subtitle_(std::move(subtitle)), titleLabel_(title_),
      subtitleLabel_(subtitle_), size_(size), hasBody_(hasBody) {
    setFlag(ItemIsSelectable);
    setAcceptHoverEvents(false);
    setZValue(1);
}

QFont NodeItem::titleFont() {
    return badgeFont(9);
}

QFont NodeItem::subtitleFont() {
    QFont font;
    font.setPointSizeF(8);
    return font;
}

QFont NodeItem::badgeFont(qreal pointSize) {
    QFont font;
    font.setPointSizeF(pointSize);
    font.setWeight(QFont::DemiBold);
    return font;
}

void NodeItem::setMatched(bool matched) {
    change(matched_, matched);
}

void NodeItem::setHeatColor(const QColor& color) {
    change(heat_, color);
}

void NodeItem::setMismatch(bool mismatch) {
    if (mismatch_ == mismatch)
        return;
    mismatch_ = mismatch;
    layOutBadges();
    update();
}

QRectF NodeItem::box() const {
    return QRectF(-size_.width() / 2, -size_.height() / 2, size_.width(), size_.height());
}

void NodeItem::setSize(QSizeF size) {
    if (size == size_)
        return;
    prepareGeometryChange();
    size_ = size;
}

QRectF NodeItem::boundingRect() const {
    QRectF bounds = box().adjusted(-4, -4, 4, 4);
    // Badges sit on the top edge, stick out above it and, when there are many, past the right end.
    for (const NodeBadge& badge : badges_)
        bounds |= badge.rect.adjusted(-1, -1, 1, 1);
    return bounds;
}

QPainterPath NodeItem::shape() const {
    QPainterPath path;
    path.addRoundedRect(box(), 6, 6);
    return path;
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const RoleColors colors = roleColors(role_);
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    const bool selected = isSelected();
    QPen pen(selected ? QColor(0xdc, 0x26, 0x26) : colors.border,
             selected ? 3.0 : (role_ == NodeRole::Output ? 2.0 : 1.2));
    if (hasBody_)
        pen.setStyle(Qt::DashLine);
    if (matched_ && !selected) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0xfa, 0xcc, 0x15, 200));
        painter->drawRoundedRect(box().adjusted(-4, -4, 4, 4), 9, 9);
    }
    if (lod < kLabelLevelOfDetail) {
        // Far away the pale fills vanish: solid mid-tone boxes keep forward / backward regions visible.
        const QColor solid = QColor::fromRgbF((colors.fill.redF() + colors.border.redF() * 2) / 3,
                                              (colors.fill.greenF() + colors.border.greenF() * 2) / 3,
                                              (colors.fill.blueF() + colors.border.blueF() * 2) / 3);
        painter->setPen(selected || matched_ ? pen : QPen(Qt::NoPen));
        painter->setBrush(heat_.isValid() ? heat_ : solid);
        if (mismatch_)
            painter->setPen(QPen(QColor(0xdc, 0x26, 0x26), 6.0));
        if (lod < 0.2) // plain rectangles are much cheaper
            painter->drawRect(box());
        else
            painter->drawRoundedRect(box(), 6, 6);
        paintPartition(painter, lod);
        return;
    }
    painter->setPen(pen);
    painter->setBrush(heat_.isValid() ? heat_ : colors.fill);
    painter->drawRoundedRect(box(), 6, 6);
    const bool darkFill = heat_.isValid() && heat_.lightnessF() < 0.45;
    if (mismatch_) {
        // Outputs the partitioned forward + backward compute differently: a red ring (and a "≠" badge).
        painter->setPen(QPen(QColor(0xdc, 0x26, 0x26), 3.0));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(box().adjusted(-2, -2, 2, 2), 7, 7);
    }

    const QRectF text = box().adjusted(6, 3, -6, -3);
    painter->setPen(darkFill ? QColor(Qt::white) : QColor(0x11, 0x18, 0x27));
    const QRectF top(text.left(), text.top(), text.width(), text.height() / 2);
    titleLabel_.draw(painter, top, Qt::AlignHCenter | Qt::AlignBottom, titleFont(), Qt::ElideMiddle);
    painter->setPen(darkFill ? QColor(0xf1, 0xf5, 0xf9) : QColor(0x4b, 0x55, 0x63));
    const QRectF bottom(text.left(), text.center().y() + 1, text.width(), text.height() / 2);
    subtitleLabel_.draw(painter, bottom, Qt::AlignHCenter | Qt::AlignTop, subtitleFont(), Qt::ElideRight);
    paintPartition(painter, lod);
    Q_UNUSED(option);
}

} // namespace jointscope::views
