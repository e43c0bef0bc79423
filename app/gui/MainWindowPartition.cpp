// MainWindow's partition debugger: the Partition dock, the canvas overlay, pins with undo, exports and
// sessions.
#include "MainWindow.h"
#include "PartitionDocument.h"
#include "PartitionPanel.h"
#include "ShardingDocument.h"

#include "canvas/GraphScene.h"
#include "canvas/GraphView.h"
#include "canvas/InfinitePathItem.h"
#include "canvas/NodeItem.h"
#include "models/InspectorModel.h"
#include "models/PartitionModel.h"
#include "partition/Partitioner.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QJsonDocument>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QSettings>
#include <QShortcut>
#include <QStandardPaths>
#include <QLockFile>
#include <QUuid>
#include <QTimer>
#include <QTreeView>
#include <QUndoStack>

namespace jointscope::gui {

using namespace jointscope::partition;

namespace {

// One autosave per running instance, <AppData>/autosave/session-<pid>.jointscope, guarded by the instance's
// lock file session-<pid>.lock: a session whose lock no live process holds is one that died.
QString autosaveDir() {
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation))
        .filePath(QStringLiteral("autosave"));
}

QString autosaveFile(const QString& id, const char* suffix) {
    return QDir(autosaveDir()).filePath(QStringLiteral("session-%1.%2").arg(id, QLatin1String(suffix)));
}

// Autosaves of instances that died (no live lock), newest first; `own` is this instance's.
QStringList orphanedAutosaves(const QString& own) {
    QStringList orphans;
    const QFileInfoList files = QDir(autosaveDir())
                                    .entryInfoList({QStringLiteral("session-*.jointscope")}, QDir::Files,
                                                   QDir::Time);
    for (const QFileInfo& file : files) {
        if (file.absoluteFilePath() == QFileInfo(own).absoluteFilePath())
            continue;
        const QString id = file.completeBaseName().mid(8); // "session-<id>"
        QLockFile lock(autosaveFile(id, "lock"));
        lock.setStaleLockTime(0);
        if (lock.tryLock(0)) { // its owner is gone (a live owner keeps it locked)
            lock.unlock();
            orphans << file.absoluteFilePath();
        }
    }
    return orphans;
}

