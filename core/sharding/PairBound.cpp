#include "sharding/PairBound.h"

#include "sharding/PairLp.h"
#include "support/Vectorise.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace jointscope::sharding {

namespace {

constexpr double kInf = PairModel::kForbidden;

bool selfLoop(const PairModel::Edge& e) {
    return e.a == e.b;
}

// Unary costs with self-loop edges folded in: such an edge's two sides are one variable's one option.
std::vector<std::vector<double>> foldedUnary(const PairModel& model) {
    std::vector<std::vector<double>> u(model.vars.size());
    for (size_t v = 0; v < model.vars.size(); ++v)
        u[v] = model.vars[v].unary;
    for (const PairModel::Edge& e : model.edges)
        if (!e.removed && selfLoop(e))
            for (size_t o = 0; o < u[e.a].size(); ++o)
                u[e.a][o] += e.at(e.keyA[o], e.keyB[o]);
    return u;
}

// Option o of variable v with each neighbour at its option in `plan`: its unary plus the pairs of its
// `incident` edges.
double costAgainst(const PairModel& model, const std::vector<std::vector<double>>& unary,
                   const std::vector<size_t>& incident, int32_t v, size_t o,
                   const std::vector<int32_t>& plan) {
    double c = unary[v][o];
    for (size_t i : incident) {
        const PairModel::Edge& e = model.edges[i];
        c += e.a == v ? e.at(e.keyA[o], e.keyB[plan[e.b]]) : e.at(e.keyA[plan[e.a]], e.keyB[o]);
    }
    return c;
}

// Potentials of one edge, per key of each side: α_a(k) + α_b(l) ≤ cost(k, l) for every pair.
struct Potentials {
    std::vector<double> a, b;
};

// The restricted LP and the rows its duals are read from.
struct RestrictedLp {
    PairLp lp;
    std::vector<std::vector<int>> column;     // per variable, per option: the binary column or -1
    std::vector<std::vector<int>> rowA, rowB; // per edge, per key: the marginal row or -1
};

// Transportation blocks between the active keys of each edge's sides; equality edges are tables with a
// zero diagonal and nothing else, so they need no case of their own.
RestrictedLp buildRestricted(const PairModel& model, const std::vector<std::vector<double>>& unary,
                             const std::vector<std::vector<char>>& active, const LinearBudget& budget) {
    RestrictedLp r;
    r.column.resize(model.vars.size());
    for (size_t v = 0; v < model.vars.size(); ++v) {
        std::vector<int> cols;
        for (size_t o = 0; o < unary[v].size(); ++o) {
            const bool on = active[v][o] && unary[v][o] < kInf;
            r.column[v].push_back(on ? r.lp.addBinary(unary[v][o]) : -1);
            if (on)
                cols.push_back(r.column[v].back());
        }
        r.lp.addRow(cols, std::vector<double>(cols.size(), 1.0), 'E', 1.0);
    }
    r.rowA.resize(model.edges.size());
    r.rowB.resize(model.edges.size());
    auto marginals = [&](int32_t v, const std::vector<int32_t>& keys, size_t count) {
        std::vector<std::vector<int>> byKey(count);
        for (size_t o = 0; o < keys.size(); ++o)
            if (r.column[v][o] >= 0)
                byKey[keys[o]].push_back(r.column[v][o]);
        std::vector<int> rows(count, -1);
        for (size_t k = 0; k < count; ++k)
            if (!byKey[k].empty())
                rows[k] = r.lp.addRow(byKey[k], std::vector<double>(byKey[k].size(), -1.0), 'E', 0.0);
        return rows;
    };
    for (size_t i = 0; i < model.edges.size(); ++i) {
        const PairModel::Edge& e = model.edges[i];
        if (e.removed || selfLoop(e))
            continue;
        r.rowA[i] = marginals(e.a, e.keyA, e.keysA);
        r.rowB[i] = marginals(e.b, e.keyB, e.keysB);
        for (size_t k = 0; k < e.keysA; ++k)
            for (size_t l = 0; k < e.keysA && r.rowA[i][k] >= 0 && l < e.keysB; ++l)
                if (r.rowB[i][l] >= 0 && e.at(k, l) < kInf)
                    r.lp.addPair(e.at(k, l), r.rowA[i][k], r.rowB[i][l]);
    }
    if (budget.active()) {
        std::vector<int> cols;
        std::vector<double> coef;
        for (size_t v = 0; v < model.vars.size(); ++v)
            for (size_t o = 0; o < r.column[v].size(); ++o)
                if (r.column[v][o] >= 0 && budget.weight[v][o] != 0)
                    cols.push_back(r.column[v][o]), coef.push_back(budget.weight[v][o]);
        r.lp.addRow(cols, coef, 'L', budget.high);
        r.lp.addRow(cols, coef, 'G', budget.low);
    }
    return r;
}

// The keys some alive option of a side has.
std::vector<int32_t> aliveKeys(const PairModel::Variable& var, const std::vector<int32_t>& keys,
                               size_t count) {
    std::vector<char> seen(count, 0);
    for (size_t o = 0; o < keys.size(); ++o)
        if (var.alive[o])
            seen[keys[o]] = 1;
    std::vector<int32_t> out;
    for (size_t k = 0; k < count; ++k)
        if (seen[k])
            out.push_back(static_cast<int32_t>(k));
    return out;
}

// The LP's duals on the rows it has, then c-transforms over every alive pair: first side a against b's
// rows, then side b against all of a. The second transform makes every pair feasible whatever the first
// gave, so the potentials are a feasible dual of the full LP however loose CLP's duals were.
Potentials completePotentials(const PairModel& model, const PairModel::Edge& e, const std::vector<int>& rowA,
                              const std::vector<int>& rowB, const std::vector<double>& duals) {
    Potentials p;
    p.a.assign(e.keysA, 0.0);
    p.b.assign(e.keysB, kInf);
    for (size_t l = 0; l < e.keysB; ++l)
        if (rowB[l] >= 0)
            p.b[l] = duals[rowB[l]];
    const std::vector<int32_t> keysA = aliveKeys(model.vars[e.a], e.keyA, e.keysA);
    const std::vector<int32_t> keysB = aliveKeys(model.vars[e.b], e.keyB, e.keysB);
    for (int32_t k : keysA) {
        double best = kInf;
        for (size_t l = 0; l < e.keysB; ++l)
            if (rowB[l] >= 0 && e.at(k, static_cast<int32_t>(l)) < kInf)
                best = std::min(best, e.at(k, static_cast<int32_t>(l)) - p.b[l]);
        p.a[k] = best < kInf ? best : (rowA[k] >= 0 ? duals[rowA[k]] : 0.0);
    }
    for (int32_t l : keysB) {
        double best = kInf;
        for (int32_t k : keysA)
            if (e.at(k, l) < kInf)
                best = std::min(best, e.at(k, l) - p.a[k]);
        p.b[l] = best; // infinite: no alive key of a pairs with l, so no option with it can be chosen
    }
    return p;
}

// Every option's Lagrangian cost: its unary plus the potentials of its keys on every edge.
std::vector<std::vector<double>> lagrangianCosts(const PairModel& model,
                                                 const std::vector<std::vector<double>>& unary,
                                                 const std::vector<Potentials>& potentials) {
    std::vector<std::vector<double>> cost = unary;
    for (size_t i = 0; i < model.edges.size(); ++i) {
        const PairModel::Edge& e = model.edges[i];
        if (e.removed || selfLoop(e))
            continue;
        for (size_t o = 0; o < cost[e.a].size(); ++o)
            cost[e.a][o] += potentials[i].a[e.keyA[o]];
        for (size_t o = 0; o < cost[e.b].size(); ++o)
            cost[e.b][o] += potentials[i].b[e.keyB[o]];
    }
    return cost;
}

// The cheapest alive option's Lagrangian cost per variable, summed: the lower bound.
double lagrangianBound(const PairModel& model, const std::vector<std::vector<double>>& lagrangian) {
    double bound = 0;
    for (size_t v = 0; v < model.vars.size(); ++v) {
        double best = kInf;
        for (size_t o = 0; o < lagrangian[v].size(); ++o)
            if (model.vars[v].alive[o])
                best = std::min(best, lagrangian[v][o]);
        bound += best;
    }
    return bound;
}

// Adds, per variable, the options whose Lagrangian cost undercuts its active ones by the most. Returns how
// many joined.
size_t priceOptions(const PairModel& model, const std::vector<std::vector<double>>& lagrangian,
                    std::vector<std::vector<char>>& active, size_t perVariable) {
    size_t added = 0;
    for (size_t v = 0; v < model.vars.size(); ++v) {
        const std::vector<double>& c = lagrangian[v];
        double activeBest = kInf;
        for (size_t o = 0; o < c.size(); ++o)
            if (active[v][o])
                activeBest = std::min(activeBest, c[o]);
        const double tolerance = 1e-7 * (1.0 + std::fabs(activeBest));
        std::vector<size_t> candidates;
        for (size_t o = 0; o < c.size(); ++o)
            if (model.vars[v].alive[o] && !active[v][o] && c[o] < activeBest - tolerance)
                candidates.push_back(o);
        const size_t take = std::min(perVariable, candidates.size());
        std::partial_sort(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(take),
                          candidates.end(), [&](size_t x, size_t y) { return c[x] < c[y]; });
        for (size_t i = 0; i < take; ++i)
            active[v][candidates[i]] = 1;
        added += take;
    }
    return added;
}

// Seeds: option 0 (every strategy list starts with all-replicate) and the cheapest alive option alone; a
// variable whose option 0 is pinned out starts with every alive option.
std::vector<std::vector<char>> seedOptions(const PairModel& model,
                                           const std::vector<std::vector<double>>& unary,
                                           const LinearBudget& budget) {
    std::vector<std::vector<char>> active(model.vars.size());
    for (size_t v = 0; v < model.vars.size(); ++v) {
        const PairModel::Variable& var = model.vars[v];
        active[v].assign(var.unary.size(), 0);
        if (var.unary.empty())
            continue;
        if (!var.alive[0]) {
            active[v] = var.alive;
            continue;
        }
        active[v][0] = 1;
        size_t best = 0;
        for (size_t o = 0; o < unary[v].size(); ++o)
            if (var.alive[o] && unary[v][o] < unary[v][best])
                best = o;
        active[v][best] = 1;
        // Under a budget, the lightest option too: all-replicate parameters are its heaviest plan.
        if (budget.active() && !budget.weight[v].empty()) {
            size_t lightest = 0;
            for (size_t o = 0; o < unary[v].size(); ++o)
                if (var.alive[o] &&
                    (!var.alive[lightest] || budget.weight[v][o] < budget.weight[v][lightest]))
                    lightest = o;
            active[v][lightest] = 1;
        }
    }
    return active;
}

// Equality edges need a key both sides offer: activate, on each side, the options whose key the other side
// has active. Returns how many joined.
size_t matchEqualities(const PairModel& model, std::vector<std::vector<char>>& active) {
    size_t added = 0;
    for (const PairModel::Edge& e : model.edges) {
        if (e.removed || !e.equality || selfLoop(e))
            continue;
        std::vector<char> onA(e.keysA, 0), onB(e.keysB, 0);
        for (size_t o = 0; o < e.keyA.size(); ++o)
            onA[e.keyA[o]] |= active[e.a][o];
        for (size_t o = 0; o < e.keyB.size(); ++o)
            onB[e.keyB[o]] |= active[e.b][o];
        for (size_t o = 0; o < e.keyA.size(); ++o)
            if (!active[e.a][o] && model.vars[e.a].alive[o] && onB[e.keyA[o]])
                active[e.a][o] = 1, ++added;
        for (size_t o = 0; o < e.keyB.size(); ++o)
            if (!active[e.b][o] && model.vars[e.b].alive[o] && onA[e.keyB[o]])
                active[e.b][o] = 1, ++added;
    }
    return added;
}

// A restricted LP with no solution: matching keys across equalities first, then every option of the
// variables on equality edges, then every option. Returns how many joined.
size_t widen(const PairModel& model, std::vector<std::vector<char>>& active) {
    if (const size_t added = matchEqualities(model, active))
        return added;
    std::vector<char> onEquality(model.vars.size(), 0);
    for (const PairModel::Edge& e : model.edges)
        if (!e.removed && e.equality)
            onEquality[e.a] = onEquality[e.b] = 1;
    for (int pass = 0; pass < 2; ++pass) {
        size_t added = 0;
        for (size_t v = 0; v < model.vars.size(); ++v)
            for (size_t o = 0; o < active[v].size(); ++o)
                if ((pass == 1 || onEquality[v]) && model.vars[v].alive[o] && !active[v][o])
                    active[v][o] = 1, ++added;
        if (added)
            return added;
    }
    return 0;
}

size_t countActive(const std::vector<std::vector<char>>& active) {
    size_t n = 0;
    for (const std::vector<char>& a : active)
        n += static_cast<size_t>(std::count(a.begin(), a.end(), 1));
    return n;
}

// The restricted ILP's plan: the relaxation's when integral, else CBC's on the restricted model (or, when
// `branch` is off, each variable's largest value in the relaxation). Also whether that plan is proven optimal
// on the restricted model.
std::pair<std::vector<int32_t>, bool> restrictedPlan(const RestrictedLp& r,
                                                     const std::vector<double>& relaxed, bool branch,
                                                     double timeLimitSeconds, bool log) {
    bool integral = true;
    for (double x : relaxed)
        integral = integral && (x < 1e-6 || x > 1 - 1e-6);
    std::vector<double> values = relaxed;
    bool proven = integral;
    if (!integral && branch) {
        const PairLp::Result solved = r.lp.solve(timeLimitSeconds, log);
        if (!solved.feasible)
            return {};
        values = solved.binary;
        proven = solved.optimal;
    }
    std::vector<int32_t> choice(r.column.size(), -1);
    for (size_t v = 0; v < r.column.size(); ++v) {
        double best = -1;
        for (size_t o = 0; o < r.column[v].size(); ++o)
            if (r.column[v][o] >= 0 && values[r.column[v][o]] > best)
                best = values[r.column[v][o]], choice[v] = static_cast<int32_t>(o);
    }
    return {choice, proven};
}

// min_l (row[l] + rest[l]), with four running minima. A forbidden pair or a missing key is infinite and never
// the minimum, so the loop has no branch and vectorises: most of an ascent's time is in it and in lowerBy.
JOINTSCOPE_VECTORISE double minOfSums(const double* __restrict row, const double* __restrict rest,
                                      size_t width) {
    double best[4] = {kInf, kInf, kInf, kInf};
    size_t l = 0;
    for (; l + 4 <= width; l += 4)
        for (size_t j = 0; j < 4; ++j) {
            const double sum = row[l + j] + rest[l + j];
            best[j] = sum < best[j] ? sum : best[j];
        }
    for (; l < width; ++l) {
        const double sum = row[l] + rest[l];
        best[0] = sum < best[0] ? sum : best[0];
    }
    return std::min(std::min(best[0], best[1]), std::min(best[2], best[3]));
}

// across[l] = min(across[l], row[l] + own).
JOINTSCOPE_VECTORISE void lowerBy(const double* __restrict row, double own, double* __restrict across,
                                  size_t width) {
    for (size_t l = 0; l < width; ++l) {
        const double sum = row[l] + own;
        across[l] = sum < across[l] ? sum : across[l];
    }
}

// The dual of the model's LP relaxation as edge potentials α, with every option's Lagrangian cost
// L_v(o) = unary + Σ_e α_e(key) kept in step. For any potentials, Σ_v min L_v + Σ_e min (cost − α_a − α_b)
// is below the ILP's optimum (the potentials cancel on every plan), so nothing done to them can make the
// bound invalid. They are improved by sequential tree-reweighted message passing (TRW-S, Kolmogorov 2006),
// whose passes carry information along the whole variable order (a graph's order: mostly chains).
class DualAscent {
public:
    DualAscent(const PairModel& model, const std::vector<std::vector<double>>& unary,
               std::vector<Potentials> potentials)
        : model_(model), alpha_(std::move(potentials)), lag_(lagrangianCosts(model, unary, alpha_)),
          incident_(model.vars.size()) {
        alive_.reserve(model.vars.size());
        for (const PairModel::Variable& v : model.vars)
            alive_.push_back(v.alive);
        for (size_t i = 0; i < model.edges.size(); ++i)
            if (!model.edges[i].removed && !selfLoop(model.edges[i])) {
                incident_[model.edges[i].a].push_back(i);
                incident_[model.edges[i].b].push_back(i);
            }
    }

