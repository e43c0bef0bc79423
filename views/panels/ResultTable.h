// The look of the result tables (node list, profile, validation): whole rows selected one at a time, no row
// numbers, compact rows, the last column stretched, no wrapping, sortable by a header click.
#pragma once

#include <QHeaderView>
#include <QTableView>

namespace jointscope::views {

// Applies that look; sorted by `sortColumn` (-1: the model's order until a header is clicked).
inline void styleResultTable(QTableView* table, int sortColumn, Qt::SortOrder order) {
    table->setSortingEnabled(true);
    table->sortByColumn(sortColumn, order);
    table->setSelectionBehavior(QAbstractItemView::SelectRows);
    table->setSelectionMode(QAbstractItemView::SingleSelection);
    table->verticalHeader()->setVisible(false);
    table->verticalHeader()->setDefaultSectionSize(20);
    table->horizontalHeader()->setStretchLastSection(true);
    table->setWordWrap(false);
}

} // namespace jointscope::views
