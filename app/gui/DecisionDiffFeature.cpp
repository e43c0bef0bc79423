#include "DecisionDiffFeature.h"

#include "CanvasFeature.h"
#include "ExportFolder.h"
#include "PartitionDocument.h"
#include "models/DecisionDiffModel.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace jointscope::gui {

DecisionDiffFeature::DecisionDiffFeature(const FeatureContext& context, PartitionDocument* document,
                                         QObject* parent)
    : Feature(parent), ctx_(context), document_(document), model_(new views::DecisionDiffModel(this)) {
    createDock();
    actions_.keep = new QAction(tr("&Keep This Decision"), ctx_.window);
    actions_.keep->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_K));
    actions_.keep->setToolTip(tr("Compare the next decisions (another budget, a pin) with the one shown"));
    connect(actions_.keep, &QAction::triggered, this, [this] { keepDecision(); });
    actions_.openFile = new QAction(tr("Compare Decision with &File…"), ctx_.window);
    actions_.openFile->setToolTip(tr("A decision JSON (partition --json, File › Export Partition)"));
    connect(actions_.openFile, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(ctx_.window, tr("Decision to compare with"),
                                                          exportFolder(document_->graphPath()),
                                                          tr("Decision JSON (*.json);;All files (*)"));
        if (!path.isEmpty())
            openDecision(path);
    });
    actions_.showDock = dock_->toggleViewAction();
    connect(document_, &PartitionDocument::finished, this,
            [this](std::shared_ptr<const PartitionResult> result) { resultChanged(result); });
    connect(document_, &PartitionDocument::failed, this, [this] { resultChanged(nullptr); });
}

DecisionDiffFeature::~DecisionDiffFeature() = default;

void DecisionDiffFeature::createDock() {
    auto* body = new QWidget(ctx_.window);
    auto* layout = new QVBoxLayout(body);
    auto* row = new QHBoxLayout;
    picker_ = new QComboBox(body);
    picker_->setToolTip(tr("The decision the one shown is compared with"));
    picker_->setPlaceholderText(tr("no baseline yet"));
    picker_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    picker_->setMinimumContentsLength(24);
    connect(picker_, &QComboBox::currentIndexChanged, this, [this] { compare(); });
    auto* keep = new QPushButton(tr("Keep This Decision"), body);
    connect(keep, &QPushButton::clicked, this, [this] { keepDecision(); });
    auto* open = new QPushButton(tr("Open…"), body);
    connect(open, &QPushButton::clicked, this, [this] { actions_.openFile->trigger(); });
    row->addWidget(new QLabel(tr("Compare with"), body));
    row->addWidget(picker_, 1);
    row->addWidget(keep);
    row->addWidget(open);
    layout->addLayout(row);
    summary_ = new QLabel(body);
    summary_->setWordWrap(true);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(summary_);
    table_ = new QTableView(body);
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setWordWrap(false);
    connect(table_, &QTableView::activated, this, [this](const QModelIndex& index) {
        selectNode(index.data(views::DecisionDiffModel::NodeNameRole).toString());
    });
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& index) {
                if (index.isValid())
                    selectNode(index.data(views::DecisionDiffModel::NodeNameRole).toString());
            });
    layout->addWidget(table_, 1);
    dock_ = newDock(tr("Decision Diff"), QStringLiteral("decisionDiffDock"), body, ctx_.window);
    summary_->setText(model_->summary());
}

QStringList DecisionDiffFeature::baselines() const {
    QStringList out;
    for (const Baseline& b : baselines_)
        out << b.label;
    return out;
}

int DecisionDiffFeature::baseline() const {
    return picker_->currentIndex();
}

void DecisionDiffFeature::setBaseline(int row) {
    picker_->setCurrentIndex(row);
}

QString DecisionDiffFeature::summaryText() const {
    return summary_->text();
}

