// The partition being debugged: the joint graph, the engine options, the user's policy edits (undoable) and
// the engine's results, solved off the UI thread. No widgets: the Partition dock, the canvas overlay and the
// tests all drive this one object.
#pragma once

#include "graph/Graph.h"
#include "io/Session.h"
#include "models/BackgroundJob.h"
#include "models/MemoryTimelineModel.h"
#include "ops/Ruleset.h"
#include "partition/CompileSettings.h"
#include "partition/MemoryTimeline.h"
#include "partition/Partitioner.h"
#include "partition/PinConflicts.h"

#include <QJsonObject>
#include <QObject>
#include <QString>
#include <QUndoStack>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace jointscope::gui {

// node name -> MustSave / MustRecompute (or another policy read from a policy file); absent = no edit.
using PolicyEdits = std::map<std::string, partition::Policy>;

struct EngineOptions {
    QString
        ruleset; // "torch-2", "torch-1.13" or a ruleset file; empty: chosen from the graph's torch version
    partition::Strategy strategy = partition::Strategy::MinCut;
    double memoryBudget = 1.0;
    partition::KnapsackSolver solver = partition::KnapsackSolver::Dp;

    friend bool operator==(const EngineOptions&, const EngineOptions&) = default;
};

// One finished solve and the inputs it was solved with.
struct PartitionResult {
    std::shared_ptr<const partition::Partition> partition;
    std::shared_ptr<const Ruleset> rules;
    EngineOptions options;
    PolicyEdits edits;
    double recomputeCost = 0; // FLOPs of the recomputed forward nodes (cost::countFlops)
    std::vector<partition::PinConflict> pinConflicts; // the edits the decision contradicts
    std::optional<partition::MemoryTimeline>
        memory; // live activation bytes of this decision (ids: partition)
    // torch's recorded min-cut decision evaluated on the same graph, and its timeline (ids: torchPartition)
    std::shared_ptr<const partition::Partition> torchPartition;
    std::optional<partition::MemoryTimeline> torchMemory;
    // partition graph id -> the node of that name in `solvedIn`, the graph solved (kNoNode: none), found on
    // the worker: a name lookup per node is 40 ms of UI thread on a 100k-node graph.
    std::vector<NodeId> solvedIds;
    const Graph* solvedIn = nullptr;
    // `memory` and `torchMemory` as the Memory dock shows them (node names as QString), built on the worker.
    std::optional<views::MemoryCurve> memoryCurve, torchMemoryCurve;
    // A joint graph from a TORCH_TRACE log: the log's settings and the joint-graph passes replayed first.
    std::optional<partition::LoggedRun> logged;
};

// A session file (*.jointscope, read and written by core's io/Session.h): what to open and how it was edited.
struct Session {
    QString graphPath;
    int graphIndex = 0;
    EngineOptions options;
    PolicyEdits edits;
    QJsonObject view;                        // window / view settings, owned by the window
    std::optional<SessionSharding> sharding; // the mesh and pins (ShardingDocument::parseSession), when saved
};

class PartitionDocument : public QObject {
    Q_OBJECT
public:
    // Edits are pushed on the document's own undo stack, or on `undo` (the window's, shared with the
    // sharding's pins; it must outlive the document).
    explicit PartitionDocument(QObject* parent = nullptr);
    explicit PartitionDocument(QUndoStack* undo, QObject* parent = nullptr);
    ~PartitionDocument() override;

    // A new graph: edits, undo history and results are dropped; nothing is solved until solve().
    // `logged`: the compile's config when the graph is torch's joint graph in a TORCH_TRACE log; the graph is
    // then partitioned as torch ran it (the log's budget and solver as the starting options, its switches,
    // inductor's joint-graph passes).
    void setGraph(std::shared_ptr<const Graph> joint, QString path = {}, int index = 0,
                  std::optional<CompileConfig> logged = std::nullopt);
    const Graph* graph() const { return graph_.get(); }
    QString graphPath() const { return path_; }
    int graphIndex() const { return index_; }
    // torch's recorded min-cut decision when the file carries one (saved then saved_sym names).
    std::optional<std::vector<std::string>> torchSaved() const;

