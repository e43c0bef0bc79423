// The differences between two graphs (core/graph/GraphDiff) as a flat table to step through: one row per
// added, removed or changed node, then one per changed edge.
#pragma once

#include "graph/GraphDiff.h"

#include <QAbstractTableModel>

#include <memory>

namespace jointscope::views {

class DiffModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { KindColumn, NodeAColumn, NodeBColumn, DetailColumn, ColumnCount };
    enum Role {
        NodeARole = Qt::UserRole + 1, // NodeId in graph A (uint), invalid when the row has none
        NodeBRole,                    // NodeId in graph B
        KindRole,                     // "added", "removed", "changed", "edge added", "edge removed"
    };

    explicit DiffModel(QObject* parent = nullptr);

    // The graphs stay alive with the model; null clears it.
    void setDiff(std::shared_ptr<const Graph> a, std::shared_ptr<const Graph> b,
                 std::shared_ptr<const GraphDiff> diff);
    const GraphDiff* diff() const { return diff_.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // The colour a kind is drawn in, list and canvas alike: added green, removed red, changed amber.
    static QColor kindColor(DiffKind kind);

private:
    std::shared_ptr<const Graph> a_;
    std::shared_ptr<const Graph> b_;
    std::shared_ptr<const GraphDiff> diff_;
};

} // namespace jointscope::views
