// Session files (*.jointscope) in the window: save and open (graph, partition options and pins, sharding mesh
// and pins, view), the autosave of every edit, and crash recovery (an autosave no live instance holds is
// offered back at start-up).
#pragma once

#include "FeatureContext.h"

#include <QJsonObject>
#include <QObject>
#include <QString>

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
    virtual bool openGraphFile(const QString& path) = 0;
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
    // False when the session cannot be read; else `then(applied)` runs once its graph is shown and the
    // session applied to it (or not, when the graph could not be read).
    bool open(const QString& path, std::function<void(bool)> then = {});
    // Crash recovery: "yes" / "no" answers the restore question without asking (scripts, tests).
    void setRestoreAnswer(const QString& answer) { restoreAnswer_ = answer; }
    void closing(); // a clean exit: the autosave is no crash

signals:
    void autosaved();   // this instance's autosave file was written
    void restoreDone(); // the restore question is answered (and a restored session is shown)

private:
    void autosave();
    void offerRestore();

    FeatureContext ctx_;
    SessionHost* host_;
    PartitionFeature* partition_;
    ShardingFeature* sharding_;
    std::unique_ptr<QLockFile> autosaveLock_; // held while this instance runs: its autosave is no orphan
    QString autosavePath_;                    // <AppData>/autosave/session-<pid>-<random>.jointscope
    bool restoreAnswered_ = false;            // autosaves start once the restore question is answered
    QString restoreAnswer_;
};

} // namespace jointscope::gui
