// Result of `jointscope-cli profile --json`: one row per node with its median time or why it was not run.
#pragma once

#include "graph/Graph.h"
#include "models/RowTableModel.h"

#include <QJsonObject>

#include <optional>
#include <vector>

namespace jointscope::views {

struct ProfileRow {
    QString name;
    QString op;
    NodeId node = kNoNode;
    std::optional<double> timeUs;
    bool cached = false; // the time came from the profile DB
    QString skipped;     // why it was not run (view, getitem, placeholder, ...)
    QString error;       // the op threw; the run went on
};

class ProfileModel : public RowTableModel<ProfileRow> {
    Q_OBJECT
public:
    enum Column { NameColumn, OpColumn, TimeColumn, ShareColumn, StatusColumn, ColumnCount };
    enum Role {
        NodeIdRole =
            Qt::UserRole + 1, // NodeId of the row in the graph given to setResult (kNoNode if absent)
        SortRole,             // numeric for time and share (unmeasured rows sort below 0), text elsewhere
    };
    using Row = ProfileRow;
    struct Totals {
        int timed = 0;    // rows with a time
        int measured = 0; // ... measured in this run
        int cached = 0;   // ... taken from the profile DB
        int skipped = 0;
        int failed = 0;
        double sumUs = 0; // Σ time over timed rows
    };

    explicit ProfileModel(QObject* parent = nullptr);

    // `graph` (may be null) maps node names to ids for selection and the heat map; it must outlive the model
    // or be replaced first. Returns false, leaving the model empty, when `result` has no "nodes" array.
    bool setResult(const QJsonObject& result, const Graph* graph);
    void clear();

    const Totals& totals() const { return totals_; }
    QString device() const { return device_; }
    bool cancelled() const { return cancelled_; }
    // Per NodeId of the graph: time in µs, or a negative value where the node has none.
    std::vector<double> nodeTimes(size_t graphSize) const;
    QString summary() const; // "311 nodes: 88 timed (88 measured, 0 cached), 223 skipped; Σ 3.61 ms on CPU"

    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    QVariant rowData(const Row& row, int column, int role) const override;

    Totals totals_;
    QString device_;
    bool cancelled_ = false;
};

} // namespace jointscope::views