    // One TRW-S pass, forward or backward: each variable in turn hands 1/n of its Lagrangian (n: the larger
    // of its edge counts towards earlier and later variables) to each edge towards a later one, whose whole
    // min-marginal then moves on to the later side.
    void sweep(bool forward) {
        const size_t n = model_.vars.size();
        for (size_t j = 0; j < n; ++j) {
            const int32_t v = static_cast<int32_t>(forward ? j : n - 1 - j);
            std::vector<size_t> outs;
            for (size_t i : incident_[v])
                if (forward ? otherEnd(i, v) > v : otherEnd(i, v) < v)
                    outs.push_back(i);
            if (outs.empty())
                continue;
            const double share =
                1.0 / static_cast<double>(std::max(outs.size(), incident_[v].size() - outs.size()));
            // Every out-edge takes its share of the same Lagrangian, read before any of them changes it.
            std::vector<std::vector<double>> mins;
            for (size_t i : outs)
                mins.push_back(keyMins(v, i));
            for (size_t j2 = 0; j2 < outs.size(); ++j2)
                pass(outs[j2], v, mins[j2], share);
        }
    }

    // TRW-S's plan: variables in order, each taking its cheapest option by its Lagrangian with, towards
    // those already chosen, the edge's reduced cost of the pair instead of its own potential.
    std::vector<int32_t> roundedPlan(bool forward) const {
        const size_t n = model_.vars.size();
        std::vector<int32_t> choice(n, -1);
        for (size_t j = 0; j < n; ++j) {
            const int32_t v = static_cast<int32_t>(forward ? j : n - 1 - j);
            double best = kInf;
            for (size_t o = 0; o < lag_[v].size(); ++o) {
                if (!alive_[v][o])
                    continue;
                const double c = againstChosen(v, o, choice);
                if (choice[v] < 0 || c < best)
                    best = c, choice[v] = static_cast<int32_t>(o);
            }
        }
        return choice;
    }