    const EngineOptions& options() const { return options_; }
    // Ruleset, strategy and solver changes are settings, not edits: they re-solve but are not undoable.
    void setOptions(const EngineOptions& options);
    QString effectiveRuleset() const;
    QString rulesetReason() const; // why effectiveRuleset() (the graph's torch version, the text's form, ...)
    const PolicyEdits& edits() const { return edits_; }
    QUndoStack* undoStack() { return undo_; }

    // Undoable edits; each re-solves.
    void setPolicy(const std::string& node, partition::Policy policy);
    void clearPolicy(const std::string& node);
    void setBudget(double budget);
    // Applies a session's options and edits at once and re-solves: the history restarts with that one step
    // ("restore session"), so the restored pins can be undone.
    void restore(const EngineOptions& options, const PolicyEdits& edits);

    // Starts a solve; a newer solve supersedes an older one, whose result is dropped.
    void solve();
    void cancel();
    bool busy() const { return solveJob_.busy(); }
    std::shared_ptr<const PartitionResult> result() const { return result_; }
    std::shared_ptr<const PartitionResult> previous() const { return previous_; }
    QString lastError() const { return lastError_; }
    // The nodes the last refusal named, in order (an infinite-capacity path), as ids of graph(); empty when
    // the last solve succeeded or the error names no nodes.
    const std::vector<NodeId>& errorPath() const { return errorPath_; }

    // The memory / recompute trade-off over `points` budgets, off the UI thread (paretoReady).
    void computePareto(int points = 41);

    // Exports of the current result (empty when there is none).
    std::string decisionJson() const;
    std::string policyJson() const; // {"policies": {name: POLICY}}, readable by readPolicyFile
    std::string forwardFx() const;
    std::string backwardFx() const;

    // The session's graph, options and policies (its string values of `view` too); the window adds the rest.
    SessionFile sessionFile(const QJsonObject& view = {}) const;
    // Checks the names a session file holds (strategy, solver, policies); `error` names the bad entry.
    static Expected<Session> parseSession(const SessionFile& file);
    // readSession (core) then parseSession; errors start with the file's path.
    static Expected<Session> readSession(const QString& path);
    // Atomic (QSaveFile): a crash mid-write leaves the old file.
    static Expected<Done> writeFileAtomically(const QString& path, const QByteArray& data);

    // Blocks until no solve or Pareto sweep is running (tests, shutdown).
    void waitForIdle();

signals:
    void started();
    void finished(std::shared_ptr<const jointscope::gui::PartitionResult> result);
    void failed(const QString& message);
    void cancelled();
    void editsChanged();
    void optionsChanged();
    void paretoReady(const std::vector<jointscope::partition::ParetoPoint>& points, double budget);
    void paretoFailed(const QString& message);

private:
    friend class PolicyCommand;
    friend class BudgetCommand;
    friend class RestoreCommand;
    void applyState(const EngineOptions& options, const PolicyEdits& edits);
    void applyEdit(const std::string& node, std::optional<partition::Policy> policy);
    void applyBudget(double budget);
    struct SolveOutcome;
    void onSolved(std::shared_ptr<const PartitionResult> result, QString error,
                  const std::vector<std::string>& errorNodes);

    std::shared_ptr<const Graph> graph_;
    QString path_;
    int index_ = 0;
    EngineOptions options_;
    PolicyEdits edits_;
    std::shared_ptr<const CompileConfig> logged_; // the log's config of the graph's compile
    std::unique_ptr<QUndoStack> ownUndo_;         // when no stack was given
    QUndoStack* undo_;
    // One solve and one Pareto sweep at a time at most; a superseded solve still running only delays the
    // newer one.
    views::BackgroundJob solveJob_{1};
    views::BackgroundJob paretoJob_{1};
    std::shared_ptr<const PartitionResult> result_;
    std::shared_ptr<const PartitionResult> previous_;
    QString lastError_;
    std::vector<NodeId> errorPath_;
};

} // namespace jointscope::gui
