#include "models/ShardingModel.h"

#include "models/ColumnTitles.h"
#include "models/NodeFormat.h"

#include <QFont>

namespace jointscope::views {

using namespace jointscope::sharding;

ShardingModel::ShardingModel(QObject* parent) : FlatTreeModel(ColumnCount, parent) {
    static_assert(ShardingRow::kColumns == ColumnCount);
}

void ShardingModel::clear() {
    beginResetModel();
    graph_ = nullptr;
    current_.reset();
    stored_.reset();
    pinnedBy_.clear();
    replicate_.reset();
    dataParallel_.reset();
    differences_ = 0;
    clearItems();
    endResetModel();
}

void ShardingModel::setPlan(const Graph* graph, std::shared_ptr<const PlanReport> current,
                            std::map<std::string, std::string> pinnedBy, std::optional<PlanCost> replicate,
                            std::optional<PlanCost> dataParallel) {
    graph_ = graph;
    current_ = std::move(current);
    pinnedBy_ = std::move(pinnedBy);
    replicate_ = replicate;
    dataParallel_ = dataParallel;
    rebuild();
}

void ShardingModel::setStored(std::shared_ptr<const PlanReport> stored) {
    stored_ = std::move(stored);
    rebuild();
}

void ShardingModel::setDifferencesOnly(bool on) {
    if (on == differencesOnly_)
        return;
    differencesOnly_ = on;
    rebuild();
}

void ShardingModel::setCost(Item& item, int column, double us) {
    item.text[column] = formatMicros(us);
    item.value[column] = us;
    item.numeric[column] = true;
}

void ShardingModel::rebuild() {
    beginResetModel();
    clearItems();
    differences_ = 0;
    // A stored plan of another graph (or mesh with another node count) cannot be compared row by row.
    const bool comparable = stored_ && current_ && stored_->nodes.size() == current_->nodes.size();
    if (current_ && graph_ && current_->nodes.size() <= graph_->size()) {
        const int totals = add(0);
        items_[size_t(totals)].text[NodeColumn] = tr("Totals");
        auto addTotal = [&](const QString& key, const PlanCost& c) {
            const int row = add(totals);
            Item& item = items_[size_t(row)];
            item.text[NodeColumn] = key;
            setCost(item, ComputeColumn, c.computeUs);
            setCost(item, CommColumn, c.commUs);
            setCost(item, TotalColumn, c.totalUs());
            return row;
        };
        const int plan = addTotal(tr("plan"), current_->total);
        items_[size_t(plan)].text[OutputColumn] =
            current_->optimal ? tr("optimal") : tr("not proven optimal");
        if (replicate_)
            addTotal(tr("replicate"), *replicate_);
        if (dataParallel_)
            addTotal(tr("data parallel"), *dataParallel_);
        if (comparable)
            addTotal(tr("stored plan"), stored_->total);

        const int nodes = add(0);
        for (NodeId id = 0; id < current_->nodes.size(); ++id) {
            const NodeReport& r = current_->nodes[id];
            if (!r.placed)
                continue;
            const NodeReport* s = comparable ? &stored_->nodes[id] : nullptr;
            const bool differs = s && (s->outputs != r.outputs || s->inputs != r.inputs);
            differences_ += differs;
            if (differencesOnly_ && !differs)
                continue;
            const Node& node = graph_->node(id);
            const int row = add(nodes);
            Item& item = items_[size_t(row)];
            item.ref = id;
            item.differs = differs;
            item.text[NodeColumn] = QString::fromStdString(node.name);
            item.text[OpColumn] = opLabel(node);
            item.text[OutputColumn] = views::formatPlacements(r.outputs);
            item.text[InputsColumn] = views::formatPlacements(r.inputs);
            if (r.inputs.size() == 1)
                item.text[InputsColumn] = QStringLiteral("(") + item.text[InputsColumn] + QStringLiteral(")");
            setCost(item, ComputeColumn, r.computeUs);
            setCost(item, CommColumn, r.commUs);
            setCost(item, TotalColumn, r.computeUs + r.commUs);
            if (auto it = pinnedBy_.find(node.name); it != pinnedBy_.end())
                item.text[PinnedColumn] = QString::fromStdString(it->second);
            if (s) {
                item.text[StoredOutputColumn] =
                    s->placed ? views::formatPlacements(s->outputs) : QStringLiteral("—");
                setCost(item, StoredTotalColumn, s->computeUs + s->commUs);
            }
        }
        Item& section = items_[size_t(nodes)];
        section.text[NodeColumn] = differencesOnly_ ? tr("Differences") : tr("Nodes");
        section.text[OutputColumn] = differencesOnly_ && !comparable
                                         ? tr("store a plan to compare")
                                         : QString::number(section.children.size());
    }
    endResetModel();
}

int ShardingModel::sectionRow(const QString& title) const {
    for (int child : items_[0].children)
        if (items_[size_t(child)].text[NodeColumn] == title)
            return items_[size_t(child)].row;
    return -1;
}

QModelIndex ShardingModel::nodeIndex(const QString& name, int column) const {
    for (int section : items_[0].children) {
        if (items_[size_t(section)].text[NodeColumn] == tr("Totals"))
            continue;
        for (int child : items_[size_t(section)].children)
            if (items_[size_t(child)].text[NodeColumn] == name)
                return indexOfItem(child, column);
    }
    return {};
}

QModelIndex ShardingModel::totalIndex(const QString& key, int column) const {
    const int totals = sectionRow(tr("Totals"));
    if (totals < 0)
        return {};
    for (int child : items_[size_t(items_[0].children[size_t(totals)])].children)
        if (items_[size_t(child)].text[NodeColumn] == key)
            return indexOfItem(child, column);
    return {};
}

QVariant ShardingModel::itemData(const Item& item, int column, int role) const {
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
        return item.text[column];
    case ValueRole:
        return item.numeric[column] ? QVariant(item.value[column]) : QVariant(item.text[column]);
    case NodeIdRole:
        return item.ref == kNoNode ? QVariant() : QVariant::fromValue(qulonglong(item.ref));
    case Qt::TextAlignmentRole:
        return item.numeric[column] ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case Qt::FontRole:
        if (item.parent == 0 || (item.differs && (column == OutputColumn || column == StoredOutputColumn))) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    default:
        return {};
    }
}

QVariant ShardingModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Node"), tr("Output"), tr("Inputs"), tr("Total"), tr("Compute"), tr("Comm"),
                        tr("Pinned by"), tr("Op"), tr("Stored output"), tr("Stored total")},
                       section, orientation, role);
}

} // namespace jointscope::views
