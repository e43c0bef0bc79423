// Reads and parses graph files off the UI thread: a 100k-node file takes seconds to read, and the window
// must keep painting (and accept Esc) meanwhile. No widgets: usable from tests.
#pragma once

#include "graph/Graph.h"
#include "io/CompileConfig.h"
#include "io/GraphFile.h"
#include "models/BackgroundJob.h"
#include "support/Diagnostic.h"

#include <QObject>
#include <QString>

#include <memory>
#include <optional>

namespace jointscope::views {

// What one open produced: the file, and its first graph parsed (or why not).
struct OpenedFile {
    QString path;
    GraphFile file;
    size_t index = 0;                  // GraphEntry::index of `graph`
    std::optional<Graph> graph;        // empty when the file lists no graph or it failed to parse
    std::optional<Diagnostic> problem; // why `graph` is empty, when it failed to parse
    std::optional<CompileConfig>
        logged;         // `graph` is torch's joint graph in a TORCH_TRACE log: its compile's config
    double seconds = 0; // reading and parsing, on the worker
};

class DocumentLoader : public QObject {
    Q_OBJECT
public:
    explicit DocumentLoader(QObject* parent = nullptr);
    ~DocumentLoader() override;

    // Starts reading `path` and supersedes any open still running: only the newest reports loaded() or
    // failed(); older ones report cancelled(). Returns the ticket the reports carry. `path` may name one of
    // the file's graphs, "FILE#GRAPH" (GRAPH as GraphFile::select takes it), to load first; else the first
    // that reads.
    quint64 open(const QString& path);
    // Gives up on the running open: cancelled() comes at once; the worker stops at its next step (reading
    // the file is one step) and its result is dropped.
    void cancel();
    bool busy() const { return job_.busy(); }
    quint64 ticket() const { return job_.ticket(); }            // of the open running now; 0 when none
    QString path() const { return busy() ? path_ : QString(); } // the file being read while busy()
    // Blocks until every worker has returned (destruction, tests).
    void waitForDone();

signals:
    void started(quint64 ticket, const QString& path);
    // "reading", "indexing 312 of 1,024 MB · 3,120 graphs", "parsing"; fraction in [0, 1], negative when
    // unknown.
    void progress(quint64 ticket, double fraction, const QString& step);
    // A TORCH_TRACE log's graphs as its index finds them, in file order, before loaded() (which lists them
    // all): each batch follows the ones before.
    void graphsFound(quint64 ticket, std::shared_ptr<const jointscope::GraphList> graphs);
    void loaded(quint64 ticket, std::shared_ptr<jointscope::views::OpenedFile> opened);
    void failed(quint64 ticket, const jointscope::Diagnostic& error);
    void cancelled(quint64 ticket);

private:
    // Two threads: a superseded read that cannot stop mid-file must not hold up the newer one.
    BackgroundJob job_{2};
    QString path_;
};

} // namespace jointscope::views
