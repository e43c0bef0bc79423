// The 0-1 knapsack solvers of torch's activation memory budget
// (torch/_functorch/_activation_checkpointing/knapsack.py).
//
// The items are the banned-but-recomputable nodes of the min-cut: memory[i] is a node's normalized size,
// runtimes[i] its estimated runtime. A solver picks the items to SAVE within maxMemory so that the saved
// runtime is largest; every other item is recomputed. Item indices, their order in the result and
// tie-breaking follow torch's code, so a partition built on these results equals torch's.
#pragma once

#include "support/Diagnostic.h"

#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace jointscope::partition {

struct KnapsackResult {
    double expectedRuntime = 0;  // runtime of the saved items
    std::vector<int> saved;      // indices into the inputs, in torch's order
    std::vector<int> recomputed; // indices into the inputs, in torch's order
    // ilp: another choice of items saves as much runtime within maxMemory. The optimum is not unique and
    // scipy's milp may return the other one (the greedy and dp solvers' choices are torch's own).
    bool otherOptimum = false;
};

// Mirrors knapsack.py: greedy_knapsack. Items by runtime / memory, highest first (stable: equal ratios keep
// index order); each is saved when it still fits. saved and recomputed are in that ratio order.
// torch divides by zero on a zero-memory item; here its ratio is +inf (it always fits, so it is saved first).
KnapsackResult greedyKnapsack(std::span<const double> memory, std::span<const double> runtimes,
                              double maxMemory);

// Mirrors knapsack.py: dp_knapsack. Memory quantized to round(m * 10000) (round half to even, as Python),
// runtimes and the DP table in float32, backtracking from the last item. saved is ascending, recomputed
// descending (torch's order); expectedRuntime is the float32 table value. A negative maxMemory acts as 0
// (torch's caller passes max(budget, 0)).
KnapsackResult dpKnapsack(std::span<const double> memory, std::span<const double> runtimes, double maxMemory);

// Mirrors knapsack.py: ilp_knapsack, solved exactly with COIN-OR CBC instead of scipy's milp. saved and
// recomputed are ascending; expectedRuntime is the sum of the saved runtimes. Among several optima the one
// chosen may differ from scipy's: otherOptimum says when there are several. Fails when built without CBC.
Expected<KnapsackResult> ilpKnapsack(std::span<const double> memory, std::span<const double> runtimes,
                                     double maxMemory);
// ilp: up to `limit` optimal choices other than `result`'s, each as its recomputed indices (ascending), found
// by solving again with every choice found so far excluded. Empty when `result` is the only optimum, or
// without CBC.
std::vector<std::vector<int>> ilpOtherOptima(std::span<const double> memory, std::span<const double> runtimes,
                                             double maxMemory, const KnapsackResult& result, size_t limit);

// torch._functorch.config.activation_memory_budget_solver values.
enum class KnapsackSolver { Greedy, Dp, Ilp };
std::optional<KnapsackSolver> parseKnapsackSolver(std::string_view name); // "greedy", "dp", "ilp"
std::string_view knapsackSolverName(KnapsackSolver solver);

// Mirrors partitioners.py: _optimize_runtime_with_given_memory (the solver dispatch).
Expected<KnapsackResult> solveKnapsack(KnapsackSolver solver, std::span<const double> memory,
                                       std::span<const double> runtimes, double maxMemory);

} // namespace jointscope::partition
