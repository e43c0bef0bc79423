#include "panels/RuntimePanel.h"

#include "canvas/GraphScene.h"
#include "canvas/HeatLegend.h"
#include "models/CliJob.h"
#include "models/ProfileModel.h"
#include "models/ValidationModel.h"
#include "panels/ResultTable.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

namespace jointscope::views {

namespace {

QTableView* makeTable(QAbstractItemModel* model, int sortRole, int sortColumn, Qt::SortOrder order,
                      QWidget* parent) {
    auto* proxy = new QSortFilterProxyModel(parent);
    proxy->setSourceModel(model);
    proxy->setSortRole(sortRole);
    auto* table = new QTableView(parent);
    table->setModel(proxy);
    styleResultTable(table, sortColumn, order);
    table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    return table;
}

// Whether `body` is a HOP body of `graph`, at any depth.
bool isBodyOf(const Graph& graph, const Graph* body) {
    for (const auto& sub : graph.subgraphs())
        if (sub.get() == body || (sub && isBodyOf(*sub, body)))
            return true;
    return false;
}

} // namespace

RuntimePanel::RuntimePanel(GraphScene* scene, QWidget* canvas, QWidget* parent)
    : QWidget(parent), scene_(scene), legend_(new HeatLegend(canvas)), job_(new CliJob(this)),
      devicesJob_(new CliJob(this)), profileModel_(new ProfileModel(this)),
      validationModel_(new ValidationModel(this)) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);

    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Device:"), this));
    device_ = new QComboBox(this);
    device_->setObjectName(QStringLiteral("deviceCombo"));
    device_->setEditable(true);
    device_->addItems({QStringLiteral("cpu"), QStringLiteral("cuda:0")});
    device_->setToolTip(tr("cpu, cuda or cuda:N (jointscope-cli devices lists them)"));
    controls->addWidget(device_);
    controls->addWidget(new QLabel(tr("Reps:"), this));
    reps_ = new QSpinBox(this);
    reps_->setRange(1, 100000);
    reps_->setValue(10);
    reps_->setToolTip(tr("Timed runs per op signature; the median is shown"));
    controls->addWidget(reps_);
    validateButton_ = new QPushButton(tr("Validate"), this);
    validateButton_->setToolTip(
        tr("Run the joint graph and the partitioned forward + backward; compare (Ctrl+Shift+V)"));
    profileButton_ = new QPushButton(tr("Profile"), this);
    profileButton_->setToolTip(tr("Time every op on real kernels (Ctrl+Shift+P)"));
    remeasureButton_ = new QPushButton(tr("Re-measure"), this);
    remeasureButton_->setObjectName(QStringLiteral("remeasureButton"));
    remeasureButton_->setToolTip(tr("Time every op again, replacing the profile DB's times"));
    controls->addWidget(validateButton_);
    controls->addWidget(profileButton_);
    controls->addWidget(remeasureButton_);
    controls->addStretch(1);
    layout->addLayout(controls);
    // The run's progress on a row of its own: one row of every control made the dock ~710 px wide at least,
    // and the Log beside it a column of single words.
    auto* running = new QHBoxLayout;
    progress_ = new QProgressBar(this);
    progress_->setRange(0, 1);
    progress_->setValue(0);
    running->addWidget(progress_, 1);
    cancelButton_ = new QPushButton(tr("Cancel"), this);
    cancelButton_->setEnabled(false);
    running->addWidget(cancelButton_);
    heatBox_ = new QCheckBox(tr("Heat map"), this);
    heatBox_->setChecked(true);
    heatBox_->setToolTip(tr("Fill nodes by measured time on the canvas"));
    running->addWidget(heatBox_);
    layout->addLayout(running);

    partition_ = new QLineEdit(this);
    partition_->setPlaceholderText(tr("decision.json to validate (empty: the partition shown, else torch's "
                                      "decision recorded in the file)"));
    partition_->setClearButtonEnabled(true);
    layout->addWidget(partition_);

    status_ = new QLabel(tr("Validate or profile the graph shown."), this);
    status_->setWordWrap(true);
    status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(status_);

    tabs_ = new QTabWidget(this);
    profileTable_ =
        makeTable(profileModel_, ProfileModel::SortRole, ProfileModel::TimeColumn, Qt::DescendingOrder, this);
    validationTable_ = makeTable(validationModel_, ValidationModel::SortRole, -1, Qt::AscendingOrder, this);
    profileTable_->setObjectName(QStringLiteral("profileTable"));
    validationTable_->setObjectName(QStringLiteral("validationTable"));
    tabs_->addTab(profileTable_, tr("Profile"));
    tabs_->addTab(validationTable_, tr("Validation"));
    tabs_->setMinimumHeight(150); // a handful of result rows even when the dock area is squeezed
    layout->addWidget(tabs_, 1);

    connect(validateButton_, &QPushButton::clicked, this, &RuntimePanel::validate);
    connect(profileButton_, &QPushButton::clicked, this, &RuntimePanel::profile);
    connect(remeasureButton_, &QPushButton::clicked, this, &RuntimePanel::remeasure);
    connect(cancelButton_, &QPushButton::clicked, job_, &CliJob::cancel);
    connect(job_, &CliJob::progress, this, &RuntimePanel::onProgress);
    connect(job_, &CliJob::finished, this, &RuntimePanel::onFinished);
    connect(devicesJob_, &CliJob::finished, this, &RuntimePanel::onDevicesListed);
    connect(heatBox_, &QCheckBox::toggled, this, &RuntimePanel::applyOverlays);
    for (QTableView* table : {profileTable_, validationTable_}) {
        const int role =
            table == profileTable_ ? int(ProfileModel::NodeIdRole) : int(ValidationModel::NodeIdRole);
        connect(table, &QTableView::clicked, this, [this, role](const QModelIndex& index) {
            const NodeId id = index.data(role).toUInt();
            if (id != kNoNode)
                emit nodeRequested(id);
        });
    }
}