QString qstr(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace

void MainWindow::createPartitionUi() {
    partitionDoc_ = new PartitionDocument(this);
    partitionPanel_ = new PartitionPanel(partitionDoc_, this);
    auto* dock = new QDockWidget(tr("Partition"), this);
    dock->setObjectName(QStringLiteral("partitionDock"));
    dock->setWidget(partitionPanel_);
    addDockWidget(Qt::RightDockWidgetArea, dock);
    viewMenu_->insertAction(viewMenu_->actions().value(4), dock->toggleViewAction());
    if (auto* inspectorDock = findChild<QDockWidget*>(QStringLiteral("inspectorDock"))) {
        // The summary, the diff lists and the chart need the larger share of the right column.
        resizeDocks({inspectorDock, dock}, {260, 640}, Qt::Vertical);
        resizeDocks({inspectorDock}, {430}, Qt::Horizontal);
    }
    connect(partitionPanel_, &PartitionPanel::locateNode, this, [this](NodeId id) {
        if (path_.size() > 1)
            showLevel(0);
        whenLayoutReady([this, id] { selectNode(id, true); });
    });

    // Edit menu: the document's undo stack.
    auto* edit = new QMenu(tr("&Edit"), this);
    menuBar()->insertMenu(viewMenu_->menuAction(), edit);
    QAction* undo = partitionDoc_->undoStack()->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence(QStringLiteral("Ctrl+Z")));
    QAction* redo = partitionDoc_->undoStack()->createRedoAction(this, tr("&Redo"));
    redo->setShortcut(QKeySequence(QStringLiteral("Ctrl+Shift+Z")));
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    // Pins act on the canvas selection; scoped to the canvas so typing S or R in a text field still types.
    QAction* mustSave =
        edit->addAction(tr("Must &Save"), this, [this] { pinSelected(int(Policy::MustSave)); });
    mustSave->setShortcut(QKeySequence(Qt::Key_S));
    QAction* mustRecompute =
        edit->addAction(tr("Must &Recompute"), this, [this] { pinSelected(int(Policy::MustRecompute)); });
    mustRecompute->setShortcut(QKeySequence(Qt::Key_R));
    QAction* clearPin = edit->addAction(tr("&Clear Pin"), this, [this] { pinSelected(0); });
    clearPin->setShortcut(QKeySequence(Qt::Key_Delete));
    for (QAction* a : {mustSave, mustRecompute, clearPin}) {
        a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
        view_->addAction(a);
    }
    edit->addSeparator();
    QAction* repartition = edit->addAction(tr("Re-&partition"), partitionDoc_, &PartitionDocument::solve);
    repartition->setShortcut(QKeySequence(Qt::Key_F5));
    addAction(repartition);

    view_->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(view_, &QWidget::customContextMenuRequested, this,
            [this, mustSave, mustRecompute, clearPin](const QPoint& pos) {
                QGraphicsItem* item = view_->itemAt(pos);
                while (item && item->type() != views::NodeItem::Type)
                    item = item->parentItem();
                if (!item)
                    return;
                const NodeId id = static_cast<views::NodeItem*>(item)->nodeId();
                scene_->selectNode(id);
                QMenu menu(this);
                menu.addAction(mustSave);
                menu.addAction(mustRecompute);
                menu.addAction(clearPin);
                if (const Graph* graph = currentGraph(); graph && id < graph->size()) {
                    menu.addSeparator();
                    const std::vector<NodeId> producers = views::producersOf(*graph, id);
                    const std::vector<NodeId> consumers = views::consumersOf(*graph, id);
                    QMenu* up = menu.addMenu(tr("&Producers (%1)").arg(producers.size()));
                    addJumpActions(up, producers);
                    up->setEnabled(!producers.empty());
                    QMenu* down = menu.addMenu(tr("C&onsumers (%1)").arg(consumers.size()));
                    addJumpActions(down, consumers);
                    down->setEnabled(!consumers.empty());
                }
                menu.exec(view_->viewport()->mapToGlobal(pos));
            });

    // File menu: exports and sessions, before Quit.
    QMenu* file = menuBar()->actions().value(0) ? menuBar()->actions().value(0)->menu() : nullptr;
    if (file) {
        QAction* quit = file->actions().isEmpty() ? nullptr : file->actions().last();
        auto* exportMenu = new QMenu(tr("Export &Partition"), file);
        exportMenu->addAction(tr("&Decision JSON…"), this,
                              [this] { exportPartition(QStringLiteral("decision"), {}); });
        exportMenu->addAction(tr("&Policy File…"), this,
                              [this] { exportPartition(QStringLiteral("policy"), {}); });
        exportMenu->addAction(tr("&Forward FX Text…"), this,
                              [this] { exportPartition(QStringLiteral("forward"), {}); });
        exportMenu->addAction(tr("&Backward FX Text…"), this,
                              [this] { exportPartition(QStringLiteral("backward"), {}); });
        file->insertMenu(quit, exportMenu);
        QAction* save = new QAction(tr("Save &Session…"), file);
        save->setShortcut(QKeySequence::Save);
        connect(save, &QAction::triggered, this, [this] {
            const QString path =
                QFileDialog::getSaveFileName(this, tr("Save session"), QFileInfo(filePath_).absolutePath(),
                                             tr("jointscope sessions (*.jointscope)"));
            if (!path.isEmpty())
                saveSession(path.endsWith(QLatin1String(".jointscope"))
                                ? path
                                : path + QStringLiteral(".jointscope"));
        });
        file->insertAction(quit, save);
        file->insertSeparator(quit);
    }

    connect(partitionDoc_, &PartitionDocument::finished, this, [this] {
        const auto r = partitionDoc_->result();
        log(tr("Partition: %1 saved (%2 bytes), %3 recomputed, %4 in %5 ms")
                .arg(r->partition->saved.size())
                .arg(r->partition->savedBytes)
                .arg(r->partition->recomputed.size())
                .arg(qstr(escalationName(r->partition->escalation)))
                .arg(r->partition->seconds * 1e3, 0, 'f', 1));
        infinitePath_.clear(); // the edit that hit it is gone
        applyPartitionOverlay();
    });
    connect(partitionDoc_, &PartitionDocument::failed, this, [this](const QString& message) {
        log(tr("Partition refused: %1").arg(message));
        infinitePath_ = partitionDoc_->errorPath();
        views::showInfinitePath(*scene_,
                                currentGraph() == root_.get() ? infinitePath_ : std::vector<NodeId>{});
    });
    // Esc on the canvas puts the refused edit's path away (the search box keeps its own Esc).
    auto* dismissPath =
        new QShortcut(QKeySequence(Qt::Key_Escape), view_, nullptr, nullptr, Qt::WidgetWithChildrenShortcut);
    connect(dismissPath, &QShortcut::activated, this, [this] {
        infinitePath_.clear();
        views::showInfinitePath(*scene_, {});
    });
    connect(partitionDoc_, &PartitionDocument::editsChanged, this, [this] {
        applyPartitionOverlay();
        autosaveSession();
    });
    connect(partitionDoc_, &PartitionDocument::optionsChanged, this, &MainWindow::autosaveSession);

    if (interactive_) {
        QTimer::singleShot(0, this, &MainWindow::offerRestore);
        // Quitting the application is a clean exit too, with or without closing the window first.
        connect(qApp, &QCoreApplication::aboutToQuit, this, &MainWindow::partitionClosing);
    }
}

