// Header text of the table and tree models: each model lists its column titles once, in column order.
#pragma once

#include <QStringList>
#include <QVariant>

namespace jointscope::views {

// The title of horizontal header `section`; no data for another orientation or role, or a section past
// `titles`.
inline QVariant columnTitle(const QStringList& titles, int section, Qt::Orientation orientation, int role) {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section < 0 || section >= titles.size())
        return {};
    return titles[section];
}

} // namespace jointscope::views
