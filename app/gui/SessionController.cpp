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
#include <QLocale>
#include <QLockFile>
#include <QMainWindow>
#include <QMessageBox>
#include <QStandardPaths>
#include <QTimer>
#include <QUuid>

#include <utility>

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
    connect(&readJob_, &views::BackgroundJob::cancelled, this, [this] {
        host_->showSessionReading(false);
        ctx_.log(tr("Stopped reading the session"));
        if (auto then = std::exchange(readThen_, {}))
            then(false);
    });
    connect(&readJob_, &views::BackgroundJob::failed, this, [this](quint64, const QString& message) {
        host_->showSessionReading(false);
        ctx_.reportError(tr("Cannot open session"), makeError({}, message.toStdString()));
        if (auto then = std::exchange(readThen_, {}))
            then(false);
    });
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
    const QByteArray text = QByteArray::fromStdString(writeSession(session));
    if (const Expected<Done> written = PartitionDocument::writeFileAtomically(path, text); !written) {
        ctx_.reportError(tr("Cannot save session"), written.error());
        return false;
    }
    if (path != autosavePath_)
        ctx_.log(tr("Saved session %1").arg(path));
    return true;
}

bool SessionController::open(const QString& path, std::function<void(bool)> then) {
    // A session still being read is superseded: it reports cancelled (and its `then`) inside run().
    readJob_.run([file = path.toStdString()](views::JobControl&) { return jointscope::readSession(file); },
                 [this, path](Expected<SessionFile> file) {
                     host_->showSessionReading(false);
                     openRead(path, file, std::exchange(readThen_, {}));
                 });
    readThen_ = std::move(then);
    host_->showSessionReading(true);
    return true;
}

void SessionController::openRead(const QString& path, const Expected<SessionFile>& file,
                                 std::function<void(bool)> then) {
    Expected<Session> parsed =
        file ? PartitionDocument::parseSession(*file) : Expected<Session>(file.error());
    if (!parsed) {
        Diagnostic d = parsed.error();
        if (d.loc.file.empty())
            d.loc.file = path.toStdString();
        ctx_.reportError(tr("Cannot open session"), d);
        if (then)
            then(false);
        return;
    }
    std::optional<Session> session = parsed.take();
    const QString graphPath = QString::fromStdString(sessionGraphFile(*file, path.toStdString()));
    if (!host_->openGraphFile(graphPath)) {
        if (then)
            then(false);
        return;
    }
    // The graph is read on a worker: the session applies once it is shown.
    auto apply = [this, session = *session, path, then](bool shown) mutable {
        PartitionDocument* doc = partition_->document();
        if (!shown || !doc->graph()) {
            if (then)
                then(false);
            return;
        }
        // Pins of nodes the graph lacks are said once, not refused (nor applied) one by one.
        const Graph& graph = *doc->graph();
        auto isNode = [&graph](const std::string& name) { return graph.find(name).has_value(); };
        UnknownNodes policies, pins;
        takeUnknownNodes(session.edits, isNode, policies);
        if (session.sharding)
            takeUnknownNodes(session.sharding->pins, isNode, pins);
        for (const auto& [unknown, what] :
             {std::pair{&policies, "partition pin(s)"}, {&pins, "sharding pin(s)"}})
            if (unknown->count)
                ctx_.log(tr("%1: %2").arg(path, QString::fromStdString(unknown->summary(what))));
        doc->restore(session.options, session.edits);
        partition_->panel()->syncFromDocument();
        if (session.sharding) {
            if (const Expected<ShardingSession> sharding = ShardingDocument::parseSession(*session.sharding))
                sharding_->restore(*sharding);
            else
                ctx_.reportError(tr("Cannot restore the session's sharding"),
                                 makeError({path.toStdString(), 0, 0}, sharding.error().message));
        }
        host_->restoreViewSettings(session.view);
        ctx_.log(tr("Opened session %1 (%n pin(s))", nullptr, int(session.edits.size())).arg(path));
        if (then)
            then(true);
    };
    host_->whenGraphFileLoaded([this, apply, index = session->graphIndex](bool loaded) mutable {
        if (!loaded)
            return apply(false);
        if (index != partition_->document()->graphIndex())
            host_->showGraphIndex(index, apply);
        else
            apply(true);
    });
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
    restoreAnswered_ = true;
    if (orphans.isEmpty()) {
        autosave();
        emit restoreDone();
        return;
    }
    // The newest orphan is offered; the others stay for the next start. What it holds is said in the
    // question.
    const QString orphan = orphans.front();
    const Expected<SessionFile> session = readSession(orphan.toStdString());
    const QString graph =
        session ? QString::fromStdString(sessionGraphFile(*session, orphan.toStdString())) : QString();
    const QString when = QLocale().toString(QFileInfo(orphan).lastModified(), QLocale::ShortFormat);
    // A file named on the command line is what the user asked for: an autosave of another graph is not put in
    // its place, only kept (and said where).
    if (!startupFile_.isEmpty() && (graph.isEmpty() || QFileInfo(graph).canonicalFilePath() !=
                                                           QFileInfo(startupFile_).canonicalFilePath())) {
        ctx_.log(tr("An autosaved session (%1, closed %2) is kept in %3: File › Open Session restores it")
                     .arg(graph.isEmpty() ? tr("unreadable") : QFileInfo(graph).fileName(), when, orphan));
        autosave();
        emit restoreDone();
        return;
    }
    bool restore = false;
    if (restoreAnswer_.isEmpty()) {
        const QString what =
            session
                ? tr("%1 (%2)").arg(QFileInfo(graph).fileName(),
                                    session->policies.size() == 1
                                        ? tr("1 pin")
                                        : tr("%1 pins").arg(session->policies.size()))
                : tr("a session it cannot read (%1)").arg(QString::fromStdString(session.error().message));
        QString text = tr("A jointscope window closed without saving at %1, with %2 open.\n\nRestore it: the "
                          "graph, its partition pins and options, sharding mesh and pins?")
                           .arg(when, what);
        if (orphans.size() > 1)
            text += tr("\n\n%1 older autosaved session(s) are kept for later.").arg(orphans.size() - 1);
        restore = QMessageBox::question(ctx_.window, tr("Restore session"), text) == QMessageBox::Yes;
    } else {
        restore = restoreAnswer_ == QLatin1String("yes");
    }
    // The session is ours now: it is autosaved under this instance's name once shown.
    if (restore && open(orphan, [this, orphan](bool) {
            autosave();
            QFile::remove(orphan);
            emit restoreDone();
        }))
        return;
    // Declined: kept, out of the way (autosave/declined/), so it is not asked about again.
    if (!restore) {
        const QString declined = QDir(autosaveDir()).filePath(QStringLiteral("declined"));
        QDir().mkpath(declined);
        const QString target = QDir(declined).filePath(QFileInfo(orphan).fileName());
        QFile::remove(target);
        if (QFile::rename(orphan, target))
            ctx_.log(tr("Autosaved session declined; kept as %1").arg(target));
    }
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
