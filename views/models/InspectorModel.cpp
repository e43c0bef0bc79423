#include "models/InspectorModel.h"

#include "models/ColumnTitles.h"
#include "models/NodeFormat.h"

#include <QFont>

namespace jointscope::views {

InspectorModel::InspectorModel(QObject* parent) : FlatTreeModel(ColumnCount, parent) {}

void InspectorModel::setNode(const Graph* graph, NodeId node) {
    beginResetModel();
    graph_ = graph;
    node_ = graph && node < graph->size() ? node : kNoNode;
    clearItems();
    if (node_ != kNoNode)
        build();
    endResetModel();
}

void InspectorModel::addValue(int parent, const QString& key, const Value& value) {
    const NodeId ref = value.kind() == ValueKind::NodeRef ? value.asNode() : kNoNode;
    const int row = add(parent, key, formatValue(value, *graph_), ref);
    // Containers holding node references get one child per reference, so each can be followed.
    if (value.isSequence() || value.kind() == ValueKind::Dict) {
        int count = 0;
        value.forEachNode([&](NodeId) { ++count; });
        if (count > 0)
            for (size_t i = 0; i < value.items().size(); ++i)
                addValue(row, QStringLiteral("[%1]").arg(i), value.items()[i]);
    }
}

int InspectorModel::sectionRow(const QString& title) const {
    for (int child : items_[0].children)
        if (items_[child].key == title)
            return items_[child].row;
    return -1;
}

void InspectorModel::build() {
    const Node& n = graph_->node(node_);
    const int general = add(0, tr("Node"));
    add(general, tr("name"), QString::fromStdString(n.name));
    add(general, tr("op"), toQString(nodeOpName(n.op)));
    add(general, tr("target"), QString::fromStdString(n.target.text));
    if (n.subgraph >= 0 && size_t(n.subgraph) < graph_->subgraphs().size())
        add(general, tr("body"),
            QString::fromStdString(graph_->subgraph(n.subgraph)->name) +
                tr(" (%1 nodes, double-click to open)").arg(graph_->subgraph(n.subgraph)->size()));
    if (n.meta.sourceLine > 0)
        add(general, tr("line"), QString::number(n.meta.sourceLine));

    if (!n.args.empty() || !n.kwargs.empty()) {
        const int args = add(0, tr("Arguments"));
        for (size_t i = 0; i < n.args.size(); ++i)
            addValue(args, QStringLiteral("args[%1]").arg(i), n.args[i]);
        for (const auto& [key, value] : n.kwargs)
            addValue(args, QString::fromStdString(key), value);
    }

    if (n.outputKind != OutputKind::Unknown) {
        const int tensor = add(0, tr("Tensor"));
        auto addTensor = [&](int parent, const TensorMeta& t) {
            if (!t.known()) {
                add(parent, tr("dtype"), tr("unknown"));
                return;
            }
            add(parent, tr("shape"), formatShape(t));
            add(parent, tr("dtype"), toQString(torchName(t.dtype)));
            const QString stride = formatStride(t);
            if (!stride.isEmpty())
                add(parent, tr("stride"), stride);
            if (!t.device.type.empty())
                add(parent, tr("device"), QString::fromStdString(t.device.str()));
            if (auto b = t.bytes())
                add(parent, tr("bytes"), QStringLiteral("%1 (%2)").arg(*b).arg(formatBytes(*b)));
        };
        if (n.outputKind == OutputKind::Tensor && !n.outputs.empty()) {
            addTensor(tensor, n.outputs[0]);
        } else if (n.outputKind == OutputKind::Tuple) {
            for (size_t i = 0; i < n.outputs.size(); ++i)
                addTensor(add(tensor, QStringLiteral("[%1]").arg(i), formatShape(n.outputs[i])),
                          n.outputs[i]);
            if (auto b = outputBytes(n))
                add(tensor, tr("total bytes"), QStringLiteral("%1 (%2)").arg(*b).arg(formatBytes(*b)));
        } else {
            add(tensor, tr("value"), formatOutputShapes(n));
        }
    }

    const NodeMeta& m = n.meta;
    if (!m.recompute.empty() || m.acGraphId >= 0 || !m.partitionerTag.empty() || !m.descriptor.empty() ||
        !m.nnModuleStack.empty() || !m.extra.empty()) {
        const int meta = add(0, tr("Meta"));
        if (!m.recompute.empty())
            add(meta, tr("recompute"), QString::fromStdString(m.recompute));
        if (m.acGraphId >= 0)
            add(meta, tr("ac_graph_id"), QString::number(m.acGraphId));
        if (!m.partitionerTag.empty())
            add(meta, tr("partitioner_tag"), QString::fromStdString(m.partitionerTag));
        if (!m.descriptor.empty())
            add(meta, tr("descriptor"), QString::fromStdString(m.descriptor));
        if (!m.nnModuleStack.empty()) {
            const int stack = add(meta, tr("nn_module_stack"));
            for (const ModuleFrame& f : m.nnModuleStack)
                add(stack, QString::fromStdString(f.path.empty() ? f.key : f.path),
                    QString::fromStdString(f.type));
        }
        for (const auto& [key, json] : m.extra)
            add(meta, QString::fromStdString(key), QString::fromStdString(json));
    }

    if (!m.stackTrace.empty()) {
        const int trace = add(0, tr("Stack trace"));
        for (size_t i = 0; i < m.stackTrace.size(); ++i)
            add(trace, QString::number(i), QString::fromStdString(m.stackTrace[i]));
    }

    const int users = add(0, tr("Users"), QString::number(n.users.size()));
    for (NodeId user : n.users)
        if (user < graph_->size())
            add(users, QString::fromStdString(graph_->node(user).name), opLabel(graph_->node(user)), user);
    buildPartition();
    buildSharding();
}

void InspectorModel::setShardingFacts(ShardingFactsFn facts) {
    shardingFacts_ = std::move(facts);
    setNode(graph_, node_);
}

void InspectorModel::buildSharding() {
    const std::optional<ShardingFacts> facts = shardingFacts_ ? shardingFacts_(node_) : std::nullopt;
    if (!facts)
        return;
    const int section = add(0, tr("Sharding"), facts->output);
    add(section, tr("output"), facts->output);
    add(section, tr("inputs"), facts->inputs);
    add(section, tr("compute"), facts->compute);
    add(section, tr("comm"), facts->comm);
    for (const QString& t : facts->transitions)
        add(section, tr("redistribution"), t);
    add(section, tr("strategies"), QString::number(facts->options));
    if (!facts->pinnedBy.isEmpty())
        add(section, tr("pinned by"), facts->pinnedBy);
    if (!facts->explanation.isEmpty())
        add(section, tr("why"), facts->explanation);
}

void InspectorModel::setPartitionFacts(PartitionFactsFn facts) {
    partitionFacts_ = std::move(facts);
    setNode(graph_, node_);
}

void InspectorModel::buildPartition() {
    const std::optional<PartitionFacts> facts = partitionFacts_ ? partitionFacts_(node_) : std::nullopt;
    if (!facts)
        return;
    const int section = add(0, tr("Partition"), facts->decision);
    add(section, tr("decision"), facts->decision);
    add(section, tr("rule"), facts->rule);
    if (!facts->banReason.isEmpty())
        add(section, tr("ban reason"), facts->banReason);
    if (!facts->policy.isEmpty())
        add(section, tr("policy"), facts->policy);
    if (!facts->pin.isEmpty())
        add(section, tr("your pin"), facts->pin);
    if (!facts->weight.isEmpty())
        add(section, tr("weight"), facts->weight);
    add(section, tr("dist_from_bw"), QString::number(facts->distFromBw));
    add(section, tr("bytes"), QStringLiteral("%1 (%2)").arg(facts->bytes).arg(formatBytes(facts->bytes)));
}

QVariant InspectorModel::itemData(const Item& item, int column, int role) const {
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
        return column == KeyColumn ? item.key : item.value;
    case NodeRefRole:
        return item.ref == kNoNode ? QVariant() : QVariant::fromValue(uint(item.ref));
    case Qt::FontRole:
        if (item.parent == 0 || (item.ref != kNoNode && column == ValueColumn)) {
            QFont font;
            font.setBold(item.parent == 0);
            font.setUnderline(item.ref != kNoNode);
            return font;
        }
        return {};
    default:
        return {};
    }
}

QVariant InspectorModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Property"), tr("Value")}, section, orientation, role);
}

} // namespace jointscope::views
