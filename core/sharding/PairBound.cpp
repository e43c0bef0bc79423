#include "sharding/PairBound.h"

#include "sharding/PairLp.h"

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
                             const std::vector<std::vector<char>>& active) {
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
                                           const std::vector<std::vector<double>>& unary) {
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

// The restricted ILP's plan: the relaxation's when integral, else CBC's on the restricted model.
std::vector<int32_t> restrictedPlan(const RestrictedLp& r, const std::vector<double>& relaxed,
                                    double timeLimitSeconds, bool log) {
    bool integral = true;
    for (double x : relaxed)
        integral = integral && (x < 1e-6 || x > 1 - 1e-6);
    std::vector<double> values = relaxed;
    if (!integral) {
        const PairLp::Result solved = r.lp.solve(timeLimitSeconds, log);
        if (!solved.feasible)
            return {};
        values = solved.binary;
    }
    std::vector<int32_t> choice(r.column.size(), -1);
    for (size_t v = 0; v < r.column.size(); ++v) {
        double best = -1;
        for (size_t o = 0; o < r.column[v].size(); ++o)
            if (r.column[v][o] >= 0 && values[r.column[v][o]] > best)
                best = values[r.column[v][o]], choice[v] = static_cast<int32_t>(o);
    }
    return choice;
}

// Block coordinate ascent on the dual, one edge at a time (MPLP's edge update, Globerson & Jaakkola 2007):
// the edge's potentials are reset so that each side gets half of the edge's two-variable minimum against
// the rest of its own Lagrangian. The bound Σ_v min L_v + Σ_e min (cost - α_a - α_b) holds for any
// potentials, so no update can make it invalid, and none makes it smaller.
// exp(-excess / tau), 0 where it would underflow into slow subnormals.
double softWeight(double excess, double tau) {
    const double t = excess / tau;
    return t > 40 ? 0.0 : std::exp(-t);
}

// The two loops of an edge update, on plain arrays without a branch (a forbidden pair or a missing key is
// infinite, and never the min) so that they vectorise: most of an ascent's time is in them.
#if defined(__GNUC__) && !defined(__clang__)
#define JOINTSCOPE_VECTORISE __attribute__((optimize("O3")))
#else
#define JOINTSCOPE_VECTORISE
#endif

// min_l (row[l] + rest[l]), with four running minima.
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

class DualAscent {
public:
    DualAscent(const PairModel& model, const std::vector<std::vector<double>>& unary,
               std::vector<Potentials> potentials)
        : model_(model), alpha_(std::move(potentials)), lag_(lagrangianCosts(model, unary, alpha_)) {
        alive_.reserve(model.vars.size());
        for (const PairModel::Variable& v : model.vars)
            alive_.push_back(v.alive);
    }

    // One sweep over the edges, forward or backward; tau > 0 smooths every min into a soft-min at that
    // temperature (the smoothed dual has no flat steps to stall on; the bound stays the hard one).
    void sweep(bool forward, double tau) {
        const size_t n = model_.edges.size();
        for (size_t j = 0; j < n; ++j) {
            const size_t i = forward ? j : n - 1 - j;
            if (!model_.edges[i].removed && !selfLoop(model_.edges[i]))
                update(i, tau);
        }
    }

    double bound() const {
        double total = 0;
        for (size_t v = 0; v < model_.vars.size(); ++v) {
            double best = kInf;
            for (size_t o = 0; o < lag_[v].size(); ++o)
                if (alive_[v][o])
                    best = std::min(best, lag_[v][o]);
            total += best;
        }
        for (size_t i = 0; i < model_.edges.size(); ++i) {
            const PairModel::Edge& e = model_.edges[i];
            if (e.removed || selfLoop(e))
                continue;
            const std::vector<double> ra = rest(e.a, e.keyA, e.keysA, alpha_[i].a);
            const std::vector<double> rb = rest(e.b, e.keyB, e.keysB, alpha_[i].b);
            // min over the pairs both sides can still take of cost - α_a - α_b.
            std::vector<double> shifted(e.keysB, kInf);
            for (size_t l = 0; l < e.keysB; ++l)
                if (rb[l] < kInf)
                    shifted[l] = -alpha_[i].b[l];
            double best = kInf;
            for (size_t k = 0; k < e.keysA; ++k)
                if (ra[k] < kInf)
                    best = std::min(best, minOfSums(&e.cost[k * e.keysB], shifted.data(), e.keysB) -
                                              alpha_[i].a[k]);
            total += best < kInf ? best : 0.0;
        }
        return total;
    }

    const std::vector<std::vector<double>>& lagrangian() const { return lag_; }

private:
    // Per key of one side: the cheapest alive option with it, without this edge's potential.
    std::vector<double> rest(int32_t v, const std::vector<int32_t>& keys, size_t count,
                             const std::vector<double>& own, double tau = 0) const {
        std::vector<double> r(count, kInf);
        for (size_t o = 0; o < keys.size(); ++o)
            if (alive_[v][o])
                r[keys[o]] = std::min(r[keys[o]], lag_[v][o] - own[keys[o]]);
        if (tau <= 0)
            return r;
        std::vector<double> sum(count, 0.0);
        for (size_t o = 0; o < keys.size(); ++o)
            if (alive_[v][o])
                sum[keys[o]] += softWeight(lag_[v][o] - own[keys[o]] - r[keys[o]], tau);
        for (size_t k = 0; k < count; ++k)
            if (r[k] < kInf)
                r[k] -= tau * std::log(sum[k]);
        return r;
    }

    // Per key of each side, the min over the other side of cost + its rest: one pass over the table's
    // finite rows and columns for both sides' mins, and one more for the soft-min's sums (single-precision
    // weights: they only steer the ascent; the bound is the hard one, valid for any potentials).
    static std::pair<std::vector<double>, std::vector<double>> transforms(const PairModel::Edge& e,
                                                                          const std::vector<double>& ra,
                                                                          const std::vector<double>& rb,
                                                                          double tau) {
        std::vector<int32_t> rows;
        for (size_t k = 0; k < e.keysA; ++k)
            if (ra[k] < kInf)
                rows.push_back(static_cast<int32_t>(k));
        std::vector<double> ma(e.keysA, kInf), mb(e.keysB, kInf);
        // Whole rows, without a branch: a forbidden pair or a key b lacks is infinite and never the min, and
        // the loop vectorises (most of an ascent's time). Keys b lacks get no min after all.
        const size_t width = e.keysB;
        for (int32_t k : rows) {
            const double* row = &e.cost[static_cast<size_t>(k) * width];
            ma[k] = minOfSums(row, rb.data(), width);
            lowerBy(row, ra[k], mb.data(), width);
        }
        for (size_t l = 0; l < width; ++l)
            if (rb[l] == kInf)
                mb[l] = kInf;
        if (tau <= 0)
            return {std::move(ma), std::move(mb)};
        const double inverse = 1.0 / tau;
        const auto weight = [inverse](double excess) {
            const double t = excess * inverse;
            return t > 40 ? 0.0f : std::exp(static_cast<float>(-t));
        };
        std::vector<int32_t> cols;
        for (size_t l = 0; l < width; ++l)
            if (rb[l] < kInf)
                cols.push_back(static_cast<int32_t>(l));
        std::vector<double> sa(e.keysA, 0.0), sb(e.keysB, 0.0);
        for (int32_t k : rows) {
            const double* row = &e.cost[static_cast<size_t>(k) * width];
            double sum = 0;
            for (int32_t l : cols)
                if (const double c = row[l]; c < kInf) {
                    sum += weight(c + rb[l] - ma[k]);
                    sb[l] += weight(c + ra[k] - mb[l]);
                }
            sa[k] = sum;
        }
        for (size_t k = 0; k < e.keysA; ++k)
            if (ma[k] < kInf)
                ma[k] -= tau * std::log(sa[k]);
        for (size_t l = 0; l < e.keysB; ++l)
            if (mb[l] < kInf)
                mb[l] -= tau * std::log(sb[l]);
        return {std::move(ma), std::move(mb)};
    }

    // Sets one side's potentials, keeping the Lagrangian in step; options with no partner left go.
    void assign(int32_t v, const std::vector<int32_t>& keys, std::vector<double>& own,
                const std::vector<double>& r, const std::vector<double>& m) {
        std::vector<double> next(own.size(), 0.0);
        for (size_t k = 0; k < own.size(); ++k)
            if (r[k] < kInf && m[k] < kInf)
                next[k] = 0.5 * (m[k] - r[k]);
        for (size_t o = 0; o < keys.size(); ++o) {
            if (!alive_[v][o])
                continue;
            if (m[keys[o]] == kInf)
                alive_[v][o] = 0;
            else
                lag_[v][o] += next[keys[o]] - own[keys[o]];
        }
        own = std::move(next);
    }

    void update(size_t i, double tau) {
        const PairModel::Edge& e = model_.edges[i];
        Potentials& p = alpha_[i];
        const std::vector<double> ra = rest(e.a, e.keyA, e.keysA, p.a, tau);
        const std::vector<double> rb = rest(e.b, e.keyB, e.keysB, p.b, tau);
        const auto [ma, mb] = transforms(e, ra, rb, tau);
        assign(e.a, e.keyA, p.a, ra, ma);
        assign(e.b, e.keyB, p.b, rb, mb);
    }

    const PairModel& model_;
    std::vector<Potentials> alpha_;
    std::vector<std::vector<double>> lag_;
    std::vector<std::vector<char>> alive_; // options still able to pair across every edge
};

} // namespace

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

