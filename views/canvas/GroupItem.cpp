#include "canvas/GroupItem.h"

#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <cstdint>

namespace jointscope::views {

namespace {

QColor accent(bool backward) {
    return backward ? QColor(0xea, 0x58, 0x0c) : QColor(0x25, 0x63, 0xeb);
}
QColor pale(bool backward) {
    return backward ? QColor(0xff, 0xed, 0xd5) : QColor(0xdb, 0xea, 0xfe);
}

} // namespace

void drawReadableText(QPainter* painter, const QRectF& rect, const QString& text, int flags, double lod,
                      double points, bool bold) {
    QFont font;
    font.setWeight(bold ? QFont::DemiBold : QFont::Normal);
    // Scene units per screen point grow as the view zooms out; the rect bounds how far that can go: as tall
    // as it allows, but not so wide that the text must be elided (unless it already is at `points`).
    font.setPointSizeF(points);
    const double natural = QFontMetricsF(font).horizontalAdvance(text);
    double size = std::min(points / std::max(lod, 1e-3), rect.height() * 0.8);
    if (natural > 0)
        size = std::min(size, points * rect.width() / natural);
    font.setPointSizeF(std::max(points, size));
    painter->setFont(font);
    const QFontMetricsF metrics(font);
    painter->drawText(rect, flags, metrics.elidedText(text, Qt::ElideMiddle, rect.width()));
}

GroupItem::GroupItem(int32_t group, QString title, QString subtitle, QSizeF size, bool backward)
    : group_(group), title_(std::move(title)), subtitle_(std::move(subtitle)), titleLabel_(title_),
      subtitleLabel_(subtitle_), size_(size), backward_(backward) {
    setZValue(1);
    updateToolTip();
}

void GroupItem::updateToolTip() {
    const QString facts =
        factsLabel_.text().isEmpty() ? QString() : factsLabel_.text() + QStringLiteral("<br>");
    setToolTip(QStringLiteral("<b>%1</b><br>%2<br>%3<i>double-click to expand</i>")
                   .arg(title_.toHtmlEscaped(), subtitle_, facts));
}

void GroupItem::setFacts(const QString& facts) {
    if (facts == factsLabel_.text())
        return;
    factsLabel_ = CachedLabel(facts);
    updateToolTip();
    update();
}

void GroupItem::setHeatColor(const QColor& color) {
    if (heat_ == color)
        return;
    heat_ = color;
    update();
}

QRectF GroupItem::box() const {
    return QRectF(-size_.width() / 2, -size_.height() / 2, size_.width(), size_.height());
}

QRectF GroupItem::boundingRect() const {
    return box().adjusted(-6, -6, 6, 6);
}

void GroupItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    const QColor border = accent(backward_);
    // A stacked look: this box stands for many.
    painter->setPen(QPen(border, 1.2));
    painter->setBrush(pale(backward_).darker(104));
    painter->drawRoundedRect(box().translated(4, 4), 8, 8);
    painter->setBrush(heat_.isValid() ? heat_ : pale(backward_));
    painter->setPen(QPen(border, 2.0));
    painter->drawRoundedRect(box(), 8, 8);
    painter->setPen(heat_.isValid() && heat_.lightnessF() < 0.45 ? QColor(Qt::white)
                                                                 : QColor(0x11, 0x18, 0x27));
    const QRectF text = box().adjusted(8, 4, -8, -4);
    if (lod < 0.08)
        return; // a few pixels tall (the minimap): text would be unreadable and slow to draw
    if (lod < 0.45) {
        // Zoomed out: only the title, as large as the box allows.
        titleLabel_.drawReadable(painter, text, Qt::AlignCenter, lod, 9, true);
        return;
    }
    // Title, subtitle and (when there are facts) the facts line, in equal bands.
    const int lines = factsLabel_.text().isEmpty() ? 2 : 3;
    const double band = text.height() / lines;
    titleLabel_.drawReadable(painter, QRectF(text.left(), text.top(), text.width(), band),
                             Qt::AlignHCenter | Qt::AlignBottom, 1, 9, true);
    // Dark heat colours need light text.
    const bool dark = heat_.isValid() && heat_.lightnessF() < 0.45;
    painter->setPen(dark ? QColor(Qt::white) : QColor(0x4b, 0x55, 0x63));
    subtitleLabel_.drawReadable(painter, QRectF(text.left(), text.top() + band + 2, text.width(), band),
                                Qt::AlignHCenter | Qt::AlignTop, 1, 8, false);
    if (lines == 3) {
        painter->setPen(dark ? QColor(Qt::white) : QColor(0x11, 0x18, 0x27));
        factsLabel_.drawReadable(painter, QRectF(text.left(), text.top() + 2 * band, text.width(), band),
                                 Qt::AlignHCenter | Qt::AlignTop, 1, 8, true);
    }
}

GroupFrameItem::GroupFrameItem(int32_t group, QString title, QRectF rect, bool backward, int depth)
    : group_(group), title_(std::move(title)), rect_(rect), backward_(backward) {
    // Outer frames below inner ones, all below edges and nodes.
    setZValue(-10 + depth * 0.1);
    setToolTip(
        QStringLiteral("<b>%1</b><br><i>double-click the frame to collapse</i>").arg(title_.toHtmlEscaped()));
}

QRectF GroupFrameItem::boundingRect() const {
    return rect_.adjusted(-2, -2, 2, 2);
}

QPainterPath GroupFrameItem::shape() const {
    QPainterPath path;
    path.addRect(rect_);
    return path;
}

void GroupFrameItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    QColor fill = pale(backward_);
    fill.setAlpha(70);
    QPen pen(accent(backward_), 1.2);
    pen.setStyle(Qt::DashLine);
    pen.setCosmetic(true);
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRect(rect_);
    if (lod < 0.03)
        return;
    painter->setPen(accent(backward_).darker(130));
    const double band = std::min(rect_.height() * 0.25, 18.0 / std::max(lod, 0.05));
    drawReadableText(painter, QRectF(rect_.left() + 6, rect_.top() + 2, rect_.width() - 12, band), title_,
                     Qt::AlignLeft | Qt::AlignTop, lod, 8, true);
}

} // namespace jointscope::views
