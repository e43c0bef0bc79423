// Two partition decisions of one joint graph side by side (core/partition/DecisionDiff): the decision shown
// ("here") against a baseline — torch's own, one kept earlier (another budget, before a pin), or a decision
// file — one row per value saved, saved symbolically or recomputed in only one of them.
#pragma once

#include "models/RowTableModel.h"
#include "partition/DecisionDiff.h"

#include <QString>

namespace jointscope::views {

enum class DecisionChange {
    SavedOnlyHere,
    SavedOnlyInBaseline,
    SavedSymOnlyHere,
    SavedSymOnlyInBaseline,
    RecomputedOnlyHere,
    RecomputedOnlyInBaseline,
};

struct DecisionDiffRow {
    DecisionChange change = DecisionChange::SavedOnlyHere;
    QString node;
    QString what; // "torch.ops.aten.addmm.default torch.float32[8,1024]"
};

class DecisionDiffModel : public RowTableModel<DecisionDiffRow> {
    Q_OBJECT
public:
    enum Column { ChangeColumn, NodeColumn, WhatColumn, ColumnCount };
    enum Role { NodeNameRole = Qt::UserRole + 1 };
    using Row = DecisionDiffRow;

    explicit DecisionDiffModel(QObject* parent = nullptr);

    // `here` is the decision shown, `baseline` what it is compared with.
    void setDecisions(const partition::DecisionDocument& here, const partition::DecisionDocument& baseline);
    void clear();

    bool compared() const { return compared_; }
    int count(DecisionChange change) const;
    QStringList nodes(DecisionChange change) const; // in the row order
    // "Here (budget 0.30): 41 saved, 12.5 MiB of activations · torch's decision (budget 1.00): 72 saved, …"
    // then what differs in one line, or that the two decisions are the same.
    QString summary() const;
    static QString changeText(DecisionChange change);

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant rowData(const Row& row, int column, int role) const override;

    bool compared_ = false;
    partition::DecisionDiff diff_;
    QString hereText_, baselineText_;
};

} // namespace jointscope::views
