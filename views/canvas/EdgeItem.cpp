#include "canvas/EdgeItem.h"

#include "models/NodeFormat.h"

#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include <cmath>

namespace jointscope::views {

namespace {
const QColor kEdgeColor(0x94, 0xa3, 0xb8);
const QColor kEmphasisColor(0xdc, 0x26, 0x26);
// Saved values crossing from the forward into the backward: the cut.
QPen cutPen() {
    return QPen(QColor(0x16, 0xa3, 0x4a), 2.0, Qt::DashLine);
}
} // namespace

EdgeItem::EdgeItem(const layout::EdgeRoute& route) : from_(route.from), to_(route.to) {
    QPainterPath path;
    const auto& p = route.points;
    if (!p.empty()) {
        path.moveTo(p[0].x, p[0].y);
        for (size_t i = 1; i + 2 < p.size(); i += 3)
            path.cubicTo(p[i].x, p[i].y, p[i + 1].x, p[i + 1].y, p[i + 2].x, p[i + 2].y);
    }
    setPath(path);
    // Arrowhead at the end, along the final tangent.
    if (path.elementCount() > 1) {
        const QPointF tip = path.pointAtPercent(1.0);
        const QPointF before = path.pointAtPercent(0.97);
        QPointF dir = tip - before;
        const double len = std::hypot(dir.x(), dir.y());
        dir = len > 1e-6 ? dir / len : QPointF(0, 1);
        const QPointF normal(-dir.y(), dir.x());
        arrow_ << tip << tip - dir * 7 + normal * 3.5 << tip - dir * 7 - normal * 3.5;
    }
    // QGraphicsPathItem bounds a pen with width by stroking shape(): a stroker pass over every curve, the
    // largest cost of putting a thousand edges on the canvas. The control points bound the curve; the margin
    // covers the widest pen and the hit band of shape().
    bounds_ = path.controlPointRect().united(arrow_.boundingRect()).adjusted(-4, -4, 4, 4);
    setPen(QPen(kEdgeColor, 1.2));
    setZValue(0);
    setFlag(ItemIsSelectable, false);
}

void EdgeItem::setEmphasis(bool on) {
    if (emphasis_ == on)
        return;
    emphasis_ = on;
    setPen(on ? QPen(kEmphasisColor, 2.2) : cut_ ? cutPen() : QPen(kEdgeColor, 1.2));
    setZValue(on ? 0.5 : 0);
}

void EdgeItem::setCut(bool cut) {
    if (cut_ == cut)
        return;
    cut_ = cut;
    if (!emphasis_)
        setPen(cut ? cutPen() : QPen(kEdgeColor, 1.2));
}

QString EdgeItem::tensorToolTip(const Node& producer, const Node& consumer) {
    QString text = QStringLiteral("<b>%1</b> → <b>%2</b>")
                       .arg(QString::fromStdString(producer.name).toHtmlEscaped(),
                            QString::fromStdString(consumer.name).toHtmlEscaped());
    const QString shapes = formatOutputShapes(producer);
    if (!shapes.isEmpty())
        text += QStringLiteral("<br>%1 %2").arg(formatOutputDTypes(producer), shapes.toHtmlEscaped());
    if (const TensorMeta* tensor = producer.tensor())
        if (auto bytes = tensor->bytes())
            text += QStringLiteral("<br>%1").arg(formatBytes(*bytes));
    return text;
}

QPainterPath EdgeItem::shape() const {
    if (shape_.isEmpty() && !path().isEmpty()) {
        QPainterPathStroker stroker;
        stroker.setWidth(6);
        shape_ = stroker.createStroke(path());
    }
    return shape_;
}

QRectF EdgeItem::boundingRect() const {
    return bounds_;
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setPen(pen());
    painter->setBrush(Qt::NoBrush);
    painter->drawPath(path());
    if (!arrow_.isEmpty() &&
        QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform()) > 0.2) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(pen().color());
        painter->drawPolygon(arrow_);
    }
}

} // namespace jointscope::views
