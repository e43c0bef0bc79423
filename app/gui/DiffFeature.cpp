#include "DiffFeature.h"

#include "CanvasFeature.h"
#include "canvas/DiffOverlay.h"
#include "canvas/GraphScene.h"
#include "io/RankLogs.h"
#include "models/DiffModel.h"
#include "models/GraphTitlesModel.h"

#include <QAction>
#include <QComboBox>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMainWindow>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <map>
#include <optional>
#include <string_view>

namespace jointscope::gui {
namespace {

struct DiffResult {
    std::shared_ptr<const Graph> a, b;
    std::shared_ptr<const GraphDiff> diff;
    std::optional<Diagnostic> error;
};

// The first recompile: the first graph whose kind and rank come again under another compile id, and that next
// graph; else the first two graphs. One pass: the first graph of a (kind, rank) is the first of any recompile
// of it.
std::pair<size_t, size_t> firstRecompile(const GraphFile& file) {
    const GraphList& graphs = file.graphs();
    struct Seen {
        size_t first = 0;
        std::optional<size_t> again; // the first graph after `first` under another compile id
    };
    std::map<std::pair<std::string_view, int32_t>, Seen> seen;
    std::optional<std::pair<size_t, size_t>> best;
    for (size_t i = 0; i < graphs.size(); ++i) {
        auto [it, added] = seen.try_emplace({graphs.kind(i), graphs.rank(i)}, Seen{i, std::nullopt});
        Seen& s = it->second;
        if (added || s.again || graphs.compileId(i) == graphs.compileId(s.first))
            continue;
        s.again = i;
        if (!best || s.first < best->first)
            best = std::pair{s.first, i};
    }
    return best ? *best : std::pair<size_t, size_t>{0, graphs.size() > 1 ? 1 : 0};
}

// The first graph that differs across ranks, when there is one in both groups.
std::optional<std::pair<size_t, size_t>> firstDivergent(const RankDivergence& divergence) {
    for (const auto& split : divergence.graphs)
        if (split.groups.size() > 1 && !split.groups[0].digest.empty() && !split.groups[1].digest.empty())
            return std::pair{split.groups[0].entries[0], split.groups[1].entries[0]};
    return std::nullopt;
}

} // namespace

DiffFeature::DiffFeature(const FeatureContext& context, QObject* parent) : Feature(parent), ctx_(context) {
    model_ = new views::DiffModel(this);
    createDock();
    actions_.compare = new QAction(tr("&Compare Graphs…"), ctx_.window);
    actions_.compare->setToolTip(
        tr("Diff two graphs: two ranks, two compiles or a recompile of the open file, or a graph of "
           "another file"));
    connect(actions_.compare, &QAction::triggered, this, [this] {
        dock_->show();
        dock_->raise();
        compare();
    });
    actions_.next = new QAction(tr("Next &Difference"), ctx_.window);
    actions_.next->setShortcut(QKeySequence(Qt::Key_F8));
    connect(actions_.next, &QAction::triggered, this, [this] { step(1); });
    actions_.previous = new QAction(tr("Previous Di&fference"), ctx_.window);
    actions_.previous->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F8));
    connect(actions_.previous, &QAction::triggered, this, [this] { step(-1); });
    connect(&job_, &views::BackgroundJob::failed, this, [this](quint64, const QString& message) {
        ctx_.reportError(tr("Cannot compare graphs"), makeError({}, message.toStdString()));
    });
}

DiffFeature::~DiffFeature() {
    disconnect(&job_, nullptr, this, nullptr);
    job_.cancel();
    rankJob_.cancel();
}

