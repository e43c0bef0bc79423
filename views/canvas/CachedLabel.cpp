#include "canvas/CachedLabel.h"

#include <QFontMetricsF>
#include <QPainter>

#include <algorithm>
#include <cmath>

namespace jointscope::views {

void CachedLabel::draw(QPainter* painter, const QRectF& rect, int flags, const QFont& font,
                       Qt::TextElideMode mode) {
    if (rect.width() <= 0 || text_.isEmpty())
        return;
    if (width_ != rect.width() || mode_ != mode || font_ != font) {
        width_ = rect.width();
        mode_ = mode;
        font_ = font;
        shown_.setText(QFontMetricsF(font).elidedText(text_, mode, rect.width()));
        shown_.setTextFormat(Qt::PlainText);
        shown_.setPerformanceHint(QStaticText::AggressiveCaching);
        shown_.prepare(QTransform(), font);
    }
    const QSizeF size = shown_.size();
    double x = rect.left();
    if (flags & Qt::AlignHCenter)
        x = rect.center().x() - size.width() / 2;
    else if (flags & Qt::AlignRight)
        x = rect.right() - size.width();
    double y = rect.top();
    if (flags & Qt::AlignBottom)
        y = rect.bottom() - size.height();
    else if (flags & Qt::AlignVCenter)
        y = rect.center().y() - size.height() / 2;
    painter->setFont(font);
    painter->drawStaticText(QPointF(x, y), shown_);
}

void CachedLabel::drawReadable(QPainter* painter, const QRectF& rect, int flags, double lod, double points,
                               bool bold) {
    QFont font;
    font.setWeight(bold ? QFont::DemiBold : QFont::Normal);
    font.setPointSizeF(points);
    if (natural_ < 0)
        natural_ = QFontMetricsF(font).horizontalAdvance(text_);
    double size = std::min(points / std::max(lod, 1e-3), rect.height() * 0.8);
    if (natural_ > 0)
        size = std::min(size, points * rect.width() / natural_);
    // Quarter points: zooming does not lay the text out again on every step of the wheel.
    font.setPointSizeF(std::max(points, std::round(size * 4) / 4));
    draw(painter, rect, flags, font, Qt::ElideMiddle);
}

} // namespace jointscope::views
