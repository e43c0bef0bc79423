#include "PartitionPanel.h"

#include "ops/Ruleset.h"

#include "PartitionDocument.h"
#include "models/NodeFormat.h"
#include "models/PartitionModel.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QPushButton>
#include <QScatterSeries>
#include <QSlider>
#include <QTabWidget>
#include <QTreeView>
#include <QVBoxLayout>
#include <QValueAxis>

#include <cmath>

namespace jointscope::gui {

using namespace jointscope::partition;

namespace {

constexpr int kBudgetSteps = 100;

} // namespace

PartitionPanel::PartitionPanel(PartitionDocument* document, QWidget* parent)
    : QWidget(parent), doc_(document), model_(new views::PartitionModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    ruleset_ = new QComboBox(this);
    ruleset_->addItem(tr("auto (the graph's torch version)"), QString());
    for (std::string_view name : builtinRulesetNames()) {
        const QString text = QString::fromUtf8(name.data(), qsizetype(name.size()));
        ruleset_->addItem(text, text);
    }
    form->addRow(tr("Ruleset"), ruleset_);
    strategy_ = new QComboBox(this);
    strategy_->addItem(tr("min-cut"), int(Strategy::MinCut));
    strategy_->addItem(tr("default"), int(Strategy::Default));
    solver_ = new QComboBox(this);
    solver_->addItem(tr("dp"), int(KnapsackSolver::Dp));
    solver_->addItem(tr("greedy"), int(KnapsackSolver::Greedy));
    solver_->addItem(tr("ilp"), int(KnapsackSolver::Ilp));
    solver_->setToolTip(tr("Knapsack solver used for memory budgets below 1"));
    auto* strategyRow = new QHBoxLayout;
    strategyRow->addWidget(strategy_, 1);
    strategyRow->addWidget(new QLabel(tr("Solver"), this));
    strategyRow->addWidget(solver_, 1);
    form->addRow(tr("Strategy"), strategyRow);
    auto* budgetRow = new QHBoxLayout;
    budget_ = new QSlider(Qt::Horizontal, this);
    budget_->setRange(0, kBudgetSteps);
    budget_->setToolTip(tr("activation_memory_budget: 1 saves what min-cut saves, 0 saves only inputs"));
    budgetLabel_ = new QLabel(this);
    budgetLabel_->setMinimumWidth(40);
    budgetRow->addWidget(budget_, 1);
    budgetRow->addWidget(budgetLabel_);
    form->addRow(tr("Memory budget"), budgetRow);
    layout->addLayout(form);

    auto* buttons = new QHBoxLayout;
    solve_ = new QPushButton(tr("Re-partition (F5)"), this);
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setEnabled(false);
    buttons->addWidget(solve_);
    buttons->addWidget(cancel_);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    status_ = new QLabel(this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(status_);

    // Tabs, not a splitter: the dock shares its column with the inspector, and both lists need the height.
    auto* tabs = new QTabWidget(this);
    tree_ = new QTreeView(tabs);
    tree_->setModel(model_);
    tree_->setUniformRowHeights(true);
    tree_->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    tabs->addTab(tree_, tr("Decision"));

    auto* chart = new QChart;
    chart->setTitle(tr("Pareto: saved memory vs recompute"));
    chart->legend()->hide();
    chart->setMargins(QMargins(2, 2, 2, 2));
    // Small fonts leave the plot the room a dock offers; the axis titles must fit whole (Qt elides them).
    QFont small = chart->titleFont();
    small.setPointSizeF(8);
    chart->setTitleFont(small);
    curve_ = new QLineSeries(chart);
    points_ = new QScatterSeries(chart);
    points_->setMarkerSize(7);
    current_ = new QScatterSeries(chart);
    current_->setMarkerSize(13);
    current_->setColor(QColor(0xdc, 0x26, 0x26));
    chart->addSeries(curve_);
    chart->addSeries(points_);
    chart->addSeries(current_);
    auto* x = new QValueAxis(chart);
    x->setTitleText(tr("saved MiB"));
    x->setLabelFormat(QStringLiteral("%.3g"));
    auto* y = new QValueAxis(chart);
    y->setTitleText(tr("recompute MFLOP"));
    y->setLabelFormat(QStringLiteral("%.3g"));
    for (QValueAxis* axis : {x, y}) {
        axis->setTitleFont(small);
        QFont labels = axis->labelsFont();
        labels.setPointSizeF(7.5);
        axis->setLabelsFont(labels);
    }
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    for (QAbstractSeries* s : {static_cast<QAbstractSeries*>(curve_), static_cast<QAbstractSeries*>(points_),
                               static_cast<QAbstractSeries*>(current_)}) {
        s->attachAxis(x);
        s->attachAxis(y);
    }
    chart_ = new QChartView(chart, tabs);
    chart_->setRenderHint(QPainter::Antialiasing);
    chart_->setToolTip(tr("Click a point to take its memory budget (undoable)"));
    tabs->addTab(chart_, tr("Pareto"));
    // The vertical axis title ("recompute MFLOP") needs the height, but only while the chart is shown: a
    // hidden tab's minimum would still size the dock and squeeze the Inspector above it.
    auto chartMinimum = [this, tabs] {
        chart_->setMinimumSize(tabs->currentWidget() == chart_ ? QSize(300, 260) : QSize(0, 0));
    };
    connect(tabs, &QTabWidget::currentChanged, this, chartMinimum);
    chartMinimum();
    layout->addWidget(tabs, 1);

    connect(points_, &QScatterSeries::clicked, this, [this](const QPointF& p) {
        // The clicked marker: the nearest point in chart coordinates.
        const partition::ParetoPoint* best = nullptr;
        double bestDistance = 0;
        for (const auto& pt : pareto_) {
            const QPointF q = chartPoint(pt);
            const double d = std::hypot(q.x() - p.x(), q.y() - p.y());
            if (!best || d < bestDistance) {
                best = &pt;
                bestDistance = d;
            }
        }
        if (best)
            doc_->setBudget(best->budget);
    });
    connect(tree_, &QTreeView::clicked, this, [this](const QModelIndex& index) {
        const QVariant id = index.siblingAtColumn(0).data(views::PartitionModel::NodeIdRole);
        if (id.isValid())
            emit locateNode(NodeId(id.toUInt()));
    });
    for (QComboBox* box : {ruleset_, strategy_, solver_})
        connect(box, &QComboBox::activated, this, &PartitionPanel::applyOptions);
    connect(budget_, &QSlider::valueChanged, this, [this](int v) {
        budgetLabel_->setText(QString::number(double(v) / kBudgetSteps, 'f', 2));
        if (!syncing_ && !budget_->isSliderDown())
            doc_->setBudget(double(v) / kBudgetSteps);
    });
    connect(budget_, &QSlider::sliderReleased, this,
            [this] { doc_->setBudget(double(budget_->value()) / kBudgetSteps); });
    connect(solve_, &QPushButton::clicked, doc_, &PartitionDocument::solve);
    connect(cancel_, &QPushButton::clicked, doc_, &PartitionDocument::cancel);

    connect(doc_, &PartitionDocument::started, this, [this] {
        cancel_->setEnabled(true);
        status_->setStyleSheet(QString());
        status_->setText(tr("partitioning…"));
    });
    connect(doc_, &PartitionDocument::cancelled, this, [this] {
        cancel_->setEnabled(false);
        status_->setText(tr("cancelled"));
    });
    connect(doc_, &PartitionDocument::failed, this, [this](const QString& message) {
        cancel_->setEnabled(false);
        status_->setStyleSheet(QStringLiteral("color: #b91c1c"));
        status_->setText(
            tr("The engine refused: %1\nUndo (Ctrl+Z) restores the last good partition.").arg(message));
    });
    connect(doc_, &PartitionDocument::finished, this, &PartitionPanel::onFinished);
    connect(doc_, &PartitionDocument::optionsChanged, this, &PartitionPanel::syncFromDocument);
    connect(doc_, &PartitionDocument::paretoReady, this,
            [this](const std::vector<partition::ParetoPoint>& points, double) { onParetoReady(points); });
    connect(doc_, &PartitionDocument::paretoFailed, this, [this](const QString& message) {
        chart_->chart()->setTitle(tr("Pareto failed: %1").arg(message.left(80)));
    });
    syncFromDocument();
}

void PartitionPanel::syncFromDocument() {
    syncing_ = true;
    const EngineOptions& o = doc_->options();
    ruleset_->setCurrentIndex(std::max(0, ruleset_->findData(o.ruleset)));
    strategy_->setCurrentIndex(std::max(0, strategy_->findData(int(o.strategy))));
    solver_->setCurrentIndex(std::max(0, solver_->findData(int(o.solver))));
    budget_->setValue(int(std::lround(o.memoryBudget * kBudgetSteps)));
    budgetLabel_->setText(QString::number(o.memoryBudget, 'f', 2));
    syncing_ = false;
    markBudget();
}

void PartitionPanel::applyOptions() {
    if (syncing_)
        return;
    EngineOptions o = doc_->options();
    o.ruleset = ruleset_->currentData().toString();
    o.strategy = Strategy(strategy_->currentData().toInt());
    o.solver = KnapsackSolver(solver_->currentData().toInt());
    doc_->setOptions(o);
}

QString PartitionPanel::paretoKey() const {
    const EngineOptions& o = doc_->options();
    return QStringLiteral("%1|%2|%3|%4|%5")
        .arg(doc_->graphPath())
        .arg(doc_->graphIndex())
        .arg(doc_->effectiveRuleset())
        .arg(int(o.strategy) * 10 + int(o.solver))
        .arg(QString::fromStdString(doc_->policyJson()));
}

void PartitionPanel::onFinished() {
    cancel_->setEnabled(false);
    const auto result = doc_->result();
    const auto previous = doc_->previous();
    model_->setPinConflicts(result ? result->pinConflicts : std::vector<partition::PinConflict>{});
    if (result) // the memory timeline's peaks (views/models keep no engine logic)
        model_->setPeakBytes(result->memory ? std::optional(result->memory->peakBytes) : std::nullopt,
                             result->torchMemory ? std::optional(result->torchMemory->peakBytes)
                                                 : std::nullopt);
    model_->setLoggedRun(result ? result->logged : std::nullopt);
    model_->setPartition(doc_->graph(), result ? result->partition : nullptr,
                         result ? result->recomputeCost : 0, previous ? previous->partition : nullptr,
                         doc_->torchSaved());
    tree_->expandAll();
    status_->setToolTip(doc_->rulesetReason());
    if (result)
        status_->setText(tr("%1 · %2 · %3 ms")
                             .arg(doc_->effectiveRuleset(),
                                  QString::fromLatin1(escalationName(result->partition->escalation).data()))
                             .arg(result->partition->seconds * 1e3, 0, 'f', 1) +
                         (result->pinConflicts.empty() ? QString()
                                                       : tr(" · ⚠ %n pin(s) overridden by the solve", nullptr,
                                                            int(result->pinConflicts.size()))));
    // The curve depends on everything but the budget: recompute it only when something else changed.
    const QString key = paretoKey();
    if (key != paretoKey_ && doc_->options().strategy == Strategy::MinCut) {
        paretoKey_ = key;
        chart_->chart()->setTitle(tr("Pareto: computing…"));
        doc_->computePareto();
    }
    markBudget();
}

QPointF PartitionPanel::chartPoint(const partition::ParetoPoint& point) const {
    return QPointF(double(point.activationBytes) / xUnit_, point.recomputeCost / yUnit_);
}

void PartitionPanel::onParetoReady(const std::vector<partition::ParetoPoint>& points) {
    pareto_ = points;
    double maxBytes = 0, maxCost = 0;
    for (const auto& pt : points) {
        maxBytes = std::max(maxBytes, double(pt.activationBytes));
        maxCost = std::max(maxCost, pt.recomputeCost);
    }
    // Units that keep the axis labels readable on small and large graphs alike.
    xUnit_ = maxBytes >= double(1 << 30)   ? double(1 << 30)
             : maxBytes >= double(1 << 20) ? double(1 << 20)
                                           : 1024.0;
    yUnit_ = maxCost >= 1e12 ? 1e12 : maxCost >= 1e9 ? 1e9 : maxCost >= 1e6 ? 1e6 : 1e3;
    const QString xName = xUnit_ >= double(1 << 30)   ? tr("saved activations, GiB")
                          : xUnit_ >= double(1 << 20) ? tr("saved activations, MiB")
                                                      : tr("saved activations, KiB");
    const QString yName = yUnit_ >= 1e12  ? tr("TFLOP")
                          : yUnit_ >= 1e9 ? tr("GFLOP")
                          : yUnit_ >= 1e6 ? tr("MFLOP")
                                          : tr("kFLOP");
    QList<QPointF> xy;
    for (const auto& pt : points)
        xy.append(chartPoint(pt));
    curve_->replace(xy);
    points_->replace(xy);
    const auto axes = chart_->chart()->axes();
    for (QAbstractAxis* axis : axes) {
        auto* value = static_cast<QValueAxis*>(axis);
        const bool horizontal = axis->orientation() == Qt::Horizontal;
        value->setRange(0, (horizontal ? maxBytes / xUnit_ : maxCost / yUnit_) * 1.08 + 1e-9);
        value->setTitleText(horizontal ? xName : tr("recompute %1").arg(yName));
    }
    chart_->chart()->setTitle(tr("Pareto: saved activations vs recompute (%1 budgets)").arg(points.size()));
    markBudget();
}

void PartitionPanel::markBudget() {
    if (!current_)
        return;
    QList<QPointF> mark;
    if (const auto result = doc_->result())
        mark.append(
            QPointF(double(result->partition->activationBytes) / xUnit_, result->recomputeCost / yUnit_));
    current_->replace(mark);
}

} // namespace jointscope::gui
