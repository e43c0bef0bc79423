// The placement ILP's shape: binary option columns, rows over them, and many continuous pair columns (one per
// producer / consumer placement pair of an edge) that each sit in exactly two marginal rows. CLP's dual
// simplex solves the relaxation, which is nearly always integral; CBC branches only when it is not.
#pragma once

#include <string>
#include <vector>

namespace jointscope::sharding {

class PairLp {
public:
    int addBinary(double cost);
    void addCost(int col, double delta);
    // sense: 'E', 'L' or 'G'. Returns the row.
    int addRow(const std::vector<int>& cols, const std::vector<double>& coefs, char sense, double rhs);
    // A continuous column in [0, 1] with coefficient 1 in rows a and b.
    void addPair(double cost, int rowA, int rowB);
    // A continuous column in [0, 1] with coefficient -1 in row `from` and 1 in row `to`: a flow arc.
    void addArc(double cost, int from, int to);

    struct Result {
        bool feasible = false;
        bool optimal = false;       // proven
        std::vector<double> binary; // value per binary column, in addBinary order
        size_t columns = 0;
        size_t rows = 0;
        bool branched = false; // the relaxation was fractional: CBC ran
        bool timedOut = false; // no answer within the time limit
        // A lower bound on the ILP's optimum: the relaxation's objective, or CBC's best bound after
        // branching; -infinity when there is none.
        double lowerBound = -1e300;
    };
    // Without CBC in the build, returns an infeasible result.
    Result solve(double timeLimitSeconds, bool log) const;

    // The LP relaxation alone, every column unbounded above (the exactly-one rows bound them), so that the
    // row duals price every column: reduced cost = cost - Σ coefficient x dual.
    struct Relaxation {
        bool solved = false; // proven optimal
        double objective = 0;
        std::vector<double> binary; // value per binary column
        std::vector<double> duals;  // per row
    };
    Relaxation relax(double timeLimitSeconds) const;

private:
    struct Column {
        double cost = 0;
        std::vector<std::pair<int, double>> entries; // row, coefficient
    };
    struct Pair {
        double cost;
        int rowA, rowB;
        double coefA, coefB;
    };
    std::vector<Column> columns_; // the binaries: columns 0 .. n-1 of every model built
    std::vector<double> rowLb_, rowUb_;
    std::vector<Pair> pairs_;
};

} // namespace jointscope::sharding