void DiffFeature::createDock() {
    dock_ = new QDockWidget(tr("Graph Diff"), ctx_.window);
    dock_->setObjectName(QStringLiteral("diffDock"));
    auto* body = new QWidget(dock_);
    auto* layout = new QVBoxLayout(body);
    auto* form = new QFormLayout;
    pickA_ = new QComboBox(body);
    pickB_ = new QComboBox(body);
    titlesA_ = new views::GraphTitlesModel(this);
    titlesB_ = new views::GraphTitlesModel(this);
    pickA_->setModel(titlesA_);
    pickB_->setModel(titlesB_);
    for (QComboBox* pick : {pickA_, pickB_})
        pick->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    form->addRow(tr("A"), pickA_);
    form->addRow(tr("B"), pickB_);
    layout->addLayout(form);
    auto* row = new QHBoxLayout;
    auto* otherFile = new QPushButton(tr("B from File…"), body);
    otherFile->setToolTip(tr("Compare graph A with a graph of another file (another run, version, or "
                             "checkpointing choice); Shift-click: B from the open file again"));
    connect(otherFile, &QPushButton::clicked, this, [this] {
        if (QGuiApplication::keyboardModifiers() & Qt::ShiftModifier) {
            setFileB(QString());
            return;
        }
        const QString path = QFileDialog::getOpenFileName(ctx_.window, tr("Graph B from file"));
        if (!path.isEmpty())
            setFileB(path);
    });
    form->addRow(QString(), otherFile);
    auto* compareButton = new QPushButton(tr("Compare"), body);
    connect(compareButton, &QPushButton::clicked, this, [this] { compare(); });
    showA_ = new QRadioButton(tr("Show A"), body);
    showB_ = new QRadioButton(tr("Show B"), body);
    showA_->setChecked(true);
    connect(showB_, &QRadioButton::toggled, this, [this](bool b) {
        if (diff_ && shownSide_ && *shownSide_ != b)
            showSide(b, {});
    });
    auto* previous = new QToolButton(body);
    previous->setArrowType(Qt::UpArrow);
    previous->setToolTip(tr("Previous difference (Shift+F8)"));
    connect(previous, &QToolButton::clicked, this, [this] { step(-1); });
    auto* next = new QToolButton(body);
    next->setArrowType(Qt::DownArrow);
    next->setToolTip(tr("Next difference (F8)"));
    connect(next, &QToolButton::clicked, this, [this] { step(1); });
    row->addWidget(compareButton);
    row->addWidget(showA_);
    row->addWidget(showB_);
    row->addStretch(1);
    row->addWidget(previous);
    row->addWidget(next);
    layout->addLayout(row);
    summary_ = new QLabel(tr("Pick two graphs and Compare."), body);
    summary_->setWordWrap(true);
    layout->addWidget(summary_);
    table_ = new QTableView(body);
    table_->setModel(model_);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->verticalHeader()->hide();
    connect(table_, &QTableView::clicked, this, [this](const QModelIndex& index) { goTo(index.row()); });
    layout->addWidget(table_, 3);
    divergence_ = new QPlainTextEdit(body);
    divergence_->setReadOnly(true);
    divergence_->setLineWrapMode(QPlainTextEdit::NoWrap);
    divergence_->setToolTip(tr("Where the ranks diverge: graph counts, graphs whose text differs, collective "
                               "sequences"));
    divergence_->hide();
    layout->addWidget(divergence_, 2);
    dock_->setWidget(body);
}

void DiffFeature::setFile(const std::shared_ptr<const GraphFile>& file) {
    job_.cancel();
    rankJob_.cancel();
    if (pendingCompare_ && *pendingCompare_)
        (*pendingCompare_)(false);
    pendingCompare_.reset();
    file_ = file;
    fileB_ = nullptr;
    model_->setDiff(nullptr, nullptr, nullptr);
    a_ = b_ = nullptr;
    diff_ = nullptr;
    shownSide_.reset();
    shownRoot_ = nullptr;
    applyOverlay();
    titlesA_->setEntries(nullptr);
    titlesB_->setEntries(nullptr);
    divergence_->clear();
    divergence_->setVisible(file_ && file_->ranks().size() > 1);
    summary_->setText(tr("Pick two graphs and Compare."));
    if (!file_)
        return;
    fillPicker(pickA_, file_, QString());
    fillPicker(pickB_, file_, QString());
    const auto [a, b] = firstRecompile(*file_);
    pick(a, b);
    if (file_->ranks().size() < 2)
        return;
    // Hashing every rank's graphs takes a while on large logs: on the worker.
    divergence_->setPlainText(tr("Comparing the ranks…"));
    rankJob_.run([file = file_](views::JobControl&) { return summarizeRanks(*file); },
                 [this, preset = picked()](RankDivergence divergence) {
                     QStringList lines;
                     for (const std::string& line : divergence.lines())
                         lines << QString::fromStdString(line);
                     divergence_->setPlainText(lines.join('\n'));
                     // Unless the user picked another pair meanwhile.
                     if (auto pair = firstDivergent(divergence); pair && picked() == preset)
                         pick(pair->first, pair->second);
                     if (pendingCompare_) {
                         auto done = std::move(*pendingCompare_);
                         pendingCompare_.reset();
                         compare(std::move(done));
                     }
                 });
}

