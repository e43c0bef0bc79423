// The graphs of a multi-graph file (TORCH_TRACE log, TORCH_LOGS paste) grouped by compile id.
#pragma once

#include "io/GraphEntry.h"

#include <QAbstractItemModel>

#include <cstdint>
#include <vector>

namespace jointscope::views {

class GraphListModel : public QAbstractItemModel {
    Q_OBJECT
public:
    // RankColumn only for a folder of per-rank logs (some entry has a rank): columnCount() stops before it
    // otherwise.
    enum Column { TitleColumn, KindColumn, NodesColumn, LineColumn, RankColumn, ColumnCount };
    enum Role {
        EntryIndexRole = Qt::UserRole + 1, // GraphEntry::index for graph rows; invalid for group rows
        ErrorRole, // a failed graph's located parse error (GraphEntry::error); else invalid
    };

    // What the Kind column says: "forward", "backward", "joint", "compiled autograd", "dynamo graph", ... or
    // "failed" for a graph that does not read.
    static QString kindLabel(const GraphEntry& entry);

    explicit GraphListModel(QObject* parent = nullptr);

    void setEntries(std::vector<GraphEntry> entries);
    // What loading entry `entryIndex` found (a log's graphs are parsed only when picked): its node count, or
    // the located error that says why it does not read (the row is then marked failed).
    void setLoaded(uint32_t entryIndex, uint64_t nodes, std::string error = {});
    size_t entryCount() const { return entries_.size(); }
    int groupCount() const { return int(groups_.size()); }
    // Index of the row showing entry `entryIndex` (GraphEntry::index); invalid when absent.
    QModelIndex indexOfEntry(uint32_t entryIndex) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Group {
        QString compileId;
        std::vector<size_t> entries; // positions in entries_
    };
    // internalId: 0 for groups, 1 + position in entries_ for graphs.
    std::vector<GraphEntry> entries_;
    bool ranked_ = false;
    std::vector<Group> groups_;
    std::vector<std::pair<int, int>> placement_; // entry position -> (group, row)
};

} // namespace jointscope::views
