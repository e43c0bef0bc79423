#include "canvas/SceneExport.h"

#include <QFile>
#include <QGraphicsScene>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>

#include <algorithm>

namespace jointscope::views {
namespace {

Diagnostic cannotWrite(const QString& path, const QString& why) {
    return makeError({path.toStdString()}, why.toStdString());
}

} // namespace

Expected<Done> exportSceneSvg(QGraphicsScene& scene, const QString& path, const QString& title) {
    const QRectF rect = scene.sceneRect();
    {
        // QSvgGenerator reports nothing on failure: check that the file can be written first.
        QFile probe(path);
        if (!probe.open(QIODevice::WriteOnly))
            return cannotWrite(path, probe.errorString());
    }
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setTitle(title);
    svg.setDescription(QStringLiteral("jointscope canvas"));
    svg.setSize(rect.size().toSize());
    svg.setViewBox(QRectF(QPointF(0, 0), rect.size()));
    QPainter painter;
    if (!painter.begin(&svg))
        return cannotWrite(path, QStringLiteral("cannot paint into it"));
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    scene.render(&painter, QRectF(QPointF(0, 0), rect.size()), rect);
    painter.end();
    return Done{};
}

Expected<Done> exportScenePng(QGraphicsScene& scene, const QString& path, double scale) {
    const QRectF rect = scene.sceneRect();
    const double largest = std::max(rect.width(), rect.height()) * scale;
    if (largest > 16384)
        scale *= 16384 / largest;
    QImage image((rect.size() * scale).toSize().expandedTo(QSize(1, 1)), QImage::Format_ARGB32);
    if (image.isNull())
        return cannotWrite(
            path, QStringLiteral("out of memory for a %1×%2 image").arg(image.width()).arg(image.height()));
    image.fill(Qt::white);
    {
        QPainter painter(&image);
        painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
        scene.render(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())), rect);
    }
    if (!image.save(path, "PNG"))
        return cannotWrite(path, QStringLiteral("cannot write it"));
    return Done{};
}

} // namespace jointscope::views