void DiffFeature::fillPicker(QComboBox* pick, const std::shared_ptr<const GraphFile>& file,
                             const QString& prefix) {
    auto* titles = pick == pickA_ ? titlesA_ : titlesB_;
    titles->setEntries(std::shared_ptr<const GraphList>(file, &file->graphs()), prefix);
    pick->setCurrentIndex(file->graphs().empty() ? -1 : 0);
}

bool DiffFeature::setFileB(const QString& path) {
    if (!file_)
        return false;
    std::shared_ptr<const GraphFile> other;
    if (!path.isEmpty()) {
        Expected<GraphFile> opened = GraphFile::open(path.toStdString());
        if (!opened) {
            ctx_.reportError(tr("Cannot read graph B"), opened.error());
            return false;
        }
        other = std::make_shared<const GraphFile>(opened.take());
    }
    fileB_ = std::move(other);
    const GraphFile& b = fileB_ ? *fileB_ : *file_;
    fillPicker(pickB_, fileB_ ? fileB_ : file_, fileB_ ? fileBName() + QStringLiteral(" · ") : QString());
    // B preset to the graph of A's kind (the joint graph against the joint graph), else the first.
    const int a = pickA_->currentIndex();
    int preset = 0;
    if (fileB_ && a >= 0 && size_t(a) < file_->graphs().size()) {
        const std::string_view kindA = file_->graphs().kind(size_t(a));
        for (size_t i = 0; i < b.graphs().size(); ++i)
            if (b.graphs().kind(i) == kindA) {
                preset = int(b.graphs().entryIndex(i));
                break;
            }
    }
    pickB_->setCurrentIndex(fileB_ ? preset : int(firstRecompile(b).second));
    ctx_.log(fileB_ ? tr("Graph B from %1 (%2 graphs)").arg(path).arg(b.graphs().size())
                    : tr("Graph B from the open file"));
    return true;
}

QString DiffFeature::fileBName() const {
    return fileB_ ? QFileInfo(QString::fromStdString(fileB_->fileName())).fileName() : QString();
}

std::pair<int, int> DiffFeature::picked() const {
    return {pickA_->currentIndex(), pickB_->currentIndex()};
}

void DiffFeature::pick(size_t a, size_t b) {
    pickA_->setCurrentIndex(int(a));
    pickB_->setCurrentIndex(int(b));
}

void DiffFeature::compare(std::function<void(bool)> done) {
    if (rankJob_.busy()) {
        pendingCompare_ = std::move(done);
        return;
    }
    if (!file_ || pickA_->currentIndex() < 0 || pickB_->currentIndex() < 0) {
        if (done)
            done(false);
        return;
    }
    entryA_ = size_t(pickA_->currentIndex());
    entryB_ = size_t(pickB_->currentIndex());
    summary_->setText(tr("Comparing…"));
    job_.run(
        [file = file_, fileB = fileB_ ? fileB_ : file_, a = entryA_,
         b = entryB_](views::JobControl& control) {
            DiffResult result;
            Expected<Graph> ga = file->load(a);
            if (!ga || control.cancelled()) {
                result.error = ga ? std::nullopt : std::optional<Diagnostic>(ga.error());
                return result;
            }
            Expected<Graph> gb = fileB->load(b);
            if (!gb) {
                result.error = gb.error();
                return result;
            }
            result.a = std::make_shared<const Graph>(ga.take());
            result.b = std::make_shared<const Graph>(gb.take());
            result.diff = std::make_shared<const GraphDiff>(diffGraphs(*result.a, *result.b));
            return result;
        },
        [this, done](DiffResult result) {
            if (result.error || !result.diff) {
                if (result.error)
                    ctx_.reportError(tr("Cannot compare graphs"), *result.error);
                summary_->setText(tr("Pick two graphs and Compare."));
                if (done)
                    done(false);
                return;
            }
            a_ = result.a;
            b_ = result.b;
            diff_ = result.diff;
            model_->setDiff(a_, b_, diff_);
            table_->resizeColumnsToContents();
            summary_->setText(summaryText());
            ctx_.log(tr("Compared graph %1 with %2%3: %4")
                         .arg(entryA_)
                         .arg(fileB_ ? fileBName() + QStringLiteral(" · ") : QString())
                         .arg(entryB_)
                         .arg(summaryText()));
            showSide(false, [done] {
                if (done)
                    done(true);
            });
        });
}

