// File › Export View: the canvas as SVG (QSvgGenerator) or PNG, at full detail whatever the zoom.
#pragma once

#include "support/Diagnostic.h"

#include <QString>

class QGraphicsScene;

namespace jointscope::views {

// Renders the whole scene at 1:1 so every visible node's labels are drawn as text; the error names the file
// when it cannot be written.
Expected<Done> exportSceneSvg(QGraphicsScene& scene, const QString& path, const QString& title);
// At `scale`, reduced so that neither side exceeds 16384 pixels.
Expected<Done> exportScenePng(QGraphicsScene& scene, const QString& path, double scale = 1.0);

} // namespace jointscope::views