    // Per key of each side of an edge, the cheapest reduced pair (cost − α_a − α_b) over the other side's
    // live keys (infinite for a key no live option has), and the edge's cheapest overall.
    struct EdgeMinima {
        std::vector<double> row, column;
        double least = kInf;
    };

    // Per edge (empty for removed edges and self-loops): one pass over every table.
    std::vector<EdgeMinima> edgeMinima() const {
        std::vector<EdgeMinima> minima(model_.edges.size());
        for (size_t i = 0; i < model_.edges.size(); ++i)
            if (!model_.edges[i].removed && !selfLoop(model_.edges[i]))
                minima[i] = reducedMinima(i);
        return minima;
    }

    double bound(const std::vector<EdgeMinima>& minima) const {
        double total = 0;
        for (size_t v = 0; v < model_.vars.size(); ++v)
            total += cheapest(static_cast<int32_t>(v));
        for (size_t i = 0; i < model_.edges.size(); ++i)
            if (!model_.edges[i].removed && !selfLoop(model_.edges[i]))
                total += minima[i].least;
        return total;
    }

    // Reduced-cost fixing: the options some plan costing at most `cost` may use. Forcing option o of v
    // leaves a bound of bound() + (L_v(o) + Σ_e (the cheapest reduced pair o's key is in)) − (min L_v +
    // Σ_e min reduced pair), over v's edges e; the options whose forced bound exceeds `cost` go.
    // `offset` is added to every bound (the relaxed budget row's constant).
    std::vector<std::vector<char>> possibleUnder(double cost, const std::vector<EdgeMinima>& minima,
                                                 double offset) const {
        const size_t n = model_.vars.size();
        std::vector<std::vector<double>> forced = lag_;
        std::vector<double> base(n);
        double bound = offset;
        for (size_t v = 0; v < n; ++v) {
            base[v] = cheapest(static_cast<int32_t>(v));
            bound += base[v];
        }
        for (size_t i = 0; i < model_.edges.size(); ++i) {
            const PairModel::Edge& e = model_.edges[i];
            if (e.removed || selfLoop(e))
                continue;
            const EdgeMinima& m = minima[i];
            bound += m.least;
            base[e.a] += m.least;
            base[e.b] += m.least;
            for (size_t o = 0; o < forced[e.a].size(); ++o)
                forced[e.a][o] += m.row[e.keyA[o]];
            for (size_t o = 0; o < forced[e.b].size(); ++o)
                forced[e.b][o] += m.column[e.keyB[o]];
        }
        const double limit = cost + 1e-9 * (1.0 + std::fabs(cost));
        std::vector<std::vector<char>> on(n);
        for (size_t v = 0; v < n; ++v) {
            on[v].assign(forced[v].size(), 0);
            for (size_t o = 0; o < forced[v].size(); ++o)
                on[v][o] = alive_[v][o] && bound + forced[v][o] - base[v] <= limit;
        }
        return on;
    }

