#include "sharding/Solver.h"

#include "sharding/Clusters.h"
#include "sharding/CommModel.h"
#include "sharding/PairBound.h"
#include "sharding/PairLp.h"
#include "sharding/PairModel.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

namespace jointscope::sharding {

namespace {

const Placements& producedPlacement(const ShardingProblem& problem, NodeId producer, int32_t element,
                                    int32_t option) {
    const Strategy& s = problem.nodes[producer].options[option];
    const size_t e = element >= 0 && static_cast<size_t>(element) < s.outputs.size() ? element : 0;
    return s.outputs[e];
}

bool hasOptions(const ShardingProblem& problem, NodeId id) {
    return !problem.nodes[id].options.empty();
}

// Consumer edges that carry a redistribution: the consumer runs an op (getitem only selects an element).
bool redistributingEdge(const ShardingProblem& problem, NodeId consumer, size_t k) {
    const NodeStrategies& ns = problem.nodes[consumer];
    return ns.kind != RuleKind::GetItem && ns.kind != RuleKind::Sink && k < ns.inputs.size() &&
           hasOptions(problem, ns.inputs[k]);
}

// Redistribution costs of edges: one tensor per producer element, one search per tensor shape and source
// layout (RedistributionCache).
class EdgeCosts {
public:
    EdgeCosts(const Graph& graph, const DeviceMesh& mesh) : graph_(graph), cache_(mesh) {}
    double us(NodeId producer, int32_t element, const Placements& from, const Placements& to) {
        if (from == to)
            return 0;
        auto [it, fresh] = tensors_.try_emplace({producer, element});
        if (fresh)
            it->second = producedTensor(graph_, producer, element);
        return cache_.us(from, to, it->second);
    }

private:
    const Graph& graph_;
    RedistributionCache cache_;
    std::map<std::pair<NodeId, int32_t>, TensorMeta> tensors_;
};

// The parameter-memory window is set (SolveOptions::paramMemoryLow / High).
[[maybe_unused]] bool hasMemoryWindow(const SolveOptions& options) {
    return options.paramMemoryLow > 0 || options.paramMemoryHigh < 1;
}

[[maybe_unused]] std::optional<Placements> pinOf(const std::vector<Pin>& pins, const Node& node) {
    for (const Pin& p : pins)
        if (p.node == node.name)
            return p.placement;
    return std::nullopt;
}

#ifdef JOINTSCOPE_HAVE_CBC
// One variable per class: an option per strategy, its compute cost times the class's copies; a pin keeps
// only the options that produce the pinned placement.
std::vector<PairModel::Variable> classVariables(const Graph& graph, const ShardingProblem& problem,
                                                const NodeClasses& classes,
                                                const std::vector<std::string>& pinKey,
                                                const ComputeModel& model) {
    std::vector<PairModel::Variable> vars(classes.size());
    for (size_t c = 0; c < classes.size(); ++c) {
        const NodeId rep = classes.members[c][0];
        const NodeStrategies& ns = problem.nodes[rep];
        const double copies = static_cast<double>(classes.members[c].size());
        for (const Strategy& s : ns.options) {
            vars[c].unary.push_back(copies * computeUs(graph, rep, ns, s, problem.mesh, model));
            vars[c].alive.push_back(pinKey[rep].empty() ||
                                    (!s.outputs.empty() && toString(s.outputs[0]) == pinKey[rep]));
        }
    }
    return vars;
}

// Placement -> key index, shared by the sides of an edge that must agree.
class KeyIndex {
public:
    int32_t operator()(const Placements& p) {
        auto [it, fresh] = index_.emplace(toString(p), static_cast<int32_t>(index_.size()));
        if (fresh)
            placements_.push_back(&p);
        return it->second;
    }
    size_t size() const { return index_.size(); }
    const Placements& placement(size_t key) const { return *placements_[key]; }

private:
    std::map<std::string, int32_t> index_;
    std::vector<const Placements*> placements_; // by key
};

// Edges between option-carrying nodes, one per (producer class, element, consumer class, input position):
// the copies of an edge in identical layers share their pair columns.
struct EdgeClass {
    NodeId consumer; // a representative edge: this consumer's input `input`
    size_t input;
    double copies;
};

std::vector<EdgeClass> edgeClasses(const ShardingProblem& problem, const NodeClasses& classes) {
    std::vector<EdgeClass> result;
    std::map<std::tuple<int32_t, int32_t, int32_t, size_t>, size_t> index;
    for (NodeId v = 0; v < problem.nodes.size(); ++v) {
        const NodeStrategies& ns = problem.nodes[v];
        if (ns.options.empty())
            continue;
        for (size_t k = 0; k < ns.inputs.size(); ++k) {
            const NodeId u = ns.inputs[k];
            if (!hasOptions(problem, u))
                continue;
            auto [it, fresh] =
                index.emplace(std::make_tuple(classes.classOf[u], ns.inputElement[k], classes.classOf[v], k),
                              result.size());
            if (fresh)
                result.push_back({v, k, 0.0});
            result[it->second].copies += 1;
        }
    }
    return result;
}

// The ILP over node classes as a pairwise model: a variable per class, an edge per edge class (its costs
// times the copies), equality edges for getitem and for forward / backward consistency.
PairModel classModel(const Graph& graph, const ShardingProblem& problem, const NodeClasses& classes,
                     const std::vector<std::string>& pinKey, const JointRoles& roles,
                     const SolveOptions& options, const ComputeModel& model) {
    PairModel pm;
    RedistributionCache redistributions(problem.mesh);
    pm.vars = classVariables(graph, problem, classes, pinKey, model);
    // Keys of class c's options: the placement produced as element `element`, or the one input `input` needs.
    auto outputKeys = [&](int32_t c, int32_t element, KeyIndex& index) {
        std::vector<int32_t> keys;
        const NodeId rep = classes.members[c][0];
        for (size_t t = 0; t < problem.nodes[rep].options.size(); ++t)
            keys.push_back(index(producedPlacement(problem, rep, element, static_cast<int32_t>(t))));
        return keys;
    };
    auto inputKeys = [&](int32_t c, size_t input, KeyIndex& index) {
        std::vector<int32_t> keys;
        for (const Strategy& s : problem.nodes[classes.members[c][0]].options)
            keys.push_back(index(s.inputs[input]));
        return keys;
    };
    auto addEquality = [&](int32_t a, std::vector<int32_t> keyA, int32_t b, std::vector<int32_t> keyB,
                           size_t keys) {
        PairModel::Edge e;
        e.a = a;
        e.b = b;
        e.keyA = std::move(keyA);
        e.keyB = std::move(keyB);
        e.keysA = e.keysB = keys;
        e.equality = true;
        e.cost.assign(keys * keys, PairModel::kForbidden);
        for (size_t k = 0; k < keys; ++k)
            e.cost[k * keys + k] = 0;
        pm.edges.push_back(std::move(e));
    };
    for (const EdgeClass& ec : edgeClasses(problem, classes)) {
        const NodeStrategies& ns = problem.nodes[ec.consumer];
        const NodeId u = ns.inputs[ec.input];
        const int32_t element = ns.inputElement[ec.input];
        const int32_t cu = classes.classOf[u], cv = classes.classOf[ec.consumer];
        if (ns.kind == RuleKind::GetItem) {
            KeyIndex shared;
            std::vector<int32_t> keyA = outputKeys(cu, element, shared),
                                 keyB = inputKeys(cv, ec.input, shared);
            addEquality(cu, std::move(keyA), cv, std::move(keyB), shared.size());
            continue;
        }
        // Both sides are placements of u's tensor: one key set, and the cost of every pair in it.
        KeyIndex shared;
        PairModel::Edge e;
        e.a = cu;
        e.b = cv;
        e.keyA = outputKeys(cu, element, shared);
        e.keyB = inputKeys(cv, ec.input, shared);
        e.keysA = e.keysB = shared.size();
        e.sharedKeys = true;
        std::vector<const Placements*> layouts;
        for (size_t k = 0; k < shared.size(); ++k)
            layouts.push_back(&shared.placement(k));
        const TensorMeta tensor = producedTensor(graph, u, element);
        RedistributionCache::MetricTable t = redistributions.metricTable(layouts, tensor, ec.copies);
        e.cost = std::move(t.cost);
        e.metric = std::move(t.metric);
        pm.edges.push_back(std::move(e));
    }
    if (options.forwardBackwardConsistency) {
        std::set<std::pair<int32_t, int32_t>> equal;
        for (const auto* list : {&roles.paramGrad, &roles.inputGrad, &roles.outputTangent})
            for (const auto& [a, b] : *list)
                if (hasOptions(problem, a) && hasOptions(problem, b))
                    equal.insert({classes.classOf[a], classes.classOf[b]});
        for (const auto& [a, b] : equal) {
            KeyIndex shared;
            std::vector<int32_t> keyA = outputKeys(a, 0, shared), keyB = outputKeys(b, 0, shared);
            addEquality(a, std::move(keyA), b, std::move(keyB), shared.size());
        }
    }
    if (hasMemoryWindow(options))
        for (const auto& [param, grad] : roles.paramGrad)
            if (hasOptions(problem, param))
                pm.vars[classes.classOf[param]].frozen = true;
    return pm;
}
#endif

#ifdef JOINTSCOPE_HAVE_CBC
// The parameter-memory window as one row over the class model's options: per class, per option, the local
// bytes of the parameters it places (zero for classes without any); low and high in bytes.
LinearBudget parameterBudget(const Graph& graph, const ShardingProblem& problem, const NodeClasses& classes,
                             const JointRoles& roles, const SolveOptions& options, const PairModel& pm) {
    LinearBudget budget;
    budget.weight.resize(pm.vars.size());
    for (size_t c = 0; c < pm.vars.size(); ++c)
        budget.weight[c].assign(pm.vars[c].unary.size(), 0.0);
    double total = 0;
    for (const auto& [param, grad] : roles.paramGrad) {
        const TensorMeta* t = graph.node(param).tensor();
        if (!t || !hasOptions(problem, param))
            continue;
        const double bytes = static_cast<double>(cost::numel(*t)) * itemSize(t->dtype);
        total += bytes;
        const int32_t c = classes.classOf[param];
        for (size_t s = 0; s < budget.weight[c].size(); ++s) {
            const Placements& p = problem.nodes[param].options[s].outputs[0];
            double frac = 1;
            for (size_t i = 0; i < p.size(); ++i)
                if (p[i].isShard())
                    frac /= static_cast<double>(problem.mesh.shape[i]);
            budget.weight[c][s] += bytes * frac;
        }
    }
    budget.low = options.paramMemoryLow * total;
    budget.high = options.paramMemoryHigh * total;
    return budget;
}
#endif

std::string fmt(double us) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", us);
    return buf;
}

// The node groups the ILP gets one set of variables for: exact on small graphs (merging nodes of one layer
// only loses freedom), clustered on large ones (py_test_shard_clusters, docs/benchmarks.md "Sharding").
[[maybe_unused]] NodeClasses clusterNodes(const Graph& graph, const ShardingProblem& problem,
                                          const std::vector<std::string>& pinKey, int rounds) {
    if (rounds == SolveOptions::kAutoClusterRounds) {
        size_t withOptions = 0;
        for (const NodeStrategies& ns : problem.nodes)
            withOptions += !ns.options.empty();
        rounds = withOptions <= SolveOptions::kExactNodeLimit ? 0 : SolveOptions::kLargeGraphRounds;
    }
    return rounds > 0 ? clusterRepeatedNodes(graph, problem, pinKey, rounds) : singletonClasses(problem);
}

// Auto decomposes large graphs on meshes of 3+ dimensions, and every graph on meshes of 4+: on one LLaMA
// block over 4x4x4 the exact solve takes 15 s where the decomposed one is within 1 % in 0.7 s with the same
// plan, and 32 layers never leave CBC's branching (docs/benchmarks.md, issue 17); on 2x2x4x4 a node has up
// to 1,296 options and the exact path's dead-end elimination (quadratic in them) alone ran past 3 minutes
// on one block. Small graphs on 3-D meshes keep the exact solve and its proof.
[[maybe_unused]] bool decompose(const SolveOptions& options, const ShardingProblem& problem) {
    switch (options.method) {
    case SolveOptions::Method::Exact:
        return false;
    case SolveOptions::Method::Decomposed:
        return true;
    case SolveOptions::Method::Auto:
        break;
    }
    size_t withOptions = 0, allOptions = 0;
    for (const NodeStrategies& ns : problem.nodes) {
        withOptions += ns.options.empty() ? 0 : 1;
        allOptions += ns.options.size();
    }
    const bool large =
        withOptions > SolveOptions::kExactNodeLimit || allOptions > SolveOptions::kExactOptionLimit;
    return problem.mesh.ndim() >= 4 || (problem.mesh.ndim() >= 3 && large);
}

// A plan from one option per node class.
[[maybe_unused]] Plan planOfClasses(const Graph& graph, const ShardingProblem& problem,
                                    const NodeClasses& classes, const std::vector<int32_t>& chosen,
                                    const ComputeModel& model) {
    Plan plan;
    plan.groups = classes.size();
    plan.choice.assign(problem.nodes.size(), -1);
    for (size_t c = 0; c < classes.size(); ++c)
        for (NodeId id : classes.members[c])
            plan.choice[id] = chosen[c];
    plan.cost = evaluatePlan(graph, problem, plan.choice, model);
    return plan;
}

[[maybe_unused]] Diagnostic timeLimitError(const SolveOptions& options, const NodeClasses& classes) {
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", options.timeLimitSeconds);
    return makeError({}, "the placement ILP found no plan within its " + std::string(limit) +
                             " s time limit (" + std::to_string(classes.size()) +
                             " variable groups; fewer --cluster-rounds give a smaller ILP)");
}

} // namespace

