// A data edge from an input to the node reading it, drawn along the layout's Bezier route.
#pragma once

#include "graph/Graph.h"
#include "layout/GraphLayout.h"

#include <QGraphicsPathItem>

#include <optional>
#include <vector>

namespace jointscope::views {

class EdgeItem : public QGraphicsPathItem {
public:
    enum { Type = UserType + 2 };

    explicit EdgeItem(const layout::EdgeRoute& route);
    // Follows a new route between the same two nodes (a refined layout), keeping emphasis and cut.
    void setRoute(const layout::EdgeRoute& route);

    int type() const override { return Type; }
    NodeId from() const { return from_; }
    NodeId to() const { return to_; }
    // Emphasised when an end is selected.
    void setEmphasis(bool on);
    // Partition overlay: the edge carries a saved value from the forward into the backward.
    void setCut(bool cut);
    bool isCut() const { return cut_; }
    // Hover text: the tensor `producer` hands to `consumer` (shape, dtype, bytes).
    static QString tensorToolTip(const Node& producer, const Node& consumer);

    QPainterPath shape() const override; // a band along the curve, not the area it encloses

    // A stretch of a route that comes within a rectangle, and how far along the route it starts.
    struct Run {
        QPainterPath path;
        qreal start = 0;
    };
    // The stretches of `path` (a move then cubics, as routes are built) whose curves come within `rect`:
    // stroking only them paints the same pixels inside `rect`. nullopt for a path of another shape.
    static std::optional<std::vector<Run>> visibleRuns(const QPainterPath& path, const QRectF& rect);

    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;
    QRectF boundingRect() const override;

private:
    void follow(const layout::EdgeRoute& route); // path, arrowhead and bounds of the route

    NodeId from_;
    NodeId to_;
    QPolygonF arrow_;
    QRectF bounds_;              // of the route; setRoute() replaces it
    mutable QPainterPath shape_; // stroked on the first hit test
    bool emphasis_ = false;
    bool cut_ = false;
};

} // namespace jointscope::views
