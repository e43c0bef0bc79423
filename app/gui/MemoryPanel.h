// The Memory dock: the live activation bytes of the decision shown over the forward then backward execution
// order (torch's decision overlaid when the file records it), the peak marked, and the steps as a table.
// Clicking a point of the curve or a row asks for its node on the canvas.
#pragma once

#include <QWidget>

class QChartView;
class QLabel;
class QLineSeries;
class QScatterSeries;
class QTableView;
class QValueAxis;

namespace jointscope::views {
class MemoryTimelineModel;
struct MemoryCurve;
} // namespace jointscope::views

namespace jointscope::gui {

class MemoryPanel : public QWidget {
    Q_OBJECT
public:
    explicit MemoryPanel(views::MemoryTimelineModel* model, QWidget* parent = nullptr);

    QChartView* chartView() const { return chart_; }
    QTableView* table() const { return table_; }
    QString summary() const; // the peak line above the chart
    // The step whose point is nearest to `value` (chart coordinates: step, MiB); -1 when none.
    int stepAt(const QPointF& value) const;
    // Scene position (in chartView()'s viewport) of step `step` on the decision's curve.
    QPoint viewportPointOfStep(int step) const;
    // Where step `step` of `from` (torch's decision) is drawn on the axis of `onto` (the decision shown):
    // each phase stretched onto the other's, so the forward / backward boundaries coincide.
    static double phaseAligned(double step, const views::MemoryCurve& from, const views::MemoryCurve& onto);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

signals:
    void nodeActivated(const QString& name);

private:
    void rebuild();
    void activateStep(int step);

    views::MemoryTimelineModel* model_;
    QLabel* summary_;
    QChartView* chart_;
    QLineSeries* ours_;
    QLineSeries* torchs_;
    QLineSeries* boundary_; // between the forward's last step and the backward's first
    QScatterSeries* peak_;
    QValueAxis* x_;
    QValueAxis* y_;
    QTableView* table_;
};

} // namespace jointscope::gui