    struct NearTight {
        std::vector<std::vector<char>> on; // per variable, per option
        std::vector<double> edgeLimit;     // per edge: the reduced pairs that count as near-tight
    };

    // Per variable, its `k` live options of least Lagrangian cost.
    std::vector<std::vector<char>> leastOptions(size_t k) const {
        std::vector<std::vector<char>> on(lag_.size());
        for (size_t v = 0; v < lag_.size(); ++v) {
            on[v].assign(lag_[v].size(), 0);
            std::vector<size_t> live;
            for (size_t o = 0; o < lag_[v].size(); ++o)
                if (alive_[v][o])
                    live.push_back(o);
            const size_t take = std::min(k, live.size());
            std::partial_sort(live.begin(), live.begin() + static_cast<std::ptrdiff_t>(take), live.end(),
                              [&](size_t x, size_t y) { return lag_[v][x] < lag_[v][y]; });
            for (size_t i = 0; i < take; ++i)
                on[v][live[i]] = 1;
        }
        return on;
    }

    // Adds, per variable, its `k` live options cheapest against the plan's other choices (unary plus the
    // edges to its neighbours' chosen options).
    void addCheapestAgainst(const std::vector<std::vector<double>>& unary, const std::vector<int32_t>& plan,
                            size_t k, std::vector<std::vector<char>>& on) const {
        for (size_t v = 0; v < lag_.size(); ++v) {
            std::vector<std::pair<double, size_t>> local;
            for (size_t o = 0; o < lag_[v].size(); ++o) {
                if (!alive_[v][o])
                    continue;
                local.push_back(
                    {costAgainst(model_, unary, incident_[v], static_cast<int32_t>(v), o, plan), o});
            }
            const size_t take = std::min(k, local.size());
            std::partial_sort(local.begin(), local.begin() + static_cast<std::ptrdiff_t>(take), local.end());
            for (size_t i = 0; i < take; ++i)
                on[v][local[i].second] = 1;
        }
    }

    // The options still in the ascent: reduced-cost fixing leaves out those no better plan uses.
    const std::vector<std::vector<char>>& live() const { return alive_; }

    // Adds delta * weight to every option's unary cost (a multiplier of a relaxed row moving).
    void shiftUnary(const std::vector<std::vector<double>>& weight, double delta) {
        for (size_t v = 0; v < weight.size(); ++v)
            for (size_t o = 0; o < weight[v].size(); ++o)
                lag_[v][o] += delta * weight[v][o];
    }

    // Drops the options reduced-cost fixing excludes (possibleUnder of the current plan's cost): an optimal
    // plan uses none of them, so the bound over those left still bounds the optimum, and passes skip the
    // table rows no live option has.
    void keepOnly(const std::vector<std::vector<char>>& possible) {
        for (size_t v = 0; v < alive_.size(); ++v)
            for (size_t o = 0; o < alive_[v].size(); ++o)
                alive_[v][o] = alive_[v][o] && possible[v][o];
    }

    // The options within eps of their variable's cheapest Lagrangian that keep, on every edge, a partner
    // within eps of the edge's cheapest reduced pair (arc consistency over the near-tight pairs). Near the
    // LP's optimum an optimal plan lies among them, and they are few even where ties are many.
    NearTight nearTight(double eps, const std::vector<EdgeMinima>& minima) const {
        const size_t n = model_.vars.size();
        NearTight t;
        t.on.resize(n);
        for (size_t v = 0; v < n; ++v) {
            const double limit = cheapest(static_cast<int32_t>(v)) + eps;
            t.on[v].assign(lag_[v].size(), 0);
            for (size_t o = 0; o < lag_[v].size(); ++o)
                t.on[v][o] = alive_[v][o] && lag_[v][o] <= limit;
        }
        t.edgeLimit.assign(model_.edges.size(), kInf);
        std::vector<size_t> edges;
        for (size_t i = 0; i < model_.edges.size(); ++i)
            if (!model_.edges[i].removed && !selfLoop(model_.edges[i])) {
                t.edgeLimit[i] = minima[i].least + eps;
                edges.push_back(i);
            }
        propagate(t, edges);
        return t;
    }

    // A plan inside near-tight options: TRW-S's rounding where each choice narrows its variable to
    // that option and arc consistency follows it through the graph, so that no later variable is left without
    // a near-tight partner. Empty when some variable is left without one all the same.
    std::vector<int32_t> roundWithin(NearTight t) const {
        const size_t n = model_.vars.size();
        std::vector<int32_t> choice(n, -1);
        for (size_t v = 0; v < n; ++v) {
            double best = kInf;
            for (size_t o = 0; o < lag_[v].size(); ++o) {
                if (!t.on[v][o])
                    continue;
                const double c = againstChosen(static_cast<int32_t>(v), o, choice);
                if (choice[v] < 0 || c < best)
                    best = c, choice[v] = static_cast<int32_t>(o);
            }
            if (choice[v] < 0) {
                if (lag_[v].empty())
                    continue;
                return {};
            }
            std::fill(t.on[v].begin(), t.on[v].end(), 0);
            t.on[v][choice[v]] = 1;
            propagate(t, incident_[v]);
        }
        return choice;
    }

private:
    // Arc consistency from the given edges on: an option goes when some edge has no near-tight pair for its
    // key with a key the other side still has; its variable's other edges are then looked at again.
    void propagate(NearTight& t, const std::vector<size_t>& start) const {
        std::vector<size_t> queue = start;
        std::vector<char> queued(model_.edges.size(), 0);
        for (size_t i : queue)
            queued[i] = 1;
        while (!queue.empty()) {
            const size_t i = queue.back();
            queue.pop_back();
            queued[i] = 0;
            const PairModel::Edge& e = model_.edges[i];
            std::vector<char> hasA(e.keysA, 0), hasB(e.keysB, 0), supA(e.keysA, 0), supB(e.keysB, 0);
            for (size_t o = 0; o < e.keyA.size(); ++o)
                hasA[e.keyA[o]] |= t.on[e.a][o];
            for (size_t o = 0; o < e.keyB.size(); ++o)
                hasB[e.keyB[o]] |= t.on[e.b][o];
            // A key is supported when its cheapest reduced pair with a key the other side has is near-tight.
            std::vector<double> negA = negatedWhere(alpha_[i].a, hasA),
                                negB = negatedWhere(alpha_[i].b, hasB);
            std::vector<double> rowMin, columnMin;
            product(i, false, negB, rowMin, hasA);
            product(i, true, negA, columnMin);
            for (size_t k = 0; k < e.keysA; ++k)
                supA[k] = hasA[k] && rowMin[k] - alpha_[i].a[k] <= t.edgeLimit[i];
            for (size_t l = 0; l < e.keysB; ++l)
                supB[l] = hasB[l] && columnMin[l] - alpha_[i].b[l] <= t.edgeLimit[i];
            const auto drop = [&](int32_t v, const std::vector<int32_t>& keys,
                                  const std::vector<char>& support) {
                bool changed = false;
                for (size_t o = 0; o < keys.size(); ++o)
                    if (t.on[v][o] && !support[keys[o]])
                        t.on[v][o] = 0, changed = true;
                if (changed)
                    for (size_t j : incident_[v])
                        if (j != i && !queued[j])
                            queue.push_back(j), queued[j] = 1;
            };
            drop(e.a, e.keyA, supA);
            drop(e.b, e.keyB, supB);
        }
    }

