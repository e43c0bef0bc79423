// The sharding being explored: the joint graph, the device mesh, the user's placement pins (undoable, on the
// window's undo stack) and the engine's plans, solved off the UI thread. No widgets: the Sharding dock, the
// canvas overlay, the inspector and the tests all drive this one object.
#pragma once

#include "graph/Graph.h"
#include "io/Session.h"
#include "models/BackgroundJob.h"
#include "sharding/AutoparallelPlan.h"
#include "sharding/Workflow.h"

#include <QObject>
#include <QString>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class QUndoStack;

namespace jointscope::gui {

// The mesh the next solve uses (sharding::parseMeshSpec checks it).
using MeshSettings = sharding::MeshSpec;

// node name -> the output placement the user fixed.
using PlacementPins = std::map<std::string, sharding::Placements>;

// What a session file (*.jointscope, "sharding") keeps: the mesh, the user's pins, and whether a plan was
// shown.
struct ShardingSession {
    MeshSettings mesh;
    PlacementPins pins;
    bool solved = false;
};

// One finished solve (the plan, its report and baselines: sharding::solveWithBaselines) and the settings and
// pins it was solved with.
struct ShardingResult : sharding::ShardingSolution {
    MeshSettings settings;
    PlacementPins pins;
};

class ShardingDocument : public QObject {
    Q_OBJECT
public:
    // Pins are pushed on `undo` (the window's stack, shared with the partition's edits); it must outlive
    // the document.
    explicit ShardingDocument(QUndoStack* undo, QObject* parent = nullptr);
    ~ShardingDocument() override;

    // A new graph: pins and plans are dropped; nothing is solved until solve().
    void setGraph(std::shared_ptr<const Graph> joint);
    const Graph* graph() const { return graph_.get(); }

    const MeshSettings& mesh() const { return settings_; }
    // A setting, not an edit: the next solve uses it.
    void setMesh(const MeshSettings& settings);
    // "2x2" + "dp,tp" + "h100" -> settings (sharding::parseMeshSpec), or what is wrong with them.
    static Expected<MeshSettings> parseMesh(const QString& shape, const QString& names,
                                            const QString& topology);

    const PlacementPins& pins() const { return pins_; }
    QUndoStack* undoStack() const { return undo_; }
    // Undoable; each re-solves.
    void pin(const std::string& node, const sharding::Placements& placement);
    void clearPin(const std::string& node);

    // Starts a solve; a newer solve supersedes an older one, whose result is dropped.
    void solve();
    void cancel();
    bool busy() const { return solveJob_.busy(); }
    std::shared_ptr<const ShardingResult> result() const { return result_; }
    std::shared_ptr<const ShardingResult> previous() const { return previous_; }
    QString lastError() const { return lastError_; }

    // A session file's "sharding" (core's io/Session.h): the mesh, the pins, and whether a plan is shown.
    // parseSession checks the mesh and the pins against it, naming the bad part; restore applies one at once
    // (not undoable) and re-solves when the session had a plan.
    SessionSharding sessionSharding() const;
    static Expected<ShardingSession> parseSession(const SessionSharding& saved);
    void restore(const ShardingSession& session);

    // The plan kept for comparison (File-less "Store for compare"); null when none.
    void storeCurrent();
    std::shared_ptr<const ShardingResult> stored() const { return stored_; }
    // Reads autoparallel's plan (a TORCH_TRACE log with its autoparallel_solution artifact, or that JSON) off
    // the UI thread, puts it on the current plan's graph and mesh and costs it with the same model; it then
    // becomes the stored plan (storedChanged), or comparisonFailed says why (file:line: message; no plan yet;
    // another mesh).
    void loadAutoparallelPlan(const QString& path);
    bool loadingPlan() const { return compareJob_.busy(); }
    // Where the stored plan came from: empty for a stored solve, else the file autoparallel's plan was read
    // from.
    QString storedSource() const { return storedSource_; }
    // autoparallel's own objective for a loaded plan (its units), with the comparison; null otherwise.
    std::shared_ptr<const sharding::PlanComparison> storedComparison() const { return storedComparison_; }

    // The output placements node `id` may be pinned to on the current mesh (empty when it has none).
    std::vector<sharding::Placements> pinChoices(NodeId id) const;

    // Blocks until no solve is running (tests, shutdown); results still arrive through the event loop.
    void waitForIdle();

signals:
    void started();
    void finished(std::shared_ptr<const jointscope::gui::ShardingResult> result);
    void failed(const QString& message);
    void cancelled();
    void pinsChanged();
    void storedChanged();
    void comparisonFailed(const QString& message);

private:
    friend class PlacementPinCommand;
    void applyPin(const std::string& node, const std::optional<sharding::Placements>& placement);
    void onSolved(std::shared_ptr<const ShardingResult> result, QString error);

    std::shared_ptr<const Graph> graph_;
    MeshSettings settings_;
    PlacementPins pins_;
    QUndoStack* undo_;
    // CBC cannot be interrupted: a superseded solve runs to its end beside the newer one.
    views::BackgroundJob solveJob_{2};
    views::BackgroundJob compareJob_{1};
    std::shared_ptr<const ShardingResult> result_;
    std::shared_ptr<const ShardingResult> previous_;
    std::shared_ptr<const ShardingResult> stored_;
    QString storedSource_;
    std::shared_ptr<const sharding::PlanComparison> storedComparison_;
    QString lastError_;
};

} // namespace jointscope::gui
