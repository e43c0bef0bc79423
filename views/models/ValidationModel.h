// Result of `jointscope-cli validate --json`: one row per forward output and gradient, as the partitioned
// forward
// + backward computed it compared with the joint graph.
#pragma once

#include "graph/Graph.h"
#include "models/RowTableModel.h"

#include <QJsonObject>

#include <optional>
#include <vector>

namespace jointscope::views {

struct ValidationRow {
    QString label;    // "output 0 (addmm_1)", "grad of primals_1 (t_9)"
    QString status;   // bitwise | close | differs | none | mismatch
    QString nodeName; // the producer named in the label's parentheses
    NodeId node = kNoNode;
    std::optional<double> maxAbsError;
    std::optional<double> maxRelError;
    QString detail;
    bool firstMismatch = false;
};

class ValidationModel : public RowTableModel<ValidationRow> {
    Q_OBJECT
public:
    enum Column { OutputColumn, StatusColumn, MaxAbsColumn, MaxRelColumn, DetailColumn, ColumnCount };
    enum Role {
        NodeIdRole = Qt::UserRole + 1, // the node that produces the output in the graph given to setResult
        SortRole,                      // numeric for errors (none: -1), text elsewhere
        MismatchRole,                  // bool: the two computations disagree on this output
    };
    using Row = ValidationRow;

    explicit ValidationModel(QObject* parent = nullptr);

    bool setResult(const QJsonObject& result, const Graph* graph);
    void clear();

    static bool isMismatch(const QString& status) { return status == u"differs" || status == u"mismatch"; }
    bool ok() const { return ok_; }
    QString firstMismatch() const { return firstMismatch_; }
    QString decisionSource() const { return decisionSource_; }
    int savedCount() const { return savedCount_; }
    int count(const QString& status) const; // rows with this status
    std::vector<NodeId> mismatchedNodes() const;
    QString summary() const;

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant rowData(const Row& row, int column, int role) const override;

    bool ok_ = false;
    QString firstMismatch_;
    QString decisionSource_;
    QString tolerance_;
    int savedCount_ = 0;
};

} // namespace jointscope::views