    int32_t otherEnd(size_t i, int32_t v) const {
        const PairModel::Edge& e = model_.edges[i];
        return e.a == v ? e.b : e.a;
    }

    // Option o of v by its Lagrangian, with each edge towards a variable already chosen costed by the pair
    // itself instead of o's potential on it: TRW-S's rounding criterion.
    double againstChosen(int32_t v, size_t o, const std::vector<int32_t>& choice) const {
        double c = lag_[v][o];
        for (size_t i : incident_[v]) {
            const PairModel::Edge& e = model_.edges[i];
            const bool sideA = e.a == v;
            const int32_t u = sideA ? e.b : e.a;
            if (choice[u] >= 0)
                c += sideA ? e.at(e.keyA[o], e.keyB[choice[u]]) - alpha_[i].a[e.keyA[o]]
                           : e.at(e.keyA[choice[u]], e.keyB[o]) - alpha_[i].b[e.keyB[o]];
        }
        return c;
    }

    double cheapest(int32_t v) const {
        double best = kInf;
        for (size_t o = 0; o < lag_[v].size(); ++o)
            if (alive_[v][o])
                best = std::min(best, lag_[v][o]);
        return best;
    }

    // Per key of v's side of edge i: its cheapest live option's Lagrangian (infinite for a key none has).
    std::vector<double> keyMins(int32_t v, size_t i) const {
        const PairModel::Edge& e = model_.edges[i];
        const std::vector<int32_t>& keys = e.a == v ? e.keyA : e.keyB;
        std::vector<double> m(e.a == v ? e.keysA : e.keysB, kInf);
        for (size_t o = 0; o < keys.size(); ++o)
            if (alive_[v][o])
                m[keys[o]] = std::min(m[keys[o]], lag_[v][o]);
        return m;
    }

    EdgeMinima reducedMinima(size_t i) const {
        const PairModel::Edge& e = model_.edges[i];
        const std::vector<double> liveA = keyMins(e.a, i), liveB = keyMins(e.b, i);
        std::vector<char> hasA(e.keysA), hasB(e.keysB);
        for (size_t k = 0; k < e.keysA; ++k)
            hasA[k] = liveA[k] < kInf;
        for (size_t l = 0; l < e.keysB; ++l)
            hasB[l] = liveB[l] < kInf;
        EdgeMinima m;
        product(i, false, negatedWhere(alpha_[i].b, hasB), m.row, hasA);
        product(i, true, negatedWhere(alpha_[i].a, hasA), m.column);
        for (size_t k = 0; k < e.keysA; ++k) {
            m.row[k] = hasA[k] ? m.row[k] - alpha_[i].a[k] : kInf;
            m.least = std::min(m.least, m.row[k]);
        }
        for (size_t l = 0; l < e.keysB; ++l)
            m.column[l] = hasB[l] ? m.column[l] - alpha_[i].b[l] : kInf;
        return m;
    }

    // −x where `where` is set, infinite elsewhere.
    static std::vector<double> negatedWhere(const std::vector<double>& x, const std::vector<char>& where) {
        std::vector<double> out(x.size(), kInf);
        for (size_t k = 0; k < x.size(); ++k)
            if (where[k])
                out[k] = -x[k];
        return out;
    }

    // Edge i's min-sum product with a vector h over one side's keys. Forward: out[l] = min_k (h[k] +
    // cost(k, l)); backward: out[k] = min_l (cost(k, l) + h[l]), for the keys `rows` marks (all when empty;
    // the others may read anything). An equality edge passes h through; a metric searches its arcs.
    void product(size_t i, bool forward, const std::vector<double>& h, std::vector<double>& out,
                 const std::vector<char>& rows = {}) const {
        const PairModel::Edge& e = model_.edges[i];
        if (e.equality) {
            out = h;
            return;
        }
        const size_t width = e.keysB;
        const auto sources =
            static_cast<size_t>(std::count_if(h.begin(), h.end(), [](double x) { return x < kInf; }));
        const size_t wanted =
            rows.empty() ? e.keysA : static_cast<size_t>(std::count(rows.begin(), rows.end(), 1));
        // Few rows to read (a side narrowed to a few keys): the table is cheaper than a search.
        const size_t denseReads = (forward ? sources : std::min(wanted, 4 * sources)) * width;
        if (e.metric && denseReads > 4 * e.metric->graph->arcs()) {
            metricProduct_.minPlus(*e.metric, forward, h, out);
            return;
        }
        out.assign(forward ? e.keysB : e.keysA, kInf);
        if (forward) {
            for (size_t k = 0; k < e.keysA; ++k)
                if (h[k] < kInf)
                    lowerBy(tableRow(e, k), h[k], out.data(), width);
        } else if (wanted <= 4 * sources) {
            for (size_t k = 0; k < e.keysA; ++k)
                if (rows.empty() || rows[k])
                    out[k] = minOfSums(tableRow(e, k), h.data(), width);
        } else {
            for (size_t l = 0; l < width; ++l) // column by column: few sources, many rows
                if (h[l] < kInf)
                    for (size_t k = 0; k < e.keysA; ++k)
                        out[k] =
                            std::min(out[k], e.at(static_cast<int32_t>(k), static_cast<int32_t>(l)) + h[l]);
        }
    }

    // Row k of an edge's table: in place, or gathered from a metric's distances.
    const double* tableRow(const PairModel::Edge& e, size_t k) const {
        if (!e.metric)
            return &e.cost[k * e.keysB];
        e.metric->row(static_cast<int32_t>(k), rowBuffer_);
        return rowBuffer_.data();
    }

