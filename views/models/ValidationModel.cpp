#include "models/ValidationModel.h"

#include "models/ColumnTitles.h"

#include <QBrush>
#include <QColor>
#include <QJsonArray>

namespace jointscope::views {

namespace {

// "grad of primals_1 (t_9)" -> "t_9".
QString producerIn(const QString& label) {
    const qsizetype close = label.lastIndexOf(QLatin1Char(')'));
    const qsizetype open = label.lastIndexOf(QLatin1Char('('), close);
    if (open < 0 || close < 0 || close != label.size() - 1)
        return {};
    return label.mid(open + 1, close - open - 1);
}

} // namespace

ValidationModel::ValidationModel(QObject* parent) : RowTableModel(ColumnCount, parent) {}

void ValidationModel::clear() {
    beginResetModel();
    rows_.clear();
    ok_ = false;
    firstMismatch_.clear();
    decisionSource_.clear();
    tolerance_.clear();
    savedCount_ = 0;
    endResetModel();
}

bool ValidationModel::setResult(const QJsonObject& result, const Graph* graph) {
    beginResetModel();
    rows_.clear();
    ok_ = result.value(QStringLiteral("ok")).toBool();
    firstMismatch_ = result.value(QStringLiteral("first_mismatch")).toString();
    const QJsonObject decision = result.value(QStringLiteral("decision")).toObject();
    decisionSource_ = decision.value(QStringLiteral("source")).toString();
    savedCount_ = int(decision.value(QStringLiteral("saved")).toArray().size());
    tolerance_ = result.value(QStringLiteral("tolerance")).toString();
    const QJsonValue outputs = result.value(QStringLiteral("outputs"));
    for (const QJsonValue& value : outputs.toArray()) {
        const QJsonObject o = value.toObject();
        Row row;
        row.label = o.value(QStringLiteral("label")).toString();
        row.status = o.value(QStringLiteral("status")).toString();
        row.nodeName = producerIn(row.label);
        if (graph && !row.nodeName.isEmpty())
            if (std::optional<NodeId> id = graph->find(row.nodeName.toStdString()))
                row.node = *id;
        if (const QJsonValue v = o.value(QStringLiteral("max_abs_error")); v.isDouble())
            row.maxAbsError = v.toDouble();
        if (const QJsonValue v = o.value(QStringLiteral("max_rel_error")); v.isDouble())
            row.maxRelError = v.toDouble();
        row.detail = o.value(QStringLiteral("detail")).toString();
        row.firstMismatch = !firstMismatch_.isEmpty() && row.label == firstMismatch_;
        rows_.push_back(std::move(row));
    }
    endResetModel();
    return outputs.isArray();
}

int ValidationModel::count(const QString& status) const {
    int n = 0;
    for (const Row& row : rows_)
        n += row.status == status;
    return n;
}

std::vector<NodeId> ValidationModel::mismatchedNodes() const {
    std::vector<NodeId> ids;
    for (const Row& row : rows_)
        if (isMismatch(row.status) && row.node != kNoNode)
            ids.push_back(row.node);
    return ids;
}

QString ValidationModel::summary() const {
    if (rows_.empty())
        return tr("no validation");
    QString text = ok_ ? tr("OK: %1 outputs and gradients agree").arg(rows_.size())
                       : tr("MISMATCH: %1 of %2 differ, first %3")
                             .arg(count(QStringLiteral("differs")) + count(QStringLiteral("mismatch")))
                             .arg(rows_.size())
                             .arg(firstMismatch_);
    text += tr(" (%1 bitwise, %2 close, %3 None; %4, %5 saved values)")
                .arg(count(QStringLiteral("bitwise")))
                .arg(count(QStringLiteral("close")))
                .arg(count(QStringLiteral("none")))
                .arg(decisionSource_)
                .arg(savedCount_);
    return text;
}

QVariant ValidationModel::rowData(const Row& row, int column, int role) const {
    switch (role) {
    case NodeIdRole:
        return QVariant::fromValue(uint(row.node));
    case MismatchRole:
        return isMismatch(row.status);
    case SortRole:
        if (column == MaxAbsColumn)
            return row.maxAbsError.value_or(-1.0);
        if (column == MaxRelColumn)
            return row.maxRelError.value_or(-1.0);
        return rowData(row, column, Qt::DisplayRole);
    case Qt::ForegroundRole:
        if (column == StatusColumn && isMismatch(row.status))
            return QBrush(QColor(0xdc, 0x26, 0x26));
        return {};
    case Qt::DisplayRole:
        switch (column) {
        case OutputColumn:
            return row.label;
        case StatusColumn:
            return row.firstMismatch ? row.status + tr(" (first)") : row.status;
        case MaxAbsColumn:
            return row.maxAbsError ? QString::number(*row.maxAbsError, 'g', 3) : QString();
        case MaxRelColumn:
            return row.maxRelError ? QString::number(*row.maxRelError, 'g', 3) : QString();
        case DetailColumn:
            return row.detail;
        default:
            return {};
        }
    default:
        return {};
    }
}

QVariant ValidationModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle(
        {tr("Output / gradient"), tr("Status"), tr("Max abs error"), tr("Max rel error"), tr("Detail")},
        section, orientation, role);
}

} // namespace jointscope::views
