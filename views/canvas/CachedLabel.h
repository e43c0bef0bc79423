// A canvas label laid out once: the first repaint of a thousand boxes spent most of its time eliding and
// shaping the same strings again (three times per label per frame). The elided text and its glyph layout
// (QStaticText) are kept until the font or the width changes.
#pragma once

#include <QFont>
#include <QStaticText>
#include <QString>

class QPainter;
class QRectF;

namespace jointscope::views {

class CachedLabel {
public:
    explicit CachedLabel(QString text = {}) : text_(std::move(text)) {}

    const QString& text() const { return text_; }
    // Draws the text in `font`, elided to `rect`'s width, placed by `flags` (Qt::Alignment).
    void draw(QPainter* painter, const QRectF& rect, int flags, const QFont& font, Qt::TextElideMode mode);
    // drawReadableText's sizing (GroupItem.h): about `points` tall on screen when zoomed out, never taller
    // than `rect` allows nor wider than it at `points`.
    void drawReadable(QPainter* painter, const QRectF& rect, int flags, double lod, double points, bool bold);

private:
    QString text_;
    QStaticText shown_;
    QFont font_;
    double width_ = -1;
    Qt::TextElideMode mode_ = Qt::ElideNone;
    double natural_ = -1; // width at the `points` size of drawReadable, measured once
};

} // namespace jointscope::views
