// Property tree of one node: op, target, arguments (with node references), tensors, meta, stack trace, users.
#pragma once

#include "graph/Graph.h"

#include <QAbstractItemModel>

#include <vector>

namespace jointscope::views {

class InspectorModel : public QAbstractItemModel {
    Q_OBJECT
public:
    enum Column { KeyColumn, ValueColumn, ColumnCount };
    enum Role {
        NodeRefRole = Qt::UserRole + 1, // NodeId a row refers to (argument, user); invalid when none
    };

    explicit InspectorModel(QObject* parent = nullptr);

    // Shows `node` of `graph` (which must outlive the model or be replaced); kNoNode clears.
    void setNode(const Graph* graph, NodeId node);
    NodeId node() const { return node_; }
    // Top-level section row by title ("Node", "Arguments", "Tensor", "Meta", "Stack trace", "Users"); -1 if absent.
    int sectionRow(const QString& title) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    struct Item {
        QString key;
        QString value;
        int parent = -1;
        int row = 0;
        NodeId ref = kNoNode;
        std::vector<int> children;
    };
    int add(int parent, QString key, QString value = {}, NodeId ref = kNoNode);
    void addValue(int parent, const QString& key, const Value& value);
    void build();

    const Graph* graph_ = nullptr;
    NodeId node_ = kNoNode;
    std::vector<Item> items_; // items_[0] is the invisible root
};

} // namespace jointscope::views
