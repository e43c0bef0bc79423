#include "ShardingPanel.h"

#include "ShardingDocument.h"
#include "models/ShardingModel.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTreeView>
#include <QVBoxLayout>

namespace jointscope::gui {

using views::ShardingModel;

namespace {

QTreeView* makeTree(QAbstractItemModel* model, QWidget* parent) {
    auto* proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(ShardingModel::ValueRole);
    auto* tree = new QTreeView(parent);
    tree->setModel(proxy);
    tree->setUniformRowHeights(true);
    tree->setSortingEnabled(true);
    tree->sortByColumn(-1, Qt::AscendingOrder); // plan order until a header is clicked
    tree->setAlternatingRowColors(true);
    tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    return tree;
}

QString costLine(const QString& name, const sharding::PlanCost& c) {
    return QStringLiteral("%1 %2 (compute %3, comm %4)")
        .arg(name, views::formatMicros(c.totalUs()), views::formatMicros(c.computeUs),
             views::formatMicros(c.commUs));
}

} // namespace

ShardingPanel::ShardingPanel(ShardingDocument* document, QWidget* parent)
    : QWidget(parent), doc_(document), model_(new ShardingModel(this)), compare_(new ShardingModel(this)) {
    compare_->setDifferencesOnly(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    auto* meshRow = new QHBoxLayout;
    shape_ = new QLineEdit(QStringLiteral("2x2"), this);
    shape_->setToolTip(tr("Mesh sizes, outermost first: 2x2, 8x8, 4"));
    names_ = new QLineEdit(QStringLiteral("dp,tp"), this);
    names_->setToolTip(tr("Comma-separated mesh dimension names (optional)"));
    topology_ = new QComboBox(this);
    for (const sharding::Topology& t : sharding::knownTopologies())
        topology_->addItem(QString::fromStdString(t.name));
    topology_->setToolTip(tr("Link bandwidths and latencies, and the GPU of the compute roofline"));
    meshRow->addWidget(shape_, 1);
    meshRow->addWidget(new QLabel(tr("Names"), this));
    meshRow->addWidget(names_, 1);
    meshRow->addWidget(topology_);
    form->addRow(tr("Mesh"), meshRow);
    layout->addLayout(form);

    auto* buttons = new QHBoxLayout;
    solve_ = new QPushButton(tr("Solve"), this);
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setEnabled(false);
    busy_ = new QProgressBar(this);
    busy_->setRange(0, 0); // the ILP reports no progress
    busy_->setMaximumWidth(90);
    busy_->setVisible(false);
    buttons->addWidget(solve_);
    buttons->addWidget(cancel_);
    buttons->addWidget(busy_);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    status_ = new QLabel(tr("Solve to place every node on the mesh"), this);
    status_->setObjectName(QStringLiteral("shardingStatus"));
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(status_);

    tabs_ = new QTabWidget(this);
    tree_ = makeTree(model_, tabs_);
    tabs_->addTab(tree_, tr("Plan"));
    auto* comparePage = new QWidget(tabs_);
    auto* compareLayout = new QVBoxLayout(comparePage);
    compareLayout->setContentsMargins(0, 4, 0, 0);
    auto* compareButtons = new QHBoxLayout;
    auto* store = new QPushButton(tr("Store current plan"), comparePage);
    store->setToolTip(tr("Keep this plan; later plans are compared with it"));
    compareStatus_ = new QLabel(tr("No stored plan"), comparePage);
    compareStatus_->setWordWrap(true);
    compareButtons->addWidget(store);
    auto* loadAutoparallel = new QPushButton(tr("Load autoparallel plan…"), comparePage);
    loadAutoparallel->setToolTip(tr("Compare with the plan autoparallel chose: a TORCH_TRACE log with its "
                                    "autoparallel_solution artifact, or that JSON"));
    compareButtons->addWidget(loadAutoparallel);
    compareButtons->addWidget(compareStatus_, 1);
    compareLayout->addLayout(compareButtons);
    compareTree_ = makeTree(compare_, comparePage);
    // Side by side: the two placements and the two costs of each differing node.
    for (int c : {int(ShardingModel::InputsColumn), int(ShardingModel::ComputeColumn),
                  int(ShardingModel::CommColumn), int(ShardingModel::PinnedColumn)})
        compareTree_->setColumnHidden(c, true);
    compareLayout->addWidget(compareTree_, 1);
    tabs_->addTab(comparePage, tr("Compare"));
    layout->addWidget(tabs_, 1);
    tree_->setColumnHidden(ShardingModel::StoredOutputColumn, true);
    tree_->setColumnHidden(ShardingModel::StoredTotalColumn, true);

    connect(solve_, &QPushButton::clicked, this, &ShardingPanel::solveWithFields);
    connect(shape_, &QLineEdit::returnPressed, this, &ShardingPanel::solveWithFields);
    connect(names_, &QLineEdit::returnPressed, this, &ShardingPanel::solveWithFields);
    connect(cancel_, &QPushButton::clicked, doc_, &ShardingDocument::cancel);
    connect(store, &QPushButton::clicked, doc_, &ShardingDocument::storeCurrent);
    connect(loadAutoparallel, &QPushButton::clicked, this, [this] {
        const QString path =
            QFileDialog::getOpenFileName(this, tr("autoparallel plan"), QString(),
                                         tr("TORCH_TRACE logs and JSON (*.log *.json);;All files (*)"));
        if (!path.isEmpty())
            this->loadAutoparallelPlan(path);
    });
    connect(doc_, &ShardingDocument::started, this, [this] {
        cancel_->setEnabled(true);
        busy_->setVisible(true);
        status_->setText(tr("Solving on %1…").arg(shape_->text()));
    });
    connect(doc_, &ShardingDocument::finished, this, &ShardingPanel::onFinished);
    connect(doc_, &ShardingDocument::failed, this, [this](const QString& message) {
        cancel_->setEnabled(false);
        busy_->setVisible(false);
        status_->setText(
            doc_->result()
                ? tr("<b>Refused:</b> %1<br>Showing the last feasible plan.").arg(message.toHtmlEscaped())
                : tr("<b>Refused:</b> %1").arg(message.toHtmlEscaped()));
    });
    connect(doc_, &ShardingDocument::cancelled, this, [this] {
        cancel_->setEnabled(false);
        busy_->setVisible(false);
        status_->setText(tr("Cancelled"));
    });
    connect(doc_, &ShardingDocument::storedChanged, this, &ShardingPanel::refresh);
    connect(doc_, &ShardingDocument::comparisonFailed, this, [this](const QString& message) {
        compareStatus_->setText(tr("<b>autoparallel plan:</b> %1").arg(message.toHtmlEscaped()));
    });
    for (QTreeView* tree : {tree_, compareTree_})
        connect(tree, &QTreeView::clicked, this, [this](const QModelIndex& index) {
            const QVariant id = index.data(ShardingModel::NodeIdRole);
            if (id.isValid())
                emit locateNode(NodeId(id.toULongLong()));
        });
}

void ShardingPanel::setMeshFields(const QString& shape, const QString& names, const QString& topology) {
    shape_->setText(shape);
    names_->setText(names);
    topology_->setCurrentText(topology);
}

bool ShardingPanel::solveWithFields() {
    const Expected<MeshSettings> settings =
        ShardingDocument::parseMesh(shape_->text(), names_->text(), topology_->currentText());
    if (!settings) {
        status_->setText(
            tr("<b>Mesh:</b> %1").arg(QString::fromStdString(settings.error().message).toHtmlEscaped()));
        return false;
    }
    if (!doc_->graph()) {
        status_->setText(tr("Open a joint graph first"));
        return false;
    }
    doc_->setMesh(*settings);
    doc_->solve();
    return true;
}

void ShardingPanel::loadAutoparallelPlan(const QString& path) {
    compareStatus_->setText(tr("Reading autoparallel's plan from %1…").arg(path.toHtmlEscaped()));
    doc_->loadAutoparallelPlan(path);
}

void ShardingPanel::showCompare() {
    for (int i = 0; i < tabs_->count(); ++i)
        if (tabs_->tabText(i) == tr("Compare"))
            tabs_->setCurrentIndex(i);
}

QString ShardingPanel::compareStatusText() const {
    return compareStatus_->text();
}

void ShardingPanel::onFinished() {
    cancel_->setEnabled(false);
    busy_->setVisible(false);
    refresh();
}

void ShardingPanel::refresh() {
    const auto r = doc_->result();
    const Graph* graph = doc_->graph();
    if (!r || !graph) {
        model_->clear();
        compare_->clear();
        compareStatus_->setText(tr("No stored plan"));
        // Another graph: the summary of a plan it never had goes too.
        status_->setText(graph ? tr("Solve to place every node on the mesh")
                               : tr("Open a joint graph first"));
        return;
    }
    const auto report = std::shared_ptr<const sharding::PlanReport>(r, &r->report);
    model_->setPlan(graph, report, r->pinnedBy, r->replicate, r->dataParallel);
    compare_->setPlan(graph, report, r->pinnedBy, r->replicate, r->dataParallel);
    const auto stored = doc_->stored();
    const auto storedReport =
        stored ? std::shared_ptr<const sharding::PlanReport>(stored, &stored->report) : nullptr;
    model_->setStored(storedReport);
    compare_->setStored(storedReport);
    QStringList lines;
    lines << QStringLiteral("<b>%1</b>").arg(costLine(tr("plan"), r->report.total).toHtmlEscaped());
    QStringList baselines{costLine(tr("replicate"), r->replicate)};
    if (r->dataParallel)
        baselines << costLine(tr("data parallel"), *r->dataParallel);
    else
        baselines
            << tr("no data parallel: %1").arg(QString::fromStdString(r->dataParallelWhyNot)).toHtmlEscaped();
    lines << baselines.join(QStringLiteral("<br>"));
    if (!r->replicatedWhy.empty())
        lines << QString::fromStdString(r->replicatedWhy).toHtmlEscaped();
    lines << tr("mesh %1, %2 pin(s), %3 redistributing edge(s), %4 s%5")
                 .arg(QString::fromStdString(r->mesh.str()))
                 .arg(r->pins.size())
                 .arg(r->report.transitions.size())
                 .arg(r->seconds, 0, 'f', 2)
                 .arg(r->plan.optimal ? QString() : tr(", not proven optimal"));
    // The certificate the CLI prints: how far from the optimum the plan may be.
    lines << tr("lower bound %1, gap %2 % (%3 solve)")
                 .arg(views::formatMicros(r->plan.lowerBound))
                 .arg(100 * r->plan.gap(), 0, 'f', 2)
                 .arg(r->plan.decomposed ? tr("decomposed") : tr("exact"));
    status_->setText(lines.join(QStringLiteral("<br>")));
    if (const auto c = doc_->storedComparison(); stored && c)
        compareStatus_->setText(
            tr("jointscope %1 vs autoparallel's plan %2 under the same model (autoparallel's own objective "
               "%3); %4 node(s) differ%5")
                .arg(views::formatMicros(r->report.total.totalUs()),
                     views::formatMicros(stored->report.total.totalUs()))
                .arg(c->theirs.total, 0, 'g', 6)
                .arg(compare_->differenceCount())
                .arg(c->mapped.unmatched.empty() ? QString()
                                                 : tr(", %1 with a placement no jointscope option has")
                                                       .arg(c->mapped.unmatched.size())));
    else if (stored)
        compareStatus_->setText(tr("Current %1 vs stored %2 (%3): %4 node(s) differ")
                                    .arg(views::formatMicros(r->report.total.totalUs()),
                                         views::formatMicros(stored->report.total.totalUs()),
                                         QString::fromStdString(stored->mesh.str()))
                                    .arg(compare_->differenceCount()));
    else
        compareStatus_->setText(tr("No stored plan: store one, change pins or the mesh, solve again"));
    for (QTreeView* tree : {tree_, compareTree_})
        tree->expandAll();
}

} // namespace jointscope::gui
