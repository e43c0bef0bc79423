#include "models/ProfileModel.h"

#include "models/ColumnTitles.h"

#include <QJsonArray>

namespace jointscope::views {

ProfileModel::ProfileModel(QObject* parent) : RowTableModel(ColumnCount, parent) {}

void ProfileModel::clear() {
    beginResetModel();
    rows_.clear();
    totals_ = {};
    device_.clear();
    cancelled_ = false;
    endResetModel();
}

bool ProfileModel::setResult(const QJsonObject& result, const Graph* graph) {
    beginResetModel();
    rows_.clear();
    totals_ = {};
    device_ = result.value(QStringLiteral("device")).toString();
    cancelled_ = result.value(QStringLiteral("cancelled")).toBool();
    const QJsonValue nodes = result.value(QStringLiteral("nodes"));
    for (const QJsonValue& value : nodes.toArray()) {
        const QJsonObject n = value.toObject();
        Row row;
        row.name = n.value(QStringLiteral("name")).toString();
        row.op = n.value(QStringLiteral("op")).toString();
        if (graph)
            if (std::optional<NodeId> id = graph->find(row.name.toStdString()))
                row.node = *id;
        if (const QJsonValue t = n.value(QStringLiteral("time_us")); t.isDouble()) {
            row.timeUs = t.toDouble();
            row.cached = n.value(QStringLiteral("cached")).toBool();
            ++totals_.timed;
            ++(row.cached ? totals_.cached : totals_.measured);
            totals_.sumUs += *row.timeUs;
        }
        row.skipped = n.value(QStringLiteral("skipped")).toString();
        row.error = n.value(QStringLiteral("error")).toString();
        totals_.skipped += !row.skipped.isEmpty();
        totals_.failed += !row.error.isEmpty();
        rows_.push_back(std::move(row));
    }
    endResetModel();
    return nodes.isArray();
}

std::vector<double> ProfileModel::nodeTimes(size_t graphSize) const {
    std::vector<double> times(graphSize, -1.0);
    for (const Row& row : rows_)
        if (row.timeUs && row.node < graphSize)
            times[row.node] = *row.timeUs;
    return times;
}

QString ProfileModel::summary() const {
    if (rows_.empty())
        return tr("no profile");
    const double ms = totals_.sumUs / 1000.0;
    QString text = tr("%1 nodes: %2 timed (%3 measured, %4 cached), %5 skipped")
                       .arg(rows_.size())
                       .arg(totals_.timed)
                       .arg(totals_.measured)
                       .arg(totals_.cached)
                       .arg(totals_.skipped);
    if (totals_.failed)
        text += tr(", %1 failed").arg(totals_.failed);
    text += tr("; Σ %1 ms on %2").arg(ms, 0, 'f', ms < 10 ? 3 : 1).arg(device_);
    if (cancelled_)
        text += tr(" (cancelled: partial)");
    return text;
}

QVariant ProfileModel::rowData(const Row& row, int column, int role) const {
    const double share = row.timeUs && totals_.sumUs > 0 ? *row.timeUs / totals_.sumUs : -1.0;
    if (role == NodeIdRole)
        return QVariant::fromValue(uint(row.node));
    if (role == SortRole) {
        switch (column) {
        case TimeColumn:
            return row.timeUs ? *row.timeUs : -1.0;
        case ShareColumn:
            return share;
        default:
            return rowData(row, column, Qt::DisplayRole);
        }
    }
    if (role == Qt::TextAlignmentRole && (column == TimeColumn || column == ShareColumn))
        return int(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && !row.error.isEmpty())
        return row.error;
    if (role != Qt::DisplayRole)
        return {};
    switch (column) {
    case NameColumn:
        return row.name;
    case OpColumn:
        return row.op;
    case TimeColumn:
        return row.timeUs ? QString::number(*row.timeUs, 'f', 2) : QString();
    case ShareColumn:
        return share >= 0 ? QString::number(share * 100, 'f', 1) + QLatin1Char('%') : QString();
    case StatusColumn:
        if (!row.error.isEmpty())
            return tr("error: %1").arg(row.error);
        if (row.timeUs)
            return row.cached ? tr("cached") : tr("measured");
        return row.skipped.isEmpty() ? QString() : tr("skipped: %1").arg(row.skipped);
    default:
        return {};
    }
}

QVariant ProfileModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Node"), tr("Op"), tr("Time (µs)"), tr("Share"), tr("Status")}, section,
                       orientation, role);
}

} // namespace jointscope::views
