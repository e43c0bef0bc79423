#include "canvas/Minimap.h"

#include <QGraphicsScene>
#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>

namespace jointscope::views {

Minimap::Minimap(QGraphicsView* view) : QWidget(view), view_(view) {
    setFixedSize(240, 170);
    setCursor(Qt::PointingHandCursor);
    setToolTip(tr("Overview: drag the rectangle to move the view"));
    refreshTimer_.setSingleShot(true);
    refreshTimer_.setInterval(120);
    connect(&refreshTimer_, &QTimer::timeout, this, &Minimap::refresh);
}

void Minimap::follow(QGraphicsScene* scene) {
    if (scene_ == scene)
        return;
    if (scene_)
        disconnect(scene_, nullptr, this, nullptr);
    scene_ = scene;
    // GraphScene blocks its signals while it rebuilds, so sceneRectChanged may never come; changed() is
    // emitted later from the event loop. A new layout shows as a new scene rect.
    if (scene_)
        connect(scene_, &QGraphicsScene::changed, this, [this] {
            if (scene_ && scene_->sceneRect() != shown_)
                refreshTimer_.start();
        });
    refreshTimer_.start();
}

void Minimap::refresh() {
    follow(view_->scene());
    picture_ = QPixmap();
    shown_ = scene_ ? scene_->sceneRect() : QRectF();
    if (!scene_ || shown_.isEmpty() || scene_->items().isEmpty()) {
        update();
        return;
    }
    const QRectF area = QRectF(rect()).adjusted(4, 4, -4, -4);
    QSizeF size = shown_.size();
    size.scale(area.size(), Qt::KeepAspectRatio);
    target_ = QRectF(area.center() - QPointF(size.width() / 2, size.height() / 2), size);
    const qreal dpr = devicePixelRatioF();
    picture_ = QPixmap((size * dpr).toSize().expandedTo(QSize(1, 1)));
    picture_.setDevicePixelRatio(dpr);
    picture_.fill(scene_->backgroundBrush().color());
    QPainter painter(&picture_);
    painter.setRenderHint(QPainter::Antialiasing);
    scene_->render(&painter, QRectF(QPointF(0, 0), size), shown_);
    update();
}

QRectF Minimap::viewportOnMap() const {
    if (shown_.isEmpty() || target_.isEmpty())
        return {};
    const QRectF visible = view_->mapToScene(view_->viewport()->rect()).boundingRect();
    const double sx = target_.width() / shown_.width(), sy = target_.height() / shown_.height();
    return QRectF(target_.left() + (visible.left() - shown_.left()) * sx,
                  target_.top() + (visible.top() - shown_.top()) * sy, visible.width() * sx,
                  visible.height() * sy)
        .intersected(target_);
}

void Minimap::centreViewAt(QPointF pos) {
    if (shown_.isEmpty() || target_.isEmpty())
        return;
    const double x = shown_.left() + (pos.x() - target_.left()) * shown_.width() / target_.width();
    const double y = shown_.top() + (pos.y() - target_.top()) * shown_.height() / target_.height();
    view_->centerOn(x, y);
    update();
}

void Minimap::paintEvent(QPaintEvent*) {
    if (view_->scene() != scene_)
        follow(view_->scene());
    QPainter painter(this);
    painter.setPen(QColor(0x94, 0xa3, 0xb8));
    painter.setBrush(QColor(255, 255, 255, 235));
    painter.drawRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
    if (picture_.isNull())
        return;
    painter.drawPixmap(target_.topLeft(), picture_);
    const QRectF viewport = viewportOnMap();
    painter.setPen(QPen(QColor(0xdc, 0x26, 0x26), 1.5));
    painter.setBrush(QColor(0xdc, 0x26, 0x26, 40));
    painter.drawRect(viewport.isEmpty() ? target_ : viewport);
}

void Minimap::mousePressEvent(QMouseEvent* event) {
    centreViewAt(event->position());
    event->accept();
}

void Minimap::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton)
        centreViewAt(event->position());
    event->accept();
}

} // namespace jointscope::views
