// Canvas items of a collapsed view (layout/Grouping.h): a collapsed group's box, and the frame around the
// members of an expanded group. Double-click expands a box and collapses a frame
// (GraphScene::groupActivated).
#pragma once

#include "canvas/CachedLabel.h"

#include <QGraphicsItem>
#include <QString>
#include <cstdint>

namespace jointscope::views {

class GroupItem : public QGraphicsItem {
public:
    enum { Type = UserType + 3 };

    GroupItem(int32_t group, QString title, QString subtitle, QSizeF size, bool backward);

    int type() const override { return Type; }
    int32_t group() const { return group_; }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    // The third line (GroupFacts: saved bytes, recomputed, cut edges, time); empty hides it.
    void setFacts(const QString& facts);
    const QString& facts() const { return factsLabel_.text(); }
    // Fill by the members' summed time (invalid: the plain colour).
    void setHeatColor(const QColor& color);
    const QColor& heatColor() const { return heat_; }
    const QString& subtitle() const { return subtitle_; }

private:
    QRectF box() const;
    void updateToolTip();

    int32_t group_;
    QString title_;
    QString subtitle_;
    CachedLabel titleLabel_;
    CachedLabel subtitleLabel_;
    CachedLabel factsLabel_;
    QSizeF size_;
    bool backward_;
    QColor heat_;
};

class GroupFrameItem : public QGraphicsItem {
public:
    enum { Type = UserType + 4 };

    GroupFrameItem(int32_t group, QString title, QRectF rect, bool backward, int depth);

    int type() const override { return Type; }
    int32_t group() const { return group_; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    int32_t group_;
    QString title_;
    QRectF rect_;
    bool backward_;
};

// Draws `text` in `rect` so that it stays about `screenPoints` tall on screen when zoomed out, never taller
// than the rect allows.
void drawReadableText(QPainter* painter, const QRectF& rect, const QString& text, int flags, double lod,
                      double points, bool bold);

} // namespace jointscope::views