QString DiffFeature::summaryText() const {
    if (!diff_)
        return {};
    if (diff_->identical())
        return tr("Identical: every node pairs with one of the same name, target, shape and arguments.");
    return tr("%1 added, %2 removed, %3 changed (%4 renamed, %5 checkpoint tags), %6 edges changed")
        .arg(diff_->added)
        .arg(diff_->removed)
        .arg(diff_->changed)
        .arg(diff_->renamed)
        .arg(diff_->checkpoint)
        .arg(diff_->edges.size());
}

QString DiffFeature::divergenceText() const {
    return divergence_->toPlainText();
}

void DiffFeature::showSide(bool sideB, std::function<void()> then) {
    if (!ctx_.showEntry)
        return;
    const QSignalBlocker blockA(showA_), blockB(showB_);
    (sideB ? showB_ : showA_)->setChecked(true);
    auto shown = [this, sideB, then = std::move(then)](bool ok) {
        if (!ok)
            return;
        shownSide_ = sideB;
        shownRoot_ = ctx_.canvas->root();
        ctx_.canvas->whenLayoutReady([this, then] {
            applyOverlay();
            if (then)
                then();
        });
    };
    if (sideB && fileB_) {
        // A graph of another file: on the canvas alone (the other docks keep the open file's graph).
        ctx_.canvas->setRoot(b_);
        shown(true);
        return;
    }
    ctx_.showEntry(sideB ? entryB_ : entryA_, std::move(shown));
}

void DiffFeature::applyOverlay() {
    const bool ours =
        diff_ && shownSide_ && ctx_.canvas && ctx_.canvas->showingRoot() && ctx_.canvas->root() == shownRoot_;
    if (!ours) {
        views::applyDiffOverlay(*ctx_.scene, nullptr);
        return;
    }
    const views::DiffOverlay overlay =
        views::makeDiffOverlay(*diff_, *shownSide_, (*shownSide_ ? b_ : a_)->size());
    views::applyDiffOverlay(*ctx_.scene, &overlay);
}

int DiffFeature::currentRow() const {
    const QModelIndex current = table_->currentIndex();
    return current.isValid() ? current.row() : -1;
}

void DiffFeature::step(int delta, std::function<void()> done) {
    const int rows = model_->rowCount();
    if (rows == 0) {
        if (done)
            done();
        return;
    }
    const int row = currentRow() < 0 ? (delta > 0 ? 0 : rows - 1) : (currentRow() + delta + rows) % rows;
    goTo(row, std::move(done));
}

void DiffFeature::goTo(int row, std::function<void()> done) {
    if (row < 0 || row >= model_->rowCount())
        return;
    table_->setCurrentIndex(model_->index(row, 0));
    const QModelIndex index = model_->index(row, 0);
    const QVariant inA = index.data(views::DiffModel::NodeARole);
    const QVariant inB = index.data(views::DiffModel::NodeBRole);
    // The graph that has the node (or edge); a changed node stays in the graph shown.
    const QString kind = index.data(views::DiffModel::KindRole).toString();
    const bool onlyB = kind.endsWith(QLatin1String("added"));
    const bool onlyA = kind.endsWith(QLatin1String("removed"));
    const bool sideB = inB.isValid() && (onlyB || !inA.isValid() || (!onlyA && shownSide_.value_or(false)));
    const NodeId id = NodeId((sideB ? inB : inA).toUInt());
    auto select = [this, id, done = std::move(done)] {
        ctx_.canvas->selectNode(id, true);
        if (done)
            done();
    };
    if (shownSide_ == sideB && ctx_.canvas->root() == shownRoot_)
        select();
    else
        showSide(sideB, select);
}

std::vector<DockPlacement> DiffFeature::docks() const {
    return {{dock_, Qt::RightDockWidgetArea, DockPlacement::Join::Tab}};
}

std::vector<MenuEntry> DiffFeature::menuEntries() const {
    return {{MenuId::View, dock_->toggleViewAction()},
            {MenuId::Navigate, actions_.next},
            {MenuId::Navigate, actions_.previous},
            {MenuId::Tools, actions_.compare}};
}

} // namespace jointscope::gui