RuntimePanel::~RuntimePanel() {
    if (!decisionPath_.isEmpty())
        QFile::remove(decisionPath_);
}

void RuntimePanel::setReps(int reps) {
    reps_->setValue(reps);
}

void RuntimePanel::setDevice(const QString& device) {
    device_->setCurrentText(device);
}

void RuntimePanel::listDevices() {
    if (devicesJob_->running())
        return;
    CliRequest request;
    request.kind = CliRequest::Kind::Devices;
    devicesJob_->start(request);
}

QStringList RuntimePanel::devices() const {
    QStringList specs;
    for (int i = 0; i < device_->count(); ++i)
        specs << device_->itemText(i);
    return specs;
}

void RuntimePanel::onDevicesListed() {
    const std::vector<CliDevice> devices = devicesJob_->state() == CliJob::State::Succeeded
                                               ? parseDeviceList(devicesJob_->result())
                                               : std::vector<CliDevice>{};
    if (devices.empty()) {
        emit message(tr("Cannot list devices: %1").arg(devicesJob_->error()));
        return;
    }
    const QString current = device_->currentText();
    device_->clear();
    for (const CliDevice& d : devices) {
        device_->addItem(d.spec);
        device_->setItemData(device_->count() - 1, d.name, Qt::ToolTipRole);
    }
    // A choice made while the list was loading stays, even a device this machine lacks (the CLI says so).
    device_->setCurrentText(current);
}

void RuntimePanel::sceneGraphChanged() {
    applyOverlays();
}

void RuntimePanel::setGraph(const QString& file, const QString& graphSpec, const Graph* graph) {
    if (job_->running())
        job_->cancel();
    if (scene_) { // the scene keeps overlays for a graph that comes back; this one is gone
        scene_->setHeat({});
        scene_->setMismatches({});
    }
    file_ = file;
    graphSpec_ = graphSpec;
    graph_ = graph;
    profileModel_->clear();
    validationModel_->clear();
    legend_->hide();
    status_->setText(tr("Validate or profile the graph shown."));
    progress_->setRange(0, 1);
    progress_->setValue(0);
}

void RuntimePanel::validate() {
    if (job_->running() || file_.isEmpty())
        return;
    CliRequest request = newRequest(CliRequest::Kind::Validate);
    request.partition = partition_->text().trimmed();
    QString what = request.partition.isEmpty() ? tr("the decision recorded in the file") : request.partition;
    if (request.partition.isEmpty() && decisionSource_) {
        const std::string json = decisionSource_();
        if (!json.empty()) {
            decisionPath_ = QDir::temp().filePath(
                QStringLiteral("jointscope-decision-%1.json").arg(QCoreApplication::applicationPid()));
            QSaveFile out(decisionPath_);
            if (out.open(QIODevice::WriteOnly) &&
                out.write(json.data(), qint64(json.size())) == qint64(json.size()) && out.commit()) {
                request.partition = decisionPath_;
                what = tr("the partition shown");
            }
        }
    }
    start(request, tr("Validating %1 (%2) on %3…").arg(QFileInfo(file_).fileName(), what, request.device),
          validationTable_);
}