// Iterated conditional modes: each variable in turn takes its cheapest option against its neighbours' current
// ones, until a pass changes nothing. Never raises the plan's cost.
void polishPlan(const PairModel& model, const std::vector<std::vector<double>>& unary,
                std::vector<int32_t>& choice) {
    std::vector<std::vector<size_t>> incident(model.vars.size());
    for (size_t i = 0; i < model.edges.size(); ++i)
        if (!model.edges[i].removed && !selfLoop(model.edges[i])) {
            incident[model.edges[i].a].push_back(i);
            incident[model.edges[i].b].push_back(i);
        }
    for (int pass = 0; pass < 20; ++pass) {
        bool changed = false;
        for (size_t v = 0; v < model.vars.size(); ++v) {
            int32_t best = choice[v];
            double bestCost = kInf;
            for (size_t o = 0; o < unary[v].size(); ++o) {
                if (!model.vars[v].alive[o])
                    continue;
                double c = unary[v][o];
                for (size_t i : incident[v]) {
                    const PairModel::Edge& e = model.edges[i];
                    c += e.a == static_cast<int32_t>(v) ? e.at(e.keyA[o], e.keyB[choice[e.b]])
                                                        : e.at(e.keyA[choice[e.a]], e.keyB[o]);
                }
                if (c < bestCost - 1e-9 * std::fabs(bestCost) ||
                    (o == static_cast<size_t>(choice[v]) && c <= bestCost))
                    best = static_cast<int32_t>(o), bestCost = c;
            }
            changed = changed || best != choice[v];
            choice[v] = best;
        }
        if (!changed)
            break;
    }
}

