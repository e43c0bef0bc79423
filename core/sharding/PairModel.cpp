#include "sharding/PairModel.h"

#include <algorithm>
#include <cmath>

namespace jointscope::sharding {

size_t PairModel::aliveOptions() const {
    size_t n = 0;
    for (const Variable& v : vars)
        n += static_cast<size_t>(std::count(v.alive.begin(), v.alive.end(), 1));
    return n;
}

namespace {

// One edge as seen from one of its variables: the keys of that variable's options, and the other side.
struct Incidence {
    const PairModel::Edge* edge;
    bool asA;         // the variable is the edge's side a
    size_t index = 0; // of the edge in the model
    const std::vector<int32_t>& ownKeys() const { return asA ? edge->keyA : edge->keyB; }
    double cost(int32_t own, int32_t other) const {
        return asA ? edge->at(own, other) : edge->at(other, own);
    }
};

std::vector<std::vector<Incidence>> incidences(const PairModel& model) {
    std::vector<std::vector<Incidence>> result(model.vars.size());
    for (size_t i = 0; i < model.edges.size(); ++i) {
        const PairModel::Edge& e = model.edges[i];
        if (e.removed)
            continue;
        result[e.a].push_back({&e, true, i});
        result[e.b].push_back({&e, false, i});
    }
    return result;
}

// The keys the other side of an incidence can still take.
std::vector<int32_t> otherKeys(const PairModel& model, const Incidence& inc) {
    const PairModel::Edge& e = *inc.edge;
    const int32_t other = inc.asA ? e.b : e.a;
    const std::vector<int32_t>& keys = inc.asA ? e.keyB : e.keyA;
    std::vector<char> seen(inc.asA ? e.keysB : e.keysA, 0);
    const PairModel::Variable& v = model.vars[other];
    for (size_t o = 0; o < keys.size(); ++o)
        if (v.alive[o])
            seen[keys[o]] = 1;
    std::vector<int32_t> result;
    for (size_t k = 0; k < seen.size(); ++k)
        if (seen[k])
            result.push_back(static_cast<int32_t>(k));
    return result;
}

// max over the other side's keys l of cost(a, l) − cost(b, l), over the l that b can pair with;
// -inf when b can pair with none.
double worstGain(const Incidence& inc, int32_t keyA, int32_t keyB, const std::vector<int32_t>& others) {
    double worst = -PairModel::kForbidden;
    for (int32_t l : others) {
        const double cb = inc.cost(keyB, l);
        if (cb == PairModel::kForbidden)
            continue;
        const double ca = inc.cost(keyA, l);
        if (ca == PairModel::kForbidden)
            return PairModel::kForbidden;
        worst = std::max(worst, ca - cb);
    }
    return worst;
}

// One pass over variable v; true when an option went.
bool reduceVariable(PairModel& model, int32_t v, const std::vector<Incidence>& incs) {
    PairModel::Variable& var = model.vars[v];
    std::vector<std::vector<int32_t>> others;
    bool selfLoop = false;
    for (const Incidence& inc : incs) {
        others.push_back(otherKeys(model, inc));
        selfLoop = selfLoop || inc.edge->a == inc.edge->b;
    }
    bool changed = false;
    const size_t n = var.unary.size();
    // Options that no alive option across some edge can pair with.
    for (size_t b = 0; b < n; ++b) {
        if (!var.alive[b] || selfLoop)
            continue;
        for (size_t i = 0; i < incs.size() && var.alive[b]; ++i) {
            const int32_t kb = incs[i].ownKeys()[b];
            if (std::none_of(others[i].begin(), others[i].end(),
                             [&](int32_t l) { return incs[i].cost(kb, l) != PairModel::kForbidden; }))
                var.alive[b] = 0, changed = true;
        }
    }
    if (var.frozen || selfLoop)
        return changed;
    for (size_t b = 0; b < n; ++b) {
        if (!var.alive[b])
            continue;
        for (size_t a = 0; a < n && var.alive[b]; ++a) {
            if (a == b || !var.alive[a])
                continue;
            double margin = var.unary[a] - var.unary[b];
            const double tolerance = 1e-9 * (1.0 + std::fabs(var.unary[b]));
            for (size_t i = 0; i < incs.size() && margin <= tolerance; ++i) {
                const int32_t ka = incs[i].ownKeys()[a], kb = incs[i].ownKeys()[b];
                if (ka != kb)
                    margin += worstGain(incs[i], ka, kb, others[i]);
            }
            if (margin <= tolerance)
                var.alive[b] = 0, changed = true;
        }
    }
    return changed;
}

} // namespace

int eliminateDominated(PairModel& model) {
    const std::vector<std::vector<Incidence>> incs = incidences(model);
    int passes = 0;
    for (bool changed = true; changed && passes < 32; ++passes) {
        changed = false;
        for (size_t v = 0; v < model.vars.size(); ++v)
            if (!model.vars[v].eliminated)
                changed = reduceVariable(model, static_cast<int32_t>(v), incs[v]) || changed;
    }
    return passes;
}

namespace {

// v's cheapest alive option against fixed keys across its edges (`keys[i]` on the far side of incs[i]), and
// its cost with v's own; option -1 when none is alive.
struct Reply {
    int32_t option = -1;
    double cost = PairModel::kForbidden;
};

Reply cheapestReply(const PairModel::Variable& var, const std::vector<Incidence>& incs,
                    const std::vector<int32_t>& keys) {
    Reply best;
    for (size_t o = 0; o < var.unary.size(); ++o) {
        if (!var.alive[o])
            continue;
        double c = var.unary[o];
        for (size_t i = 0; i < incs.size(); ++i)
            c += incs[i].cost(incs[i].ownKeys()[o], keys[i]);
        if (best.option < 0 || c < best.cost)
            best = {static_cast<int32_t>(o), c};
    }
    return best;
}

int32_t farVar(const Incidence& inc) {
    return inc.asA ? inc.edge->b : inc.edge->a;
}

const std::vector<int32_t>& farKeys(const Incidence& inc) {
    return inc.asA ? inc.edge->keyB : inc.edge->keyA;
}

size_t farKeyCount(const Incidence& inc) {
    return inc.asA ? inc.edge->keysB : inc.edge->keysA;
}

size_t ownKeyCount(const Incidence& inc) {
    return inc.asA ? inc.edge->keysA : inc.edge->keysB;
}

// Folds v (no constraint but its edges, at most two of them) into its neighbours; false when that would
// grow the LP. Edges of `touched` variables change: the caller leaves them for the next pass.
bool eliminateVariable(PairModel& model, int32_t v, const std::vector<Incidence>& incs,
                       std::vector<char>& touched) {
    PairModel::Variable& var = model.vars[v];
    if (incs.size() == 2) {
        const int32_t p = farVar(incs[0]), q = farVar(incs[1]);
        if (p == q)
            return false;
        const size_t kp = farKeyCount(incs[0]), kq = farKeyCount(incs[1]);
        if (kp * kq > kp * ownKeyCount(incs[0]) + ownKeyCount(incs[1]) * kq)
            return false;
        PairModel::Edge e;
        e.a = p;
        e.b = q;
        e.keyA = farKeys(incs[0]);
        e.keyB = farKeys(incs[1]);
        e.keysA = kp;
        e.keysB = kq;
        e.cost.resize(kp * kq);
        for (size_t i = 0; i < kp; ++i)
            for (size_t j = 0; j < kq; ++j)
                e.cost[i * kq + j] =
                    cheapestReply(var, incs, {static_cast<int32_t>(i), static_cast<int32_t>(j)}).cost;
        touched[p] = touched[q] = 1;
        model.eliminations.push_back({v, {*incs[0].edge, *incs[1].edge}});
        model.edges[incs[0].index].removed = model.edges[incs[1].index].removed = true;
        model.edges.push_back(std::move(e)); // no reallocation: eliminateChains reserved room
    } else if (incs.size() == 1) {
        const int32_t p = farVar(incs[0]);
        PairModel::Variable& far = model.vars[p];
        for (size_t o = 0; o < far.unary.size(); ++o)
            if (far.alive[o])
                far.unary[o] += cheapestReply(var, incs, {farKeys(incs[0])[o]}).cost;
        touched[p] = 1;
        model.eliminations.push_back({v, {*incs[0].edge}});
        model.edges[incs[0].index].removed = true;
    } else {
        model.eliminations.push_back({v, {}});
    }
    var.eliminated = true;
    return true;
}

} // namespace

size_t eliminateChains(PairModel& model) {
    size_t count = 0;
    for (bool changed = true; changed;) {
        changed = false;
        // At most one new edge per variable: `incs` points into model.edges and must stay valid.
        model.edges.reserve(model.edges.size() + model.vars.size());
        const std::vector<std::vector<Incidence>> incs = incidences(model);
        std::vector<char> touched(model.vars.size(), 0);
        for (size_t v = 0; v < model.vars.size(); ++v) {
            const PairModel::Variable& var = model.vars[v];
            // A variable left without options stays: the LP reports the model infeasible.
            if (var.eliminated || var.frozen || touched[v] || incs[v].size() > 2 ||
                std::find(var.alive.begin(), var.alive.end(), 1) == var.alive.end())
                continue;
            bool plain = true;
            for (const Incidence& inc : incs[v])
                plain = plain && !inc.edge->equality && inc.edge->a != inc.edge->b && !touched[farVar(inc)];
            if (plain && eliminateVariable(model, static_cast<int32_t>(v), incs[v], touched)) {
                touched[v] = 1;
                changed = true;
                ++count;
            }
        }
    }
    return count;
}

std::vector<int32_t> PairModel::choices(const std::vector<std::vector<int>>& x,
                                        const std::vector<double>& binary) const {
    std::vector<int32_t> choice(vars.size(), -1);
    for (size_t v = 0; v < vars.size(); ++v) {
        double best = -1;
        for (size_t o = 0; o < x[v].size(); ++o)
            if (x[v][o] >= 0 && binary[x[v][o]] > best)
                best = binary[x[v][o]], choice[v] = static_cast<int32_t>(o);
    }
    for (auto it = eliminations.rbegin(); it != eliminations.rend(); ++it) {
        std::vector<Incidence> incs;
        std::vector<int32_t> keys;
        for (const Edge& e : it->edges) {
            const Incidence inc{&e, e.a == it->var};
            const int32_t far = choice[farVar(inc)];
            incs.push_back(inc);
            keys.push_back(far >= 0 ? farKeys(inc)[far] : 0);
        }
        choice[it->var] = cheapestReply(vars[it->var], incs, keys).option;
    }
    return choice;
}

namespace {

bool nearlyAtMost(double a, double b) {
    return a <= b + 1e-9 * (1.0 + std::fabs(b));
}

// When an edge's table is the shortest-path metric of a few of its pairs (redistributions that compose:
// S(0)S(1) -> RR costs S(0)S(1) -> S(0)R plus S(0)R -> RR), those pairs as arcs. The transportation problem
// over a metric equals the min-cost flow over the arcs that generate it, for fractional marginals too, so
// the LP's optimum is unchanged with far fewer columns. Empty when the table is not such a metric.
std::vector<std::pair<int32_t, int32_t>> generatingArcs(const PairModel::Edge& e) {
    const auto n = static_cast<int32_t>(e.keysA);
    std::vector<std::pair<int32_t, int32_t>> arcs;
    for (int32_t u = 0; u < n; ++u)
        if (e.at(u, u) != 0)
            return {};
    for (int32_t u = 0; u < n; ++u)
        for (int32_t v = 0; v < n; ++v) {
            if (u == v)
                continue;
            const double direct = e.at(u, v);
            bool composite = false;
            for (int32_t w = 0; w < n; ++w) {
                if (w == u || w == v)
                    continue;
                const double through = e.at(u, w) + e.at(w, v);
                if (!nearlyAtMost(direct, through))
                    return {}; // a cheaper way round: not a metric
                composite = composite || nearlyAtMost(through, direct);
            }
            if (!composite)
                arcs.push_back({u, v});
        }
    // Ties (zero-cost steps) could drop both of two arcs that compose from each other: check that the arcs
    // alone give back every cost, no more and no less.
    std::vector<double> dist(static_cast<size_t>(n) * n, PairModel::kForbidden);
    for (int32_t u = 0; u < n; ++u)
        dist[static_cast<size_t>(u) * n + u] = 0;
    for (const auto& [u, v] : arcs)
        dist[static_cast<size_t>(u) * n + v] = e.at(u, v);
    for (int32_t w = 0; w < n; ++w)
        for (int32_t u = 0; u < n; ++u)
            for (int32_t v = 0; v < n; ++v)
                dist[static_cast<size_t>(u) * n + v] =
                    std::min(dist[static_cast<size_t>(u) * n + v],
                             dist[static_cast<size_t>(u) * n + w] + dist[static_cast<size_t>(w) * n + v]);
    for (int32_t u = 0; u < n; ++u)
        for (int32_t v = 0; v < n; ++v)
            if (const double d = dist[static_cast<size_t>(u) * n + v];
                !nearlyAtMost(d, e.at(u, v)) || !nearlyAtMost(e.at(u, v), d))
                return {};
    return arcs;
}

} // namespace

std::vector<std::vector<int>> addToLp(const PairModel& model, PairLp& lp) {
    std::vector<std::vector<int>> x(model.vars.size());
    for (size_t v = 0; v < model.vars.size(); ++v) {
        const PairModel::Variable& var = model.vars[v];
        if (var.eliminated) {
            x[v].assign(var.unary.size(), -1);
            continue;
        }
        std::vector<int> chosen;
        for (size_t o = 0; o < var.unary.size(); ++o) {
            x[v].push_back(var.alive[o] ? lp.addBinary(var.unary[o]) : -1);
            if (var.alive[o])
                chosen.push_back(x[v].back());
        }
        lp.addRow(chosen, std::vector<double>(chosen.size(), 1.0), 'E', 1.0);
    }
    // A side's alive columns grouped by key.
    auto groups = [&](int32_t v, const std::vector<int32_t>& keys, size_t count) {
        std::vector<std::vector<int>> byKey(count);
        for (size_t o = 0; o < keys.size(); ++o)
            if (x[v][o] >= 0)
                byKey[keys[o]].push_back(x[v][o]);
        return byKey;
    };
    auto used = [](const std::vector<std::vector<int>>& byKey) {
        std::vector<int32_t> keys;
        for (size_t k = 0; k < byKey.size(); ++k)
            if (!byKey[k].empty())
                keys.push_back(static_cast<int32_t>(k));
        return keys;
    };
    for (const PairModel::Edge& e : model.edges) {
        if (e.removed)
            continue;
        const auto colsA = groups(e.a, e.keyA, e.keysA), colsB = groups(e.b, e.keyB, e.keysB);
        const std::vector<int32_t> keysA = used(colsA), keysB = used(colsB);
        if (e.equality) {
            // Σ x over a's options with key k == Σ x over b's with key k, for every k either side offers.
            for (size_t k = 0; k < e.keysA; ++k) {
                if (colsA[k].empty() && colsB[k].empty())
                    continue;
                std::vector<int> idx = colsA[k];
                std::vector<double> coef(idx.size(), 1.0);
                for (int c : colsB[k])
                    idx.push_back(c), coef.push_back(-1.0);
                lp.addRow(idx, coef, 'E', 0.0);
            }
            continue;
        }
        // One side down to one key: the edge's cost is a function of the other side's choice alone.
        if (keysA.size() == 1 || keysB.size() == 1) {
            const bool fixedA = keysA.size() == 1;
            const int32_t fixed = fixedA ? keysA[0] : keysB[0];
            for (int32_t k : fixedA ? keysB : keysA) {
                const double c = fixedA ? e.at(fixed, k) : e.at(k, fixed);
                for (int col : fixedA ? colsB[k] : colsA[k])
                    lp.addCost(col, c);
            }
            continue;
        }
        if (e.sharedKeys) {
            if (const auto arcs = generatingArcs(e); !arcs.empty()) {
                // Flow conservation at every placement: what a supplies there, plus what arrives, leaves
                // or is what b takes there.
                std::vector<int> row(e.keysA, -1);
                auto balance = [&](int32_t k) {
                    if (row[k] < 0) {
                        std::vector<int> idx = colsA[k];
                        std::vector<double> coef(idx.size(), 1.0);
                        for (int c : colsB[k])
                            idx.push_back(c), coef.push_back(-1.0);
                        row[k] = lp.addRow(idx, coef, 'E', 0.0);
                    }
                    return row[k];
                };
                for (const auto& [u, v] : arcs)
                    lp.addArc(e.at(u, v), balance(u), balance(v));
                for (size_t k = 0; k < e.keysA; ++k)
                    if (!colsA[k].empty() || !colsB[k].empty())
                        balance(static_cast<int32_t>(k));
                continue;
            }
        }
        // Transportation between the two sides' keys: pair (ka, kb) is 1 on the pair the solution uses, and
        // its marginals are the two sides' choices; with x integral, pairs need no integrality of their own.
        auto marginalRows = [&](const std::vector<std::vector<int>>& cols, const std::vector<int32_t>& keys) {
            std::vector<int> rows;
            for (int32_t k : keys)
                rows.push_back(lp.addRow(cols[k], std::vector<double>(cols[k].size(), -1.0), 'E', 0.0));
            return rows;
        };
        const std::vector<int> rowA = marginalRows(colsA, keysA), rowB = marginalRows(colsB, keysB);
        for (size_t i = 0; i < keysA.size(); ++i)
            for (size_t j = 0; j < keysB.size(); ++j)
                lp.addPair(e.at(keysA[i], keysB[j]), rowA[i], rowB[j]);
    }
    return x;
}

} // namespace jointscope::sharding
