// The one way the GUI runs heavy work: a function on a worker thread whose result comes back on the UI
// thread, where a newer submission supersedes an older one (its result is dropped), a cancel stops waiting
// at once, and the work reports progress. Loading a file, layouts, the partition solve and Pareto sweep, the
// sharding solve and the Graphs-dock parse all go through it. No widgets: usable from tests.
#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>

#include <atomic>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace jointscope::views {

class BackgroundJob;

// What the work function sees of its job on the worker thread: whether to give up, and where to report.
class JobControl {
public:
    // True once the job was cancelled or superseded: the result will be dropped, stop at the next step.
    bool cancelled() const { return flag_->load(std::memory_order_relaxed); }
    // fraction in [0, 1], or negative when unknown; delivered on the UI thread while the job is the newest.
    void progress(double fraction, const QString& text = {}) const;
    quint64 ticket() const { return ticket_; }
    // The flag itself, for engines that poll a std::atomic<bool> (layouts).
    const std::atomic<bool>* flag() const { return flag_.get(); }

private:
    friend class BackgroundJob;
    JobControl(BackgroundJob* job, quint64 ticket, std::shared_ptr<std::atomic<bool>> flag)
        : job_(job), ticket_(ticket), flag_(std::move(flag)) {}
    BackgroundJob* job_;
    quint64 ticket_;
    std::shared_ptr<std::atomic<bool>> flag_;
};

class BackgroundJob : public QObject {
    Q_OBJECT
public:
    // `threads` > 1 lets a superseded job that cannot stop mid-step run out beside the newer one instead of
    // delaying it; 1 serialises them (layouts: Graphviz is not reentrant).
    explicit BackgroundJob(int threads = 1, QObject* parent = nullptr);
    ~BackgroundJob() override; // cancels, then waits for the workers

    // Runs `work(JobControl&)` on a worker and supersedes the job running (which reports cancelled() at
    // once). When it returns and is still the newest, `onResult(value)` (or `onResult(value, ticket)`) runs
    // on the UI thread, then finished(); an exception it throws reports failed() instead. Returns the ticket
    // the signals carry.
    template <typename Work, typename OnResult> quint64 run(Work work, OnResult onResult) {
        using Value = std::decay_t<std::invoke_result_t<Work&, JobControl&>>;
        return submit([work = std::move(work),
                       onResult = std::move(onResult)](JobControl& control) mutable -> std::function<void()> {
            auto value = std::make_shared<Value>(work(control));
            return [onResult, value, ticket = control.ticket()] {
                if constexpr (std::is_invocable_v<const OnResult&, Value&&, quint64>)
                    onResult(std::move(*value), ticket);
                else
                    onResult(std::move(*value));
            };
        });
    }

    // Gives up on the running job: cancelled() comes at once, its worker's result is dropped. Nothing
    // happens when no job runs.
    void cancel();
    bool busy() const { return current_ != 0; }
    quint64 ticket() const { return current_; } // of the newest job while busy(), else 0
    // Blocks until every worker has returned and what they delivered is handled (tests, shutdown).
    void waitForDone();

signals:
    void started(quint64 ticket);
    void progress(quint64 ticket, double fraction, const QString& text);
    void finished(quint64 ticket);
    void failed(quint64 ticket, const QString& message);
    void cancelled(quint64 ticket);

private:
    friend class JobControl;
    // The work returns what to run on the UI thread when its result is still wanted.
    using Work = std::function<std::function<void()>(JobControl&)>;
    quint64 submit(Work work);
    void deliver(quint64 ticket, std::function<void()> delivery, QString error, bool threw);

    QThreadPool pool_;
    std::shared_ptr<std::atomic<bool>> flag_; // the newest job's
    quint64 nextTicket_ = 1;
    quint64 current_ = 0;
};

} // namespace jointscope::views
