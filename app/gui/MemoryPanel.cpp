#include "MemoryPanel.h"

#include "models/MemoryTimelineModel.h"
#include "models/NodeFormat.h"

#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QMouseEvent>
#include <QScatterSeries>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include <cmath>

namespace jointscope::gui {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
// Points per curve on the chart: about two per pixel of a wide dock.
constexpr size_t kChartPoints = 4000;
} // namespace

MemoryPanel::MemoryPanel(views::MemoryTimelineModel* model, QWidget* parent)
    : QWidget(parent), model_(model) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    summary_ = new QLabel(this);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);

    auto* chart = new QChart;
    chart->setTitle(tr("Live activation memory: forward, then backward"));
    chart->setMargins(QMargins(4, 4, 4, 4));
    ours_ = new QLineSeries(chart);
    ours_->setName(tr("this decision"));
    QPen pen(QColor(0x25, 0x63, 0xeb));
    pen.setWidthF(2);
    ours_->setPen(pen);
    torchs_ = new QLineSeries(chart);
    torchs_->setName(tr("torch's decision"));
    QPen torchPen(QColor(0x9c, 0xa3, 0xaf));
    torchPen.setWidthF(1.5);
    torchPen.setStyle(Qt::DashLine);
    torchs_->setPen(torchPen);
    peak_ = new QScatterSeries(chart);
    peak_->setName(tr("peak"));
    peak_->setMarkerSize(12);
    peak_->setColor(QColor(0xdc, 0x26, 0x26));
    boundary_ = new QLineSeries(chart);
    boundary_->setName(tr("backward starts"));
    QPen boundaryPen(QColor(0x6b, 0x72, 0x80));
    boundaryPen.setStyle(Qt::DotLine);
    boundary_->setPen(boundaryPen);
    chart->addSeries(boundary_);
    chart->addSeries(torchs_);
    chart->addSeries(ours_);
    chart->addSeries(peak_);
    x_ = new QValueAxis(chart);
    x_->setTitleText(tr("step (forward | backward)"));
    x_->setLabelFormat(QStringLiteral("%d"));
    y_ = new QValueAxis(chart);
    y_->setTitleText(tr("live MiB"));
    y_->setLabelFormat(QStringLiteral("%.3g"));
    chart->addAxis(x_, Qt::AlignBottom);
    chart->addAxis(y_, Qt::AlignLeft);
    for (QAbstractSeries* s :
         {static_cast<QAbstractSeries*>(boundary_), static_cast<QAbstractSeries*>(torchs_),
          static_cast<QAbstractSeries*>(ours_), static_cast<QAbstractSeries*>(peak_)}) {
        s->attachAxis(x_);
        s->attachAxis(y_);
    }
    chart_ = new QChartView(chart, this);
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setMinimumHeight(220);
    chart_->setToolTip(tr("Click the curve to select the node that runs at that step"));

    table_ = new QTableView(this);
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->horizontalHeader()->setSectionResizeMode(views::MemoryTimelineModel::NodeColumn,
                                                     QHeaderView::Stretch);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(chart_);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    layout->addWidget(split, 1);

    // A click anywhere over the plot picks the step under it: the curve itself is too thin a target.
    chart_->viewport()->installEventFilter(this);
    connect(table_, &QTableView::activated, this,
            [this](const QModelIndex& index) { activateStep(index.row()); });
    connect(table_, &QTableView::clicked, this,
            [this](const QModelIndex& index) { activateStep(index.row()); });
    connect(model_, &QAbstractItemModel::modelReset, this, &MemoryPanel::rebuild);
    rebuild();
}

double MemoryPanel::phaseAligned(double step, const views::MemoryCurve& from,
                                 const views::MemoryCurve& onto) {
    const double fromForward = from.forwardSteps, ontoForward = onto.forwardSteps;
    if (fromForward <= 0 || ontoForward <= 0)
        return from.size() > 1 ? step * (onto.size() - 1) / double(from.size() - 1) : step;
    if (step < fromForward)
        return step * ontoForward / fromForward;
    const double fromBackward = std::max(1, from.size() - from.forwardSteps);
    const double ontoBackward = std::max(1, onto.size() - onto.forwardSteps);
    return ontoForward + (step - fromForward) * ontoBackward / fromBackward;
}

