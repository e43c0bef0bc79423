#include "sharding/Solver.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <unordered_map>

#ifdef JOINTSCOPE_HAVE_CBC
#include <Cbc_C_Interface.h>
#endif

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

// Redistribution costs of one edge, memoized by placement pair.
class EdgeCosts {
public:
    EdgeCosts(const Graph& graph, const DeviceMesh& mesh) : graph_(graph), mesh_(mesh) {}
    double us(NodeId producer, int32_t element, const Placements& from, const Placements& to) {
        if (from == to)
            return 0;
        const std::string key = std::to_string(producer) + ":" + std::to_string(element) + ":" +
                                toString(from) + ">" + toString(to);
        auto it = memo_.find(key);
        if (it != memo_.end())
            return it->second;
        const double v = redistribute(from, to, producedTensor(graph_, producer, element), mesh_).us;
        memo_.emplace(key, v);
        return v;
    }

private:
    const Graph& graph_;
    const DeviceMesh& mesh_;
    std::unordered_map<std::string, double> memo_;
};

[[maybe_unused]] std::optional<Placements> pinOf(const std::vector<Pin>& pins, const Node& node) {
    for (const Pin& p : pins)
        if (p.node == node.name)
            return p.placement;
    return std::nullopt;
}

#ifdef JOINTSCOPE_HAVE_CBC
// Collects the problem and loads it in one call: adding CBC columns one at a time is quadratic.
class LpBuilder {
public:
    void addCol(double lb, double ub, double obj, char integer, int, const int*, const double*) {
        lb_.push_back(lb);
        ub_.push_back(ub);
        obj_.push_back(obj);
        integer_.push_back(integer);
    }
    void addRow(int nz, const int* cols, const double* coefs, char sense, double rhs) {
        const int row = static_cast<int>(rowLb_.size());
        rowLb_.push_back(sense == 'L' ? -COIN_DBL_MAX_ : rhs);
        rowUb_.push_back(sense == 'G' ? COIN_DBL_MAX_ : rhs);
        for (int i = 0; i < nz; ++i)
            entries_.push_back({cols[i], row, coefs[i]});
    }
    Cbc_Model* build() {
        std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
            return a.col != b.col ? a.col < b.col : a.row < b.row;
        });
        const int n = static_cast<int>(obj_.size());
        std::vector<CoinBigIndex> start(n + 1, 0);
        std::vector<int> index;
        std::vector<double> value;
        index.reserve(entries_.size());
        value.reserve(entries_.size());
        for (const Entry& e : entries_) {
            ++start[e.col + 1];
            index.push_back(e.row);
            value.push_back(e.value);
        }
        for (int i = 0; i < n; ++i)
            start[i + 1] += start[i];
        Cbc_Model* model = Cbc_newModel();
        Cbc_loadProblem(model, n, static_cast<int>(rowLb_.size()), start.data(), index.data(), value.data(),
                        lb_.data(), ub_.data(), obj_.data(), rowLb_.data(), rowUb_.data());
        for (int i = 0; i < n; ++i)
            if (integer_[i])
                Cbc_setInteger(model, i);
        return model;
    }

private:
    static constexpr double COIN_DBL_MAX_ = 1e300;
    struct Entry {
        int col, row;
        double value;
    };
    std::vector<double> lb_, ub_, obj_, rowLb_, rowUb_;
    std::vector<char> integer_;
    std::vector<Entry> entries_;
};
#endif

// Placement pairs an edge may use. Small edges keep every pair; large ones keep the pairs that change at
// most one mesh dimension, plus everything to and from all-replicated, so that any two strategies stay
// connected (through R) and the replicated plan stays feasible.
[[maybe_unused]] bool keepPair(const Placements& q, const Placements& p, size_t pairs) {
    if (pairs <= 64 || q == p || allReplicate(q) || allReplicate(p))
        return true;
    size_t differ = 0;
    for (size_t i = 0; i < q.size() && i < p.size(); ++i)
        differ += !(q[i] == p[i]);
    return differ <= 1;
}