    // TRW-S's message on edge i from v: `share` of v's key minima `m` moves into the edge, then the edge's
    // min over v's keys moves into the other side (a c-transform, after which the edge's reduced cost has a
    // zero minimum for every key of the receiver). A receiving option with no partner left goes.
    void pass(size_t i, int32_t v, const std::vector<double>& m, double share) {
        const PairModel::Edge& e = model_.edges[i];
        const bool fromA = e.a == v;
        std::vector<double>& own = fromA ? alpha_[i].a : alpha_[i].b;
        std::vector<double>& across = fromA ? alpha_[i].b : alpha_[i].a;
        std::vector<double> negOwn(own.size(), kInf); // −α of the sender's live keys
        for (size_t k = 0; k < own.size(); ++k)
            if (m[k] < kInf) {
                own[k] -= share * m[k];
                negOwn[k] = -own[k];
            }
        const std::vector<int32_t>& sendKeys = fromA ? e.keyA : e.keyB;
        for (size_t o = 0; o < sendKeys.size(); ++o)
            if (alive_[v][o])
                lag_[v][o] -= share * m[sendKeys[o]];
        const int32_t w = fromA ? e.b : e.a;
        // Keys no live option of the receiver has are left as they are.
        std::vector<char> receiving(across.size(), 0);
        const std::vector<int32_t>& takeKeys = fromA ? e.keyB : e.keyA;
        for (size_t o = 0; o < takeKeys.size(); ++o)
            receiving[takeKeys[o]] |= alive_[w][o];
        std::vector<double> next;
        product(i, fromA, negOwn, next, receiving);
        for (size_t k = 0; k < next.size(); ++k)
            if (!receiving[k])
                next[k] = kInf;
        for (size_t o = 0; o < takeKeys.size(); ++o) {
            if (!alive_[w][o])
                continue;
            const int32_t k = takeKeys[o];
            if (next[k] == kInf)
                alive_[w][o] = 0;
            else
                lag_[w][o] += next[k] - across[k];
        }
        for (size_t k = 0; k < across.size(); ++k)
            if (next[k] < kInf)
                across[k] = next[k];
    }

    const PairModel& model_;
    std::vector<Potentials> alpha_;
    std::vector<std::vector<double>> lag_;
    std::vector<std::vector<char>> alive_;      // options still able to pair across every edge
    std::vector<std::vector<size_t>> incident_; // per variable, its edges
    mutable MetricProduct metricProduct_;       // the searches' buffers
    mutable std::vector<double> rowBuffer_;     // tableRow's gathered row
};

} // namespace

double LinearBudget::of(const std::vector<int32_t>& choice) const {
    double total = 0;
    for (size_t v = 0; v < weight.size(); ++v)
        if (choice[v] >= 0 && !weight[v].empty())
            total += weight[v][choice[v]];
    return total;
}

bool LinearBudget::holds(const std::vector<int32_t>& choice) const {
    if (!active())
        return true;
    const double total = of(choice), slack = 1e-9 * (1.0 + std::fabs(high));
    return total <= high + slack && total >= low - slack;
}

double pairObjective(const PairModel& model, const std::vector<int32_t>& choice) {
    double total = 0;
    for (size_t v = 0; v < model.vars.size(); ++v)
        if (choice[v] >= 0)
            total += model.vars[v].unary[choice[v]];
    for (const PairModel::Edge& e : model.edges)
        if (!e.removed && choice[e.a] >= 0 && choice[e.b] >= 0)
            total += e.at(e.keyA[choice[e.a]], e.keyB[choice[e.b]]);
    return total;
}

namespace {

// Iterated conditional modes: each variable in turn takes its cheapest option among `allowed` (its alive ones
// when empty) against its neighbours' current ones, until a pass changes nothing; after the first pass only
// the neighbours of a variable that moved are looked at again (all of them under a budget, where a move
// elsewhere can open the window). Never raises the plan's cost.
void polishPlan(const PairModel& model, const std::vector<std::vector<double>>& unary,
                const LinearBudget& budget, std::vector<int32_t>& choice,
                const std::vector<std::vector<char>>& allowed = {}) {
    double weight = budget.active() ? budget.of(choice) : 0;
    std::vector<std::vector<size_t>> incident(model.vars.size());
    for (size_t i = 0; i < model.edges.size(); ++i)
        if (!model.edges[i].removed && !selfLoop(model.edges[i])) {
            incident[model.edges[i].a].push_back(i);
            incident[model.edges[i].b].push_back(i);
        }
    std::vector<char> dirty(model.vars.size(), 1);
    for (int pass = 0; pass < 20; ++pass) {
        bool changed = false;
        std::vector<char> next(model.vars.size(), 0);
        for (size_t v = 0; v < model.vars.size(); ++v) {
            if (!dirty[v])
                continue;
            const std::vector<char>& may = allowed.empty() ? model.vars[v].alive : allowed[v];
            int32_t best = choice[v];
            double bestCost = kInf;
            for (size_t o = 0; o < unary[v].size(); ++o) {
                if (!may[o] && static_cast<int32_t>(o) != choice[v])
                    continue;
                if (budget.active() && !budget.weight[v].empty() && static_cast<int32_t>(o) != choice[v]) {
                    // A move may not leave the window (nor stay outside it).
                    const double moved = weight - budget.weight[v][choice[v]] + budget.weight[v][o];
                    if (moved > budget.high || moved < budget.low)
                        continue;
                }
                const double c = costAgainst(model, unary, incident[v], static_cast<int32_t>(v), o, choice);
                if (c < bestCost - 1e-9 * std::fabs(bestCost) ||
                    (o == static_cast<size_t>(choice[v]) && c <= bestCost))
                    best = static_cast<int32_t>(o), bestCost = c;
            }
            if (best != choice[v]) {
                changed = true;
                for (size_t i : incident[v])
                    next[model.edges[i].a] = next[model.edges[i].b] = 1;
            }
            if (budget.active() && !budget.weight[v].empty())
                weight += budget.weight[v][best] - budget.weight[v][choice[v]];
            choice[v] = best;
        }
        if (!changed)
            break;
        if (budget.active())
            std::fill(next.begin(), next.end(), 1);
        dirty = std::move(next);
    }
}

// The restricted ILP over the options in `pool` (and the plan's own): keeps the better plan. `proven` says
// the restricted ILP was solved to optimality (its relaxation integral, or CBC's proof).
struct Restricted {
    bool better = false;
    bool proven = false;
};

template <typename Clock>
Restricted solveRestricted(const PairModel& model, const std::vector<std::vector<double>>& unary,
                           const GenerationOptions& options, const Clock& elapsed,
                           std::vector<std::vector<char>> pool, GenerationResult& result,
                           bool branch = true) {
    for (size_t v = 0; v < model.vars.size(); ++v)
        if (result.choice[v] >= 0)
            pool[v][result.choice[v]] = 1;
    while (matchEqualities(model, pool) > 0) {
    }
    const RestrictedLp r = buildRestricted(model, unary, pool, options.budget);
    const double left = std::max(options.timeLimitSeconds - elapsed(), 0.01);
    const PairLp::Relaxation relaxed = r.lp.relax(left);
    if (!relaxed.solved)
        return {};
    auto [choice, proven] = restrictedPlan(r, relaxed.binary, branch, left, options.log);
    if (!choice.empty())
        polishPlan(model, unary, options.budget, choice);
    Restricted out;
    out.proven = proven;
    out.better =
        !choice.empty() && options.budget.holds(choice) && pairObjective(model, choice) < result.cost;
    if (out.better) {
        result.cost = pairObjective(model, choice);
        result.choice = choice;
    }
    if (options.log)
        std::fprintf(stderr, "  restricted ILP on %zu options: plan %.6g%s\n", countActive(pool), result.cost,
                     proven ? " (proven on them)" : "");
    return out;
}

// Every variable with options has one chosen.
bool complete(const PairModel& model, const std::vector<int32_t>& choice) {
    for (size_t v = 0; v < model.vars.size(); ++v)
        if (choice[v] < 0 && !model.vars[v].unary.empty())
            return false;
    return true;
}

size_t poolSize(const std::vector<std::vector<char>>& pool, bool& someEmpty) {
    size_t total = 0;
    someEmpty = false;
    for (const std::vector<char>& p : pool) {
        const size_t n = static_cast<size_t>(std::count(p.begin(), p.end(), 1));
        someEmpty = someEmpty || (n == 0 && !p.empty());
        total += n;
    }
    return total;
}

// The ascent's search for plans. Reduced-cost fixing first: when the options a plan cheaper than the current
// one may use are few, the restricted ILP over them is the whole ILP, and solved to optimality it proves its
// plan optimal. Otherwise the near-tight options at the smallest tolerance that leaves every variable one
// (doubling from the last one used): an optimal plan of the LP lies among them once the bound is close.
class PlanSearch {
public:
    PlanSearch(const PairModel& model, const std::vector<std::vector<double>>& unary,
               const GenerationOptions& options)
        : model_(model), unary_(unary), options_(options) {}

