#include "PartitionDocument.h"

#include "cost/RuntimeEstimator.h"
#include "io/FxWriter.h"
#include "ops/RulesetChoice.h"
#include "partition/DecisionJson.h"

#include <QSaveFile>
#include <QUndoCommand>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <tuple>

namespace jointscope::gui {

using namespace jointscope::partition;

namespace {

std::string_view strategyName(Strategy s) {
    return s == Strategy::MinCut ? "min-cut" : "default";
}

QString policyText(Policy p) {
    return QString::fromLatin1(policyName(p).data(), qsizetype(policyName(p).size()));
}

// The engine's options for the document's settings and the user's pins.
PartitionOptions engineOptions(const EngineOptions& options, const PolicyEdits& edits) {
    PartitionOptions po;
    po.strategy = options.strategy;
    po.memoryBudget = options.memoryBudget;
    po.solver = options.solver;
    po.overrides.assign(edits.begin(), edits.end());
    return po;
}

// What a background engine run reads, copied off the document: the work runs on another thread.
struct EngineInput {
    std::shared_ptr<const Graph> graph;
    EngineOptions options;
    PolicyEdits edits;
    std::string rulesetName;
    std::shared_ptr<const CompileConfig> logged;
};

// The joint graph the engine partitions: for a logged compile, with the log's facts and settings applied to
// `rules` and inductor's joint-graph passes replayed (`run` says what they did).
Graph preparedJoint(const EngineInput& in, Ruleset& rules, std::optional<LoggedRun>& run) {
    Graph joint(*in.graph);
    if (in.logged) {
        addLogGraphFacts(joint, *in.logged);
        SettingsOverrides overrides; // the document's options: the log's, or the user's edits of them
        overrides.memoryBudget = in.options.memoryBudget;
        overrides.solver = in.options.solver;
        run = prepareLoggedRun(joint, in.logged.get(), rules, overrides);
    }
    return joint;
}

// The graph as FX text under `name`.
std::string namedFx(Graph graph, const char* name) {
    graph.name = name;
    return writeFxText(graph);
}

} // namespace

// Sets or clears the policy of one node.
class PolicyCommand : public QUndoCommand {
public:
    PolicyCommand(PartitionDocument* doc, std::string node, std::optional<Policy> before,
                  std::optional<Policy> after)
        : doc_(doc), node_(std::move(node)), before_(before), after_(after) {
        const QString name = QString::fromStdString(node_);
        setText(after ? QObject::tr("%1 %2").arg(policyText(*after), name)
                      : QObject::tr("clear policy of %1").arg(name));
    }
    void redo() override { doc_->applyEdit(node_, after_); }
    void undo() override { doc_->applyEdit(node_, before_); }

private:
    PartitionDocument* doc_;
    std::string node_;
    std::optional<Policy> before_, after_;
};

class BudgetCommand : public QUndoCommand {
public:
    BudgetCommand(PartitionDocument* doc, double before, double after)
        : doc_(doc), before_(before), after_(after) {
        setText(QObject::tr("memory budget %1").arg(after, 0, 'f', 3));
    }
    void redo() override { doc_->applyBudget(after_); }
    void undo() override { doc_->applyBudget(before_); }

private:
    PartitionDocument* doc_;
    double before_, after_;
};

// A session's options and pins, applied at once: one step of the history, so that the pins of a restored
// session can be undone like the ones the user set before the window closed.
class RestoreCommand : public QUndoCommand {
public:
    RestoreCommand(PartitionDocument* doc, EngineOptions beforeOptions, PolicyEdits beforeEdits,
                   EngineOptions afterOptions, PolicyEdits afterEdits)
        : doc_(doc), beforeOptions_(std::move(beforeOptions)), beforeEdits_(std::move(beforeEdits)),
          afterOptions_(std::move(afterOptions)), afterEdits_(std::move(afterEdits)) {
        setText(QObject::tr("restore session (%n pin(s))", nullptr, int(afterEdits_.size())));
    }
    void redo() override { doc_->applyState(afterOptions_, afterEdits_); }
    void undo() override { doc_->applyState(beforeOptions_, beforeEdits_); }

private:
    PartitionDocument* doc_;
    EngineOptions beforeOptions_;
    PolicyEdits beforeEdits_;
    EngineOptions afterOptions_;
    PolicyEdits afterEdits_;
};

struct PartitionDocument::SolveOutcome {
    std::shared_ptr<const PartitionResult> result;
    QString error;
    std::vector<std::string> errorNodes;
};

PartitionDocument::PartitionDocument(QObject* parent)
    : QObject(parent), ownUndo_(std::make_unique<QUndoStack>()), undo_(ownUndo_.get()) {}

PartitionDocument::PartitionDocument(QUndoStack* undo, QObject* parent) : QObject(parent), undo_(undo) {}

PartitionDocument::~PartitionDocument() = default;

void PartitionDocument::setGraph(std::shared_ptr<const Graph> joint, QString path, int index,
                                 std::optional<CompileConfig> logged) {
    cancel();
    paretoJob_.cancel();
    if (logged && joint) {
        // The log's facts on the graph before anything reads it, as the CLI's partition adds them: the torch
        // version recorded in the log chooses the ruleset ("auto"), not the graph text alone (torch-2.15).
        auto withFacts = std::make_shared<Graph>(*joint);
        addLogGraphFacts(*withFacts, *logged);
        joint = std::move(withFacts);
    }
    graph_ = std::move(joint);
    logged_ = logged ? std::make_shared<const CompileConfig>(std::move(*logged)) : nullptr;
    if (logged_ && graph_) {
        // The options start from what torch ran with; the user's edits override them from here on.
        Expected<Ruleset> rules = loadRuleset(resolveRuleset(options_.ruleset.toStdString(), *graph_).name);
        if (rules) {
            const CompileSettings settings = settingsFromLog(logged_.get(), *graph_, *rules, {});
            options_.memoryBudget = settings.options.memoryBudget.value_or(1.0);
            options_.solver = settings.options.solver;
            emit optionsChanged();
        }
    }
    path_ = std::move(path);
    index_ = index;
    edits_.clear();
    undo_->clear();
    result_.reset();
    previous_.reset();
    lastError_.clear();
    errorPath_.clear();
    emit editsChanged();
}

std::optional<std::vector<std::string>> PartitionDocument::torchSaved() const {
    if (!graph_)
        return std::nullopt;
    for (const PartitionDecision& d : graph_->decisions)
        if (d.name == "torch_min_cut") {
            std::vector<std::string> names = d.saved;
            names.insert(names.end(), d.savedSym.begin(), d.savedSym.end());
            return names;
        }
    return std::nullopt;
}

QString PartitionDocument::effectiveRuleset() const {
    // resolveRuleset decides, as for the CLI; without a graph there is nothing to choose from yet.
    if (!graph_)
        return options_.ruleset;
    return QString::fromStdString(resolveRuleset(options_.ruleset.toStdString(), *graph_).name);
}

QString PartitionDocument::rulesetReason() const {
    if (!graph_)
        return {};
    return QString::fromStdString(resolveRuleset(options_.ruleset.toStdString(), *graph_).reason);
}

void PartitionDocument::setOptions(const EngineOptions& options) {
    if (options == options_)
        return;
    options_ = options;
    emit optionsChanged();
    solve();
}

void PartitionDocument::setPolicy(const std::string& node, Policy policy) {
    const auto it = edits_.find(node);
    const std::optional<Policy> before =
        it == edits_.end() ? std::nullopt : std::optional<Policy>(it->second);
    if (before == policy)
        return;
    undo_->push(new PolicyCommand(this, node, before, policy));
}

void PartitionDocument::clearPolicy(const std::string& node) {
    const auto it = edits_.find(node);
    if (it == edits_.end())
        return;
    undo_->push(new PolicyCommand(this, node, it->second, std::nullopt));
}

void PartitionDocument::setBudget(double budget) {
    budget = std::clamp(budget, 0.0, 1.0);
    if (budget == options_.memoryBudget)
        return;
    undo_->push(new BudgetCommand(this, options_.memoryBudget, budget));
}

void PartitionDocument::applyEdit(const std::string& node, std::optional<Policy> policy) {
    if (policy)
        edits_[node] = *policy;
    else
        edits_.erase(node);
    emit editsChanged();
    solve();
}

void PartitionDocument::applyBudget(double budget) {
    options_.memoryBudget = budget;
    emit optionsChanged();
    emit editsChanged();
    solve();
}

void PartitionDocument::restore(const EngineOptions& options, const PolicyEdits& edits) {
    undo_->clear();
    if (options == options_ && edits == edits_)
        return solve();
    undo_->push(new RestoreCommand(this, options_, edits_, options, edits));
}

void PartitionDocument::applyState(const EngineOptions& options, const PolicyEdits& edits) {
    options_ = options;
    edits_ = edits;
    emit optionsChanged();
    emit editsChanged();
    solve();
}

namespace {

// The memory timeline of the result's decision and, when the file records one, of torch's own; each also as
// the Memory dock's curve.
void addMemoryTimelines(PartitionResult& r, const Graph& joint) {
    if (Expected<MemoryTimeline> t = memoryTimeline(*r.partition, *r.rules)) {
        r.memory = t.take();
        r.memoryCurve = views::MemoryCurve::from(r.partition->graph, *r.memory);
    }
    for (const PartitionDecision& d : joint.decisions) {
        if (d.name != "torch_min_cut")
            continue;
        std::vector<std::string> saved = d.saved;
        saved.insert(saved.end(), d.savedSym.begin(), d.savedSym.end());
        Expected<Partition> torchs = evaluateSaved(Graph(joint), *r.rules, saved, BuildGraphs::No);
        if (!torchs)
            return;
        r.torchPartition = std::make_shared<const Partition>(torchs.take());
        if (Expected<MemoryTimeline> t = memoryTimeline(*r.torchPartition, *r.rules)) {
            r.torchMemory = t.take();
            r.torchMemoryCurve = views::MemoryCurve::from(r.torchPartition->graph, *r.torchMemory);
        }
        return;
    }
}

} // namespace

void PartitionDocument::solve() {
    if (!graph_)
        return;
    const EngineInput in{graph_, options_, edits_, effectiveRuleset().toStdString(), logged_};
    auto work = [in](views::JobControl&) {
        const auto& [graph, options, edits, rulesetName] =
            std::tie(in.graph, in.options, in.edits, in.rulesetName);
        std::shared_ptr<const PartitionResult> out;
        QString error;
        std::vector<std::string> errorNodes;
        Expected<Ruleset> rules = loadRuleset(rulesetName);
        if (!rules) {
            error = QString::fromStdString(rules.error().format());
        } else {
            PartitionOptions po = engineOptions(options, edits);
            po.graphs = BuildGraphs::AsTorch;
            std::optional<LoggedRun> run;
            Graph joint = preparedJoint(in, *rules, run);
            const std::shared_ptr<const Graph> solvedGraph =
                run && run->passes.changed() ? std::make_shared<const Graph>(joint) : graph;
            Expected<Partition> p = partitionJoint(std::move(joint), *rules, po);
            if (!p) {
                Diagnostic d = p.error();
                if (d.loc.file.empty())
                    d.loc.file = graph->name;
                error = QString::fromStdString(d.format());
                errorNodes = std::move(d.nodes);
            } else {
                auto r = std::make_shared<PartitionResult>();
                // FLOPs as torch's flop counter counts them; not the knapsack's estimator, which counts every
                // node as at least 1 (14 pointwise recomputes read "14 FLOP").
                for (NodeId id : p->recomputed)
                    r->recomputeCost += double(cost::countFlops(p->graph, id));
                r->pinConflicts = pinConflicts(*p, po.overrides);
                r->partition = std::make_shared<const Partition>(p.take());
                r->rules = std::make_shared<const Ruleset>(rules.take());
                addMemoryTimelines(*r, *solvedGraph);
                r->logged = std::move(run);
                r->solvedIn = graph.get();
                r->solvedIds.reserve(r->partition->graph.size());
                for (const Node& node : r->partition->graph.nodes())
                    r->solvedIds.push_back(graph->find(node.name).value_or(kNoNode));
                r->options = options;
                r->edits = edits;
                out = std::move(r);
            }
        }
        return SolveOutcome{std::move(out), std::move(error), std::move(errorNodes)};
    };
    // A newer solve supersedes silently: only cancel() says cancelled().
    solveJob_.run(std::move(work),
                  [this](SolveOutcome o) { onSolved(std::move(o.result), o.error, o.errorNodes); });
    emit started();
}

void PartitionDocument::onSolved(std::shared_ptr<const PartitionResult> result, QString error,
                                 const std::vector<std::string>& errorNodes) {
    if (!result) {
        lastError_ = error;
        errorPath_.clear();
        for (const std::string& name : errorNodes)
            if (const auto id = graph_ ? graph_->find(name) : std::nullopt)
                errorPath_.push_back(*id);
        emit failed(error);
        return;
    }
    lastError_.clear();
    errorPath_.clear();
    if (result_)
        previous_ = result_;
    result_ = std::move(result);
    emit finished(result_);
}

void PartitionDocument::cancel() {
    if (solveJob_.busy()) {
        solveJob_.cancel();
        emit cancelled();
    }
}

void PartitionDocument::computePareto(int points) {
    if (!graph_)
        return;
    const EngineInput in{graph_, options_, edits_, effectiveRuleset().toStdString(), logged_};
    using Curve = std::pair<std::vector<ParetoPoint>, QString>; // the points, or why not
    auto work = [in, points](views::JobControl&) -> Curve {
        const auto& [options, edits, rulesetName] = std::tie(in.options, in.edits, in.rulesetName);
        std::vector<ParetoPoint> curve;
        QString error;
        Expected<Ruleset> rules = loadRuleset(rulesetName);
        if (!rules) {
            error = QString::fromStdString(rules.error().format());
        } else {
            PartitionOptions po = engineOptions(options, edits);
            po.memoryBudget.reset(); // the curve sweeps every budget
            po.graphs = BuildGraphs::No;
            std::optional<LoggedRun> run;
            Expected<std::vector<ParetoPoint>> c =
                paretoCurve(preparedJoint(in, *rules, run), *rules, po, points);
            if (c)
                curve = c.take();
            else
                error = QString::fromStdString(c.error().format());
        }
        return {std::move(curve), error};
    };
    paretoJob_.run(std::move(work), [this, budget = options_.memoryBudget](Curve c) {
        if (c.second.isEmpty())
            emit paretoReady(c.first, budget);
        else
            emit paretoFailed(c.second);
    });
}

void PartitionDocument::waitForIdle() {
    solveJob_.waitForDone();
    paretoJob_.waitForDone();
}

std::string PartitionDocument::decisionJson() const {
    if (!result_)
        return {};
    return partition::decisionJson(*result_->partition, *result_->rules, engineOptions(result_->options, {}))
               .dump(1) +
           "\n";
}

std::string PartitionDocument::policyJson() const {
    nlohmann::ordered_json policies = nlohmann::ordered_json::object();
    for (const auto& [name, policy] : edits_)
        policies[name] = std::string(policyName(policy));
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    j["policies"] = policies;
    return j.dump(1) + "\n";
}

std::string PartitionDocument::forwardFx() const {
    return result_ ? namedFx(result_->partition->forward, "forward") : std::string();
}

std::string PartitionDocument::backwardFx() const {
    return result_ ? namedFx(result_->partition->backward, "backward") : std::string();
}

SessionFile PartitionDocument::sessionFile(const QJsonObject& view) const {
    SessionFile s;
    s.graphPath = path_.toStdString();
    s.graphIndex = index_;
    s.ruleset = options_.ruleset.toStdString();
    s.strategy = std::string(strategyName(options_.strategy));
    s.memoryBudget = options_.memoryBudget;
    s.solver = std::string(knapsackSolverName(options_.solver));
    for (const auto& [name, policy] : edits_)
        s.policies[name] = std::string(policyName(policy));
    for (auto it = view.begin(); it != view.end(); ++it)
        if (it.value().isString())
            s.view[it.key().toStdString()] = it.value().toString().toStdString();
    return s;
}

Expected<Session> PartitionDocument::parseSession(const SessionFile& file) {
    auto fail = [](const QString& message) -> Expected<Session> {
        return makeError({}, message.toStdString());
    };
    Session s;
    s.graphPath = QString::fromStdString(file.graphPath);
    s.graphIndex = int(std::min<int64_t>(file.graphIndex, std::numeric_limits<int>::max()));
    s.options.ruleset = QString::fromStdString(file.ruleset);
    if (const auto st = parseStrategy(file.strategy))
        s.options.strategy = *st;
    else
        return fail(QObject::tr("unknown strategy '%1'").arg(QString::fromStdString(file.strategy)));
    s.options.memoryBudget = std::clamp(file.memoryBudget, 0.0, 1.0);
    if (const auto k = parseKnapsackSolver(file.solver))
        s.options.solver = *k;
    else
        return fail(QObject::tr("unknown solver '%1'").arg(QString::fromStdString(file.solver)));
    for (const auto& [node, policy] : file.policies) {
        const auto p = parsePolicy(policy);
        if (!p || *p == Policy::None)
            return fail(QObject::tr("node %1: unknown policy '%2'")
                            .arg(QString::fromStdString(node), QString::fromStdString(policy)));
        s.edits[node] = *p;
    }
    for (const auto& [key, value] : file.view)
        s.view[QString::fromStdString(key)] = QString::fromStdString(value);
    s.sharding = file.sharding;
    return s;
}

Expected<Session> PartitionDocument::readSession(const QString& path) {
    const Expected<SessionFile> file = jointscope::readSession(path.toStdString());
    if (!file)
        return file.error();
    Expected<Session> session = parseSession(*file);
    if (!session) {
        Diagnostic d = session.error();
        d.loc.file = path.toStdString();
        return d;
    }
    return session;
}

Expected<Done> PartitionDocument::writeFileAtomically(const QString& path, const QByteArray& data) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(data) != data.size() || !file.commit())
        return makeError({path.toStdString()},
                         QObject::tr("cannot write: %1").arg(file.errorString()).toStdString());
    return Done{};
}

} // namespace jointscope::gui
