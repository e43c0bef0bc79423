#include "models/MemoryTimelineModel.h"

#include "models/ColumnTitles.h"
#include "models/NodeFormat.h"

#include <QFont>

#include <algorithm>
#include <array>
#include <numeric>

namespace jointscope::views {

MemoryCurve MemoryCurve::from(const Graph& graph, const partition::MemoryTimeline& timeline) {
    MemoryCurve c;
    for (const partition::MemoryStep& step : timeline.steps) {
        c.nodes.push_back(QString::fromStdString(graph.node(step.node).name));
        c.liveBytes.push_back(step.liveBytes);
        c.recomputed.push_back(step.recomputed);
    }
    c.forwardSteps = int(timeline.forwardSteps);
    c.peakStep = timeline.steps.empty() ? -1 : int(timeline.peakStep);
    c.peakBytes = timeline.peakBytes;
    return c;
}

MemoryTimelineModel::MemoryTimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void MemoryTimelineModel::setCurves(MemoryCurve ours, std::optional<MemoryCurve> torchs) {
    beginResetModel();
    ours_ = std::move(ours);
    torchs_ = std::move(torchs);
    endResetModel();
}

void MemoryTimelineModel::clear() {
    setCurves({}, std::nullopt);
}

int MemoryTimelineModel::rowOfNode(const QString& node) const {
    for (int i = 0; i < ours_.size(); ++i)
        if (ours_.nodes[size_t(i)] == node)
            return i;
    return -1;
}

int MemoryTimelineModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ours_.size();
}

int MemoryTimelineModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MemoryTimelineModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || index.row() >= ours_.size())
        return {};
    const size_t row = size_t(index.row());
    const bool peak = index.row() == ours_.peakStep;
    switch (role) {
    case NodeNameRole:
        return ours_.nodes[row];
    case LiveBytesRole:
        return qulonglong(ours_.liveBytes[row]);
    case PeakRole:
        return peak;
    case Qt::FontRole:
        if (peak) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (index.column() == StepColumn || index.column() == LiveColumn || index.column() == TorchColumn)
            return int(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case Qt::DisplayRole:
        break;
    default:
        return {};
    }
    switch (index.column()) {
    case StepColumn:
        return index.row();
    case PhaseColumn:
        if (index.row() < ours_.forwardSteps)
            return tr("forward");
        return ours_.recomputed[row] ? tr("backward (recompute)") : tr("backward");
    case NodeColumn:
        return peak ? tr("%1 (peak)").arg(ours_.nodes[row]) : ours_.nodes[row];
    case LiveColumn:
        return formatBytes(ours_.liveBytes[row]);
    case TorchColumn:
        // torch's decision runs other nodes where it recomputes otherwise: compare only the same step
        if (torchs_ && row < torchs_->nodes.size() && torchs_->nodes[row] == ours_.nodes[row])
            return formatBytes(torchs_->liveBytes[row]);
        return QStringLiteral("—");
    default:
        return {};
    }
}

QVariant MemoryTimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Step"), tr("Phase"), tr("Node"), tr("Live"), tr("Torch's decision")}, section,
                       orientation, role);
}

std::vector<int> chartSteps(const std::vector<uint64_t>& liveBytes, size_t maxPoints) {
    const size_t n = liveBytes.size();
    std::vector<int> steps;
    if (n <= maxPoints) {
        steps.resize(n);
        std::iota(steps.begin(), steps.end(), 0);
        return steps;
    }
    const size_t buckets = std::max<size_t>(1, maxPoints / 4);
    steps.reserve(4 * buckets);
    for (size_t b = 0; b < buckets; ++b) {
        const size_t begin = b * n / buckets, end = (b + 1) * n / buckets;
        if (begin == end)
            continue;
        size_t low = begin, high = begin;
        for (size_t i = begin; i < end; ++i) {
            low = liveBytes[i] < liveBytes[low] ? i : low;
            high = liveBytes[i] > liveBytes[high] ? i : high;
        }
        std::array<size_t, 4> kept{begin, std::min(low, high), std::max(low, high), end - 1};
        for (size_t step : kept)
            if (steps.empty() || size_t(steps.back()) < step)
                steps.push_back(int(step));
    }
    return steps;
}

} // namespace jointscope::views
