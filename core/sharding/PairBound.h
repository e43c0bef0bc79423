// The placement ILP on meshes of three and four dimensions, where a node has hundreds of options and the full
// LP is too large to solve outright: a Lagrangian lower bound improved by TRW-S, with plans from its rounding
// and from restricted ILPs over the options its duals leave (docs/sharding.md, "Meshes of three and four
// dimensions").
//
// A restricted LP holds a few options per variable. Its row duals, completed to every key of every edge by
// c-transforms (the largest potentials the edge's cost table allows), are a feasible dual of the whole LP:
// Σ_v min over all of v's options of (unary + Σ edge potentials) is then a true lower bound on the ILP's
// optimum (the Lagrangian / Lasdon bound of Dantzig-Wolfe column generation), and TRW-S's passes start from
// those potentials. Any potentials give such a bound, so the ascent can never make it invalid.
#pragma once

#include "sharding/PairModel.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace jointscope::sharding {

// One linear row over the options beside the model: low ≤ Σ_v weight[v][chosen option] ≤ high (the
// parameter-memory window: a variable's weight is the local bytes of the parameters it places). Empty
// weights: no row.
struct LinearBudget {
    std::vector<std::vector<double>> weight; // per variable, per option
    double low = 0, high = 0;
    bool active() const { return !weight.empty(); }
    double of(const std::vector<int32_t>& choice) const;
    bool holds(const std::vector<int32_t>& choice) const;
};

struct GenerationOptions {
    double gap = 0.01; // stop once (cost - lower bound) / cost is at most this
    // Of column generation before the ascent takes over. One (the seeds' restricted LP) measured fastest: on
    // a LLaMA block over 4x4x4 six rounds took longer than the whole solve after one.
    int maxRounds = 1;
    size_t addPerVariable = 4;    // options with the most negative reduced cost joining per round
    double stallGain = 1e-4;      // a round improving the plan by less than this (relative) is stale
    double generationShare = 0.5; // of the time limit for columns; the rest tightens the bound
    int boundEvery = 4;           // passes between evaluations of the bound (a full pass of its own)
    // Passes between restricted ILPs (a multiple of boundEvery); doubled, up to 8 times, after each that
    // finds no better plan.
    int primalEvery = 8;
    size_t poolPerVariable = 8; // a restricted ILP's options, per variable at most
    double timeLimitSeconds = 60;
    bool log = false;
    // Relaxed into the bound with a multiplier that follows the subgradient; every plan kept holds it.
    LinearBudget budget;
};

struct GenerationResult {
    bool feasible = false;
    std::vector<int32_t> choice; // option per variable
    double cost = 0;             // of `choice` in the model
    double lowerBound = 0;       // on the model's optimum
    int rounds = 0;              // of column generation
    int sweeps = 0;              // TRW-S passes
    size_t activeOptions = 0;    // options in the last restricted LP
    bool timedOut = false;
};

// The model's objective for one option per variable; infinity when a pair is forbidden. Self-loop edges
// (a == b) cost their option's own pair.
double pairObjective(const PairModel& model, const std::vector<int32_t>& choice);

// The decomposed solve on a model without eliminations, with options.budget its only row beyond its own.
GenerationResult solveByGeneration(const PairModel& model, const GenerationOptions& options);

} // namespace jointscope::sharding