double Plan::gap() const {
    const double total = cost.totalUs();
    return total > 0 ? std::max(0.0, (total - lowerBound) / total) : 0.0;
}

JointRoles jointRoles(const Graph& graph) {
    JointRoles roles;
    const std::optional<NodeId> out = graph.outputNode();
    std::vector<const Value*> outputs;
    if (out && !graph.node(*out).args.empty()) {
        const Value* v = &graph.node(*out).args[0];
        // torch 1.13 prints pytree.tree_unflatten([...], spec): the list is the first argument.
        while (v->isSequence() && v->items().size() == 1 && v->items()[0].isSequence())
            v = &v->items()[0];
        if (v->isSequence())
            for (const Value& item : v->items())
                outputs.push_back(&item);
        else
            outputs.push_back(v);
    }
    std::vector<NodeId> primals, tangents;
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& n = graph.node(id);
        if (n.op != NodeOp::Placeholder)
            continue;
        if (isTangent(n))
            tangents.push_back(id);
        else if (isPrimal(n))
            primals.push_back(id);
    }
    const size_t numFwd = graph.numFwdOutputs
                              ? static_cast<size_t>(*graph.numFwdOutputs)
                              : (outputs.size() >= primals.size() ? outputs.size() - primals.size() : 0);
    for (size_t i = 0; i < primals.size(); ++i) {
        const size_t o = numFwd + i;
        if (o < outputs.size() && outputs[o]->kind() == ValueKind::NodeRef)
            roles.paramGrad.push_back({primals[i], outputs[o]->asNode()});
        else
            roles.dataInputs.push_back(primals[i]);
    }
    // Every primal has a gradient when the user input requires grad too; AOT lists parameters and buffers
    // before the user's inputs, so the last primal is then taken as the data input.
    if (roles.dataInputs.empty() && !roles.paramGrad.empty()) {
        roles.dataInputs.push_back(roles.paramGrad.back().first);
        roles.inputGrad.push_back(roles.paramGrad.back());
        roles.paramGrad.pop_back();
        roles.dataGrad = true;
    }
    for (size_t i = 0; i < tangents.size() && i < numFwd && i < outputs.size(); ++i)
        if (outputs[i]->kind() == ValueKind::NodeRef)
            roles.outputTangent.push_back({outputs[i]->asNode(), tangents[i]});
    return roles;
}

