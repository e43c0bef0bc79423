// The placement ILP before it becomes an LP: one variable per node class choosing one of its options, a unary
// cost per option, and edges whose cost depends on a key of each side's option (the placement one side
// produces and the other needs). Reductions on this model keep at least one optimum of the ILP, so the plan's
// cost is unchanged while CLP gets far fewer columns.
#pragma once

#include "sharding/PairLp.h"
#include "sharding/StepMetric.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace jointscope::sharding {

struct PairModel {
    static constexpr double kForbidden = std::numeric_limits<double>::infinity();

    struct Variable {
        std::vector<double> unary; // per option
        std::vector<char> alive;   // per option: 0 when pinned out or reduced away
        // In a row this model does not see (the parameter-memory window): only infeasible options may go.
        bool frozen = false;
        bool eliminated = false; // folded into its neighbours (eliminateChains); chosen after the LP
    };

    struct Edge {
        int32_t a = 0, b = 0;            // variables; a == b when copies of a layer feed one another
        std::vector<int32_t> keyA, keyB; // key of each option of a / of b
        size_t keysA = 0, keysB = 0;
        // keysA x keysB, row-major; kForbidden where the pair may not occur. Empty when `metric` gives it.
        std::vector<double> cost;
        // The two sides must pick the same key (both sides index one key set): emitted as equality rows.
        bool equality = false;
        // Both sides index one key set of placements of one tensor, and the table covers every pair of them
        // (a redistribution cost): addToLp may route it as a flow (see there).
        bool sharedKeys = false;
        bool removed = false; // its variable was eliminated
        // A table that is a shortest-path metric over sparse arcs (sharedKeys): read from the distances its
        // space shares, and min-sum products with it search the arcs.
        std::optional<StepMetric> metric;
        double at(int32_t ka, int32_t kb) const {
            return metric ? metric->at(ka, kb) : cost[static_cast<size_t>(ka) * keysB + kb];
        }
    };

    // A variable folded into its neighbours, with the edges it had then: once they are chosen, it takes
    // its cheapest option against them.
    struct Elimination {
        int32_t var;
        std::vector<Edge> edges;
    };

    std::vector<Variable> vars;
    std::vector<Edge> edges;
    std::vector<Elimination> eliminations; // in order

    size_t aliveOptions() const;
    // The option of every variable: the LP's for the variables in it (`x` from addToLp, `binary` its
    // values), then the eliminated ones in reverse order.
    std::vector<int32_t> choices(const std::vector<std::vector<int>>& x,
                                 const std::vector<double>& binary) const;
};

// Dead-end elimination (Goldstein's criterion): option b of a variable goes when another option a is never
// worse, whatever the neighbours pick: unary(a) + Σ_edges max_l [cost(a, l) − cost(b, l)] ≤ unary(b). Options
// no neighbour option can pair with go too. Repeats until nothing changes. Returns the passes made.
int eliminateDominated(PairModel& model);

// Variable elimination of min-sum (bucket elimination) on variables with at most two edges and no other
// constraint: a leaf's cheapest reply to each neighbour key joins the neighbour's unary costs, and a variable
// between two others becomes one edge between them whose cost is the minimum through it (a chain of views
// becomes one table). A variable with two edges goes only when the new table is no larger than the two it
// replaces. Exact. Returns the number of variables eliminated.
size_t eliminateChains(PairModel& model);

// Binary columns for the alive options (-1 for the others), exactly-one rows, and the edges: equality rows,
// a cost folded into the other side when one side has a single key left, or a transportation block of pair
// columns between the two sides' alive keys.
std::vector<std::vector<int>> addToLp(const PairModel& model, PairLp& lp);

} // namespace jointscope::sharding
