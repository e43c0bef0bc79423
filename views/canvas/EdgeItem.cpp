#include "canvas/EdgeItem.h"

#include "models/NodeFormat.h"

#include <QPaintEngine>
#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include <algorithm>
#include <array>
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
    follow(route);
    setPen(QPen(kEdgeColor, 1.2));
    setZValue(0);
    setFlag(ItemIsSelectable, false);
}

void EdgeItem::setRoute(const layout::EdgeRoute& route) {
    prepareGeometryChange();
    follow(route);
}

void EdgeItem::follow(const layout::EdgeRoute& route) {
    QPainterPath path;
    const auto& p = route.points;
    if (!p.empty()) {
        path.moveTo(p[0].x, p[0].y);
        for (size_t i = 1; i + 2 < p.size(); i += 3)
            path.cubicTo(p[i].x, p[i].y, p[i + 1].x, p[i + 1].y, p[i + 2].x, p[i + 2].y);
    }
    setPath(path);
    // Arrowhead at the end, along the final tangent: a cubic ends heading from its last control point that is
    // not the end point itself (pointAtPercent would measure the whole route's length, twice, per edge).
    if (path.elementCount() > 1) {
        const QPointF tip(p.back().x, p.back().y);
        QPointF dir(0, 1);
        for (size_t back = 2; back <= std::min<size_t>(p.size(), 4); ++back) {
            const QPointF d = tip - QPointF(p[p.size() - back].x, p[p.size() - back].y);
            const double len = std::hypot(d.x(), d.y());
            if (len > 1e-6) {
                dir = d / len;
                break;
            }
        }
        const QPointF normal(-dir.y(), dir.x());
        arrow_ = QPolygonF() << tip << tip - dir * 7 + normal * 3.5 << tip - dir * 7 - normal * 3.5;
    } else {
        arrow_.clear();
    }
    // QGraphicsPathItem bounds a pen with width by stroking shape(): a stroker pass over every curve, the
    // largest cost of putting a thousand edges on the canvas. The control points bound the curve; the margin
    // covers the widest pen and the hit band of shape().
    bounds_ = path.controlPointRect().united(arrow_.boundingRect()).adjusted(-4, -4, 4, 4);
    shape_ = QPainterPath();
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

namespace {

using Cubic = std::array<QPointF, 4>;

bool overlaps(const QRectF& a, const QRectF& b) { // QRectF::intersects misses a flat a (a straight edge)
    return a.left() <= b.right() && a.right() >= b.left() && a.top() <= b.bottom() && a.bottom() >= b.top();
}

QRectF hullOf(const Cubic& c) {
    const auto [minX, maxX] = std::minmax({c[0].x(), c[1].x(), c[2].x(), c[3].x()});
    const auto [minY, maxY] = std::minmax({c[0].y(), c[1].y(), c[2].y(), c[3].y()});
    return QRectF(QPointF(minX, minY), QPointF(maxX, maxY));
}

qreal distance(QPointF a, QPointF b) {
    return std::hypot(a.x() - b.x(), a.y() - b.y());
}

// Between the chord and the control polygon: exact for a straight piece, close for the small pieces
// subdivision leaves. Only the dash pattern's phase depends on it.
qreal lengthOf(const Cubic& c) {
    const qreal polygon = distance(c[0], c[1]) + distance(c[1], c[2]) + distance(c[2], c[3]);
    return (polygon + distance(c[0], c[3])) / 2;
}

// Splits the pieces of a cubic that cross `rect`'s border until they are small (depth) and keeps those whose
// hull meets it. The curve lies within its hull, so nothing dropped reaches the rectangle.
class RunCollector {
public:
    explicit RunCollector(const QRectF& rect) : rect_(rect) {}

    void add(const Cubic& c, int depth = 0) {
        const QRectF hull = hullOf(c);
        if (!overlaps(hull, rect_)) {
            along_ += lengthOf(c);
            open_ = false;
            return;
        }
        if (depth >= kMaxDepth || (rect_.left() <= hull.left() && hull.right() <= rect_.right() &&
                                   rect_.top() <= hull.top() && hull.bottom() <= rect_.bottom())) {
            if (!open_)
                runs_.push_back({QPainterPath(c[0]), along_});
            open_ = true;
            runs_.back().path.cubicTo(c[1], c[2], c[3]);
            along_ += lengthOf(c);
            return;
        }
        // de Casteljau at t = 1/2.
        const QPointF ab = (c[0] + c[1]) / 2, bc = (c[1] + c[2]) / 2, cd = (c[2] + c[3]) / 2;
        const QPointF abc = (ab + bc) / 2, bcd = (bc + cd) / 2, mid = (abc + bcd) / 2;
        add({c[0], ab, abc, mid}, depth + 1);
        add({mid, bcd, cd, c[3]}, depth + 1);
    }
    std::vector<EdgeItem::Run> take() { return std::move(runs_); }

private:
    static constexpr int kMaxDepth = 12;
    QRectF rect_;
    std::vector<EdgeItem::Run> runs_;
    qreal along_ = 0;
    bool open_ = false;
};

} // namespace

std::optional<std::vector<EdgeItem::Run>> EdgeItem::visibleRuns(const QPainterPath& path,
                                                                const QRectF& rect) {
    const int count = path.elementCount();
    if (count == 0 || path.elementAt(0).type != QPainterPath::MoveToElement || (count - 1) % 3 != 0)
        return std::nullopt;
    RunCollector runs(rect);
    for (int i = 1; i < count; i += 3) {
        const QPainterPath::Element& e = path.elementAt(i);
        if (e.type != QPainterPath::CurveToElement ||
            path.elementAt(i + 1).type != QPainterPath::CurveToDataElement ||
            path.elementAt(i + 2).type != QPainterPath::CurveToDataElement)
            return std::nullopt;
        runs.add({QPointF(path.elementAt(i - 1)), QPointF(e), QPointF(path.elementAt(i + 1)),
                  QPointF(path.elementAt(i + 2))});
    }
    return runs.take();
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) {
    painter->setPen(pen());
    painter->setBrush(Qt::NoBrush);
    // The stroker outlines and fills the whole curve, on screen or not: a long edge of a big ladder costs
    // tens of milliseconds a frame. On screen (raster), only the stretches near the visible area are
    // stroked; printed and exported views keep the whole curve.
    const QPainterPath& route = path();
    const QPaintEngine* engine = painter->paintEngine();
    bool invertible = false;
    const QTransform toItem = painter->worldTransform().inverted(&invertible);
    QRectF visible;
    if (engine && engine->type() == QPaintEngine::Raster && invertible) {
        visible = toItem.mapRect(QRectF(painter->window()));
        if (painter->hasClipping())
            visible &= painter->clipBoundingRect();
        // Room for the widest join and cap of the pen, and a few device pixels for antialiasing.
        const qreal scale = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
        const qreal margin = 4 * std::max<qreal>(pen().widthF(), 1) + (scale > 0 ? 8 / scale : 8);
        visible.adjust(-margin, -margin, margin, margin);
    }
    const QRectF hull = route.controlPointRect();
    std::optional<std::vector<Run>> runs;
    if (visible.isValid() && !(visible.contains(hull.topLeft()) && visible.contains(hull.bottomRight())))
        runs = visibleRuns(route, visible);
    if (!runs) {
        painter->drawPath(route);
    } else if (pen().style() == Qt::SolidLine || runs->size() <= 1 || pen().widthF() <= 0) {
        // A dash pattern starts again at every subpath: a dashed run is shifted to where it lies on the
        // route.
        if (!runs->empty() && pen().style() != Qt::SolidLine && pen().widthF() > 0) {
            QPen shifted = pen();
            shifted.setDashOffset(pen().dashOffset() + runs->front().start / pen().widthF());
            painter->setPen(shifted);
        }
        QPainterPath shown;
        for (const Run& run : *runs)
            shown.addPath(run.path);
        painter->drawPath(shown);
        painter->setPen(pen());
    } else {
        for (const Run& run : *runs) {
            QPen shifted = pen();
            shifted.setDashOffset(pen().dashOffset() + run.start / pen().widthF());
            painter->setPen(shifted);
            painter->drawPath(run.path);
        }
        painter->setPen(pen());
    }
    if (!arrow_.isEmpty() &&
        QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform()) > 0.2) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(pen().color());
        painter->drawPolygon(arrow_);
    }
}

} // namespace jointscope::views
