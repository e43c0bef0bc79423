#include "ExportFolder.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace jointscope::gui {

namespace {
constexpr char kKey[] = "export/folder";
} // namespace

QString exportFolder(const QString& documentPath) {
    const QString remembered = QSettings().value(QLatin1String(kKey)).toString();
    if (!remembered.isEmpty() && QDir(remembered).exists())
        return remembered;
    return documentPath.isEmpty() ? QDir::homePath() : QFileInfo(documentPath).absolutePath();
}

void rememberExportFolder(const QString& exportedPath) {
    QSettings().setValue(QLatin1String(kKey), QFileInfo(exportedPath).absolutePath());
}

} // namespace jointscope::gui
