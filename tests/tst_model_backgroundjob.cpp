// BackgroundJob: work on a worker thread, results on the UI thread, the newest submission wins, cancel
// drops the result at once, progress reaches the UI thread, exceptions are reported as failures.
#include "models/BackgroundJob.h"

#include <QSignalSpy>
#include <QTest>
#include <QThread>

#include <atomic>
#include <stdexcept>

using jointscope::views::BackgroundJob;
using jointscope::views::JobControl;

namespace {

// Spins until the job is cancelled (or a generous timeout): work that only stops when told to.
int spinUntilCancelled(JobControl& control, std::atomic<bool>& sawCancel) {
    for (int i = 0; i < 20000; ++i) {
        if (control.cancelled()) {
            sawCancel = true;
            return -1;
        }
        QThread::msleep(1);
    }
    return -2;
}

} // namespace

class TestBackgroundJob : public QObject {
    Q_OBJECT
private slots:
    void resultArrivesOnTheUiThread() {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        QSignalSpy started(&job, &BackgroundJob::started);
        QThread* workerThread = nullptr;
        QThread* resultThread = nullptr;
        int value = 0;
        const quint64 ticket = job.run(
            [&workerThread](JobControl&) {
                workerThread = QThread::currentThread();
                return 42;
            },
            [&](int v) {
                resultThread = QThread::currentThread();
                value = v;
            });
        QCOMPARE(started.count(), 1);
        QCOMPARE(started.at(0).at(0).toULongLong(), ticket);
        QVERIFY(job.busy());
        QCOMPARE(job.ticket(), ticket);
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished.at(0).at(0).toULongLong(), ticket);
        QCOMPARE(value, 42);
        QVERIFY(workerThread != nullptr);
        QVERIFY(workerThread != QThread::currentThread());
        QCOMPARE(resultThread, QThread::currentThread());
        QVERIFY(!job.busy());
        QCOMPARE(job.ticket(), quint64(0));
    }

    void newestSubmissionWins() {
        BackgroundJob job(2); // the older one runs out beside the newer
        QSignalSpy finished(&job, &BackgroundJob::finished);
        QSignalSpy cancelled(&job, &BackgroundJob::cancelled);
        std::atomic<bool> release{false};
        std::atomic<bool> olderStarted{false};
        std::atomic<bool> olderRan{false};
        QList<int> results;
        const quint64 first = job.run(
            [&](JobControl&) {
                olderStarted = true;
                while (!release)
                    QThread::msleep(1);
                olderRan = true;
                return 1; // finishes after the newer one: must be dropped anyway
            },
            [&](int v) { results << v; });
        QTRY_VERIFY_WITH_TIMEOUT(olderStarted.load(), 10000); // superseded mid-work, not before it began
        const quint64 second = job.run([](JobControl&) { return 2; }, [&](int v) { results << v; });
        QVERIFY(second != first);
        // The older one is reported at once, and the job stays busy with the newer one.
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(cancelled.at(0).at(0).toULongLong(), first);
        QVERIFY(job.busy());
        QCOMPARE(job.ticket(), second);
        QVERIFY(finished.wait(10000));
        release = true;
        job.waitForDone();
        QVERIFY(olderRan);
        QCOMPARE(results, QList<int>{2});
        QCOMPARE(finished.count(), 1);
        QCOMPARE(finished.at(0).at(0).toULongLong(), second);
        QCOMPARE(cancelled.count(), 1);
    }

    void supersededBeforeStartingNeverRuns() {
        BackgroundJob job(1);
        std::atomic<bool> release{false};
        std::atomic<int> runs{0};
        job.run(
            [&](JobControl&) {
                while (!release)
                    QThread::msleep(1);
                return 0;
            },
            [](int) {});
        // Queued behind the first on the one thread, then superseded: its work is skipped.
        job.run([&](JobControl&) { return ++runs; }, [](int) {});
        job.run([](JobControl&) { return 0; }, [](int) {});
        release = true;
        job.waitForDone();
        QCOMPARE(runs.load(), 0);
    }

    void serialisedJobsRunInOrder() {
        BackgroundJob job(1);
        QList<int> results;
        for (int i = 0; i < 5; ++i)
            job.run(
                [i](JobControl& control) {
                    QThread::msleep(5);
                    return control.cancelled() ? -i : i;
                },
                [&](int v) { results << v; });
        job.waitForDone();
        // Only the last one delivers; the superseded ones saw their cancel flag or never started.
        QCOMPARE(results, QList<int>{4});
    }

    void cancelStopsTheWorkAndDropsTheResult() {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        QSignalSpy cancelled(&job, &BackgroundJob::cancelled);
        QSignalSpy failed(&job, &BackgroundJob::failed);
        std::atomic<bool> running{false};
        std::atomic<bool> sawCancel{false};
        bool delivered = false;
        const quint64 ticket = job.run(
            [&](JobControl& control) {
                running = true;
                return spinUntilCancelled(control, sawCancel);
            },
            [&](int) { delivered = true; });
        QTRY_VERIFY_WITH_TIMEOUT(running.load(), 10000);
        job.cancel();
        QCOMPARE(cancelled.count(), 1);
        QCOMPARE(cancelled.at(0).at(0).toULongLong(), ticket);
        QVERIFY(!job.busy());
        job.waitForDone();
        QVERIFY(sawCancel); // the work polled its token and stopped early
        QTest::qWait(20);
        QVERIFY(!delivered);
        QCOMPARE(finished.count(), 0);
        QCOMPARE(failed.count(), 0);
        QCOMPARE(cancelled.count(), 1);
        job.cancel(); // nothing running: nothing reported
        QCOMPARE(cancelled.count(), 1);
    }

    void progressIsDeliveredOnTheUiThread() {
        BackgroundJob job;
        QSignalSpy progress(&job, &BackgroundJob::progress);
        QSignalSpy finished(&job, &BackgroundJob::finished);
        QList<QThread*> progressThreads;
        connect(&job, &BackgroundJob::progress, this,
                [&progressThreads] { progressThreads << QThread::currentThread(); });
        const quint64 ticket = job.run(
            [](JobControl& control) {
                control.progress(0.25, QStringLiteral("reading"));
                control.progress(0.75, QStringLiteral("parsing"));
                return true;
            },
            [](bool) {});
        QVERIFY(finished.wait(10000));
        QCOMPARE(progress.count(), 2);
        QCOMPARE(progress.at(0).at(0).toULongLong(), ticket);
        QCOMPARE(progress.at(0).at(1).toDouble(), 0.25);
        QCOMPARE(progress.at(0).at(2).toString(), QStringLiteral("reading"));
        QCOMPARE(progress.at(1).at(1).toDouble(), 0.75);
        QCOMPARE(progress.at(1).at(2).toString(), QStringLiteral("parsing"));
        for (QThread* t : progressThreads)
            QCOMPARE(t, QThread::currentThread());
    }

    void progressOfASupersededJobIsDropped() {
        BackgroundJob job(2);
        QSignalSpy progress(&job, &BackgroundJob::progress);
        std::atomic<bool> release{false};
        job.run(
            [&](JobControl& control) {
                while (!release)
                    QThread::msleep(1);
                control.progress(0.5, QStringLiteral("old")); // after being superseded
                return 0;
            },
            [](int) {});
        const quint64 second = job.run([](JobControl&) { return 0; }, [](int) {});
        release = true;
        job.waitForDone();
        QTest::qWait(20);
        for (const QList<QVariant>& args : progress)
            QCOMPARE(args.at(0).toULongLong(), second);
        QCOMPARE(progress.count(), 0);
    }

    void exceptionsAreReportedAsFailures() {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        QSignalSpy failed(&job, &BackgroundJob::failed);
        bool delivered = false;
        const quint64 ticket =
            job.run([](JobControl&) -> int { throw std::runtime_error("graph.txt:3: unexpected token"); },
                    [&](int) { delivered = true; });
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.at(0).at(0).toULongLong(), ticket);
        QCOMPARE(failed.at(0).at(1).toString(), QStringLiteral("graph.txt:3: unexpected token"));
        QVERIFY(!delivered);
        QCOMPARE(finished.count(), 0);
        QVERIFY(!job.busy());
        // The job is usable after a failure.
        int value = 0;
        job.run([](JobControl&) { return 7; }, [&](int v) { value = v; });
        QVERIFY(finished.wait(10000));
        QCOMPARE(value, 7);
    }

    void moveOnlyResultsAndANewJobFromTheResultHandler() {
        BackgroundJob job;
        QSignalSpy finished(&job, &BackgroundJob::finished);
        int second = 0;
        job.run([](JobControl&) { return std::make_unique<int>(5); },
                [&](std::unique_ptr<int> v) {
                    QVERIFY(v);
                    const int base = *v;
                    job.run([base](JobControl&) { return base + 1; }, [&](int w) { second = w; });
                });
        QTRY_COMPARE_WITH_TIMEOUT(second, 6, 10000);
        QCOMPARE(finished.count(), 2);
    }

    void destructionWaitsForTheWorker() {
        std::atomic<bool> startedWork{false};
        std::atomic<bool> finishedWork{false};
        {
            BackgroundJob job;
            job.run(
                [&](JobControl& control) {
                    startedWork = true;
                    for (int i = 0; i < 50 && !control.cancelled(); ++i)
                        QThread::msleep(1);
                    finishedWork = true;
                    return 0;
                },
                [](int) { QFAIL("a destroyed job delivers nothing"); });
            QTRY_VERIFY_WITH_TIMEOUT(startedWork.load(), 10000);
        }
        QVERIFY(finishedWork);
    }
};

QTEST_GUILESS_MAIN(TestBackgroundJob)
#include "tst_model_backgroundjob.moc"
