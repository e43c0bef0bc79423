// Flat table of one graph's nodes: name, op, target, shape, dtype, bytes, pass.
#pragma once

#include "graph/Graph.h"
#include "models/NodeFormat.h"

#include <QAbstractTableModel>

#include <vector>

namespace jointscope::views {

class NodeTableModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { NameColumn, OpColumn, TargetColumn, ShapeColumn, DTypeColumn, BytesColumn, PassColumn, ColumnCount };
    enum Role {
        NodeIdRole = Qt::UserRole + 1, // NodeId of the row
        SortRole,                      // numeric for bytes, text elsewhere
        NodeRoleRole,                  // int(NodeRole)
        SearchTextRole,                // "name op target" for regex search
    };

    explicit NodeTableModel(QObject* parent = nullptr);

    // The graph must outlive the model or be replaced first; nullptr clears. `roles`, when given, are
    // classifyNodes(*graph) already computed (the canvas has them): classifying 100k nodes twice stalls.
    void setGraph(const Graph* graph, std::vector<NodeRole> roles = {});
    const Graph* graph() const { return graph_; }
    NodeRole nodeRole(NodeId id) const { return roles_[id]; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    const Graph* graph_ = nullptr;
    std::vector<NodeRole> roles_;
};

} // namespace jointscope::views
