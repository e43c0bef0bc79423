// Property tree of one node: op, target, arguments (with node references), tensors, meta, stack trace, users.
#pragma once

#include "graph/Graph.h"
#include "models/FlatTreeModel.h"

#include <QStringList>

#include <functional>
#include <optional>
#include <vector>

namespace jointscope::views {

// A node's place in the partition, as the engine explains it (partition::explainNode), plus the user's pin.
struct PartitionFacts {
    QString decision, rule, banReason, policy, pin;
    QString weight; // "inf" when it cannot be saved, empty when it has no node edge
    qint64 distFromBw = 0;
    quint64 bytes = 0;
};
using PartitionFactsFn = std::function<std::optional<PartitionFacts>(NodeId)>;

// A node's place in the sharding plan: its placements, costs, pin and the engine's explanation.
struct ShardingFacts {
    QString output, inputs, compute, comm, pinnedBy, explanation;
    QStringList transitions; // "from producer: all-gather 12 µs"
    int options = 0;         // how many strategies the node has
};
using ShardingFactsFn = std::function<std::optional<ShardingFacts>(NodeId)>;

struct InspectorRow {
    QString key;
    QString value;
    NodeId ref = kNoNode;
};

class InspectorModel : public FlatTreeModel<InspectorRow> {
    Q_OBJECT
public:
    enum Column { KeyColumn, ValueColumn, ColumnCount };
    enum Role {
        NodeRefRole = Qt::UserRole + 1, // NodeId a row refers to (argument, user); invalid when none
    };

    explicit InspectorModel(QObject* parent = nullptr);

    // Shows `node` of `graph` (which must outlive the model or be replaced); kNoNode clears.
    void setNode(const Graph* graph, NodeId node);
    // Facts for a "Partition" section of the node shown (ids of the graph given to setNode); null removes it.
    void setPartitionFacts(PartitionFactsFn facts);
    // Facts for a "Sharding" section of the node shown; null removes it.
    void setShardingFacts(ShardingFactsFn facts);
    NodeId node() const { return node_; }
    // Top-level section row by title ("Node", "Arguments", "Tensor", "Meta", "Stack trace", "Users"); -1 if
    // absent.
    int sectionRow(const QString& title) const;

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant itemData(const Item& item, int column, int role) const override;
    int add(int parent, QString key, QString value = {}, NodeId ref = kNoNode) {
        return addItem(parent, {std::move(key), std::move(value), ref});
    }
    void addValue(int parent, const QString& key, const Value& value);
    void build();
    void buildPartition();
    void buildSharding();

    const Graph* graph_ = nullptr;
    NodeId node_ = kNoNode;
    PartitionFactsFn partitionFacts_;
    ShardingFactsFn shardingFacts_;
};

} // namespace jointscope::views
