// A table of result rows kept as one vector and replaced as a whole: derived models fill `rows_` (inside
// begin / endResetModel) and give what a row shows in each column (rowData) and their headers.
#pragma once

#include <QAbstractTableModel>

#include <vector>

namespace jointscope::views {

template <typename Row> class RowTableModel : public QAbstractTableModel {
public:
    RowTableModel(int columns, QObject* parent) : QAbstractTableModel(parent), columns_(columns) {}

    const std::vector<Row>& rows() const { return rows_; }

    int rowCount(const QModelIndex& parent = {}) const override {
        return parent.isValid() ? 0 : int(rows_.size());
    }
    int columnCount(const QModelIndex& parent = {}) const override { return parent.isValid() ? 0 : columns_; }
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override {
        if (!index.isValid() || size_t(index.row()) >= rows_.size())
            return {};
        return rowData(rows_[size_t(index.row())], index.column(), role);
    }

protected:
    // What `row` shows in `column` for `role`.
    virtual QVariant rowData(const Row& row, int column, int role) const = 0;

    std::vector<Row> rows_;

private:
    int columns_;
};

} // namespace jointscope::views
