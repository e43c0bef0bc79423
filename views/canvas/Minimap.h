// Overview of the whole scene in a corner of the canvas; the view's viewport is a rectangle on it that the
// mouse drags. The scene picture is cached and re-rendered only when the scene's rect changes (a new layout).
#pragma once

#include <QPixmap>
#include <QPointer>
#include <QTimer>
#include <QWidget>

class QGraphicsScene;
class QGraphicsView;

namespace jointscope::views {

class Minimap : public QWidget {
    Q_OBJECT
public:
    explicit Minimap(QGraphicsView* view);

    // Re-renders the scene picture now (tests; otherwise it follows the scene).
    void refresh();
    // The part of the map that shows the scene, and the viewport rectangle on it (widget coordinates).
    QRectF mapRect() const { return target_; }
    QRectF viewportOnMap() const;
    // Centres the view on the scene point under map position `pos`.
    void centreViewAt(QPointF pos);

protected:
    void paintEvent(QPaintEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;

private:
    void follow(QGraphicsScene* scene);

    QGraphicsView* view_;
    QPointer<QGraphicsScene> scene_;
    QPixmap picture_;
    QRectF shown_;  // scene rect the picture shows
    QRectF target_; // where it is drawn
    QTimer refreshTimer_;
};

} // namespace jointscope::views
