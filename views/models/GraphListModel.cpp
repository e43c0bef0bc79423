#include "models/GraphListModel.h"

#include "models/ColumnTitles.h"

#include <QBrush>
#include <QColor>
#include <QFont>

#include <algorithm>
#include <map>

namespace jointscope::views {

GraphListModel::GraphListModel(QObject* parent) : QAbstractItemModel(parent) {}

void GraphListModel::setEntries(GraphList entries) {
    setEntries(std::make_shared<const GraphList>(std::move(entries)));
}

void GraphListModel::setEntries(std::shared_ptr<const GraphList> entries) {
    beginResetModel();
    // The same list again, grown (a log's list filling in while it is indexed): only its new entries are
    // placed, so that refreshing a list of 200k graphs four times a second stays cheap.
    const bool grown = entries && entries == entries_ && entries->size() >= placement_.size();
    if (!grown) {
        if (entries != entries_)
            loaded_.clear();
        entries_ = entries ? std::move(entries) : std::make_shared<const GraphList>();
        ranked_ = false;
        groups_.clear();
        groupOf_.clear();
        placement_.clear();
    }
    const GraphList& list = *entries_;
    placement_.reserve(list.size());
    // Groups in order of first appearance in the file.
    for (size_t i = placement_.size(); i < list.size(); ++i) {
        ranked_ = ranked_ || list.rank(i) >= 0;
        const std::string_view id = list.compileId(i);
        auto it = groupOf_.find(id);
        if (it == groupOf_.end()) {
            it = groupOf_.emplace(std::string(id), int(groups_.size())).first;
            groups_.push_back({QString::fromUtf8(id.data(), qsizetype(id.size())), {}});
        }
        Group& group = groups_[it->second];
        placement_.push_back({it->second, int(group.entries.size())});
        group.entries.push_back(i);
    }
    endResetModel();
}

uint64_t GraphListModel::nodesOf(size_t position) const {
    auto it = loaded_.find(position);
    return it != loaded_.end() ? it->second.nodes : entry(position).nodes;
}

std::string GraphListModel::errorOf(size_t position) const {
    auto it = loaded_.find(position);
    return it != loaded_.end() ? it->second.error : entry(position).error;
}

QString GraphListModel::kindLabel(const GraphEntry& entry, bool failed) {
    if (failed)
        return tr("failed");
    // The kinds of TORCH_LOGS pastes (LogPaste) and TORCH_TRACE logs (TraceLog) in the words torch prints.
    static const std::map<std::string, const char*> kLabels = {
        {"forward", "forward"},
        {"aot_forward_graph", "forward"},
        {"backward", "backward"},
        {"aot_backward_graph", "backward"},
        {"joint", "joint"},
        {"aot_joint_graph", "joint"},
        {"inference", "inference"},
        {"aot_inference_graph", "inference"},
        {"compiled_autograd", "compiled autograd"},
        {"compiled_autograd_graph", "compiled autograd"},
        {"graph_code", "dynamo graph"},
        {"dynamo_output_graph", "dynamo graph"},
    };
    const auto known = kLabels.find(entry.kind);
    return known != kLabels.end() ? tr(known->second) : QString::fromStdString(entry.kind);
}

QModelIndex GraphListModel::indexOfEntry(uint32_t entryIndex) const {
    // A file's own list holds entry N at position N; a list that filled in may start later.
    if (entryIndex < placement_.size() && entries_->entryIndex(entryIndex) == entryIndex)
        return createIndex(placement_[entryIndex].second, 0, quintptr(entryIndex + 1));
    for (size_t i = 0; i < placement_.size(); ++i)
        if (entries_->entryIndex(i) == entryIndex)
            return createIndex(placement_[i].second, 0, quintptr(i + 1));
    return {};
}

void GraphListModel::setLoaded(uint32_t entryIndex, uint64_t nodes, std::string error) {
    const QModelIndex row = indexOfEntry(entryIndex);
    if (!row.isValid())
        return;
    Loaded& loaded = loaded_[row.internalId() - 1];
    loaded.nodes = error.empty() ? nodes : 0;
    loaded.error = std::move(error);
    const int last = columnCount() - 1;
    emit dataChanged(row.siblingAtColumn(0), row.siblingAtColumn(last));
    emit dataChanged(row.parent().siblingAtColumn(0), row.parent().siblingAtColumn(last)); // "…, 1 failed"
}

QModelIndex GraphListModel::index(int row, int column, const QModelIndex& parent) const {
    if (row < 0 || column < 0 || column >= columnCount())
        return {};
    if (!parent.isValid())
        return row < int(groups_.size()) ? createIndex(row, column, quintptr(0)) : QModelIndex();
    if (parent.internalId() != 0 || parent.row() >= int(groups_.size()))
        return {};
    const Group& group = groups_[parent.row()];
    if (row >= int(group.entries.size()))
        return {};
    return createIndex(row, column, quintptr(group.entries[row] + 1));
}

QModelIndex GraphListModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == 0)
        return {};
    return createIndex(placement_[child.internalId() - 1].first, 0, quintptr(0));
}

int GraphListModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid())
        return int(groups_.size());
    if (parent.internalId() != 0 || parent.column() != 0)
        return 0;
    return int(groups_[parent.row()].entries.size());
}

int GraphListModel::columnCount(const QModelIndex&) const {
    return ranked_ ? ColumnCount : RankColumn;
}

QVariant GraphListModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid())
        return {};
    if (index.internalId() == 0) {
        const Group& group = groups_[index.row()];
        if (role == Qt::DisplayRole && index.column() == TitleColumn)
            return group.compileId.isEmpty() ? tr("(no compile id)") : tr("compile %1").arg(group.compileId);
        if (role == Qt::DisplayRole && index.column() == NodesColumn) {
            const int failed = int(std::count_if(group.entries.begin(), group.entries.end(),
                                                 [&](size_t i) { return !errorOf(i).empty(); }));
            const QString graphs = tr("%n graph(s)", nullptr, int(group.entries.size()));
            return failed ? tr("%1, %2 failed").arg(graphs).arg(failed) : graphs;
        }
        if (role == Qt::FontRole) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    }
    const size_t position = index.internalId() - 1;
    const GraphEntry e = entry(position);
    const std::string error = errorOf(position);
    switch (role) {
    case EntryIndexRole:
        return QVariant::fromValue(uint(e.index));
    case ErrorRole:
        return error.empty() ? QVariant() : QVariant(QString::fromStdString(error));
    case Qt::ToolTipRole:
        return error.empty() ? QString::fromStdString(e.title())
                             : QString::fromStdString(e.title() + "\n" + error);
    case Qt::ForegroundRole:
        return error.empty() ? QVariant() : QVariant(QBrush(QColor(0xc0, 0x1c, 0x28)));
    case Qt::DisplayRole:
        switch (Column(index.column())) {
        case TitleColumn:
            return QString::fromStdString(e.title());
        case KindColumn:
            return kindLabel(e, !error.empty());
        case NodesColumn: {
            const uint64_t nodes = nodesOf(position);
            return nodes && error.empty() ? QVariant::fromValue<qulonglong>(nodes) : QVariant();
        }
        case LineColumn:
            return e.line ? QVariant(uint(e.line)) : QVariant();
        case RankColumn:
            return e.rank >= 0 ? QVariant(int(e.rank)) : QVariant();
        case ColumnCount:
            break;
        }
        return {};
    default:
        return {};
    }
}

QVariant GraphListModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Graph"), tr("Kind"), tr("Nodes"), tr("Line"), tr("Rank")}, section, orientation,
                       role);
}

} // namespace jointscope::views