std::vector<Pin> localMapPins(const Graph& graph) {
    std::vector<Pin> pins;
    for (const Node& n : graph.nodes())
        if (std::optional<LocalMapPlacements> lm = localMapPlacements(n); lm && !lm->outputs.empty())
            pins.push_back({n.name, lm->outputs[0], "local_map"});
    return pins;
}

std::vector<int32_t> replicatePlan(const ShardingProblem& problem) {
    std::vector<int32_t> choice(problem.nodes.size(), -1);
    for (size_t id = 0; id < problem.nodes.size(); ++id) {
        const NodeStrategies& ns = problem.nodes[id];
        for (size_t o = 0; o < ns.options.size(); ++o) {
            bool all = true;
            for (const Placements& p : ns.options[o].outputs)
                all = all && allReplicate(p);
            for (const Placements& p : ns.options[o].inputs)
                all = all && allReplicate(p);
            if (all) {
                choice[id] = static_cast<int32_t>(o);
                break;
            }
        }
        if (choice[id] < 0 && !ns.options.empty())
            choice[id] = 0;
    }
    return choice;
}

PlanCost evaluatePlan(const Graph& graph, const ShardingProblem& problem, const std::vector<int32_t>& choice,
                      const ComputeModel& model) {
    PlanCost c;
    EdgeCosts edges(graph, problem.mesh);
    for (NodeId id = 0; id < problem.nodes.size(); ++id) {
        const NodeStrategies& ns = problem.nodes[id];
        if (choice[id] < 0)
            continue;
        const Strategy& s = ns.options[choice[id]];
        c.computeUs += computeUs(graph, id, ns, s, problem.mesh, model);
        for (size_t k = 0; k < ns.inputs.size(); ++k) {
            if (!redistributingEdge(problem, id, k) || choice[ns.inputs[k]] < 0)
                continue;
            const Placements& q =
                producedPlacement(problem, ns.inputs[k], ns.inputElement[k], choice[ns.inputs[k]]);
            c.commUs += edges.us(ns.inputs[k], ns.inputElement[k], q, s.inputs[k]);
        }
    }
    return c;
}

