// Where export dialogs open: the folder of the last export (kept in the settings across runs), else the
// folder of the document being exported. One place for every File › Export dialog.
#pragma once

#include <QString>

namespace jointscope::gui {

// The folder to offer for an export of `documentPath`.
QString exportFolder(const QString& documentPath);
// Records the folder of `exportedPath` for the next export dialog.
void rememberExportFolder(const QString& exportedPath);

} // namespace jointscope::gui
