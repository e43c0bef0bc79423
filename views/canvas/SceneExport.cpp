#include "canvas/SceneExport.h"

#include <QFile>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>

#include <algorithm>

namespace jointscope::views {

bool exportSceneSvg(QGraphicsScene& scene, const QString& path, const QString& title, QString* error) {
    const QRectF rect = scene.sceneRect();
    {
        // QSvgGenerator reports nothing on failure: check that the file can be written first.
        QFile probe(path);
        if (!probe.open(QIODevice::WriteOnly)) {
            if (error)
                *error = probe.errorString();
            return false;
        }
    }
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setTitle(title);
    svg.setDescription(QStringLiteral("jointscope canvas"));
    svg.setSize(rect.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), rect.size()));
    QPainter painter;
    if (!painter.begin(&svg)) {
        if (error)
            *error = QStringLiteral("cannot paint into %1").arg(path);
        return false;
    }
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    scene.render(&painter, QRectF(QPointF(0, 0), rect.size()), rect);
    painter.end();
    return true;
}

bool exportScenePng(QGraphicsScene& scene, const QString& path, double scale, QString* error) {
    const QRectF rect = scene.sceneRect();
    const double largest = std::max(rect.width(), rect.height()) * scale;
    if (largest > 16384)
        scale *= 16384 / largest;
    QImage image((rect.size() * scale).toSize().expandedTo(QSize(1, 1)), QImage::Format_ARGB32);
    if (image.isNull()) {
        if (error)
            *error = QStringLiteral("out of memory for a %1×%2 image").arg(image.width()).arg(image.height());
        return false;
    }
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        scene.render(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())), rect);
    }
    if (!image.save(path, "PNG")) {
        if (error)
            *error = QStringLiteral("cannot write %1").arg(path);
        return false;
    }
    return true;
}

} // namespace jointscope::views
