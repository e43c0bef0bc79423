#include "sharding/PairLp.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#ifdef JOINTSCOPE_HAVE_CBC
#include <Cbc_C_Interface.h>
#include <Clp_C_Interface.h>
#endif

namespace jointscope::sharding {

namespace {
constexpr double kInfinity = 1e300;
} // namespace

int PairLp::addBinary(double cost) {
    columns_.push_back({cost, {}});
    return static_cast<int>(columns_.size()) - 1;
}

void PairLp::addCost(int col, double delta) {
    columns_[col].cost += delta;
}

int PairLp::addRow(const std::vector<int>& cols, const std::vector<double>& coefs, char sense, double rhs) {
    const int row = static_cast<int>(rowLb_.size());
    rowLb_.push_back(sense == 'L' ? -kInfinity : rhs);
    rowUb_.push_back(sense == 'G' ? kInfinity : rhs);
    for (size_t i = 0; i < cols.size(); ++i)
        columns_[cols[i]].entries.push_back({row, coefs[i]});
    return row;
}

void PairLp::addPair(double cost, int rowA, int rowB) {
    pairs_.push_back({cost, rowA, rowB, 1.0, 1.0});
}

void PairLp::addArc(double cost, int from, int to) {
    pairs_.push_back({cost, from, to, -1.0, 1.0});
}

#ifndef JOINTSCOPE_HAVE_CBC
PairLp::Result PairLp::solve(double, bool) const {
    return {};
}
PairLp::Relaxation PairLp::relax(double) const {
    return {};
}
#else

namespace {

// Column-major arrays in the layout Clp_loadProblem / Clp_addColumns / Cbc_loadProblem take.
struct ColumnBlock {
    std::vector<CoinBigIndex> start{0};
    std::vector<int> index;
    std::vector<double> value, lower, upper, cost;

