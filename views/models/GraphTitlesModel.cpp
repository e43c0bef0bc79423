#include "models/GraphTitlesModel.h"

namespace jointscope::views {

GraphTitlesModel::GraphTitlesModel(QObject* parent) : QAbstractListModel(parent) {}

void GraphTitlesModel::setEntries(std::shared_ptr<const GraphList> entries, QString prefix) {
    beginResetModel();
    entries_ = std::move(entries);
    prefix_ = std::move(prefix);
    endResetModel();
}

int GraphTitlesModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !entries_ ? 0 : int(entries_->size());
}

QVariant GraphTitlesModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !entries_ || size_t(index.row()) >= entries_->size())
        return {};
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return {};
    const GraphEntry entry = (*entries_)[size_t(index.row())];
    return prefix_ + QStringLiteral("%1: %2").arg(entry.index).arg(QString::fromStdString(entry.title()));
}

} // namespace jointscope::views