void MainWindow::partitionGraphLoaded(size_t index) {
    infinitePath_.clear();
    partitionDoc_->setGraph(root_, filePath_, int(index));
    partitionPanel_->syncFromDocument();
    if (root_ && root_->numFwdOutputs)
        partitionDoc_->solve();
    else
        partitionPanel_->model()->clear();
}

void MainWindow::applyPartitionOverlay() {
    const Graph* root = root_.get();
    views::showInfinitePath(*scene_, root && currentGraph() == root ? infinitePath_ : std::vector<NodeId>{});
    const auto result = partitionDoc_ ? partitionDoc_->result() : nullptr;
    if (!root || currentGraph() != root) {
        scene_->setPartitionOverlay(nullptr);
        inspectorModel_->setPartitionFacts(nullptr);
        return;
    }
    auto overlay = std::make_shared<views::PartitionOverlay>();
    overlay->nodes.resize(root->size());
    if (result && result->partition->graph.size() > 0) {
        const Partition& p = *result->partition;
        auto shown = [&](NodeId id) { return root->find(p.graph.node(id).name); };
        for (NodeId id = 0; id < p.graph.size(); ++id)
            if (p.info.requiredBw.size() > id && p.info.requiredBw[id])
                if (auto s = shown(id))
                    overlay->nodes[*s].mark = views::PartitionMark::Backward;
        for (const auto* list : {&p.saved, &p.savedSym})
            for (NodeId id : *list)
                if (auto s = shown(id)) {
                    overlay->nodes[*s].mark = views::PartitionMark::Saved;
                    overlay->nodes[*s].bytes = id < p.info.bytes.size() ? p.info.bytes[id] : 0;
                }
        for (NodeId id : p.recomputed)
            if (auto s = shown(id))
                overlay->nodes[*s].mark = views::PartitionMark::Recomputed;
        // Inputs are never recomputed and a saved node's badge says enough: "banned" marks only the forward
        // nodes the ban keeps out of the backward.
        if (p.cut)
            for (NodeId id : p.cut->banned)
                if (auto s = shown(id))
                    overlay->nodes[*s].banned = overlay->nodes[*s].mark != views::PartitionMark::Saved &&
                                                p.graph.node(id).op != NodeOp::Placeholder;
    }
    for (const auto& [name, policy] : partitionDoc_->edits())
        if (auto s = root->find(name))
            overlay->nodes[*s].pin =
                mustRecompute(policy) ? views::PinMark::MustRecompute : views::PinMark::MustSave;
    scene_->setPartitionOverlay(overlay);

    const PolicyEdits edits = partitionDoc_->edits();
    inspectorModel_->setPartitionFacts(
        [this, result, root, edits](NodeId id) -> std::optional<views::PartitionFacts> {
            if (!result || currentGraph() != root || id >= root->size())
                return std::nullopt;
            const Partition& p = *result->partition;
            const std::string& name = root->node(id).name;
            views::PartitionFacts facts;
            if (auto it = edits.find(name); it != edits.end())
                facts.pin = qstr(policyName(it->second));
            const auto pid = p.graph.find(name);
            if (!pid) {
                facts.decision = tr("removed");
                facts.rule = tr("dead code (not needed by any output)");
                for (const auto& [removed, kept] : p.merged)
                    if (removed == name)
                        facts.rule = tr("CSE merged it into %1").arg(QString::fromStdString(kept));
                return facts;
            }
            const NodeExplanation e = explainNode(p, *pid);
            facts.decision = QString::fromStdString(e.decision);
            facts.rule = QString::fromStdString(e.rule);
            facts.banReason = QString::fromStdString(e.banReason);
            facts.policy = QString::fromStdString(e.policy);
            facts.weight = e.weight >= kInfiniteCapacity ? QStringLiteral("inf")
                           : e.weight >= 0               ? QString::number(e.weight)
                                                         : QString();
            facts.distFromBw = e.distFromBw;
            facts.bytes = e.bytes;
            return facts;
        });
    inspector_->expandAll();
}

