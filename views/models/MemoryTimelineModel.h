// The memory timeline of the decision shown, one row per executed node (forward then backward), with torch's
// decision's live bytes beside it when known. The chart in the Memory dock draws the same curves.
#pragma once

#include "graph/Graph.h"
#include "partition/MemoryTimeline.h"

#include <QAbstractTableModel>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

namespace jointscope::views {

// A timeline with its node names resolved (the engine's ids index a graph the model does not keep).
struct MemoryCurve {
    std::vector<QString> nodes;
    std::vector<uint64_t> liveBytes;
    std::vector<bool> recomputed;
    int forwardSteps = 0;
    int peakStep = -1; // -1 when empty
    uint64_t peakBytes = 0;

    static MemoryCurve from(const Graph& graph, const partition::MemoryTimeline& timeline);
    int size() const { return int(nodes.size()); }
};

// The steps of `liveBytes` a chart draws: all of them up to `maxPoints`, else per bucket of consecutive steps
// its first, lowest, highest and last step, in step order, so that every peak and trough stays exact at about
// maxPoints points (a chart strokes every point it has on the UI thread: 100k steps cost 150 ms).
std::vector<int> chartSteps(const std::vector<uint64_t>& liveBytes, size_t maxPoints);

class MemoryTimelineModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { StepColumn, PhaseColumn, NodeColumn, LiveColumn, TorchColumn, ColumnCount };
    enum Role {
        NodeNameRole = Qt::UserRole + 1, // the node the step runs
        LiveBytesRole,                   // qulonglong
        PeakRole,                        // bool: the decision's peak step
    };

    explicit MemoryTimelineModel(QObject* parent = nullptr);

    // `torchs`: torch's decision on the same graph, when known.
    void setCurves(MemoryCurve ours, std::optional<MemoryCurve> torchs);
    void clear();
    const MemoryCurve& ours() const { return ours_; }
    const std::optional<MemoryCurve>& torchs() const { return torchs_; }
    // The row of the first step running `node`; -1 when none.
    int rowOfNode(const QString& node) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    MemoryCurve ours_;
    std::optional<MemoryCurve> torchs_;
};

} // namespace jointscope::views
