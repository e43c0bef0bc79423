// One node box on the canvas: rounded rectangle with the name and op, coloured by role.
#pragma once

#include "graph/Graph.h"
#include "models/NodeFormat.h"

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

    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    static QFont titleFont();
    static QFont subtitleFont();

private:
    QRectF box() const;

    NodeId id_;
    NodeRole role_;
    QString title_;
    QString subtitle_;
    QSizeF size_;
    bool hasBody_;
    bool matched_ = false;
};

} // namespace jointscope::views
