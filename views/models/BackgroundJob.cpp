#include "models/BackgroundJob.h"

#include <QCoreApplication>

#include <exception>

namespace jointscope::views {

void JobControl::progress(double fraction, const QString& text) const {
    if (cancelled())
        return;
    BackgroundJob* job = job_;
    const quint64 ticket = ticket_;
    // The job outlives its workers (its destructor waits for them), so the posted call finds it alive.
    QMetaObject::invokeMethod(
        job,
        [job, ticket, fraction, text] {
            if (ticket == job->current_)
                emit job->progress(ticket, fraction, text);
        },
        Qt::QueuedConnection);
}

BackgroundJob::BackgroundJob(int threads, QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(threads < 1 ? 1 : threads);
}

BackgroundJob::~BackgroundJob() {
    if (flag_)
        flag_->store(true);
    pool_.clear();
    pool_.waitForDone();
}

quint64 BackgroundJob::submit(Work work) {
    if (flag_)
        flag_->store(true);
    const quint64 superseded = std::exchange(current_, nextTicket_++);
    const quint64 ticket = current_;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    flag_ = flag;
    // Busy with the new one already: whoever hears of the old one's end does not take the job for idle.
    if (superseded)
        emit cancelled(superseded);
    emit started(ticket);
    pool_.start([this, ticket, flag, work = std::move(work)]() mutable {
        JobControl control(this, ticket, flag);
        std::function<void()> delivery;
        QString error;
        bool threw = false;
        if (!flag->load()) {
            try {
                delivery = work(control);
            } catch (const std::exception& e) {
                threw = true;
                error = QString::fromUtf8(e.what());
            } catch (...) {
                threw = true;
                error = tr("unknown error");
            }
        }
        QMetaObject::invokeMethod(
            this,
            [this, ticket, delivery = std::move(delivery), error, threw]() mutable {
                deliver(ticket, std::move(delivery), error, threw);
            },
            Qt::QueuedConnection);
    });
    return ticket;
}

void BackgroundJob::deliver(quint64 ticket, std::function<void()> delivery, QString error, bool threw) {
    if (ticket != current_)
        return; // superseded or cancelled: cancelled() was reported then
    const bool stopped = flag_ && flag_->load();
    current_ = 0;
    flag_.reset();
    if (threw) {
        emit failed(ticket, error);
    } else if (stopped || !delivery) {
        emit cancelled(ticket);
    } else {
        delivery();
        emit finished(ticket);
    }
}

void BackgroundJob::cancel() {
    if (flag_)
        flag_->store(true);
    flag_.reset();
    if (const quint64 ticket = std::exchange(current_, 0))
        emit cancelled(ticket);
}

void BackgroundJob::waitForDone() {
    pool_.waitForDone();
    QCoreApplication::sendPostedEvents(this);
}

} // namespace jointscope::views
