#include "models/CliJob.h"

#include "support/ExitCodes.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QTimer>

namespace jointscope::views {

namespace {

constexpr int kMaxStderrKept = 64 * 1024;

QString commandName(CliRequest::Kind kind) {
    switch (kind) {
    case CliRequest::Kind::Validate:
        return QStringLiteral("validate");
    case CliRequest::Kind::Profile:
        return QStringLiteral("profile");
    case CliRequest::Kind::Devices:
        return QStringLiteral("devices");
    }
    return {};
}

} // namespace

QStringList CliRequest::arguments() const {
    if (kind == Kind::Devices)
        return {commandName(kind), QStringLiteral("--json")};
    QStringList args{commandName(kind), file, QStringLiteral("--json")};
    if (!graph.isEmpty())
        args << QStringLiteral("--graph") << graph;
    if (!device.isEmpty())
        args << QStringLiteral("--device") << device;
    if (kind == Kind::Validate) {
        if (!partition.isEmpty())
            args << QStringLiteral("--partition") << partition;
        return args;
    }
    args << QStringLiteral("--progress");
    if (reps > 0)
        args << QStringLiteral("--reps") << QString::number(reps);
    if (remeasure)
        args << QStringLiteral("--remeasure");
    if (noDb)
        args << QStringLiteral("--no-db");
    else if (!db.isEmpty())
        args << QStringLiteral("--db") << db;
    return args;
}

std::vector<CliDevice> parseDeviceList(const QJsonObject& json) {
    std::vector<CliDevice> devices;
    for (const QJsonValue& value : json.value(QStringLiteral("devices")).toArray()) {
        const QJsonObject d = value.toObject();
        const QString kind = d.value(QStringLiteral("kind")).toString();
        if (kind.isEmpty())
            continue;
        // The CPU is one device whatever its index; GPUs are told apart by theirs (cuda:0, cuda:1).
        const QString spec =
            kind == QLatin1String("cpu")
                ? kind
                : kind + QLatin1Char(':') + QString::number(d.value(QStringLiteral("index")).toInt());
        devices.push_back({spec, d.value(QStringLiteral("name")).toString()});
    }
    return devices;
}

CliJob::CliJob(QObject* parent) : QObject(parent), cliPath_(defaultCliPath()) {}

CliJob::~CliJob() {
    if (process_ && process_->state() != QProcess::NotRunning) {
        process_->disconnect(this);
        process_->kill();
        process_->waitForFinished(5000); // reaps the child: no zombie outlives the job
    }
}

QString CliJob::defaultCliPath() {
    return QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("jointscope-cli"));
}

QString CliJob::stateName(State state) {
    switch (state) {
    case State::Idle:
        return QStringLiteral("idle");
    case State::Running:
        return QStringLiteral("running");
    case State::Succeeded:
        return QStringLiteral("succeeded");
    case State::Failed:
        return QStringLiteral("failed");
    case State::Cancelled:
        return QStringLiteral("cancelled");
    }
    return {};
}

bool CliJob::start(const CliRequest& request) {
    if (running())
        return false;
    request_ = request;
    result_ = {};
    error_.clear();
    stderr_.clear();
    partialLine_.clear();
    exitCode_ = -1;
    pid_ = 0;
    progressValue_ = 0;
    progressMaximum_ = 0;
    cancelRequested_ = false;
    if (process_) {
        process_->deleteLater();
        process_ = nullptr;
    }
    const QFileInfo cli(cliPath_);
    if (!cli.isFile() || !cli.isExecutable()) {
        error_ = tr("jointscope-cli not found at %1; validate and profile run it as a child process")
                     .arg(cliPath_);
        state_ = State::Failed;
        emit finished(state_);
        return false;
    }
    process_ = new QProcess(this);
    connect(process_, &QProcess::readyReadStandardError, this, &CliJob::onStderr);
    connect(process_, &QProcess::finished, this, &CliJob::onFinished);
    connect(process_, &QProcess::errorOccurred, this, &CliJob::onErrorOccurred);
    state_ = State::Running;
    process_->start(cliPath_, request.arguments());
    pid_ = process_->processId();
    return state_ == State::Running;
}

void CliJob::cancel() {
    if (!running() || !process_)
        return;
    cancelRequested_ = true;
    if (request_.kind != CliRequest::Kind::Profile) {
        process_->kill();
        return;
    }
    process_->terminate();
    QTimer::singleShot(kStopGraceMs, process_, [process = process_] {
        if (process->state() != QProcess::NotRunning)
            process->kill();
    });
}

