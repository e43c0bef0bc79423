// File › Export View: the canvas as SVG (QSvgGenerator) or PNG, at full detail whatever the zoom.
#pragma once

#include <QString>

class QGraphicsScene;

namespace jointscope::views {

// Renders the whole scene at 1:1 so every visible node's labels are drawn as text. False with `error` set
// when the file cannot be written.
bool exportSceneSvg(QGraphicsScene& scene, const QString& path, const QString& title,
                    QString* error = nullptr);
// At `scale`, reduced so that neither side exceeds 16384 pixels.
bool exportScenePng(QGraphicsScene& scene, const QString& path, double scale = 1.0, QString* error = nullptr);

} // namespace jointscope::views
