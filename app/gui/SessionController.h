// Session files (*.jointscope) in the window: save and open (graph, partition options and pins, sharding mesh
// and pins, view), the autosave of every edit, and crash recovery (an autosave no live instance holds is
// offered back at start-up).
#pragma once

#include "FeatureContext.h"
#include "models/BackgroundJob.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

#include "io/Session.h"

#include <functional>
#include <memory>

class QLockFile;

namespace jointscope::gui {

class PartitionFeature;
class ShardingFeature;

// What a session needs of the window: opening its graph, and the window's own view settings.
class SessionHost {
public:
    virtual ~SessionHost() = default;
    // Reads `path` as a graph file (never as a session: a session's graph is a graph).
    virtual bool openGraphFile(const QString& path) = 0;
    // A session file is being read (true) or no longer (false): the window shows it busy, with Cancel.
    virtual void showSessionReading(bool reading) = 0;
    // Runs `fn` once the file being read is shown (true) or not (false).
    virtual void whenGraphFileLoaded(std::function<void(bool)> fn) = 0;
    // Shows graph `index` of the open file (parsed off the UI thread), then calls `done`.
    virtual void showGraphIndex(int index, std::function<void(bool)> done) = 0;
    virtual QJsonObject viewSettings() const = 0;
    virtual void restoreViewSettings(const QJsonObject& view) = 0;
};

class SessionController : public QObject {
    Q_OBJECT
public:
    SessionController(const FeatureContext& context, SessionHost* host, PartitionFeature* partition,
                      ShardingFeature* sharding, QObject* parent = nullptr);
    ~SessionController() override;

    bool save(const QString& path);
    // Reads the session on a worker (a session may be large), then opens its graph; `then(applied)` runs once
    // the graph is shown and the session applied to it, or not (unreadable session or graph, cancelled).
    bool open(const QString& path, std::function<void(bool)> then = {});
    void cancelOpen() { readJob_.cancel(); }
    bool reading() const { return readJob_.busy(); }
    // Crash recovery: "yes" / "no" answers the restore question without asking (scripts, tests).
    void setRestoreAnswer(const QString& answer) { restoreAnswer_ = answer; }
    // The file named on the command line: an autosave of another graph is then kept, not offered in its
    // place.
    void setStartupFile(const QString& path) { startupFile_ = path; }
    void closing(); // a clean exit: the autosave is no crash

signals:
    void autosaved();   // this instance's autosave file was written
    void restoreDone(); // the restore question is answered (and a restored session is shown)

private:
    void autosave();
    void offerRestore();
    void openRead(const QString& path, const Expected<SessionFile>& file, std::function<void(bool)> then);

    FeatureContext ctx_;
    SessionHost* host_;
    PartitionFeature* partition_;
    ShardingFeature* sharding_;
    std::unique_ptr<QLockFile> autosaveLock_; // held while this instance runs: its autosave is no orphan
    QString autosavePath_;                    // <AppData>/autosave/session-<pid>-<random>.jointscope
    bool restoreAnswered_ = false;            // autosaves start once the restore question is answered
    QString restoreAnswer_;
    QString startupFile_;
    views::BackgroundJob readJob_;       // the session file being read
    std::function<void(bool)> readThen_; // what waits on it
};

} // namespace jointscope::gui
