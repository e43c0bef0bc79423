// The "Nodes" dock: the level shown on the canvas as a table (name, op, target, shape, dtype, bytes, pass)
// with a filter; the row of the node selected on the canvas follows it, and a row picked selects its node.
#pragma once

#include "graph/Graph.h"
#include "models/NodeFormat.h"

#include <QWidget>

#include <vector>

class QSortFilterProxyModel;
class QTableView;

namespace jointscope::views {

class NodeTableModel;

class NodeTablePanel : public QWidget {
    Q_OBJECT
public:
    explicit NodeTablePanel(QWidget* parent = nullptr);

    // As NodeTableModel::setGraph; the columns fit the new rows.
    void setGraph(const Graph* graph, std::vector<NodeRole> roles = {});
    // Makes node `id`'s row current and shows it, without nodePicked.
    void showNode(NodeId id);

signals:
    void nodePicked(jointscope::NodeId id); // by the user, in the table

private:
    NodeTableModel* model_;
    QSortFilterProxyModel* proxy_;
    QTableView* table_;
    bool showing_ = false; // showNode moves the current row
};

} // namespace jointscope::views