void DecisionDiffFeature::addBaseline(Baseline baseline) {
    baselines_.push_back(std::move(baseline));
    picker_->addItem(baselines_.back().label);
    picker_->setCurrentIndex(picker_->count() - 1); // compares
    dock_->show();
    dock_->raise();
}

bool DecisionDiffFeature::keepDecision() {
    const std::shared_ptr<const PartitionResult> result = document_->result();
    if (!result || !here_) {
        ctx_.log(tr("Nothing to keep: no decision is shown"));
        return false;
    }
    QString label = tr("kept %1: budget %2").arg(++kept_).arg(result->partition->memoryBudget, 0, 'f', 2);
    if (!result->edits.empty())
        label += tr(", %n pin(s)", nullptr, int(result->edits.size()));
    partition::DecisionDocument kept = *here_;
    kept.file = tr("kept %1").arg(kept_).toStdString();
    addBaseline({label, std::move(kept)});
    return true;
}

bool DecisionDiffFeature::openDecision(const QString& path) {
    Expected<partition::DecisionDocument> doc = partition::readDecisionFile(path.toStdString());
    if (!doc) {
        ctx_.reportError(tr("Cannot compare with %1").arg(QFileInfo(path).fileName()), doc.error());
        return false;
    }
    doc->file = QFileInfo(path).fileName().toStdString();
    addBaseline({QFileInfo(path).fileName(), doc.take()});
    return true;
}

void DecisionDiffFeature::setGraph(const ShownGraph&) {
    // Decisions of the previous graph name its nodes: none of them is a baseline for this one.
    const QSignalBlocker quiet(picker_);
    picker_->clear();
    baselines_.clear();
    here_.reset();
    kept_ = 0;
    compare();
}

void DecisionDiffFeature::resultChanged(const std::shared_ptr<const PartitionResult>& result) {
    here_.reset();
    if (result && result->partition)
        here_ = partition::decisionDocumentOf(*result->partition, tr("Here").toStdString());
    // torch's decision is re-evaluated with each result (the same saved set, the ruleset of the solve).
    auto torchs =
        std::find_if(baselines_.begin(), baselines_.end(), [](const Baseline& b) { return b.torchs; });
    if (result && result->torchPartition) {
        partition::DecisionDocument doc =
            partition::decisionDocumentOf(*result->torchPartition, tr("torch's decision").toStdString());
        doc.decidedBy = tr("recorded in the file").toStdString(); // not solved here: evaluated as torch saved
        if (torchs != baselines_.end()) {
            torchs->document = std::move(doc);
        } else {
            const QSignalBlocker quiet(picker_); // the first baseline: the dock compares below
            baselines_.insert(baselines_.begin(), {tr("torch's decision"), std::move(doc), true});
            picker_->insertItem(0, baselines_.front().label);
            picker_->setCurrentIndex(picker_->currentIndex() < 0 ? 0 : picker_->currentIndex());
        }
    }
    compare();
}

void DecisionDiffFeature::compare() {
    const int row = picker_->currentIndex();
    if (!here_ || row < 0 || size_t(row) >= baselines_.size())
        model_->clear();
    else
        model_->setDecisions(*here_, baselines_[size_t(row)].document);
    table_->resizeColumnsToContents();
    summary_->setText(model_->summary());
}

void DecisionDiffFeature::selectNode(const QString& name) {
    if (ctx_.canvas)
        ctx_.canvas->selectNodeOrSay(name);
}

std::vector<DockPlacement> DecisionDiffFeature::docks() const {
    // A tab beside the Memory Timeline: both follow the decision shown.
    return {DockPlacement{dock_, Qt::BottomDockWidgetArea, DockPlacement::Join::Tab}};
}

std::vector<MenuEntry> DecisionDiffFeature::menuEntries() const {
    return {{MenuId::Tools, actions_.keep},
            {MenuId::Tools, actions_.openFile},
            {MenuId::View, actions_.showDock}};
}

} // namespace jointscope::gui