Expected<std::vector<Pin>> dataParallelPins(const Graph& graph, const ShardingProblem& problem) {
    std::vector<Pin> pins;
    const JointRoles roles = jointRoles(graph);
    const size_t m = problem.mesh.ndim();
    for (const auto& [param, grad] : roles.paramGrad)
        pins.push_back({graph.node(param).name, Placements(m, Placement::replicate()), "data_parallel"});
    bool batched = false;
    for (NodeId d : roles.dataInputs) {
        const TensorMeta* t = graph.node(d).tensor();
        if (!t || t->sizes.empty())
            continue;
        const uint64_t batch = cost::concreteSize(t->sizes[0]);
        const uint64_t devices = static_cast<uint64_t>(problem.mesh.size());
        if (batch % devices != 0)
            return makeError({}, "data input '" + graph.node(d).name + "' has batch " +
                                     std::to_string(batch) + ", which the " + std::to_string(devices) +
                                     " devices of mesh " + problem.mesh.str() + " do not divide");
        pins.push_back({graph.node(d).name, Placements(m, Placement::shard(0)), "data_parallel"});
        batched = true;
    }
    if (!batched)
        return makeError({}, "no data input with a batch dimension to shard (every input is a parameter, a "
                             "tangent or a scalar)");
    return pins;
}

