#include "ShardingDocument.h"

#include "cost/DeviceSpec.h"

#include <QPointer>
#include <QUndoCommand>
#include <QUndoStack>

namespace jointscope::gui {

using namespace jointscope::sharding;

namespace {

QString placementText(const Placements& p) {
    return QString::fromStdString(toString(p));
}

} // namespace

// Sets or clears the output placement pin of one node.
class PlacementPinCommand : public QUndoCommand {
public:
    PlacementPinCommand(ShardingDocument* doc, std::string node, std::optional<Placements> before,
                        std::optional<Placements> after)
        : doc_(doc), node_(std::move(node)), before_(std::move(before)), after_(std::move(after)) {
        const QString name = QString::fromStdString(node_);
        setText(after_ ? QObject::tr("pin %1 to %2").arg(name, placementText(*after_))
                       : QObject::tr("clear placement pin of %1").arg(name));
    }
    void redo() override {
        if (doc_)
            doc_->applyPin(node_, after_);
    }
    void undo() override {
        if (doc_)
            doc_->applyPin(node_, before_);
    }

private:
    // The stack is the window's and may outlive the document.
    QPointer<ShardingDocument> doc_;
    std::string node_;
    std::optional<Placements> before_, after_;
};

ShardingDocument::ShardingDocument(QUndoStack* undo, QObject* parent) : QObject(parent), undo_(undo) {}

ShardingDocument::~ShardingDocument() = default;

void ShardingDocument::setGraph(std::shared_ptr<const Graph> joint) {
    cancel();
    graph_ = std::move(joint);
    pins_.clear();
    result_.reset();
    previous_.reset();
    stored_.reset();
    storedSource_.clear();
    storedComparison_.reset();
    lastError_.clear();
    emit pinsChanged();
    emit storedChanged();
}

void ShardingDocument::setMesh(const MeshSettings& settings) {
    settings_ = settings;
}

Expected<MeshSettings> ShardingDocument::parseMesh(const QString& shape, const QString& names,
                                                   const QString& topology) {
    return parseMeshSpec(shape.toStdString(), names.toStdString(), topology.toStdString());
}

void ShardingDocument::pin(const std::string& node, const Placements& placement) {
    const auto it = pins_.find(node);
    std::optional<Placements> before;
    if (it != pins_.end())
        before = it->second;
    if (before && *before == placement)
        return;
    undo_->push(new PlacementPinCommand(this, node, before, placement));
}

void ShardingDocument::clearPin(const std::string& node) {
    const auto it = pins_.find(node);
    if (it == pins_.end())
        return;
    undo_->push(new PlacementPinCommand(this, node, it->second, std::nullopt));
}

void ShardingDocument::applyPin(const std::string& node, const std::optional<Placements>& placement) {
    if (placement)
        pins_[node] = *placement;
    else
        pins_.erase(node);
    emit pinsChanged();
    solve();
}

SessionSharding ShardingDocument::sessionSharding() const {
    SessionSharding s;
    s.shape = settings_.shape;
    s.names = settings_.names;
    s.topology = settings_.topology;
    for (const auto& [node, placement] : pins_)
        s.pins[node] = toString(placement);
    s.solved = result_ != nullptr;
    return s;
}

Expected<ShardingSession> ShardingDocument::parseSession(const SessionSharding& saved) {
    auto fail = [](const QString& message) -> Expected<ShardingSession> {
        return makeError({}, message.toStdString());
    };
    Expected<MeshSpec> mesh = makeMeshSpec(saved.shape, saved.names, saved.topology);
    if (!mesh)
        return fail(tr("sharding: %1").arg(QString::fromStdString(mesh.error().message)));
    ShardingSession session;
    session.mesh = mesh.take();
    for (const auto& [node, text] : saved.pins) {
        const std::optional<Placements> p = parsePlacements(text);
        if (!p || p->size() != session.mesh.shape.size())
            return fail(tr("sharding pin %1: '%2' is not a placement on the %3-dimensional mesh")
                            .arg(QString::fromStdString(node), QString::fromStdString(text))
                            .arg(session.mesh.shape.size()));
        session.pins[node] = *p;
    }
    session.solved = saved.solved;
    return session;
}

void ShardingDocument::restore(const ShardingSession& session) {
    settings_ = session.mesh;
    pins_ = session.pins;
    emit pinsChanged();
    if (session.solved || !pins_.empty())
        solve();
}

std::vector<Placements> ShardingDocument::pinChoices(NodeId id) const {
    if (!result_ || !result_->problem)
        return {};
    return outputChoices(*result_->problem, id);
}

void ShardingDocument::solve() {
    if (!graph_)
        return;
    // Strategies and baselines depend on the graph and mesh, not on pins: reused from the last plan.
    std::shared_ptr<const ShardingResult> cached =
        result_ && result_->settings == settings_ ? result_ : nullptr;
    using Outcome = std::pair<std::shared_ptr<const ShardingResult>, QString>; // the plan, or why not
    auto work = [graph = graph_, settings = settings_, pins = pins_, cached](views::JobControl&) -> Outcome {
        QString error;
        std::shared_ptr<ShardingResult> r;
        Expected<MeshSetup> setup = resolveMesh(settings);
        if (!setup) {
            error = QString::fromStdString(setup.error().message);
        } else {
            SolveOptions options;
            for (const auto& [node, placement] : pins)
                options.pins.push_back({node, placement, "you"});
            Expected<ShardingSolution> solution = solveWithBaselines(
                *graph, setup->mesh, options, cost::RooflineModel(setup->device), cached.get());
            if (!solution) {
                Diagnostic d = solution.error();
                if (d.loc.file.empty())
                    d.loc.file = graph->name;
                error = QString::fromStdString(d.format());
            } else {
                r = std::make_shared<ShardingResult>();
                static_cast<ShardingSolution&>(*r) = solution.take();
                r->settings = settings;
                r->pins = pins;
            }
        }
        std::shared_ptr<const ShardingResult> out = std::move(r); // null when refused
        return {std::move(out), error};
    };
    // A newer solve supersedes silently: only cancel() says cancelled().
    solveJob_.run(std::move(work), [this](Outcome o) { onSolved(std::move(o.first), o.second); });
    emit started();
}

void ShardingDocument::onSolved(std::shared_ptr<const ShardingResult> result, QString error) {
    if (!result) {
        // The last good plan stays: the user sees what the pin would have broken.
        lastError_ = error;
        emit failed(error);
        return;
    }
    lastError_.clear();
    if (result_)
        previous_ = result_;
    result_ = std::move(result);
    emit finished(result_);
}

void ShardingDocument::cancel() {
    if (solveJob_.busy()) {
        solveJob_.cancel();
        emit cancelled();
    }
}

void ShardingDocument::storeCurrent() {
    if (!result_)
        return;
    stored_ = result_;
    storedSource_.clear();
    storedComparison_.reset();
    emit storedChanged();
}

void ShardingDocument::loadAutoparallelPlan(const QString& path) {
    if (!result_ || !graph_) {
        emit comparisonFailed(
            tr("Solve first: autoparallel's plan is costed on the mesh of the current plan"));
        return;
    }
    struct Outcome {
        std::shared_ptr<const ShardingResult> stored;
        std::shared_ptr<const PlanComparison> comparison;
        QString error;
    };
    auto work = [graph = graph_, current = result_, path](views::JobControl&) -> Outcome {
        auto located = [](const Diagnostic& d) {
            return QStringLiteral("%1:%2: %3")
                .arg(QString::fromStdString(d.loc.file))
                .arg(d.loc.line)
                .arg(QString::fromStdString(d.message));
        };
        Expected<AutoparallelPlan> plan = sharding::loadAutoparallelPlan(path.toStdString());
        if (!plan)
            return {nullptr, nullptr, located(plan.error())};
        Expected<PlanComparison> c =
            compareWithAutoparallel(*graph, *current, plan.take(), path.toStdString());
        if (!c)
            return {nullptr, nullptr, located(c.error())};
        // The stored plan is the current one with autoparallel's choices: same problem, mesh and model.
        auto theirs = std::make_shared<ShardingResult>(*current);
        theirs->plan.choice = c->mapped.choice;
        theirs->plan.cost = c->theirsCost;
        theirs->plan.optimal = false;
        theirs->report = reportPlan(*graph, *theirs->problem, theirs->plan, *theirs->model);
        theirs->pinnedBy.clear();
        theirs->pins.clear();
        return {std::move(theirs), std::make_shared<const PlanComparison>(c.take()), {}};
    };
    compareJob_.run(std::move(work), [this, path](Outcome o) {
        if (!o.stored) {
            emit comparisonFailed(o.error);
            return;
        }
        stored_ = std::move(o.stored);
        storedSource_ = path;
        storedComparison_ = std::move(o.comparison);
        emit storedChanged();
    });
}

void ShardingDocument::waitForIdle() {
    solveJob_.waitForDone();
    compareJob_.waitForDone();
}

} // namespace jointscope::gui