void MemoryPanel::rebuild() {
    const views::MemoryCurve& c = model_->ours();
    const auto chartPoints = [](const views::MemoryCurve& curve) {
        QList<QPointF> points;
        for (int step : views::chartSteps(curve.liveBytes, kChartPoints))
            points.append(QPointF(step, double(curve.liveBytes[size_t(step)]) / kMiB));
        return points;
    };
    const QList<QPointF> points = chartPoints(c);
    QList<QPointF> torchPoints;
    uint64_t top = c.peakBytes;
    int steps = c.size();
    if (const auto& t = model_->torchs()) {
        // torch's decision runs another number of forward and backward steps: each phase is stretched onto
        // this decision's, so that both cross into the backward at the boundary line.
        torchPoints = chartPoints(*t);
        for (QPointF& p : torchPoints)
            p.setX(phaseAligned(p.x(), *t, c));
        top = std::max(top, t->peakBytes);
    }
    // Axes first: each range change lays out every series again, thousands of points each after a solve of
    // a big graph; the old (or no) points are what they lay out now.
    x_->setRange(0, std::max(1, steps - 1));
    const double yTop = std::max(1e-6, double(top) / kMiB * 1.08);
    y_->setRange(0, yTop);
    ours_->replace(points);
    torchs_->replace(torchPoints);
    torchs_->setVisible(!torchPoints.isEmpty());
    peak_->clear();
    if (c.peakStep >= 0)
        peak_->append(QPointF(c.peakStep, double(c.peakBytes) / kMiB));
    boundary_->clear();
    if (c.forwardSteps > 0 && c.forwardSteps < c.size())
        boundary_->append({QPointF(c.forwardSteps - 0.5, 0), QPointF(c.forwardSteps - 0.5, yTop)});
    // Without a timeline (no joint graph shown) empty axes would only be noise: the sentence says why.
    chart_->setVisible(c.peakStep >= 0);
    table_->setVisible(c.peakStep >= 0);
    if (c.peakStep < 0) {
        summary_->setText(tr("No memory timeline: partition a joint graph."));
        return;
    }
    QString text = tr("Peak %1 at %2 (step %3 of %4, %5); %6 live between forward and backward.")
                       .arg(views::formatBytes(c.peakBytes), c.nodes[size_t(c.peakStep)])
                       .arg(c.peakStep)
                       .arg(c.size())
                       .arg(c.peakStep < c.forwardSteps ? tr("forward") : tr("backward"))
                       .arg(c.forwardSteps > 0 ? views::formatBytes(c.liveBytes[size_t(c.forwardSteps - 1)])
                                               : QStringLiteral("0 B"));
    // Why a lower budget may not move the peak: it bounds what is saved across, not the backward's own peak.
    if (c.peakStep >= c.forwardSteps && c.forwardSteps > 0)
        text += tr(" The peak is in the backward: the memory budget bounds what is saved between forward and "
                   "backward, not the backward's own working set.");
    if (const auto& t = model_->torchs(); t && t->peakStep >= 0)
        text += tr(" Torch's decision: peak %1 at %2.")
                    .arg(views::formatBytes(t->peakBytes), t->nodes[size_t(t->peakStep)]);
    summary_->setText(text);
}

bool MemoryPanel::eventFilter(QObject* watched, QEvent* event) {
    if (watched == chart_->viewport() && event->type() == QEvent::MouseButtonPress) {
        const auto* mouse = static_cast<QMouseEvent*>(event);
        if (mouse->button() == Qt::LeftButton) {
            QChart* chart = chart_->chart();
            const QPointF scene = chart_->mapToScene(mouse->position().toPoint());
            if (chart->plotArea().contains(chart->mapFromScene(scene))) {
                activateStep(stepAt(chart->mapToValue(chart->mapFromScene(scene), ours_)));
                return true;
            }
        }
    }
    return QWidget::eventFilter(watched, event);
}

QString MemoryPanel::summary() const {
    return summary_->text();
}

int MemoryPanel::stepAt(const QPointF& value) const {
    const int n = model_->ours().size();
    if (n == 0)
        return -1;
    return std::clamp(int(std::lround(value.x())), 0, n - 1);
}

QPoint MemoryPanel::viewportPointOfStep(int step) const {
    const views::MemoryCurve& c = model_->ours();
    if (step < 0 || step >= c.size())
        return {};
    QChart* chart = chart_->chart();
    const QPointF inChart =
        chart->mapToPosition(QPointF(step, double(c.liveBytes[size_t(step)]) / kMiB), ours_);
    return chart_->mapFromScene(chart->mapToScene(inChart));
}

void MemoryPanel::activateStep(int step) {
    if (step < 0 || step >= model_->ours().size())
        return;
    table_->selectRow(step);
    emit nodeActivated(model_->ours().nodes[size_t(step)]);
}

} // namespace jointscope::gui