std::string fmt(double us) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", us);
    return buf;
}

} // namespace

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
                      const cost::RooflineModel& model) {
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

std::vector<Pin> dataParallelPins(const Graph& graph, const ShardingProblem& problem) {
    std::vector<Pin> pins;
    const JointRoles roles = jointRoles(graph);
    const size_t m = problem.mesh.ndim();
    for (const auto& [param, grad] : roles.paramGrad)
        pins.push_back({graph.node(param).name, Placements(m, Placement::replicate()), "data_parallel"});
    for (NodeId d : roles.dataInputs) {
        const TensorMeta* t = graph.node(d).tensor();
        if (!t || t->sizes.empty())
            continue;
        const Placements p(m, Placement::shard(0));
        if (cost::concreteSize(t->sizes[0]) % static_cast<uint64_t>(problem.mesh.size()) != 0)
            return {};
        pins.push_back({graph.node(d).name, p, "data_parallel"});
    }
    return pins;
}

Expected<Plan> solvePlacement(const Graph& graph, const ShardingProblem& problem, const SolveOptions& options,
                              const cost::RooflineModel& model) {
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

    LpBuilder lpb;
    int cols = 0;
    std::vector<std::vector<int>> x(n);
    EdgeCosts edges(graph, mesh);
    for (NodeId id = 0; id < n; ++id) {
        const NodeStrategies& ns = problem.nodes[id];
        const std::optional<Placements> pin = pinOf(pins, graph.node(id));
        for (const Strategy& s : ns.options) {
            const double c = computeUs(graph, id, ns, s, mesh, model);
            const bool allowed = !pin || (!s.outputs.empty() && s.outputs[0] == *pin);
            lpb.addCol(0.0, allowed ? 1.0 : 0.0, c, 1, 0, nullptr, nullptr);
            x[id].push_back(cols++);
        }
        if (!x[id].empty()) {
            std::vector<double> ones(x[id].size(), 1.0);
            lpb.addRow(static_cast<int>(x[id].size()), x[id].data(), ones.data(), 'E', 1.0);
        }
    }
    // Groups of a node's options by a placement: sum of x over options with that key.
    auto addEquality = [&](const std::map<std::string, std::vector<int>>& a,
                           const std::map<std::string, std::vector<int>>& b) {
        std::set<std::string> keys;
        for (const auto& kv : a)
            keys.insert(kv.first);
        for (const auto& kv : b)
            keys.insert(kv.first);
        for (const std::string& k : keys) {
            std::vector<int> idx;
            std::vector<double> coef;
            if (auto it = a.find(k); it != a.end())
                for (int c : it->second)
                    idx.push_back(c), coef.push_back(1.0);
            if (auto it = b.find(k); it != b.end())
                for (int c : it->second)
                    idx.push_back(c), coef.push_back(-1.0);
            lpb.addRow(static_cast<int>(idx.size()), idx.data(), coef.data(), 'E', 0.0);
        }
    };
    auto byOutput = [&](NodeId id, int32_t element) {
        std::map<std::string, std::vector<int>> groups;
        for (size_t t = 0; t < problem.nodes[id].options.size(); ++t)
            groups[toString(producedPlacement(problem, id, element, static_cast<int32_t>(t)))].push_back(
                x[id][t]);
        return groups;
    };
    for (NodeId v = 0; v < n; ++v) {
        const NodeStrategies& ns = problem.nodes[v];
        if (ns.options.empty())
            continue;
        for (size_t k = 0; k < ns.inputs.size(); ++k) {
            const NodeId u = ns.inputs[k];
            if (!hasOptions(problem, u))
                continue;
            std::map<std::string, std::vector<int>> consumer;
            std::map<std::string, Placements> consumerPl;
            for (size_t s = 0; s < ns.options.size(); ++s) {
                const Placements& p = ns.options[s].inputs[k];
                consumer[toString(p)].push_back(x[v][s]);
                consumerPl.emplace(toString(p), p);
            }
            const std::map<std::string, std::vector<int>> producer = byOutput(u, ns.inputElement[k]);
            if (ns.kind == RuleKind::GetItem) {
                addEquality(producer, consumer);
                continue;
            }
            // Transportation between the producer's and the consumer's placements: e[q][p] is 1 on the pair
            // the solution uses; with x integral, e needs no integrality of its own.
            std::map<std::string, std::vector<std::pair<int, double>>> rowQ, rowP;
            for (const auto& [qk, qcols] : producer) {
                const Placements q = *parsePlacements(qk);
                for (const auto& [pk, pcols] : consumer) {
                    if (!keepPair(q, consumerPl[pk], producer.size() * consumer.size()))
                        continue;
                    const double c = edges.us(u, ns.inputElement[k], q, consumerPl[pk]);
                    lpb.addCol(0.0, 1.0, c, 0, 0, nullptr, nullptr);
                    rowQ[qk].push_back({cols, 1.0});
                    rowP[pk].push_back({cols, 1.0});
                    ++cols;
                }
            }
            auto emit = [&](std::map<std::string, std::vector<std::pair<int, double>>>& rows,
                            const std::map<std::string, std::vector<int>>& groups) {
                for (auto& [key, entries] : rows) {
                    std::vector<int> idx;
                    std::vector<double> coef;
                    for (auto& [c, w] : entries)
                        idx.push_back(c), coef.push_back(w);
                    for (int c : groups.at(key))
                        idx.push_back(c), coef.push_back(-1.0);
                    lpb.addRow(static_cast<int>(idx.size()), idx.data(), coef.data(), 'E', 0.0);
                }
            };
            emit(rowQ, producer);
            emit(rowP, consumer);
        }
    }
    const JointRoles roles = jointRoles(graph);
    if (options.forwardBackwardConsistency) {
        for (const auto& [a, b] : roles.paramGrad)
            if (hasOptions(problem, a) && hasOptions(problem, b))
                addEquality(byOutput(a, 0), byOutput(b, 0));
        for (const auto& [a, b] : roles.inputGrad)
            if (hasOptions(problem, a) && hasOptions(problem, b))
                addEquality(byOutput(a, 0), byOutput(b, 0));
        for (const auto& [a, b] : roles.outputTangent)
            if (hasOptions(problem, a) && hasOptions(problem, b))
                addEquality(byOutput(a, 0), byOutput(b, 0));
    }
    if (options.paramMemoryLow > 0 || options.paramMemoryHigh < 1) {
        std::vector<int> idx;
        std::vector<double> coef;
        double total = 0;
        for (const auto& [param, grad] : roles.paramGrad) {
            const TensorMeta* t = graph.node(param).tensor();
            if (!t || !hasOptions(problem, param))
                continue;
            const double bytes = static_cast<double>(cost::numel(*t)) * itemSize(t->dtype);
            total += bytes;
            for (size_t s = 0; s < problem.nodes[param].options.size(); ++s) {
                const Placements& p = problem.nodes[param].options[s].outputs[0];
                double frac = 1;
                for (size_t i = 0; i < p.size(); ++i)
                    if (p[i].isShard())
                        frac /= static_cast<double>(mesh.shape[i]);
                idx.push_back(x[param][s]);
                coef.push_back(bytes * frac);
            }
        }
        if (!idx.empty()) {
            lpb.addRow(static_cast<int>(idx.size()), idx.data(), coef.data(), 'L',
                       options.paramMemoryHigh * total);
            lpb.addRow(static_cast<int>(idx.size()), idx.data(), coef.data(), 'G',
                       options.paramMemoryLow * total);
        }
    }
    Cbc_Model* lp = lpb.build();
    const bool debug = std::getenv("JOINTSCOPE_SHARD_DEBUG") != nullptr;
    if (debug)
        std::fprintf(stderr, "sharding ILP: %d columns, %d rows\n", Cbc_getNumCols(lp), Cbc_getNumRows(lp));
    Cbc_setLogLevel(lp, debug ? 1 : 0);
    if (!debug) {
        Cbc_setParameter(lp, "log", "0");
        Cbc_setParameter(lp, "slog", "0");
    }
    Cbc_setMaximumSeconds(lp, options.timeLimitSeconds);
    // The root LP of this formulation is nearly always integral already: presolve, preprocessing, cuts and
    // heuristics cost more than they save (LLaMA block on 8x8: 8.7 s CPU with them, 2.3 s without).
    Cbc_setParameter(lp, "presolve", "off");
    Cbc_setParameter(lp, "preprocess", "off");
    Cbc_setParameter(lp, "cuts", "off");
    Cbc_setParameter(lp, "heuristicsOnOff", "off");
    if (const char* extra = std::getenv("JOINTSCOPE_SHARD_CBC")) { // name=value,... for tuning experiments
        std::string all = extra;
        size_t start = 0;
        while (start < all.size()) {
            size_t end = all.find(',', start);
            if (end == std::string::npos)
                end = all.size();
            const std::string item = all.substr(start, end - start);
            const size_t eq = item.find('=');
            if (eq != std::string::npos)
                Cbc_setParameter(lp, item.substr(0, eq).c_str(), item.substr(eq + 1).c_str());
            start = end + 1;
        }
    }
    Cbc_solve(lp);
    Plan plan;
    plan.optimal = Cbc_isProvenOptimal(lp) != 0;
    const bool infeasible = Cbc_isProvenInfeasible(lp) != 0;
    const double* sol = Cbc_getColSolution(lp);
    if (infeasible || !sol || Cbc_getObjValue(lp) >= 1e50) {
        Cbc_deleteModel(lp);
        return makeError({}, std::string("the placement ILP has no solution") +
                                 (options.paramMemoryLow > 0 || options.paramMemoryHigh < 1
                                      ? " (check --param-memory against the pins)"
                                      : " (pins and forward/backward consistency conflict)"));
    }
    plan.choice.assign(n, -1);
    for (NodeId id = 0; id < n; ++id) {
        double best = -1;
        for (size_t s = 0; s < x[id].size(); ++s)
            if (sol[x[id][s]] > best)
                best = sol[x[id][s]], plan.choice[id] = static_cast<int32_t>(s);
    }
    Cbc_deleteModel(lp);
    plan.cost = evaluatePlan(graph, problem, plan.choice, model);
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
                    int32_t s, EdgeCosts& edges, const cost::RooflineModel& model) {
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
                        const SolveOptions& options, const cost::RooflineModel& model) {
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
                         const cost::RooflineModel& model) {
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
