#include "models/DiffModel.h"

#include "models/ColumnTitles.h"

#include <QColor>

namespace jointscope::views {
namespace {

QString str(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace

DiffModel::DiffModel(QObject* parent) : QAbstractTableModel(parent) {}

QColor DiffModel::kindColor(DiffKind kind) {
    switch (kind) {
    case DiffKind::Added:
        return QColor(0x16, 0xa3, 0x4a);
    case DiffKind::Removed:
        return QColor(0xdc, 0x26, 0x26);
    case DiffKind::Changed:
        break;
    }
    return QColor(0xd9, 0x77, 0x06);
}

void DiffModel::setDiff(std::shared_ptr<const Graph> a, std::shared_ptr<const Graph> b,
                        std::shared_ptr<const GraphDiff> diff) {
    beginResetModel();
    const bool complete = a && b && diff;
    a_ = complete ? std::move(a) : nullptr;
    b_ = complete ? std::move(b) : nullptr;
    diff_ = complete ? std::move(diff) : nullptr;
    endResetModel();
}

int DiffModel::rowCount(const QModelIndex& parent) const {
    if (parent.isValid() || !diff_)
        return 0;
    return int(diff_->entries.size() + diff_->edges.size());
}

int DiffModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant DiffModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !diff_ || index.row() >= rowCount())
        return {};
    const size_t row = size_t(index.row());
    auto name = [](const Graph& g, NodeId id) { return id == kNoNode ? QString() : str(g.node(id).name); };
    if (row < diff_->entries.size()) {
        const DiffEntry& e = diff_->entries[row];
        switch (role) {
        case Qt::DisplayRole:
            switch (index.column()) {
            case KindColumn:
                return str(diffKindName(e.kind));
            case NodeAColumn:
                return name(*a_, e.a);
            case NodeBColumn:
                return name(*b_, e.b);
            case DetailColumn: {
                QStringList parts;
                for (const NodeChange& c : e.changes)
                    parts << QStringLiteral("%1 %2 → %3").arg(str(c.field), str(c.before), str(c.after));
                if (e.kind != DiffKind::Changed) {
                    const Node& n = e.kind == DiffKind::Added ? b_->node(e.b) : a_->node(e.a);
                    parts << str(n.op == NodeOp::CallFunction ? n.target.text : nodeOpName(n.op));
                }
                return parts.join(QStringLiteral("; "));
            }
            }
            return {};
        case Qt::ForegroundRole:
            return index.column() == KindColumn ? QVariant(kindColor(e.kind)) : QVariant();
        case Qt::ToolTipRole:
            return str(e.describe(*a_, *b_));
        case NodeARole:
            return e.a == kNoNode ? QVariant() : QVariant(uint(e.a));
        case NodeBRole:
            return e.b == kNoNode ? QVariant() : QVariant(uint(e.b));
        case KindRole:
            return str(diffKindName(e.kind));
        }
        return {};
    }
    const EdgeChange& edge = diff_->edges[row - diff_->entries.size()];
    const Graph& g = edge.added ? *b_ : *a_;
    // An edge row points at its consumer, in the graph the edge belongs to, and at the consumer's partner.
    const NodeId a = edge.added ? diff_->partnerOfB[edge.consumer] : edge.consumer;
    const NodeId b = edge.added ? edge.consumer : diff_->partnerOfA[edge.consumer];
    switch (role) {
    case Qt::DisplayRole:
        switch (index.column()) {
        case KindColumn:
            return edge.added ? tr("edge added") : tr("edge removed");
        case NodeAColumn:
            return name(*a_, a);
        case NodeBColumn:
            return name(*b_, b);
        case DetailColumn:
            return QStringLiteral("%1 → %2").arg(name(g, edge.producer), name(g, edge.consumer));
        }
        return {};
    case Qt::ForegroundRole:
        return index.column() == KindColumn
                   ? QVariant(kindColor(edge.added ? DiffKind::Added : DiffKind::Removed))
                   : QVariant();
    case NodeARole:
        return a == kNoNode ? QVariant() : QVariant(uint(a));
    case NodeBRole:
        return b == kNoNode ? QVariant() : QVariant(uint(b));
    case KindRole:
        return edge.added ? QStringLiteral("edge added") : QStringLiteral("edge removed");
    }
    return {};
}

QVariant DiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Difference"), tr("Node in A"), tr("Node in B"), tr("Details")}, section,
                       orientation, role);
}

} // namespace jointscope::views
