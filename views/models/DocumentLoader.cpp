#include "models/DocumentLoader.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <algorithm>

namespace jointscope::views {

DocumentLoader::DocumentLoader(QObject* parent) : QObject(parent) {
    pool_.setMaxThreadCount(2);
    qRegisterMetaType<std::shared_ptr<OpenedFile>>("std::shared_ptr<jointscope::views::OpenedFile>");
    qRegisterMetaType<Diagnostic>("jointscope::Diagnostic");
}

DocumentLoader::~DocumentLoader() {
    cancel();
    pool_.waitForDone();
}

quint64 DocumentLoader::open(const QString& path) {
    if (cancel_)
        cancel_->store(true);
    const quint64 superseded = current_;
    const quint64 ticket = nextTicket_++;
    auto flag = std::make_shared<std::atomic<bool>>(false);
    cancel_ = flag;
    current_ = ticket;
    path_ = path;
    // Busy with the new one already: whoever hears of the old one's end does not take the loader for idle.
    if (superseded)
        emit cancelled(superseded);
    emit started(ticket, path);
    pool_.start([this, ticket, flag, path] {
        QElapsedTimer clock;
        clock.start();
        auto report = [this, ticket](std::shared_ptr<OpenedFile> opened, std::optional<Diagnostic> error) {
            QMetaObject::invokeMethod(
                this, [this, ticket, opened, error] { finish(ticket, opened, error); }, Qt::QueuedConnection);
        };
        auto step = [this, ticket](const QString& name) {
            QMetaObject::invokeMethod(
                this, [this, ticket, name] { emit progress(ticket, name); }, Qt::QueuedConnection);
        };
        step(QStringLiteral("reading"));
        auto file = GraphFile::open(path.toStdString());
        if (flag->load())
            return report(nullptr, std::nullopt);
        if (!file)
            return report(nullptr, file.error());
        auto opened = std::make_shared<OpenedFile>();
        opened->path = path;
        opened->file = file.take();
        if (!opened->file.graphs().empty()) {
            step(QStringLiteral("parsing"));
            // The first graph that reads: a paste whose first block failed still opens on a graph (the failed
            // one stays in the picker, marked).
            const auto& graphs = opened->file.graphs();
            const auto first = std::find_if(graphs.begin(), graphs.end(),
                                            [](const GraphEntry& entry) { return !entry.failed(); });
            opened->index = (first != graphs.end() ? *first : graphs.front()).index;
            auto graph = opened->file.load(opened->index);
            if (graph)
                opened->graph.emplace(graph.take());
            else
                opened->problem = graph.error();
        }
        opened->seconds = double(clock.nsecsElapsed()) / 1e9;
        report(flag->load() ? nullptr : opened, std::nullopt);
    });
    return ticket;
}

void DocumentLoader::cancel() {
    if (cancel_)
        cancel_->store(true);
    cancel_.reset();
    if (const quint64 ticket = std::exchange(current_, 0)) {
        path_.clear();
        emit cancelled(ticket);
    }
}

void DocumentLoader::finish(quint64 ticket, std::shared_ptr<OpenedFile> opened,
                            std::optional<Diagnostic> error) {
    if (ticket != current_)
        return; // superseded or cancelled: cancelled() was reported then
    current_ = 0;
    cancel_.reset();
    path_.clear();
    if (opened)
        emit loaded(ticket, std::move(opened));
    else if (error)
        emit failed(ticket, *error);
    else
        emit cancelled(ticket);
}

void DocumentLoader::waitForDone() {
    pool_.waitForDone();
    QCoreApplication::sendPostedEvents(this);
}

} // namespace jointscope::views
