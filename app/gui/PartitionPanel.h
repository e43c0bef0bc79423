// The Partition dock: engine options, the PartitionModel tree and the Pareto chart over a PartitionDocument.
#pragma once

#include "graph/Graph.h"
#include "partition/Partitioner.h"

#include <QWidget>

#include <vector>

class QComboBox;
class QLabel;
class QPushButton;
class QSlider;
class QTreeView;

class QChartView;
class QScatterSeries;
class QLineSeries;

namespace jointscope::views {
class PartitionModel;
}

namespace jointscope::gui {

class PartitionDocument;

class PartitionPanel : public QWidget {
    Q_OBJECT
public:
    explicit PartitionPanel(PartitionDocument* document, QWidget* parent = nullptr);

    views::PartitionModel* model() const { return model_; }
    // The options shown follow the document (a session restored, an undo of the budget).
    void syncFromDocument();

signals:
    void locateNode(jointscope::NodeId id); // a row naming a node was clicked

private:
    void applyOptions();
    void onFinished();
    void onParetoReady(const std::vector<partition::ParetoPoint>& points);
    void markBudget();
    QString paretoKey() const;

    PartitionDocument* doc_;
    views::PartitionModel* model_;
    QComboBox* ruleset_;
    QComboBox* strategy_;
    QComboBox* solver_;
    QSlider* budget_;
    QLabel* budgetLabel_;
    QPushButton* solve_;
    QPushButton* cancel_;
    QLabel* status_;
    QTreeView* tree_;
    QChartView* chart_ = nullptr;
    QLineSeries* curve_ = nullptr;
    QScatterSeries* points_ = nullptr;
    QScatterSeries* current_ = nullptr;
    std::vector<partition::ParetoPoint> pareto_;
    QString paretoKey_;
    bool syncing_ = false;
    // Chart units, chosen from the curve's range: bytes per x unit, FLOPs per y unit.
    double xUnit_ = 1 << 20;
    double yUnit_ = 1e6;
    QPointF chartPoint(const partition::ParetoPoint& point) const;
};

} // namespace jointscope::gui
