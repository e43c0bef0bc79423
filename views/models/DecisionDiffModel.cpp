#include "models/DecisionDiffModel.h"

#include "models/ColumnTitles.h"
#include "models/NodeFormat.h"

#include <QColor>

namespace jointscope::views {
namespace {

QString describeDecision(const partition::DecisionDocument& d) {
    QString text = QString::fromStdString(d.file);
    QStringList facts;
    if (d.memoryBudget)
        facts << DecisionDiffModel::tr("budget %1").arg(*d.memoryBudget, 0, 'f', 2);
    if (!d.decidedBy.empty())
        facts << QString::fromStdString(d.decidedBy);
    if (!facts.isEmpty())
        text += QStringLiteral(" (%1)").arg(facts.join(QStringLiteral(", ")));
    text += DecisionDiffModel::tr(": %n saved", nullptr, int(d.saved.size() + d.savedSym.size()));
    if (d.activationBytes)
        text += DecisionDiffModel::tr(", %1 of activations").arg(formatBytes(uint64_t(*d.activationBytes)));
    else if (d.savedBytes)
        text += DecisionDiffModel::tr(", %1").arg(formatBytes(uint64_t(*d.savedBytes)));
    return text;
}

} // namespace

DecisionDiffModel::DecisionDiffModel(QObject* parent) : RowTableModel(ColumnCount, parent) {}

QString DecisionDiffModel::changeText(DecisionChange change) {
    switch (change) {
    case DecisionChange::SavedOnlyHere:
        return tr("saved only here");
    case DecisionChange::SavedOnlyInBaseline:
        return tr("saved only in baseline");
    case DecisionChange::SavedSymOnlyHere:
        return tr("saved (symbolic) only here");
    case DecisionChange::SavedSymOnlyInBaseline:
        return tr("saved (symbolic) only in baseline");
    case DecisionChange::RecomputedOnlyHere:
        return tr("recomputed only here");
    case DecisionChange::RecomputedOnlyInBaseline:
        break;
    }
    return tr("recomputed only in baseline");
}

void DecisionDiffModel::setDecisions(const partition::DecisionDocument& here,
                                     const partition::DecisionDocument& baseline) {
    beginResetModel();
    diff_ = partition::diffDecisions(here, baseline);
    rows_.clear();
    auto add = [this](DecisionChange change, const std::vector<std::string>& names,
                      const partition::DecisionDocument& from) {
        for (const std::string& name : names)
            rows_.push_back(
                {change, QString::fromStdString(name), QString::fromStdString(from.describe(name))});
    };
    add(DecisionChange::SavedOnlyHere, diff_.savedOnlyA, here);
    add(DecisionChange::SavedOnlyInBaseline, diff_.savedOnlyB, baseline);
    add(DecisionChange::SavedSymOnlyHere, diff_.savedSymOnlyA, here);
    add(DecisionChange::SavedSymOnlyInBaseline, diff_.savedSymOnlyB, baseline);
    add(DecisionChange::RecomputedOnlyHere, diff_.recomputedOnlyA, here);
    add(DecisionChange::RecomputedOnlyInBaseline, diff_.recomputedOnlyB, baseline);
    hereText_ = describeDecision(here);
    baselineText_ = describeDecision(baseline);
    compared_ = true;
    endResetModel();
}

void DecisionDiffModel::clear() {
    beginResetModel();
    rows_.clear();
    diff_ = {};
    hereText_.clear();
    baselineText_.clear();
    compared_ = false;
    endResetModel();
}

int DecisionDiffModel::count(DecisionChange change) const {
    int n = 0;
    for (const Row& row : rows_)
        n += row.change == change;
    return n;
}

QStringList DecisionDiffModel::nodes(DecisionChange change) const {
    QStringList out;
    for (const Row& row : rows_)
        if (row.change == change)
            out << row.node;
    return out;
}

QString DecisionDiffModel::summary() const {
    if (!compared_)
        return tr("Keep a decision, or open a decision file, to compare the one shown with it.");
    QStringList lines{hereText_, baselineText_};
    if (!diff_.sameGraph)
        lines << tr("The two decisions name different graphs: only names common to both match.");
    if (diff_.identical()) {
        lines << tr("The same decision: the same values saved, in the same order, the same recomputed.");
    } else if (rows_.empty()) {
        lines << tr("The same values saved, in another order: the forward's outputs differ in order.");
    } else {
        QStringList parts;
        for (DecisionChange change :
             {DecisionChange::SavedOnlyHere, DecisionChange::SavedOnlyInBaseline,
              DecisionChange::SavedSymOnlyHere, DecisionChange::SavedSymOnlyInBaseline,
              DecisionChange::RecomputedOnlyHere, DecisionChange::RecomputedOnlyInBaseline})
            if (int n = count(change))
                parts << QStringLiteral("%1 %2").arg(n).arg(changeText(change));
        lines << parts.join(QStringLiteral(" · "));
    }
    return lines.join(QLatin1Char('\n'));
}

QVariant DecisionDiffModel::rowData(const Row& row, int column, int role) const {
    switch (role) {
    case Qt::DisplayRole:
        return column == ChangeColumn ? changeText(row.change) : column == NodeColumn ? row.node : row.what;
    case NodeNameRole:
        return row.node;
    case Qt::ForegroundRole: {
        if (column != ChangeColumn)
            return {};
        const bool here = row.change == DecisionChange::SavedOnlyHere ||
                          row.change == DecisionChange::SavedSymOnlyHere ||
                          row.change == DecisionChange::RecomputedOnlyHere;
        return here ? QColor(0x16, 0xa3, 0x4a) : QColor(0xdc, 0x26, 0x26);
    }
    default:
        return {};
    }
}

QVariant DecisionDiffModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Change"), tr("Node"), tr("Target and shape")}, section, orientation, role);
}

} // namespace jointscope::views
