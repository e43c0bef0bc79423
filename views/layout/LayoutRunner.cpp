#include "layout/LayoutRunner.h"

#include <QCoreApplication>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

namespace jointscope::layout {

using ResultPtr = std::shared_ptr<const LayoutResult>;

LayoutRunner::LayoutRunner(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(1);
    qRegisterMetaType<ResultPtr>("std::shared_ptr<const jointscope::layout::LayoutResult>");
}

LayoutRunner::~LayoutRunner() {
    cancel();
    pool_.waitForDone();
}

quint64 LayoutRunner::start(std::shared_ptr<const Graph> graph, LayoutOptions options) {
    cancel();
    const quint64 ticket = nextTicket_++;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    currentCancel_ = flag;
    ++pending_;
    auto* watcher = new QFutureWatcher<ResultPtr>(this);
    connect(watcher, &QFutureWatcher<ResultPtr>::finished, this, [this, watcher, flag, ticket] {
        ResultPtr result = watcher->result();
        watcher->deleteLater();
        --pending_;
        if (!result || flag->load())
            emit cancelled(ticket);
        else
            emit finished(ticket, std::move(result));
    });
    watcher->setFuture(QtConcurrent::run(&pool_, [graph = std::move(graph), options = std::move(options), flag]() -> ResultPtr {
        if (flag->load())
            return nullptr;
        auto result = computeLayout(*graph, options, flag.get());
        if (!result)
            return nullptr;
        return std::make_shared<const LayoutResult>(std::move(*result));
    }));
    emit started(ticket);
    return ticket;
}

void LayoutRunner::cancel() {
    if (currentCancel_)
        currentCancel_->store(true);
    currentCancel_.reset();
}

void LayoutRunner::waitForDone() {
    pool_.waitForDone();
    while (pending_ > 0)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
}

} // namespace jointscope::layout