Expected<Plan> solvePlacement(const Graph& graph, const ShardingProblem& problem, const SolveOptions& options,
                              const ComputeModel& model) {
#ifndef JOINTSCOPE_HAVE_CBC
    (void)graph;
    (void)problem;
    (void)options;
    (void)model;
    return makeError({}, "the sharding solver needs COIN-OR CBC; this build has none (JOINTSCOPE_WITH_CBC)");
#else
    const size_t n = problem.nodes.size();
    const DeviceMesh& mesh = problem.mesh;
    // Pins: unknown nodes and placements no strategy offers are errors naming both.
    std::vector<Pin> pins = options.pins;
    for (const Pin& p : localMapPins(graph))
        if (!pinOf(pins, graph.node(*graph.find(p.node))))
            pins.push_back(p);
    for (const Pin& p : pins) {
        const std::optional<NodeId> id = graph.find(p.node);
        if (!id)
            return makeError({}, "pin " + p.node + "=" + toString(p.placement) + ": no node named " + p.node);
        const NodeStrategies& ns = problem.nodes[*id];
        if (p.placement.size() != mesh.ndim())
            return makeError({}, "pin " + p.node + "=" + toString(p.placement) + ": the mesh has " +
                                     std::to_string(mesh.ndim()) + " dimensions");
        bool any = false;
        for (const Strategy& s : ns.options)
            any = any || (!s.outputs.empty() && s.outputs[0] == p.placement);
        if (!any) {
            std::set<std::string> offered;
            for (const Strategy& s : ns.options)
                if (!s.outputs.empty())
                    offered.insert(toString(s.outputs[0]));
            std::string list;
            for (const std::string& o : offered)
                list += (list.empty() ? "" : " ") + o;
            return makeError({}, "pin " + p.node + "=" + toString(p.placement) + " (" + p.origin +
                                     "): no strategy of " + p.node + " (" + graph.node(*id).target.text +
                                     ") produces it; it offers: " + (list.empty() ? "nothing" : list));
        }
    }

    // Pinned nodes keep only the options that produce their pin.
    std::vector<std::string> pinKey(n);
    for (const Pin& p : pins)
        pinKey[*graph.find(p.node)] = toString(p.placement);
    const bool debug = std::getenv("JOINTSCOPE_SHARD_DEBUG") != nullptr;
    auto t0 = std::chrono::steady_clock::now();
    auto stamp = [&](const char* what) {
        if (!debug)
            return;
        const auto now = std::chrono::steady_clock::now();
        std::fprintf(stderr, "sharding time: %s %.3f s\n", what,
                     std::chrono::duration<double>(now - t0).count());
        t0 = now;
    };
    const NodeClasses classes = clusterNodes(graph, problem, pinKey, options.clusterRounds);
    const JointRoles roles = jointRoles(graph);
    const bool memoryWindow = hasMemoryWindow(options);
    stamp("clusters");
    PairModel pm = classModel(graph, problem, classes, pinKey, roles, options, model);
    const LinearBudget budget =
        memoryWindow ? parameterBudget(graph, problem, classes, roles, options, pm) : LinearBudget{};
    stamp("model");
    if (decompose(options, problem)) {
        GenerationOptions generation;
        generation.gap = options.gap;
        generation.timeLimitSeconds = options.timeLimitSeconds;
        generation.log = debug;
        generation.budget = budget;
        const GenerationResult g = solveByGeneration(pm, generation);
        stamp("generation");
        if (g.feasible) {
            Plan plan = planOfClasses(graph, problem, classes, g.choice, model);
            plan.decomposed = true;
            // A bound proven equal to the plan's cost stays below its recomputation (summed in another
            // order).
            plan.lowerBound = std::min(g.lowerBound, plan.cost.totalUs());
            plan.optimal = g.cost - g.lowerBound <= 1e-9 * std::fabs(g.cost);
            if (debug)
                std::fprintf(stderr, "sharding generation: model cost %.9g, plan cost %.9g\n", g.cost,
                             plan.cost.totalUs());
            return plan;
        }
        if (g.timedOut)
            return timeLimitError(options, classes);
        // No feasible restricted LP (equalities the seeds could not meet): the exact path decides.
    }
    const size_t optionsBefore = pm.aliveOptions();
    int passes = eliminateDominated(pm);
    stamp("dominated");
    const size_t eliminated = eliminateChains(pm);
    stamp("chains");
    passes += eliminateDominated(pm);
    stamp("dominated again");
    if (debug)
        std::fprintf(stderr,
                     "sharding ILP: %zu classes of nodes, %zu options, %zu after %d passes of dead-end "
                     "elimination, %zu classes eliminated\n",
                     classes.size(), optionsBefore, pm.aliveOptions(), passes, eliminated);
    PairLp lp;
    const std::vector<std::vector<int>> x = addToLp(pm, lp);
    if (memoryWindow) {
        std::vector<int> idx;
        std::vector<double> coef;
        for (size_t c = 0; c < x.size(); ++c)
            for (size_t o = 0; o < x[c].size(); ++o)
                if (x[c][o] >= 0 && budget.weight[c][o] != 0)
                    idx.push_back(x[c][o]), coef.push_back(budget.weight[c][o]);
        if (!idx.empty()) {
            lp.addRow(idx, coef, 'L', budget.high);
            lp.addRow(idx, coef, 'G', budget.low);
        }
    }
    stamp("lp build");
    const PairLp::Result solved = lp.solve(options.timeLimitSeconds, debug);
    stamp("lp solve");
    if (solved.timedOut && !solved.feasible)
        return timeLimitError(options, classes);
    if (!solved.feasible)
        return makeError({}, std::string("the placement ILP has no solution") +
                                 (memoryWindow ? " (check --param-memory against the pins)"
                                               : " (pins and forward/backward consistency conflict)"));
    Plan plan = planOfClasses(graph, problem, classes, pm.choices(x, solved.binary), model);
    plan.optimal = solved.optimal;
    plan.lowerBound = std::min(solved.lowerBound, plan.cost.totalUs());
    return plan;
#endif
}

