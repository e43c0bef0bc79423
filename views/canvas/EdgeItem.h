// A data edge from an input to the node reading it, drawn along the layout's Bezier route.
#pragma once

#include "graph/Graph.h"
#include "layout/GraphLayout.h"

#include <QGraphicsPathItem>

namespace jointscope::views {

class EdgeItem : public QGraphicsPathItem {
public:
    enum { Type = UserType + 2 };

    explicit EdgeItem(const layout::EdgeRoute& route);

    int type() const override { return Type; }
    NodeId from() const { return from_; }
    NodeId to() const { return to_; }
    // Emphasised when an end is selected.
    void setEmphasis(bool on);

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    QRectF boundingRect() const override;

private:
    NodeId from_;
    NodeId to_;
    QPolygonF arrow_;
    bool emphasis_ = false;
};

} // namespace jointscope::views