void MainWindow::pinSelected(int policy) {
    const NodeId id = scene_->selectedNode();
    if (!root_ || currentGraph() != root_.get() || id >= root_->size()) {
        log(tr("Pins apply to a node of the joint graph: select one on the canvas first"));
        return;
    }
    const std::string& name = root_->node(id).name;
    if (policy == 0)
        partitionDoc_->clearPolicy(name);
    else
        partitionDoc_->setPolicy(name, Policy(policy));
}

QJsonObject MainWindow::viewSettings() const {
    QJsonObject view;
    view[QStringLiteral("geometry")] = QString::fromLatin1(saveGeometry().toBase64());
    view[QStringLiteral("state")] = QString::fromLatin1(saveState().toBase64());
    const NodeId selected = scene_->selectedNode();
    if (currentGraph() && selected < currentGraph()->size())
        view[QStringLiteral("selected")] = QString::fromStdString(currentGraph()->node(selected).name);
    return view;
}

bool MainWindow::saveSession(const QString& path) {
    if (!root_) {
        log(tr("No graph open: nothing to save in a session"));
        return false;
    }
    SessionFile session = partitionDoc_->sessionFile(viewSettings());
    session.graphPath = QFileInfo(filePath_).absoluteFilePath().toStdString();
    session.sharding = shardingDoc_->sessionSharding();
    QString error;
    const QByteArray text = QByteArray::fromStdString(writeSession(session));
    if (!PartitionDocument::writeFileAtomically(path, text, &error)) {
        reportError(tr("Cannot save session"), makeError({path.toStdString(), 0, 0}, error.toStdString()));
        return false;
    }
    if (path != autosavePath_)
        log(tr("Saved session %1").arg(path));
    return true;
}

bool MainWindow::openSession(const QString& path) {
    QString error;
    const std::optional<Session> session = PartitionDocument::readSession(path, &error);
    if (!session) {
        reportError(tr("Cannot open session"), makeError({path.toStdString(), 0, 0}, error.toStdString()));
        return false;
    }
    QString graphPath = session->graphPath;
    if (QFileInfo(graphPath).isRelative())
        graphPath = QFileInfo(path).dir().filePath(graphPath);
    if (!openFile(graphPath))
        return false;
    // The graph is read on a worker: the session applies once it is shown.
    whenDocumentLoaded([this, session = *session, path](bool loaded) {
        if (!loaded)
            return;
        if (session.graphIndex != partitionDoc_->graphIndex())
            loadGraph(size_t(session.graphIndex));
        if (!root_)
            return;
        partitionDoc_->restore(session.options, session.edits);
        partitionPanel_->syncFromDocument();
        if (session.sharding) {
            QString why;
            if (const std::optional<ShardingSession> sharding =
                    ShardingDocument::parseSession(*session.sharding, &why))
                restoreSharding(*sharding);
            else
                reportError(tr("Cannot restore the session's sharding"),
                            makeError({path.toStdString(), 0, 0}, why.toStdString()));
        }
        const QJsonObject& view = session.view;
        if (interactive_ && view.contains(QStringLiteral("state")))
            restoreState(QByteArray::fromBase64(view.value(QStringLiteral("state")).toString().toLatin1()));
        const QString selected = view.value(QStringLiteral("selected")).toString();
        if (!selected.isEmpty())
            whenLayoutReady([this, selected] { selectNodeByName(selected); });
        log(tr("Opened session %1 (%n pin(s))", nullptr, int(session.edits.size())).arg(path));
    });
    return true;
}