namespace {

// A node's own cost under option s with every other node as the plan has it: compute, transitions in from
// its producers, transitions out to its consumers.
struct LocalCost {
    double compute = 0, in = 0, out = 0;
    double total() const { return compute + in + out; }
};

LocalCost localCost(const Graph& graph, const ShardingProblem& problem, const Plan& plan, NodeId id,
                    int32_t s, EdgeCosts& edges, const ComputeModel& model) {
    LocalCost c;
    const NodeStrategies& ns = problem.nodes[id];
    const Strategy& st = ns.options[s];
    c.compute = computeUs(graph, id, ns, st, problem.mesh, model);
    for (size_t k = 0; k < ns.inputs.size(); ++k)
        if (redistributingEdge(problem, id, k) && plan.choice[ns.inputs[k]] >= 0)
            c.in += edges.us(
                ns.inputs[k], ns.inputElement[k],
                producedPlacement(problem, ns.inputs[k], ns.inputElement[k], plan.choice[ns.inputs[k]]),
                st.inputs[k]);
    for (NodeId user : graph.node(id).users) {
        const NodeStrategies& us = problem.nodes[user];
        if (plan.choice[user] < 0)
            continue;
        for (size_t k = 0; k < us.inputs.size(); ++k)
            if (us.inputs[k] == id && redistributingEdge(problem, user, k))
                c.out +=
                    edges.us(id, us.inputElement[k], producedPlacement(problem, id, us.inputElement[k], s),
                             us.options[plan.choice[user]].inputs[k]);
    }
    return c;
}

} // namespace