    // Returns whether the plan improved; sets the result's bound to its cost when the plan is proven optimal.
    template <typename Clock>
    bool improve(DualAscent& ascent, const std::vector<DualAscent::EdgeMinima>& minima, double offset,
                 const Clock& elapsed, GenerationResult& result) {
        const size_t limit = options_.poolPerVariable * model_.vars.size();
        bool someEmpty = false;
        std::vector<std::vector<char>> possible = ascent.possibleUnder(result.cost, minima, offset);
        ascent.keepOnly(possible);
        if (poolSize(possible, someEmpty) <= limit) {
            const Restricted r =
                solveRestricted(model_, unary_, options_, elapsed, std::move(possible), result);
            if (r.proven)
                result.lowerBound = result.cost;
            return r.better;
        }
        const double before = result.cost;
        // The pool jumps from some variable without an option to thousands of options within one doubling
        // of the tolerance where ties are many (symmetric mesh dimensions): between the two, bisect, unless
        // the least pool seen is many times the limit (on 32 layers over 2x2x4x4 it stays above 30,000
        // options down to where some variable has none).
        const double gap = result.cost - result.lowerBound;
        double eps = tolerance_ > 0 ? tolerance_ / 2 : gap / 4096, tooSmall = 0, tooLarge = kInf;
        size_t leastPool = 0; // at tooLarge
        std::vector<int32_t> within;
        for (int tries = 0; tries < 8 && eps <= gap && tooLarge > 1.05 * tooSmall &&
                            (tooLarge == kInf || leastPool <= 4 * limit);
             ++tries) {
            DualAscent::NearTight tight = ascent.nearTight(eps, minima);
            const size_t size = poolSize(tight.on, someEmpty);
            if (!someEmpty)
                leastPool = size;
            if (!someEmpty && size <= limit) {
                tolerance_ = eps;
                if (options_.log)
                    std::fprintf(stderr, "  near-tight options at %.3g: %zu\n", eps, size);
                return solveRestricted(model_, unary_, options_, elapsed, std::move(tight.on), result).better;
            }
            if (!someEmpty && within.empty())
                within = ascent.roundWithin(std::move(tight));
            (someEmpty ? tooSmall : tooLarge) = eps;
            eps = tooLarge == kInf ? 2 * eps : tooSmall == 0 ? eps / 2 : std::sqrt(tooSmall * tooLarge);
        }
        // The next search starts below the smallest tolerance that left every variable an option: the bound
        // only rises, so it shrinks, and the climb from the gap's 1/4096 cost as many arc-consistency passes.
        if (tooLarge < kInf)
            tolerance_ = tooLarge;
        // Too many to solve over: a plan threaded through them instead.
        if (!within.empty()) {
            polishPlan(model_, unary_, options_.budget, within);
            const double cost = pairObjective(model_, within);
            if (options_.log)
                std::fprintf(stderr, "  plan within the near-tight options: %.6g\n", cost);
            if (cost < result.cost && options_.budget.holds(within))
                result.cost = cost, result.choice = std::move(within);
        }
        // And the restricted LP around the best plan: per variable, the options of least Lagrangian cost and
        // those cheapest against the plan's neighbours. Where the duals are still far from tight this finds
        // the moves of many variables at once that no one-variable move (polishPlan) makes. Its relaxation is
        // mostly integral; where it is not, its rounding is taken rather than a branching of its own.
        std::vector<std::vector<char>> around = ascent.leastOptions(options_.poolPerVariable / 2);
        ascent.addCheapestAgainst(unary_, result.choice, options_.poolPerVariable / 2, around);
        solveRestricted(model_, unary_, options_, elapsed, std::move(around), result, false);
        // A gain under 0.1 % counts as none: the search then waits twice as long.
        return result.cost < before * (1 - 1e-3);
    }

private:
    const PairModel& model_;
    const std::vector<std::vector<double>>& unary_;
    const GenerationOptions& options_;
    double tolerance_ =
        0; // the last near-tight search's: within the pool limit, or the least with no variable empty
};

// The budget row relaxed into the bound (Lagrangian relaxation): multipliers μ_hi, μ_lo ≥ 0 of its two sides
// add (μ_hi − μ_lo) · weight to every option's cost and μ_lo · low − μ_hi · high to the bound, which then
// holds for every plan inside the window. They follow the subgradient of TRW-S's rounded plans with
// Polyak's step towards the best plan's cost, halved whenever the bound stops rising.
class RelaxedBudget {
public:
    explicit RelaxedBudget(const LinearBudget& budget) : budget_(budget) {}

    void observe(const std::vector<int32_t>& plan) { weight_ = budget_.of(plan), seen_ = true; }

    double offset() const { return muLow_ * budget_.low - muHigh_ * budget_.high; }