bool MainWindow::exportPartition(const QString& kind, const QString& pathIn) {
    std::string text;
    QString filter = tr("JSON (*.json)");
    QString suggested = QStringLiteral("decision.json");
    if (kind == QLatin1String("decision")) {
        text = partitionDoc_->decisionJson();
    } else if (kind == QLatin1String("policy")) {
        text = partitionDoc_->policyJson();
        suggested = QStringLiteral("policy.json");
    } else if (kind == QLatin1String("forward") || kind == QLatin1String("backward")) {
        text = kind == QLatin1String("forward") ? partitionDoc_->forwardFx() : partitionDoc_->backwardFx();
        filter = tr("FX text (*.txt)");
        suggested = kind + QStringLiteral(".txt");
    }
    if (text.empty()) {
        log(tr("Nothing to export: partition the graph first (F5)"));
        return false;
    }
    QString path = pathIn;
    if (path.isEmpty() && interactive_)
        path = QFileDialog::getSaveFileName(
            this, tr("Export"), QDir(QFileInfo(filePath_).absolutePath()).filePath(suggested), filter);
    if (path.isEmpty())
        return false;
    QString error;
    if (!PartitionDocument::writeFileAtomically(path, QByteArray::fromStdString(text), &error)) {
        reportError(tr("Cannot export"), makeError({path.toStdString(), 0, 0}, error.toStdString()));
        return false;
    }
    log(tr("Exported %1 to %2").arg(kind, path));
    return true;
}

void MainWindow::autosaveSession() {
    // Scripted runs never autosave, and nothing is written before the restore question is answered: the
    // graph shown at start-up is not yet the user's work.
    if (!interactive_ || !root_ || !restoreAnswered_)
        return;
    if (saveSession(autosavePath_))
        emit autosaved();
}

void MainWindow::offerRestore() {
    QDir().mkpath(autosaveDir());
    // The instance id: the process and a random part, so two windows of one process are two instances too.
    const QString id = QStringLiteral("%1-%2").arg(QCoreApplication::applicationPid()).arg(
        QUuid::createUuid().toString(QUuid::Id128).left(8));
    autosavePath_ = autosaveFile(id, "jointscope");
    autosaveLock_ = std::make_unique<QLockFile>(autosaveFile(id, "lock"));
    autosaveLock_->setStaleLockTime(0);
    autosaveLock_->tryLock(0);
    const QStringList orphans = orphanedAutosaves(autosavePath_);
    bool restore = false;
    if (!orphans.isEmpty()) {
        if (restoreAnswer_.isEmpty())
            restore = QMessageBox::question(
                          this, tr("Restore session"),
                          tr("A jointscope window closed without saving (%1 autosaved session(s)). Restore the "
                             "newest: graph, partition pins and options, sharding mesh and pins?")
                              .arg(orphans.size())) == QMessageBox::Yes;
        else
            restore = restoreAnswer_ == QLatin1String("yes");
    }
    restoreAnswered_ = true;
    if (restore && openSession(orphans.front())) {
        // The session is ours now: it is autosaved under this instance's name once shown.
        whenDocumentLoaded([this, orphan = orphans.front()](bool) {
            autosaveSession();
            QFile::remove(orphan);
            emit restoreDone();
        });
        return;
    }
    if (!orphans.isEmpty() && !restore)
        QFile::remove(orphans.front()); // declined: not asked again (older ones are offered next time)
    autosaveSession();
    emit restoreDone();
}

void MainWindow::partitionClosing() {
    if (!interactive_ || !autosaveLock_)
        return;
    QFile::remove(autosavePath_);
    autosaveLock_->unlock();
}

} // namespace jointscope::gui
