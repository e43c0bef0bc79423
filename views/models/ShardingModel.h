// The Sharding dock's table: the plan's totals against the replicate / data-parallel baselines, then one row
// per placed node (output and input placements, compute and communication cost, who pinned it). With a
// stored plan it also shows that plan's placement beside the current one, and can list only the nodes whose
// placements differ. Rows naming a node carry its id in the graph given.
#pragma once

#include "graph/Graph.h"
#include "models/FlatTreeModel.h"
#include "models/NodeFormat.h"
#include "sharding/PlanReport.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace jointscope::views {

// One row of the Sharding dock: a text and, for costs, a number per column.
struct ShardingRow {
    static constexpr int kColumns = 10;
    QString text[kColumns];
    double value[kColumns] = {};
    bool numeric[kColumns] = {};
    NodeId ref = kNoNode;
    bool differs = false;
};

class ShardingModel : public FlatTreeModel<ShardingRow> {
    Q_OBJECT
public:
    enum Column {
        NodeColumn,
        OutputColumn,
        InputsColumn,
        TotalColumn,   // µs
        ComputeColumn, // µs
        CommColumn,    // µs, the redistributions of the node's inputs
        PinnedColumn,
        OpColumn,
        StoredOutputColumn,
        StoredTotalColumn,
        ColumnCount
    };
    enum Role {
        NodeIdRole = Qt::UserRole + 1, // NodeId; invalid for rows naming no node
        ValueRole,                     // cost columns: the number in µs (sorting); else the display text
    };

    explicit ShardingModel(QObject* parent = nullptr);

    // `graph` names the report's NodeIds and must outlive the model or be replaced; `pinnedBy` maps node
    // names to the pin's origin ("you", "local_map").
    void setPlan(const Graph* graph, std::shared_ptr<const sharding::PlanReport> current,
                 std::map<std::string, std::string> pinnedBy, std::optional<sharding::PlanCost> replicate,
                 std::optional<sharding::PlanCost> dataParallel);
    // The plan compared against (same graph); null drops the comparison.
    void setStored(std::shared_ptr<const sharding::PlanReport> stored);
    // Only the nodes whose output or input placements differ from the stored plan's.
    void setDifferencesOnly(bool on);
    bool differencesOnly() const { return differencesOnly_; }
    void clear();

    // Top-level section row by title ("Totals", "Nodes"); -1 when absent.
    int sectionRow(const QString& title) const;
    // The row of node `name` (column `column`) under "Nodes"; invalid when it is not listed.
    QModelIndex nodeIndex(const QString& name, int column = NodeColumn) const;
    // The row of a total ("plan", "replicate", "data parallel", "stored plan"), column `column`.
    QModelIndex totalIndex(const QString& key, int column = TotalColumn) const;
    int differenceCount() const { return differences_; }

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant itemData(const Item& item, int column, int role) const override;
    int add(int parent) { return addItem(parent); }
    void setCost(Item& item, int column, double us);
    void rebuild();

    const Graph* graph_ = nullptr;
    std::shared_ptr<const sharding::PlanReport> current_, stored_;
    std::map<std::string, std::string> pinnedBy_;
    std::optional<sharding::PlanCost> replicate_, dataParallel_;
    bool differencesOnly_ = false;
    int differences_ = 0;
};

// "S(0)R"; "(S(0)R, RR)" for several; "—" for none (sharding::formatPlacements).
inline QString formatPlacements(const std::vector<sharding::Placements>& placements) {
    return toQString(sharding::formatPlacements(placements));
}

} // namespace jointscope::views
