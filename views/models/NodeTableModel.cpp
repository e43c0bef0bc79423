#include "models/NodeTableModel.h"

#include "models/ColumnTitles.h"

#include <QBrush>

namespace jointscope::views {

NodeTableModel::NodeTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void NodeTableModel::setGraph(const Graph* graph, std::vector<NodeRole> roles) {
    beginResetModel();
    graph_ = graph;
    if (!graph)
        roles_.clear();
    else if (roles.size() == graph->size())
        roles_ = std::move(roles);
    else
        roles_ = classifyNodes(*graph);
    endResetModel();
}

int NodeTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !graph_ ? 0 : int(graph_->size());
}

int NodeTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant NodeTableModel::data(const QModelIndex& index, int role) const {
    if (!graph_ || !index.isValid() || index.row() >= rowCount())
        return {};
    const NodeId id = NodeId(index.row());
    const Node& node = graph_->node(id);
    switch (role) {
    case NodeIdRole: return QVariant::fromValue(uint(id));
    case NodeRoleRole: return int(roles_[id]);
    case SearchTextRole:
        return QString::fromStdString(node.name + ' ' + std::string(nodeOpName(node.op)) + ' ' + node.target.text);
    case Qt::ToolTipRole:
        if (index.column() == TargetColumn)
            return QString::fromStdString(node.target.text);
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == BytesColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::DecorationRole:
        if (index.column() == NameColumn)
            return roleColors(roles_[id]).border;
        return {};
    case SortRole:
        if (index.column() == BytesColumn)
            return QVariant::fromValue<qulonglong>(outputBytes(node).value_or(0));
        if (index.column() == NameColumn)
            return int(id); // graph order
        [[fallthrough]];
    case Qt::DisplayRole:
        switch (Column(index.column())) {
        case NameColumn: return QString::fromStdString(node.name);
        case OpColumn: return QString::fromUtf8(nodeOpName(node.op).data(), qsizetype(nodeOpName(node.op).size()));
        case TargetColumn: return QString::fromStdString(node.target.text);
        case ShapeColumn: return formatOutputShapes(node);
        case DTypeColumn: return formatOutputDTypes(node);
        case BytesColumn: {
            const auto bytes = outputBytes(node);
            return bytes ? formatBytes(*bytes) : QString();
        }
        case PassColumn: return roleName(roles_[id]);
        case ColumnCount: break;
        }
        return {};
    default: return {};
    }
}

QVariant NodeTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Name"), tr("Op"), tr("Target"), tr("Shape"), tr("DType"), tr("Bytes"), tr("Pass")},
                       section, orientation, role);
}

} // namespace jointscope::views
