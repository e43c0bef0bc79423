// The placement ILP's shape: binary option columns, rows over them, and many continuous pair columns (one per
// producer / consumer placement pair of an edge) that each sit in exactly two marginal rows. Most pair
// columns never pay for themselves, so they are priced rather than loaded: CLP solves the relaxation on the
// pair columns in play, the duals price the others, the ones with negative reduced cost join, until none is
// left (column generation: the result is the relaxation over every pair). CBC branches only when that optimum
// is fractional, on the columns generated so far.
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

    struct Result {
        bool feasible = false;
        bool optimal = false;       // proven
        std::vector<double> binary; // value per binary column, in addBinary order
        size_t columns = 0;
        size_t rows = 0;
        bool branched = false; // the relaxation was fractional: CBC ran
    };
    // Without CBC in the build, returns an infeasible result.
    Result solve(double timeLimitSeconds, bool log) const;

private:
    struct Column {
        double cost = 0;
        std::vector<std::pair<int, double>> entries; // row, coefficient
    };
    struct Pair {
        double cost;
        int rowA, rowB;
    };
    std::vector<Column> columns_; // the binaries: columns 0 .. n-1 of every model built
    std::vector<double> rowLb_, rowUb_;
    std::vector<Pair> pairs_;
};

} // namespace jointscope::sharding
