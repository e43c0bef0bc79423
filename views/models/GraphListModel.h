// The graphs of a multi-graph file (TORCH_TRACE log, TORCH_LOGS paste) grouped by compile id. The model
// shares the file's list of entries (a log of 200k graphs is not copied); what loading a graph finds is kept
// beside it.
#pragma once

#include "io/GraphList.h"

#include <QAbstractItemModel>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
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
    static QString kindLabel(const GraphEntry& entry, bool failed);

    explicit GraphListModel(QObject* parent = nullptr);

    // `entries` stays as it is while the model shows it (GraphFile::sharedGraphs); setEntries again after
    // entries were appended to it.
    void setEntries(std::shared_ptr<const GraphList> entries);
    void setEntries(GraphList entries);
    // What loading entry `entryIndex` found (a log's graphs are parsed only when picked): its node count, or
    // the located error that says why it does not read (the row is then marked failed).
    void setLoaded(uint32_t entryIndex, uint64_t nodes, std::string error = {});
    size_t entryCount() const { return placement_.size(); }
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
    struct Loaded {
        uint64_t nodes = 0;
        std::string error;
    };
    GraphEntry entry(size_t position) const { return (*entries_)[position]; }
    uint64_t nodesOf(size_t position) const;
    std::string errorOf(size_t position) const;

    // internalId: 0 for groups, 1 + position in entries_ for graphs.
    std::shared_ptr<const GraphList> entries_;
    std::unordered_map<size_t, Loaded> loaded_; // position -> what loading found
    bool ranked_ = false;
    std::vector<Group> groups_;
    std::map<std::string, int, std::less<>> groupOf_; // compile id -> group
    std::vector<std::pair<int, int>> placement_; // entry position -> (group, row)
};

} // namespace jointscope::views
