// One run of `jointscope-cli validate|profile|devices ... --json` as a child process: a crash in a kernel (or
// an op that hangs) can only take down the child, never the app. Widget-free; the Runtime panel and tests
// drive it.
#pragma once

#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>

#include <vector>

namespace jointscope::views {

struct CliRequest {
    enum class Kind { Validate, Profile, Devices };
    Kind kind = Kind::Profile;
    QString file;
    QString graph; // --graph INDEX|KIND@ID for files that hold several graphs; empty: the file's only graph
    QString partition;      // validate: --partition decision.json; empty: torch's own recorded decision
    QString device;         // empty: the CLI's default (cpu)
    int reps = 0;           // profile: 0 = the CLI's default
    QString db;             // profile: empty = the CLI's default DB
    bool noDb = false;      // profile: --no-db
    bool remeasure = false; // profile: --remeasure (the DB's rows for this graph's ops are measured again)

    // The arguments after the program name.
    QStringList arguments() const;
};

// One device of `jointscope-cli devices --json`: its --device value ("cpu", "cuda:1") and its name.
struct CliDevice {
    QString spec;
    QString name;
};
// The devices of a `devices --json` document, in its order; entries without a kind are skipped.
std::vector<CliDevice> parseDeviceList(const QJsonObject& json);

class CliJob : public QObject {
    Q_OBJECT
public:
    enum class State { Idle, Running, Succeeded, Failed, Cancelled };

    explicit CliJob(QObject* parent = nullptr);
    ~CliJob() override; // kills and reaps a running child

    // jointscope-cli beside the running executable (both install into bin/ and build into app/).
    static QString defaultCliPath();
    void setCliPath(const QString& path) { cliPath_ = path; }
    QString cliPath() const { return cliPath_; }

    // False (state Failed, error() set) when a job is still running or the CLI is missing.
    bool start(const CliRequest& request);
    // Stops the child; state becomes Cancelled once it is reaped (finished() is emitted). A profile is asked
    // to stop (SIGTERM) and prints what it measured so far, kept as result() (its "cancelled" is true); one
    // that does not stop within kStopGraceMs (an op that hangs) is killed and leaves no result.
    void cancel();
    static constexpr int kStopGraceMs = 5000;
    // Blocks until the job ends (tests, shutdown); false on timeout.
    bool waitForFinished(int msecs = 30000);

    State state() const { return state_; }
    bool running() const { return state_ == State::Running; }
    const CliRequest& request() const { return request_; }
    // The parsed --json document of a Succeeded job; validate's output also when the outputs differ (exit 1);
    // a cancelled profile's partial document.
    const QJsonObject& result() const { return result_; }
    // Readable error of a Failed job: what went wrong, then the child's stderr.
    const QString& error() const { return error_; }
    int exitCode() const { return exitCode_; }
    qint64 processId() const { return pid_; } // of the last child started (0: none)
    int progressValue() const { return progressValue_; }
    int progressMaximum() const { return progressMaximum_; }
    static QString stateName(State state);

signals:
    void progress(int value, int maximum);
    void finished(jointscope::views::CliJob::State state);

private:
    void onStderr();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onErrorOccurred(QProcess::ProcessError error);
    void finish(State state);
    bool readResult(); // stdout as the --json document into result_; false (error_ set) when unreadable
    QString stderrTail() const;

    QString cliPath_;
    QProcess* process_ = nullptr;
    CliRequest request_;
    State state_ = State::Idle;
    bool cancelRequested_ = false;
    QJsonObject result_;
    QString error_;
    QByteArray stderr_;
    QByteArray partialLine_;
    int exitCode_ = -1;
    qint64 pid_ = 0;
    int progressValue_ = 0;
    int progressMaximum_ = 0;
};

} // namespace jointscope::views
