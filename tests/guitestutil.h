// Helpers shared by the window-level suites (tst_gui_*).
#pragma once

#include <QCoreApplication>
#include <QSettings>
#include <QTemporaryDir>

namespace jointscope::test {

// Before the first QSettings: the window's settings, autosave, data and profile DB go to `dir`, never to the
// user's own. Without `dir` the suite stops here: it would write into the user's own folders.
inline void isolateUserDirs(const QTemporaryDir& dir, const QString& application) {
    if (!dir.isValid())
        qFatal("no temporary folder for %s: %s", qPrintable(application), qPrintable(dir.errorString()));
    QCoreApplication::setOrganizationName(QStringLiteral("jointscope-test"));
    QCoreApplication::setApplicationName(application);
    QSettings::setDefaultFormat(QSettings::IniFormat);
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, dir.filePath(QStringLiteral("config")));
    qputenv("XDG_CONFIG_HOME", dir.filePath(QStringLiteral("config")).toLocal8Bit());
    qputenv("XDG_DATA_HOME", dir.filePath(QStringLiteral("data")).toLocal8Bit());
    qputenv("JOINTSCOPE_PROFILE_DB", dir.filePath(QStringLiteral("profiles.sqlite")).toLocal8Bit());
}

} // namespace jointscope::test