std::string explainNode(const Graph& graph, const ShardingProblem& problem, const Plan& plan, NodeId id,
                        const SolveOptions& options, const ComputeModel& model) {
    const Node& node = graph.node(id);
    const NodeStrategies& ns = problem.nodes[id];
    if (plan.choice[id] < 0)
        return node.name + ": no placement (it reads tensors without producing one)";
    EdgeCosts edges(graph, problem.mesh);
    auto describe = [&](int32_t s) {
        const Strategy& st = ns.options[s];
        std::string in;
        for (const Placements& p : st.inputs)
            in += (in.empty() ? "" : ", ") + toString(p);
        const LocalCost c = localCost(graph, problem, plan, id, s, edges, model);
        return "(" + in + ") -> " + toString(st.outputs.empty() ? Placements{} : st.outputs[0]) +
               ": compute " + fmt(c.compute) + " us, transitions in " + fmt(c.in) + " us, out " + fmt(c.out) +
               " us, total " + fmt(c.total()) + " us";
    };
    std::string out = node.name + " (" + node.target.text + "), " + std::to_string(ns.options.size()) +
                      " strategies\n  chosen: " + describe(plan.choice[id]) + "\n";
    // The collectives into the chosen strategy, and which model priced them.
    const Strategy& chosenStrategy = ns.options[plan.choice[id]];
    for (size_t k = 0; k < ns.inputs.size() && k < chosenStrategy.inputs.size(); ++k) {
        const NodeId producer = ns.inputs[k];
        if (!redistributingEdge(problem, id, k) || plan.choice[producer] < 0)
            continue;
        const int32_t element = ns.inputElement[k];
        const Placements& from = producedPlacement(problem, producer, element, plan.choice[producer]);
        const Redistribution rd = redistribute(from, chosenStrategy.inputs[k],
                                               producedTensor(graph, producer, element), problem.mesh);
        if (rd.us > 0)
            out += "  input " + graph.node(producer).name + " " + toString(from) + " -> " +
                   toString(chosenStrategy.inputs[k]) + ": " + rd.str() + " [" +
                   commModelDescription(problem.mesh) + "]\n";
    }
    std::vector<Pin> pins = options.pins;
    for (const Pin& p : localMapPins(graph))
        pins.push_back(p);
    for (const Pin& p : pins)
        if (p.node == node.name)
            out += "  pinned to " + toString(p.placement) + " (" + p.origin +
                   "): every other output placement is "
                   "forbidden\n";
    int32_t best = -1;
    double bestCost = 0;
    for (size_t s = 0; s < ns.options.size(); ++s) {
        if (static_cast<int32_t>(s) == plan.choice[id])
            continue;
        const double c = localCost(graph, problem, plan, id, static_cast<int32_t>(s), edges, model).total();
        if (best < 0 || c < bestCost)
            best = static_cast<int32_t>(s), bestCost = c;
    }
    if (best >= 0)
        out += "  best alternative: " + describe(best) + "\n";
    const LocalCost chosen = localCost(graph, problem, plan, id, plan.choice[id], edges, model);
    if (best >= 0 && bestCost < chosen.total())
        out +=
            "  the alternative is cheaper here alone; a constraint elsewhere (consistency with a gradient or "
            "tangent, parameter memory, a pin, or a neighbour's choice) keeps the chosen one\n";
    return out;
}

