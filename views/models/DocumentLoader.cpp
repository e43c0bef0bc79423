#include "models/DocumentLoader.h"

#include "partition/CompileSettings.h"

#include <QElapsedTimer>
#include <QLocale>
#include <algorithm>

namespace jointscope::views {

namespace {

// What the worker hands back: the file and its first graph, or why it could not be read.
struct ReadOutcome {
    std::shared_ptr<OpenedFile> opened;
    std::optional<Diagnostic> error;
};

} // namespace

DocumentLoader::DocumentLoader(QObject* parent) : QObject(parent) {
    qRegisterMetaType<std::shared_ptr<OpenedFile>>("std::shared_ptr<jointscope::views::OpenedFile>");
    qRegisterMetaType<Diagnostic>("jointscope::Diagnostic");
    qRegisterMetaType<std::shared_ptr<const GraphList>>("std::shared_ptr<const jointscope::GraphList>");
    connect(&job_, &BackgroundJob::started, this, [this](quint64 ticket) { emit started(ticket, path_); });
    connect(&job_, &BackgroundJob::cancelled, this, &DocumentLoader::cancelled);
    connect(&job_, &BackgroundJob::progress, this,
            [this](quint64 ticket, double fraction, const QString& step) {
                emit progress(ticket, fraction, step);
            });
    connect(&job_, &BackgroundJob::failed, this, [this](quint64 ticket, const QString& message) {
        emit failed(ticket, makeError({path_.toStdString(), 0, 0}, message.toStdString()));
    });
}

DocumentLoader::~DocumentLoader() {
    disconnect(&job_, nullptr, this, nullptr);
}

quint64 DocumentLoader::open(const QString& reference) {
    const auto [file, graph] = splitGraphReference(reference.toStdString());
    const QString path = QString::fromStdString(file);
    path_ = path;
    return job_.run(
        [this, path, spec = graph](JobControl& control) -> ReadOutcome {
            QElapsedTimer clock;
            clock.start();
            control.progress(-1, QStringLiteral("reading"));
            OpenOptions options;
            // A TORCH_TRACE log is indexed in one pass however big it is: say how far, and stop when asked.
            options.progress = [&control](uint64_t read, uint64_t total, size_t graphs) {
                const QLocale locale;
                control.progress(total ? double(read) / double(total) : -1,
                                 QObject::tr("indexing %1 of %2 MB · %3 graphs")
                                     .arg(locale.toString(qulonglong(read >> 20)),
                                          locale.toString(qulonglong(total >> 20)),
                                          locale.toString(qulonglong(graphs))));
                return !control.cancelled();
            };
            // Delivered on the UI thread, and only while this open is the newest.
            options.graphsFound = [this, ticket = control.ticket()](GraphList batch) {
                auto graphs = std::make_shared<const GraphList>(std::move(batch));
                QMetaObject::invokeMethod(
                    this,
                    [this, ticket, graphs] {
                        if (ticket == job_.ticket())
                            emit graphsFound(ticket, graphs);
                    },
                    Qt::QueuedConnection);
            };
            auto file = GraphFile::open(path.toStdString(), options);
            if (control.cancelled())
                return {};
            if (!file)
                return {nullptr, file.error()};
            auto opened = std::make_shared<OpenedFile>();
            opened->path = path;
            opened->file = file.take();
            if (!opened->file.graphs().empty()) {
                control.progress(-1, QStringLiteral("parsing"));
                // The first graph that reads: a paste whose first block failed still opens on a graph (the
                // failed one stays in the picker, marked).
                const auto& graphs = opened->file.graphs();
                const auto first = std::find_if(graphs.begin(), graphs.end(),
                                                [](const GraphEntry& entry) { return !entry.failed(); });
                opened->index = (first != graphs.end() ? *first : graphs.front()).index;
                if (!spec.empty()) {
                    const std::optional<size_t> named = opened->file.select(spec);
                    if (!named)
                        return {nullptr,
                                makeError({path.toStdString(), 0, 0},
                                          "no graph '" + spec +
                                              "' in the file (a graph is named by "
                                              "INDEX, KIND or KIND@COMPILE_ID, as `jointscope-cli info` "
                                              "lists them)")};
                    opened->index = *named;
                }
                auto graph = opened->file.load(opened->index);
                if (graph)
                    opened->graph.emplace(graph.take());
                else
                    opened->problem = graph.error();
                if (opened->graph)
                    opened->logged = partition::loggedConfigFor(opened->file, opened->index);
            }
            opened->seconds = double(clock.nsecsElapsed()) / 1e9;
            return {std::move(opened), std::nullopt};
        },
        [this](ReadOutcome outcome, quint64 ticket) {
            if (outcome.opened)
                emit loaded(ticket, std::move(outcome.opened));
            else if (outcome.error)
                emit failed(ticket, *outcome.error);
            else
                emit cancelled(ticket);
        });
}

void DocumentLoader::cancel() {
    job_.cancel();
}

void DocumentLoader::waitForDone() {
    job_.waitForDone();
}

} // namespace jointscope::views