void RuntimePanel::profile() {
    startProfile(false);
}

void RuntimePanel::remeasure() {
    startProfile(true);
}

void RuntimePanel::startProfile(bool remeasure) {
    if (job_->running() || file_.isEmpty())
        return;
    CliRequest request = newRequest(CliRequest::Kind::Profile);
    request.reps = reps_->value();
    request.remeasure = remeasure;
    start(request,
          (remeasure ? tr("Re-measuring %1 on %2…") : tr("Profiling %1 on %2…"))
              .arg(QFileInfo(file_).fileName(), request.device),
          profileTable_);
}

CliRequest RuntimePanel::newRequest(CliRequest::Kind kind) const {
    CliRequest request;
    request.kind = kind;
    request.file = file_;
    request.graph = graphSpec_;
    request.device = device_->currentText().trimmed();
    return request;
}

void RuntimePanel::start(const CliRequest& request, const QString& status, QTableView* table) {
    status_->setText(status);
    progress_->setRange(0, 0); // a busy indicator until the job reports progress (validate never does)
    setRunning(true);
    tabs_->setCurrentWidget(table);
    if (!job_->start(request))
        setRunning(false);
}

void RuntimePanel::setRunning(bool running) {
    validateButton_->setEnabled(!running);
    profileButton_->setEnabled(!running);
    remeasureButton_->setEnabled(!running);
    cancelButton_->setEnabled(running);
    if (!running && progress_->maximum() == 0)
        progress_->setRange(0, 1);
}

void RuntimePanel::onProgress(int value, int maximum) {
    progress_->setRange(0, std::max(maximum, 1));
    progress_->setValue(value);
    progress_->setFormat(tr("%v / %m ops"));
}

void RuntimePanel::onFinished() {
    setRunning(false);
    const bool validating = job_->request().kind == CliRequest::Kind::Validate;
    switch (job_->state()) {
    case CliJob::State::Succeeded:
        if (validating) {
            validationModel_->setResult(job_->result(), graph_);
            validationTable_->resizeColumnsToContents();
            status_->setText(validationModel_->summary());
        } else {
            showProfile();
        }
        progress_->setValue(progress_->maximum());
        applyOverlays();
        emit message(status_->text());
        return;
    case CliJob::State::Cancelled:
        // A cancelled profile keeps the ops measured so far (they are in the profile DB too).
        if (!validating && !job_->result().isEmpty()) {
            showProfile();
            applyOverlays();
        } else {
            status_->setText(tr("Cancelled."));
            progress_->setValue(0);
        }
        emit message(job_->error());
        return;
    default:
        status_->setText(
            QStringLiteral("<span style='color:#dc2626'>%1</span>")
                .arg(job_->error().toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>"))));
        progress_->setValue(0);
        emit message(job_->error());
        return;
    }
}

void RuntimePanel::showProfile() {
    profileModel_->setResult(job_->result(), graph_);
    profileTable_->resizeColumnsToContents();
    status_->setText(profileModel_->summary());
}

void RuntimePanel::applyOverlays() {
    if (!scene_)
        return;
    const bool heat = heatBox_->isChecked() && profileModel_->totals().timed > 0 && graph_;
    const std::vector<double> times = heat ? profileModel_->nodeTimes(graph_->size()) : std::vector<double>{};
    const Graph* shown = scene_->graph();
    const bool body = shown && shown != graph_ && graph_ && isBodyOf(*graph_, shown);
    if (shown == graph_) {
        scene_->setHeat(times);
        scene_->setMismatches(validationModel_->mismatchedNodes());
    }
    // Results came while a body was open: the scene binds overlays to the graph shown, so they are set when
    // the profiled graph is back. The legend stays up inside its bodies: the profile is still the one in
    // force, though a body's nodes are not timed one by one.
    if (!heat || (shown != graph_ && !body)) {
        legend_->hide();
        return;
    }
    legend_->setScale(HeatScale::of(times), profileModel_->totals().sumUs, profileModel_->device());
    legend_->setNote(
        body ? tr("HOP body: timed as one call in %1")
                   .arg(graph_->name.empty() ? tr("the parent graph") : QString::fromStdString(graph_->name))
             : QString());
    legend_->show();
    legend_->raise();
}

} // namespace jointscope::views