std::string annotatedLog(const Graph& graph, const ShardingProblem& problem, const Plan& plan,
                         const ComputeModel& model) {
    std::string out;
    EdgeCosts edges(graph, problem.mesh);
    for (NodeId id = 0; id < graph.size(); ++id) {
        const Node& node = graph.node(id);
        std::string line =
            node.name + " = " +
            (node.op == NodeOp::CallFunction ? node.target.text : std::string(nodeOpName(node.op)));
        std::string args;
        node.forEachInput([&](NodeId in) { args += (args.empty() ? "" : ", ") + graph.node(in).name; });
        if (node.op != NodeOp::Placeholder)
            line += "(" + args + ")";
        if (plan.choice[id] >= 0) {
            const NodeStrategies& ns = problem.nodes[id];
            const Strategy& st = ns.options[plan.choice[id]];
            std::string in, costs;
            for (size_t k = 0; k < st.inputs.size(); ++k) {
                in += (k ? ", " : "") + toString(st.inputs[k]);
                double c = 0;
                if (redistributingEdge(problem, id, k) && plan.choice[ns.inputs[k]] >= 0)
                    c = edges.us(ns.inputs[k], ns.inputElement[k],
                                 producedPlacement(problem, ns.inputs[k], ns.inputElement[k],
                                                   plan.choice[ns.inputs[k]]),
                                 st.inputs[k]);
                costs += (k ? ", " : "") + fmt(c);
            }
            std::string outs;
            for (size_t i = 0; i < st.outputs.size(); ++i)
                outs += (i ? ", " : "") + toString(st.outputs[i]);
            line += "  # placement=(" + in + ") -> " + outs + ", cost=[" + costs +
                    "], compute=" + fmt(computeUs(graph, id, ns, st, problem.mesh, model));
        }
        out += line + "\n";
    }
    out += "# total " + fmt(plan.cost.totalUs()) + " us = compute " + fmt(plan.cost.computeUs) +
           " us + comm " + fmt(plan.cost.commUs) + " us on " + problem.mesh.str() + "\n";
    return out;
}

} // namespace jointscope::sharding