    void add(double c, double ub, const std::vector<std::pair<int, double>>& entries) {
        for (const auto& [row, coef] : entries)
            index.push_back(row), value.push_back(coef);
        start.push_back(static_cast<CoinBigIndex>(index.size()));
        lower.push_back(0.0);
        upper.push_back(ub);
        cost.push_back(c);
    }
    int size() const { return static_cast<int>(cost.size()); }
};

// Dual simplex straight away: on this degenerate transportation structure it beats CBC's own root set-up,
// presolve and pricing of the pair columns in smaller sets (column generation). A crash basis with simple
// pivoting first roughly halves its iterations on these models (block6144 16x8: 4.8k -> 3.0k; 32 LLaMA layers
// 8x8: 12.6k -> 7.0k). The caller deletes the model.
Clp_Simplex* dualSimplex(const ColumnBlock& all, const std::vector<double>& rowLb,
                         const std::vector<double>& rowUb, double timeLimitSeconds) {
    Clp_Simplex* lp = Clp_newModel();
    Clp_setLogLevel(lp, 0);
    Clp_setMaximumSeconds(lp, timeLimitSeconds);
    Clp_loadProblem(lp, all.size(), static_cast<int>(rowLb.size()), all.start.data(), all.index.data(),
                    all.value.data(), all.lower.data(), all.upper.data(), all.cost.data(), rowLb.data(),
                    rowUb.data());
    Clp_crash(lp, 1.0, 1);
    Clp_dual(lp, 0);
    return lp;
}

void setCbcParameters(Cbc_Model* model, double timeLimitSeconds, bool log) {
    Cbc_setLogLevel(model, log ? 1 : 0);
    if (!log) {
        Cbc_setParameter(model, "log", "0");
        Cbc_setParameter(model, "slog", "0");
    }
    Cbc_setMaximumSeconds(model, timeLimitSeconds);
    // The root relaxation of this formulation is nearly always integral already: presolve, preprocessing,
    // cuts and heuristics cost more than they save.
    Cbc_setParameter(model, "presolve", "off");
    Cbc_setParameter(model, "preprocess", "off");
    Cbc_setParameter(model, "cuts", "off");
    Cbc_setParameter(model, "heuristicsOnOff", "off");
    if (const char* extra = std::getenv("JOINTSCOPE_SHARD_CBC")) { // name=value,... for tuning experiments
        const std::string all = extra;
        size_t begin = 0;
        while (begin < all.size()) {
            size_t end = all.find(',', begin);
            if (end == std::string::npos)
                end = all.size();
            const std::string item = all.substr(begin, end - begin);
            if (const size_t eq = item.find('='); eq != std::string::npos)
                Cbc_setParameter(model, item.substr(0, eq).c_str(), item.substr(eq + 1).c_str());
            begin = end + 1;
        }
    }
}

} // namespace

PairLp::Result PairLp::solve(double timeLimitSeconds, bool log) const {
    Result result;
    result.rows = rowLb_.size();
    ColumnBlock all;
    for (const Column& c : columns_)
        all.add(c.cost, 1.0, c.entries);
    for (const Pair& p : pairs_)
        all.add(p.cost, 1.0, {{p.rowA, p.coefA}, {p.rowB, p.coefB}});
    result.columns = static_cast<size_t>(all.size());
    const int rows = static_cast<int>(rowLb_.size());
    if (log)
        std::fprintf(stderr, "sharding LP: %zu option columns, %zu pair columns, %zu rows\n", columns_.size(),
                     pairs_.size(), result.rows);
    Clp_Simplex* lp = dualSimplex(all, rowLb_, rowUb_, timeLimitSeconds);
    const bool relaxed = Clp_isProvenOptimal(lp) != 0;
    if (relaxed)
        result.lowerBound = Clp_objectiveValue(lp);
    result.timedOut = Clp_status(lp) == 3; // stopped on the time limit
    bool integral = relaxed;
    if (relaxed) {
        const double* x = Clp_getColSolution(lp);
        for (size_t col = 0; col < columns_.size(); ++col)
            integral = integral && (x[col] < 1e-6 || x[col] > 1 - 1e-6);
        if (integral)
            for (size_t col = 0; col < columns_.size(); ++col)
                result.binary.push_back(x[col]);
    }
    Clp_deleteModel(lp);
    if (!relaxed) // infeasible with every pair, or out of time
        return result;
    result.feasible = true;
    result.optimal = integral;
    if (log)
        std::fprintf(stderr, "sharding LP: relaxation %s\n", integral ? "integral" : "fractional, branching");
    if (integral)
        return result;
    // Fractional: branch.
    Cbc_Model* mip = Cbc_newModel();
    Cbc_loadProblem(mip, all.size(), rows, all.start.data(), all.index.data(), all.value.data(),
                    all.lower.data(), all.upper.data(), all.cost.data(), rowLb_.data(), rowUb_.data());
    for (size_t col = 0; col < columns_.size(); ++col)
        Cbc_setInteger(mip, static_cast<int>(col));
    setCbcParameters(mip, timeLimitSeconds, log);
    Cbc_solve(mip);
    result.branched = true;
    const double* x = Cbc_getColSolution(mip);
    if (Cbc_isProvenInfeasible(mip) || !x || Cbc_getObjValue(mip) >= 1e50) {
        result.feasible = false;
        result.timedOut = Cbc_isSecondsLimitReached(mip) != 0;
        Cbc_deleteModel(mip);
        return result;
    }
    for (size_t col = 0; col < columns_.size(); ++col)
        result.binary.push_back(x[col]);
    // Pairs need no integrality (x integral makes them so): CBC's proof covers the ILP.
    result.optimal = Cbc_isProvenOptimal(mip) != 0;
    result.lowerBound =
        std::max(result.lowerBound, result.optimal ? Cbc_getObjValue(mip) : Cbc_getBestPossibleObjValue(mip));
    Cbc_deleteModel(mip);
    return result;
}

PairLp::Relaxation PairLp::relax(double timeLimitSeconds) const {
    Relaxation result;
    ColumnBlock all;
    for (const Column& c : columns_)
        all.add(c.cost, kInfinity, c.entries);
    for (const Pair& p : pairs_)
        all.add(p.cost, kInfinity, {{p.rowA, p.coefA}, {p.rowB, p.coefB}});
    const int rows = static_cast<int>(rowLb_.size());
    Clp_Simplex* lp = dualSimplex(all, rowLb_, rowUb_, timeLimitSeconds);
    result.solved = Clp_isProvenOptimal(lp) != 0;
    if (result.solved) {
        result.objective = Clp_objectiveValue(lp);
        const double* x = Clp_getColSolution(lp);
        result.binary.assign(x, x + columns_.size());
        const double* y = Clp_getRowPrice(lp);
        result.duals.assign(y, y + rows);
    }
    Clp_deleteModel(lp);
    return result;
}
#endif

} // namespace jointscope::sharding
