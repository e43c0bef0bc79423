// File › Open Recent: the last files opened, newest first, kept in the user's settings.
#pragma once

#include <QObject>
#include <QString>

#include <functional>

class QMenu;

namespace jointscope::gui {

class RecentFiles : public QObject {
    Q_OBJECT
public:
    // Fills `menu` (owned by the caller); picking an entry calls `open` with its path.
    RecentFiles(QMenu* menu, std::function<void(const QString&)> open, QObject* parent = nullptr);

    void add(const QString& path); // to the top, once
    void refresh();                // the menu from the settings

private:
    QMenu* menu_;
    std::function<void(const QString&)> open_;
};

} // namespace jointscope::gui