bool CliJob::waitForFinished(int msecs) {
    if (!running() || !process_)
        return true;
    process_->waitForFinished(msecs);
    return !running();
}

void CliJob::onStderr() {
    // Progress lines ("progress DONE/TOTAL") are consumed; everything else is kept for the error text.
    partialLine_ += process_->readAllStandardError();
    qsizetype start = 0;
    for (qsizetype nl = partialLine_.indexOf('\n'); nl >= 0; nl = partialLine_.indexOf('\n', start)) {
        const QByteArray line = partialLine_.mid(start, nl - start);
        start = nl + 1;
        if (line.startsWith("progress ")) {
            const QList<QByteArray> parts = line.mid(9).trimmed().split('/');
            bool okValue = false, okMax = false;
            const int value = parts.size() == 2 ? parts[0].toInt(&okValue) : 0;
            const int maximum = parts.size() == 2 ? parts[1].toInt(&okMax) : 0;
            if (okValue && okMax) {
                progressValue_ = value;
                progressMaximum_ = maximum;
                emit progress(value, maximum);
                continue;
            }
        }
        if (stderr_.size() < kMaxStderrKept)
            stderr_ += line + '\n';
    }
    partialLine_.remove(0, start);
}

QString CliJob::stderrTail() const {
    QString text = QString::fromUtf8(stderr_ + partialLine_).trimmed();
    return text.isEmpty() ? QString() : QStringLiteral("\n") + text;
}

void CliJob::onErrorOccurred(QProcess::ProcessError error) {
    // Crashes arrive through finished(); only a child that never started ends here.
    if (error != QProcess::FailedToStart || !running())
        return;
    error_ = tr("cannot start %1: %2").arg(cliPath_, process_->errorString());
    finish(State::Failed);
}

void CliJob::onFinished(int exitCode, QProcess::ExitStatus status) {
    if (!running())
        return;
    onStderr();
    exitCode_ = status == QProcess::NormalExit ? exitCode : -1;
    const QString what = QStringLiteral("jointscope-cli %1").arg(commandName(request_.kind));
    if (cancelRequested_) {
        // A profile that stopped when asked printed what it measured: kept, as partial.
        if (status == QProcess::NormalExit && exitCode == 0 && request_.kind == CliRequest::Kind::Profile)
            readResult();
        error_ = tr("%1 cancelled").arg(what);
        finish(State::Cancelled);
        return;
    }
    if (status == QProcess::CrashExit) {
        error_ = tr("%1 crashed on %2 (the app is unaffected)").arg(what, request_.file) + stderrTail();
        finish(State::Failed);
        return;
    }
    const QString err = QString::fromUtf8(stderr_);
    if (exitCode != 0 && err.contains(QStringLiteral("unknown command"))) {
        error_ = tr("%1 is unavailable: this jointscope-cli was built without LibTorch (configure with "
                    "-DJOINTSCOPE_WITH_TORCH=ON)")
                     .arg(what);
        finish(State::Failed);
        return;
    }
    const bool jsonExpected =
        exitCode == 0 || (request_.kind == CliRequest::Kind::Validate && exitCode == kExitDiffers);
    if (!jsonExpected) {
        const QString reason =
            request_.kind == CliRequest::Kind::Validate && exitCode == kExitInvalidPartition
                ? tr("invalid partition")
                : tr("exit code %1").arg(exitCode);
        error_ = tr("%1 failed on %2 (%3)").arg(what, request_.file, reason) + stderrTail();
        finish(State::Failed);
        return;
    }
    if (!readResult()) {
        finish(State::Failed);
        return;
    }
    if (progressMaximum_ > 0 && progressValue_ < progressMaximum_) {
        // The CLI reports before each node; the last node's end is the job's end.
        progressValue_ = progressMaximum_;
        emit progress(progressValue_, progressMaximum_);
    }
    finish(State::Succeeded);
}

bool CliJob::readResult() {
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(process_->readAllStandardOutput(), &parseError);
    if (!doc.isObject()) {
        error_ = tr("jointscope-cli %1 printed no readable JSON (%2)")
                     .arg(commandName(request_.kind), parseError.errorString()) +
                 stderrTail();
        return false;
    }
    result_ = doc.object();
    return true;
}

void CliJob::finish(State state) {
    state_ = state;
    emit finished(state);
}

} // namespace jointscope::views
