#include "RecentFiles.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace jointscope::gui {
namespace {

constexpr int kMaxRecentFiles = 10;
const QString kKey = QStringLiteral("recentFiles");

} // namespace

RecentFiles::RecentFiles(QMenu* menu, std::function<void(const QString&)> open, QObject* parent)
    : QObject(parent), menu_(menu), open_(std::move(open)) {
    refresh();
}

void RecentFiles::add(const QString& path) {
    QSettings settings;
    QStringList files = settings.value(kKey).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    files.removeAll(absolute);
    files.prepend(absolute);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    settings.setValue(kKey, files);
    refresh();
}

void RecentFiles::refresh() {
    menu_->clear();
    const QStringList files = QSettings().value(kKey).toStringList();
    for (const QString& path : files)
        menu_->addAction(QFileInfo(path).fileName() + QStringLiteral("  —  ") +
                             QFileInfo(path).absolutePath(),
                         this, [this, path] { open_(path); });
    menu_->setEnabled(!files.isEmpty());
}

} // namespace jointscope::gui
