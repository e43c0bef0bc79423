#include "ShardingDocument.h"

#include "cost/DeviceSpec.h"

#include <QJsonArray>
#include <QPointer>
#include <QUndoCommand>
#include <QUndoStack>

#include <chrono>

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
    lastError_.clear();
    emit pinsChanged();
    emit storedChanged();
}

void ShardingDocument::setMesh(const MeshSettings& settings) {
    settings_ = settings;
}

std::optional<MeshSettings> ShardingDocument::parseMesh(const QString& shape, const QString& names,
                                                        const QString& topology, QString* error) {
    auto fail = [error](const QString& message) -> std::optional<MeshSettings> {
        if (error)
            *error = message;
        return std::nullopt;
    };
    MeshSettings s;
    const std::optional<std::vector<int64_t>> dims = parseMeshShape(shape.trimmed().toStdString());
    if (!dims)
        return fail(tr("mesh '%1': give sizes like 2x2, 8x8 or 4 (at most 4 dimensions)").arg(shape));
    s.shape = *dims;
    const QString trimmed = names.trimmed();
    if (!trimmed.isEmpty()) {
        for (const QString& n : trimmed.split(QLatin1Char(',')))
            s.names.push_back(n.trimmed().toStdString());
        if (s.names.size() != s.shape.size())
            return fail(
                tr("mesh names '%1': one name per mesh dimension (%2)").arg(names).arg(s.shape.size()));
    }
    if (!findTopology(topology.toStdString()))
        return fail(tr("unknown topology '%1' (h100, a100 or gb200)").arg(topology));
    s.topology = topology.toStdString();
    return s;
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

QJsonObject ShardingDocument::sessionJson() const {
    QJsonArray shape, names;
    for (int64_t d : settings_.shape)
        shape.append(static_cast<qint64>(d));
    for (const std::string& n : settings_.names)
        names.append(QString::fromStdString(n));
    QJsonObject pins;
    for (const auto& [node, placement] : pins_)
        pins[QString::fromStdString(node)] = QString::fromStdString(toString(placement));
    return {{QStringLiteral("mesh"),
             QJsonObject{{QStringLiteral("shape"), shape},
                         {QStringLiteral("names"), names},
                         {QStringLiteral("topology"), QString::fromStdString(settings_.topology)}}},
            {QStringLiteral("pins"), pins},
            {QStringLiteral("solved"), result_ != nullptr}};
}

std::optional<ShardingSession> ShardingDocument::parseSession(const QJsonObject& json, QString* error) {
    auto fail = [error](const QString& message) -> std::optional<ShardingSession> {
        if (error)
            *error = message;
        return std::nullopt;
    };
    const QJsonObject mesh = json.value(QStringLiteral("mesh")).toObject();
    QStringList shape, names;
    for (const QJsonValue& d : mesh.value(QStringLiteral("shape")).toArray())
        shape.append(QString::number(d.toInteger()));
    for (const QJsonValue& n : mesh.value(QStringLiteral("names")).toArray())
        names.append(n.toString());
    QString why;
    const std::optional<MeshSettings> settings =
        parseMesh(shape.join(QLatin1Char('x')), names.join(QLatin1Char(',')),
                  mesh.value(QStringLiteral("topology")).toString(QStringLiteral("h100")), &why);
    if (!settings)
        return fail(tr("sharding: %1").arg(why));
    ShardingSession session;
    session.mesh = *settings;
    const QJsonObject pins = json.value(QStringLiteral("pins")).toObject();
    for (auto it = pins.begin(); it != pins.end(); ++it) {
        const std::optional<Placements> p = parsePlacements(it.value().toString().toStdString());
        if (!p || p->size() != settings->shape.size())
            return fail(tr("sharding pin %1: '%2' is not a placement on the %3-dimensional mesh")
                            .arg(it.key(), it.value().toString())
                            .arg(settings->shape.size()));
        session.pins[it.key().toStdString()] = *p;
    }
    session.solved = json.value(QStringLiteral("solved")).toBool();
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
        const auto start = std::chrono::steady_clock::now();
        auto r = std::make_shared<ShardingResult>();
        QString error;
        const std::optional<Topology> topo = findTopology(settings.topology);
        const std::optional<cost::DeviceSpec> device =
            topo ? cost::findDevice(topo->name) : std::optional<cost::DeviceSpec>();
        if (!topo || !device) {
            error = tr("no device spec for topology %1").arg(QString::fromStdString(settings.topology));
        } else {
            r->settings = settings;
            r->mesh = DeviceMesh::make(settings.shape, settings.names, *topo);
            r->problem = cached ? cached->problem
                                : std::make_shared<const ShardingProblem>(buildStrategies(*graph, r->mesh));
            const cost::RooflineModel model(*device);
            SolveOptions options;
            for (const auto& [node, placement] : pins)
                options.pins.push_back({node, placement, "you"});
            Expected<Plan> plan = solvePlacement(*graph, *r->problem, options, model);
            if (!plan) {
                Diagnostic d = plan.error();
                if (d.loc.file.empty())
                    d.loc.file = graph->name;
                error = QString::fromStdString(d.format());
            } else {
                r->plan = plan.take();
                r->report = reportPlan(*graph, *r->problem, r->plan, model);
                r->pins = pins;
                for (const Pin& p : localMapPins(*graph))
                    r->pinnedBy[p.node] = p.origin;
                for (const auto& [node, placement] : pins)
                    r->pinnedBy[node] = "you";
                if (cached) {
                    r->replicate = cached->replicate;
                    r->dataParallel = cached->dataParallel;
                } else {
                    r->replicate = evaluatePlan(*graph, *r->problem, replicatePlan(*r->problem), model);
                    if (std::vector<Pin> dp = dataParallelPins(*graph, *r->problem); !dp.empty()) {
                        SolveOptions dpOptions;
                        dpOptions.pins = std::move(dp);
                        if (Expected<Plan> p = solvePlacement(*graph, *r->problem, dpOptions, model))
                            r->dataParallel = p->cost;
                    }
                }
            }
        }
        r->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::shared_ptr<const ShardingResult> out = error.isEmpty() ? std::move(r) : nullptr;
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
    emit storedChanged();
}

void ShardingDocument::waitForIdle() {
    solveJob_.waitForDone();
}

} // namespace jointscope::gui