// The restricted ILP over the plan's options and each variable's `perVariable` cheapest by `lagrangian`
// (dual ascent's reduced costs: near the LP optimum, the options an optimal plan uses): keeps the better
// plan. Returns whether it did better.
template <typename Clock>
bool improvePlan(const PairModel& model, const std::vector<std::vector<double>>& unary,
                 const std::vector<std::vector<double>>& lagrangian, const GenerationOptions& options,
                 const Clock& elapsed, std::vector<std::vector<char>>& active, GenerationResult& result) {
    for (size_t v = 0; v < model.vars.size(); ++v) {
        const std::vector<double>& c = lagrangian[v];
        if (result.choice[v] >= 0)
            active[v][result.choice[v]] = 1;
        std::vector<size_t> order;
        for (size_t o = 0; o < c.size(); ++o)
            if (model.vars[v].alive[o])
                order.push_back(o);
        const size_t take = std::min(options.addPerVariable, order.size());
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
                          [&](size_t x, size_t y) { return c[x] < c[y]; });
        for (size_t i = 0; i < take; ++i)
            active[v][order[i]] = 1;
    }
    while (matchEqualities(model, active) > 0) {
    }
    const RestrictedLp r = buildRestricted(model, unary, active);
    const double left = std::max(options.timeLimitSeconds - elapsed(), 0.01);
    const PairLp::Relaxation relaxed = r.lp.relax(left);
    if (!relaxed.solved)
        return false;
    std::vector<int32_t> choice = restrictedPlan(r, relaxed.binary, left, options.log);
    if (!choice.empty())
        polishPlan(model, unary, choice);
    const bool better = !choice.empty() && pairObjective(model, choice) < result.cost;
    if (better) {
        result.cost = pairObjective(model, choice);
        result.choice = choice;
    }
    if (options.log)
        std::fprintf(stderr, "  restricted ILP on %zu options: plan %.6g\n", countActive(active),
                     result.cost);
    return better;
}

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
    std::vector<std::vector<char>> active = seedOptions(model, unary);
    while (matchEqualities(model, active) > 0) {
    }
    // Columns until the plan stops improving (or the bound meets it); the last LP's duals seed the ascent.
    std::vector<Potentials> potentials;
    int stale = 0;
    for (result.rounds = 1; result.rounds <= options.maxRounds; ++result.rounds) {
        const RestrictedLp r = buildRestricted(model, unary, active);
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
        const std::vector<int32_t> choice = restrictedPlan(
            r, relaxed.binary, std::max(options.timeLimitSeconds - elapsed(), 0.01), options.log);
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
        if (closed(result) || stale >= 2 || elapsed() >= options.generationShare * options.timeLimitSeconds)
            break;
        if (priceOptions(model, lagrangian, active, options.addPerVariable) == 0)
            break; // the restricted LP is the full LP's optimum
        while (matchEqualities(model, active) > 0) {
        }
    }
    result.rounds = std::min(result.rounds, options.maxRounds);
    if (!result.feasible || potentials.empty() || closed(result))
        return result;
    // Then the bound: smoothed dual ascent from those duals, the temperature falling each sweep; now and
    // then the options its Lagrangian likes best, with the plan's own, make a new restricted ILP.
    DualAscent ascent(model, unary, std::move(potentials));
    std::vector<std::vector<char>> pool(model.vars.size());
    for (size_t v = 0; v < model.vars.size(); ++v)
        pool[v].assign(model.vars[v].unary.size(), 0);
    const double perVariable = 1.0 / static_cast<double>(std::max<size_t>(model.vars.size(), 1));
    const double coldest = options.coldestTemperature * std::fabs(result.cost) * perVariable;
    double tau = options.startTemperature * (result.cost - result.lowerBound) * perVariable;
    // A restricted ILP is most of a sweep's cost: after one that found nothing better, wait twice as long.
    int primalInterval = options.primalEvery, nextPrimal = options.primalEvery - 1;
    for (int sweep = 0; !closed(result); ++sweep, tau = std::max(coldest, tau * options.cooling)) {
        if (elapsed() >= options.timeLimitSeconds) {
            result.timedOut = true;
            break;
        }
        ascent.sweep(sweep % 2 == 0, tau);
        result.sweeps = sweep + 1;
        if (sweep % options.boundEvery != options.boundEvery - 1)
            continue;
        result.lowerBound = std::max(result.lowerBound, ascent.bound());
        if (sweep >= nextPrimal) {
            const bool better =
                improvePlan(model, unary, ascent.lagrangian(), options, elapsed, pool, result);
            primalInterval =
                better ? options.primalEvery : std::min(8 * options.primalEvery, 2 * primalInterval);
            nextPrimal = sweep + primalInterval;
        }
        if (options.log)
            std::fprintf(stderr, "  ascent sweep %d (temperature %.3g): lower bound %.6g, %.2f s\n", sweep,
                         tau, result.lowerBound, elapsed());
    }
    return result;
}

} // namespace jointscope::sharding
