#include "SessionController.h"

#include "PartitionDocument.h"
#include "PartitionFeature.h"
#include "PartitionPanel.h"
#include "ShardingDocument.h"
#include "ShardingFeature.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QLockFile>
#include <QMainWindow>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTimer>
#include <QUuid>

namespace jointscope::gui {

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
    const QFileInfoList files =
        QDir(autosaveDir()).entryInfoList({QStringLiteral("session-*.jointscope")}, QDir::Files, QDir::Time);
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

} // namespace

SessionController::SessionController(const FeatureContext& context, SessionHost* host,
                                     PartitionFeature* partition, ShardingFeature* sharding, QObject* parent)
    : QObject(parent), ctx_(context), host_(host), partition_(partition), sharding_(sharding) {
    connect(partition_, &PartitionFeature::changed, this, &SessionController::autosave);
    connect(sharding_, &ShardingFeature::changed, this, &SessionController::autosave);
    if (ctx_.interactive) {
        QTimer::singleShot(0, this, &SessionController::offerRestore);
        // Quitting the application is a clean exit too, with or without closing the window first.
        connect(qApp, &QCoreApplication::aboutToQuit, this, &SessionController::closing);
    }
}

SessionController::~SessionController() = default;

bool SessionController::save(const QString& path) {
    PartitionDocument* doc = partition_->document();
    if (!doc->graph()) {
        ctx_.log(tr("No graph open: nothing to save in a session"));
        return false;
    }
    SessionFile session = doc->sessionFile(host_->viewSettings());
    session.graphPath = QFileInfo(doc->graphPath()).absoluteFilePath().toStdString();
    session.sharding = sharding_->document()->sessionSharding();
    QString error;
    const QByteArray text = QByteArray::fromStdString(writeSession(session));
    if (!PartitionDocument::writeFileAtomically(path, text, &error)) {
        ctx_.reportError(tr("Cannot save session"),
                         makeError({path.toStdString(), 0, 0}, error.toStdString()));
        return false;
    }
    if (path != autosavePath_)
        ctx_.log(tr("Saved session %1").arg(path));
    return true;
}

bool SessionController::open(const QString& path, std::function<void(bool)> then) {
    QString error;
    const std::optional<Session> session = PartitionDocument::readSession(path, &error);
    if (!session) {
        ctx_.reportError(tr("Cannot open session"),
                         makeError({path.toStdString(), 0, 0}, error.toStdString()));
        return false;
    }
    QString graphPath = session->graphPath;
    if (QFileInfo(graphPath).isRelative())
        graphPath = QFileInfo(path).dir().filePath(graphPath);
    if (!host_->openGraphFile(graphPath))
        return false;
    // The graph is read on a worker: the session applies once it is shown.
    auto apply = [this, session = *session, path, then](bool shown) {
        PartitionDocument* doc = partition_->document();
        if (!shown || !doc->graph()) {
            if (then)
                then(false);
            return;
        }
        doc->restore(session.options, session.edits);
        partition_->panel()->syncFromDocument();
        if (session.sharding) {
            QString why;
            if (const std::optional<ShardingSession> sharding =
                    ShardingDocument::parseSession(*session.sharding, &why))
                sharding_->restore(*sharding);
            else
                ctx_.reportError(tr("Cannot restore the session's sharding"),
                                 makeError({path.toStdString(), 0, 0}, why.toStdString()));
        }
        host_->restoreViewSettings(session.view);
        ctx_.log(tr("Opened session %1 (%n pin(s))", nullptr, int(session.edits.size())).arg(path));
        if (then)
            then(true);
    };
    host_->whenGraphFileLoaded([this, apply, index = session->graphIndex](bool loaded) {
        if (!loaded)
            return apply(false);
        if (index != partition_->document()->graphIndex())
            host_->showGraphIndex(index, apply);
        else
            apply(true);
    });
    return true;
}

void SessionController::autosave() {
    // Scripted runs never autosave, and nothing is written before the restore question is answered: the
    // graph shown at start-up is not yet the user's work.
    if (!ctx_.interactive || !partition_->document()->graph() || !restoreAnswered_)
        return;
    if (save(autosavePath_))
        emit autosaved();
}

void SessionController::offerRestore() {
    QDir().mkpath(autosaveDir());
    // The instance id: the process and a random part, so two windows of one process are two instances too.
    const QString id = QStringLiteral("%1-%2")
                           .arg(QCoreApplication::applicationPid())
                           .arg(QUuid::createUuid().toString(QUuid::Id128).left(8));
    autosavePath_ = autosaveFile(id, "jointscope");
    autosaveLock_ = std::make_unique<QLockFile>(autosaveFile(id, "lock"));
    autosaveLock_->setStaleLockTime(0);
    autosaveLock_->tryLock(0);
    const QStringList orphans = orphanedAutosaves(autosavePath_);
    bool restore = false;
    if (!orphans.isEmpty()) {
        if (restoreAnswer_.isEmpty())
            restore =
                QMessageBox::question(
                    ctx_.window, tr("Restore session"),
                    tr("A jointscope window closed without saving (%1 autosaved session(s)). Restore the "
                       "newest: graph, partition pins and options, sharding mesh and pins?")
                        .arg(orphans.size())) == QMessageBox::Yes;
        else
            restore = restoreAnswer_ == QLatin1String("yes");
    }
    restoreAnswered_ = true;
    // The session is ours now: it is autosaved under this instance's name once shown.
    if (restore && open(orphans.front(), [this, orphan = orphans.front()](bool) {
            autosave();
            QFile::remove(orphan);
            emit restoreDone();
        }))
        return;
    if (!orphans.isEmpty() && !restore)
        QFile::remove(orphans.front()); // declined: not asked again (older ones are offered next time)
    autosave();
    emit restoreDone();
}

void SessionController::closing() {
    if (!ctx_.interactive || !autosaveLock_)
        return;
    QFile::remove(autosavePath_);
    autosaveLock_->unlock();
}

} // namespace jointscope::gui
