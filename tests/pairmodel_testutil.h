// Small random pairwise models of the placement ILP and their optimum by enumeration: the reference the
// reductions and the decomposed solve are checked against (tst_sharding, tst_sharding_mesh).
#pragma once

#include "sharding/PairModel.h"

#include <QTest>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace jointscope::test {

using sharding::PairModel;

// A small random pairwise model: chains (view-like variables with two edges), branches, some equality
// edges, some options pinned out.
inline PairModel randomModel(std::mt19937& rng) {
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    auto real = [&] { return std::uniform_real_distribution<double>(0.0, 10.0)(rng); };
    PairModel m;
    const int vars = uniform(3, 7);
    for (int v = 0; v < vars; ++v) {
        PairModel::Variable var;
        const int options = uniform(2, 4);
        for (int o = 0; o < options; ++o) {
            var.unary.push_back(uniform(0, 3) == 0 ? 0.0 : real());
            var.alive.push_back(uniform(0, 9) != 0);
        }
        var.alive[uniform(0, options - 1)] = 1;
        m.vars.push_back(var);
    }
    auto addEdge = [&](int a, int b) {
        PairModel::Edge e;
        e.a = a;
        e.b = b;
        const int kind = uniform(0, 6); // 0: equality, 1-3: a metric over shared keys, else any table
        e.equality = kind == 0;
        e.sharedKeys = kind <= 3;
        e.keysA = static_cast<size_t>(uniform(2, 4));
        e.keysB = e.sharedKeys ? e.keysA : static_cast<size_t>(uniform(2, 3));
        for (size_t o = 0; o < m.vars[a].unary.size(); ++o)
            e.keyA.push_back(uniform(0, static_cast<int>(e.keysA) - 1));
        for (size_t o = 0; o < m.vars[b].unary.size(); ++o)
            e.keyB.push_back(uniform(0, static_cast<int>(e.keysB) - 1));
        for (size_t i = 0; i < e.keysA; ++i)
            for (size_t j = 0; j < e.keysB; ++j)
                e.cost.push_back(e.equality ? (i == j ? 0.0 : PairModel::kForbidden)
                                            : (i == j ? 0.0 : real()));
        if (e.sharedKeys && !e.equality) {
            // Shortest paths over the table (some steps free, like R -> S): a metric, mostly with fewer
            // generating arcs than pairs. Sometimes left as it was, which is not one.
            for (size_t i = 0; i < e.keysA; ++i)
                for (size_t j = 0; j < e.keysA; ++j)
                    if (i != j && uniform(0, 4) == 0)
                        e.cost[i * e.keysA + j] = 0;
            for (size_t w = 0; w < e.keysA && kind != 3; ++w)
                for (size_t i = 0; i < e.keysA; ++i)
                    for (size_t j = 0; j < e.keysA; ++j)
                        e.cost[i * e.keysA + j] = std::min(e.cost[i * e.keysA + j],
                                                           e.cost[i * e.keysA + w] + e.cost[w * e.keysA + j]);
        }
        m.edges.push_back(e);
    };
    for (int v = 1; v < vars; ++v) // a tree: mostly chains, sometimes a branch
        addEdge(uniform(0, 3) == 0 ? uniform(0, v - 1) : v - 1, v);
    for (int extra = uniform(0, 2); extra > 0; --extra)
        addEdge(uniform(0, vars - 1), uniform(0, vars - 1));
    return m;
}

// The cost of a full assignment under the model as built, infinite when it uses a dead option or breaks an
// equality.
inline double assignmentCost(const PairModel& m, const std::vector<int32_t>& choice) {
    double total = 0;
    for (size_t v = 0; v < m.vars.size(); ++v) {
        if (choice[v] < 0 || !m.vars[v].alive[choice[v]])
            return PairModel::kForbidden;
        total += m.vars[v].unary[choice[v]];
    }
    for (const PairModel::Edge& e : m.edges)
        total += e.at(e.keyA[choice[e.a]], e.keyB[choice[e.b]]);
    return total;
}

// Every assignment, enumerated.
inline double bruteForceOptimum(const PairModel& m) {
    std::vector<int32_t> choice(m.vars.size(), 0);
    double best = PairModel::kForbidden;
    std::function<void(size_t)> visit = [&](size_t v) {
        if (v == m.vars.size()) {
            best = std::min(best, assignmentCost(m, choice));
            return;
        }
        for (size_t o = 0; o < m.vars[v].unary.size(); ++o) {
            choice[v] = static_cast<int32_t>(o);
            visit(v + 1);
        }
    };
    visit(0);
    return best;
}

// Calls `check(trial, model, optimum)` on `trials` random models drawn from `seed`, each with its enumerated
// optimum (kForbidden: infeasible); stops at the first trial that fails the test.
template <typename Check> void forEachRandomModel(uint32_t seed, int trials, Check check) {
    std::mt19937 rng(seed);
    for (int trial = 0; trial < trials && !QTest::currentTestFailed(); ++trial) {
        const PairModel model = randomModel(rng);
        check(trial, model, bruteForceOptimum(model));
    }
}

} // namespace jointscope::test