    // Moves the multipliers after a bound evaluation; returns the change of μ_hi − μ_lo, by which every
    // option's cost moves per unit of its weight.
    double step(double bound, double best) {
        if (!budget_.active() || !seen_)
            return 0;
        if (bound > bestBound_ + 1e-9 * std::fabs(bestBound_))
            bestBound_ = bound, stale_ = 0;
        else if (++stale_ >= 2)
            scale_ = std::max(scale_ / 2, 1e-3), stale_ = 0;
        const double high = weight_ - budget_.high, low = budget_.low - weight_;
        const double g = high > 0 ? high : (low > 0 ? -low : (muHigh_ > 0 ? high : (muLow_ > 0 ? -low : 0)));
        if (g == 0 || !(best < kInf))
            return 0;
        const double before = muHigh_ - muLow_;
        const double move = scale_ * std::max(best - bound, 1e-9 * std::fabs(best)) / g;
        double lambda = before + move;
        if (high <= 0 && low <= 0) // inside the window: back towards zero, never past it
            lambda = before > 0 ? std::max(lambda, 0.0) : std::min(lambda, 0.0);
        muHigh_ = std::max(lambda, 0.0);
        muLow_ = std::max(-lambda, 0.0);
        return muHigh_ - muLow_ - before;
    }

private:
    const LinearBudget& budget_;
    double muHigh_ = 0, muLow_ = 0;
    double weight_ = 0;
    bool seen_ = false;
    double bestBound_ = -kInf;
    double scale_ = 1;
    int stale_ = 0;
};

} // namespace

GenerationResult solveByGeneration(const PairModel& model, const GenerationOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    auto closed = [&](const GenerationResult& r) {
        return r.feasible && r.cost - r.lowerBound <= options.gap * std::fabs(r.cost);
    };
    GenerationResult result;
    result.lowerBound = -kInf;
    const std::vector<std::vector<double>> unary = foldedUnary(model);
    std::vector<std::vector<char>> active = seedOptions(model, unary, options.budget);
    while (matchEqualities(model, active) > 0) {
    }
    // Columns until the plan stops improving (or the bound meets it); the last LP's duals seed the ascent.
    // A restricted LP without a solution widens the options and does not count as a round.
    std::vector<Potentials> potentials;
    int stale = 0;
    for (result.rounds = 1; result.rounds <= options.maxRounds;) {
        const RestrictedLp r = buildRestricted(model, unary, active, options.budget);
        const double left = options.timeLimitSeconds - elapsed();
        const PairLp::Relaxation relaxed = r.lp.relax(std::max(left, 0.01));
        if (!relaxed.solved) {
            result.timedOut = elapsed() >= options.timeLimitSeconds;
            if (result.timedOut || widen(model, active) == 0)
                break; // every option was in: the model has no plan
            continue;
        }
        potentials.assign(model.edges.size(), {});
        for (size_t i = 0; i < model.edges.size(); ++i)
            if (!model.edges[i].removed && !selfLoop(model.edges[i]))
                potentials[i] =
                    completePotentials(model, model.edges[i], r.rowA[i], r.rowB[i], relaxed.duals);
        const std::vector<std::vector<double>> lagrangian = lagrangianCosts(model, unary, potentials);
        result.lowerBound = std::max(result.lowerBound, lagrangianBound(model, lagrangian));
        result.activeOptions = countActive(active);
        const std::vector<int32_t> choice =
            restrictedPlan(r, relaxed.binary, true, std::max(options.timeLimitSeconds - elapsed(), 0.01),
                           options.log)
                .first;
        const double before = result.feasible ? result.cost : kInf;
        if (!choice.empty() && pairObjective(model, choice) < before)
            result.feasible = true, result.cost = pairObjective(model, choice), result.choice = choice;
        stale = result.cost < before - options.stallGain * std::fabs(result.cost) ? 0 : stale + 1;
        if (options.log)
            std::fprintf(stderr,
                         "sharding generation round %d: %zu active options, restricted LP %.6g, plan %.6g, "
                         "lower bound %.6g, %.2f s\n",
                         result.rounds, result.activeOptions, relaxed.objective, result.cost,
                         result.lowerBound, elapsed());
        if (closed(result) || stale >= 2 || elapsed() >= options.generationShare * options.timeLimitSeconds ||
            result.rounds == options.maxRounds)
            break;
        if (priceOptions(model, lagrangian, active, options.addPerVariable) == 0)
            break; // the restricted LP is the full LP's optimum
        while (matchEqualities(model, active) > 0) {
        }
        ++result.rounds;
    }
    result.rounds = std::min(result.rounds, options.maxRounds);
    if (!result.feasible || potentials.empty() || closed(result))
        return result;
    // Then the bound, by TRW-S from those duals; after each pass, TRW-S's own plan (polished), and now and
    // then a restricted ILP over the options the duals leave.
    DualAscent ascent(model, unary, std::move(potentials));
    PlanSearch search(model, unary, options);
    RelaxedBudget relaxed(options.budget);
    int primalInterval = options.primalEvery, nextPrimal = options.primalEvery - 1;
    for (int sweep = 0; !closed(result); ++sweep) {
        if (elapsed() >= options.timeLimitSeconds) {
            result.timedOut = true;
            break;
        }
        const bool forward = sweep % 2 == 0;
        ascent.sweep(forward);
        result.sweeps = sweep + 1;
        // Rounding runs against the pass just made: its variables then see every later one's messages.
        std::vector<int32_t> rounded = ascent.roundedPlan(!forward);
        if (complete(model, rounded)) {
            relaxed.observe(rounded);
            polishPlan(model, unary, options.budget, rounded, ascent.live());
            if (const double c = pairObjective(model, rounded);
                c < result.cost && options.budget.holds(rounded))
                result.cost = c, result.choice = std::move(rounded);
        }
        if (sweep % options.boundEvery != options.boundEvery - 1)
            continue;
        const std::vector<DualAscent::EdgeMinima> minima = ascent.edgeMinima();
        const double bound = ascent.bound(minima) + relaxed.offset();
        result.lowerBound = std::max(result.lowerBound, bound);
        if (options.budget.active())
            ascent.shiftUnary(options.budget.weight, relaxed.step(bound, result.cost));
        if (sweep >= nextPrimal && !closed(result)) {
            const bool better = search.improve(ascent, minima, relaxed.offset(), elapsed, result);
            // A restricted ILP costs several passes: after one that found nothing better, wait twice as long.
            primalInterval =
                better ? options.primalEvery : std::min(8 * options.primalEvery, 2 * primalInterval);
            nextPrimal = sweep + primalInterval;
        }
        if (options.log)
            std::fprintf(stderr, "  TRW-S pass %d: lower bound %.6g, plan %.6g, %.2f s\n", sweep,
                         result.lowerBound, result.cost, elapsed());
    }
    return result;
}

} // namespace jointscope::sharding
