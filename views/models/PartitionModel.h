// The Partition dock's tree: a summary of the engine's decision, the difference from torch's own decision
// when the file records one, and what the last edit changed. Rows naming a node carry its id in the graph
// shown.
#pragma once

#include "graph/Graph.h"
#include "models/FlatTreeModel.h"
#include "partition/CompileSettings.h"
#include "partition/Partitioner.h"
#include "partition/PinConflicts.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace jointscope::views {

struct PartitionRow {
    QString key;
    QString value;
    NodeId ref = kNoNode;
    bool names = false; // key is a node name
};

class PartitionModel : public FlatTreeModel<PartitionRow> {
    Q_OBJECT
public:
    enum Column { KeyColumn, ValueColumn, ColumnCount };
    enum Role {
        NodeIdRole = Qt::UserRole + 1, // NodeId in the graph shown; invalid for rows naming no node
        NodeNameRole,                  // node name (also when the shown graph lacks it)
    };

    explicit PartitionModel(QObject* parent = nullptr);

    // `shown` resolves names to ids (it may differ from current->graph, which is after DCE / CSE);
    // `torchSaved` is torch's recorded saved set; `previous` the result before the last re-solve. All may be
    // null / empty.
    void setPartition(const Graph* shown, std::shared_ptr<const partition::Partition> current,
                      double recomputeCost, std::shared_ptr<const partition::Partition> previous,
                      std::optional<std::vector<std::string>> torchSaved);
    void clear();
    // The pins the next setPartition's decision contradicts: a summary row and a section that warn.
    void setPinConflicts(std::vector<partition::PinConflict> conflicts) {
        pinConflicts_ = std::move(conflicts);
    }

    // Peak activation bytes of the decision and of torch's (memory timeline), shown in the summary by the
    // next setPartition ("Peak memory", "Torch's peak memory"); nullopt: not known.
    void setPeakBytes(std::optional<uint64_t> ours, std::optional<uint64_t> torchs) {
        peakBytes_ = ours;
        torchPeakBytes_ = torchs;
    }

    // The graph is a logged compile: what the log set and what inductor's joint-graph passes (replayed before
    // partitioning) changed, shown by the next setPartition ("Log settings", "Joint-graph passes"); nullopt:
    // not from a log.
    void setLoggedRun(std::optional<partition::LoggedRun> run) { loggedRun_ = std::move(run); }

    // Top-level section row by title ("Summary", "Pins the solve overrode", "Torch saves, jointscope does
    // not", "jointscope saves, torch does not", "Became saved", "No longer saved", "Became recomputed"); -1
    // when absent.
    int sectionRow(const QString& title) const;
    // Node names listed under a section, in row order.
    QStringList sectionNodes(const QString& title) const;
    // Value of a summary row by key ("Saved", "Recomputed", ...); empty when absent.
    QString summaryValue(const QString& key) const;

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant itemData(const Item& item, int column, int role) const override;
    int add(int parent, QString key, QString value = {}) {
        return addItem(parent, {std::move(key), std::move(value)});
    }
    void addNodes(const QString& title, const std::vector<std::string>& names, const QString& detail);
    void addNode(int section, const std::string& name, const QString& detail); // a row naming a node
    void addLoggedRun(const partition::LoggedRun& run);

    const Graph* shown_ = nullptr;
    std::vector<partition::PinConflict> pinConflicts_;
    std::optional<uint64_t> peakBytes_, torchPeakBytes_;
    std::optional<partition::LoggedRun> loggedRun_;
};

} // namespace jointscope::views
