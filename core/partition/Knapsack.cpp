#include "partition/Knapsack.h"

#include "support/EnumNames.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>

#ifdef JOINTSCOPE_HAVE_CBC
#include <Cbc_C_Interface.h>
#endif

namespace jointscope::partition {

namespace {

// torch's dp_knapsack scale: memory is quantized to 1/10000 of its unit.
constexpr double kDpScale = 10000.0;

// Python's round(x) on a float: nearest integer, ties to even (std::nearbyint under the default rounding
// mode).
int64_t quantize(double value) {
    return static_cast<int64_t>(std::nearbyint(value * kDpScale));
}

} // namespace

// Mirrors knapsack.py: greedy_knapsack
KnapsackResult greedyKnapsack(std::span<const double> memory, std::span<const double> runtimes,
                              double maxMemory) {
    assert(memory.size() == runtimes.size());
    const size_t n = runtimes.size();
    std::vector<double> ratio(n);
    for (size_t i = 0; i < n; ++i)
        ratio[i] = memory[i] == 0 ? std::numeric_limits<double>::infinity() : runtimes[i] / memory[i];
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    // Python's sorted(reverse=True) is stable: equal ratios keep index order.
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return ratio[a] > ratio[b]; });

    KnapsackResult result;
    double totalMemory = 0.0;
    for (int i : order) {
        if (totalMemory + memory[i] <= maxMemory) {
            totalMemory += memory[i];
            result.expectedRuntime += runtimes[i];
            result.saved.push_back(i);
        } else {
            result.recomputed.push_back(i);
        }
    }
    return result;
}

// Mirrors knapsack.py: dp_knapsack
//
// torch keeps the whole (n+1) x (Q+1) float32 table and backtracks with dp[i][j] != dp[i-1][j]. That
// inequality is exactly "row i took its item at column j", so this keeps one float32 row and a byte per cell
// for that flag. Columns beyond the sum of all quantized weights hold the same value in every row (every item
// fits there), so Q is capped at that sum: the backtrack visits the same decisions and ends on the same
// value.
KnapsackResult dpKnapsack(std::span<const double> memory, std::span<const double> runtimes,
                          double maxMemory) {
    assert(memory.size() == runtimes.size());
    const size_t n = memory.size();
    std::vector<int64_t> weight(n);
    int64_t totalWeight = 0;
    for (size_t i = 0; i < n; ++i) {
        weight[i] = std::max<int64_t>(quantize(memory[i]), 0);
        totalWeight += weight[i];
    }
    const int64_t capacity = std::min(std::max<int64_t>(quantize(maxMemory), 0), totalWeight);
    const size_t width = static_cast<size_t>(capacity) + 1;

    std::vector<float> prev(width, 0.0f), cur(width);
    std::vector<uint8_t> took(n * width, 0);
    for (size_t i = 0; i < n; ++i) {
        const float runtime = static_cast<float>(runtimes[i]); // torch.tensor(runtime, dtype=torch.float32)
        const size_t w = static_cast<size_t>(weight[i]);
        uint8_t* row = took.data() + i * width;
        if (w == 0) {
            // dp[i, :] = dp[i - 1, :] + current_runtime
            for (size_t j = 0; j < width; ++j) {
                cur[j] = prev[j] + runtime;
                row[j] = cur[j] != prev[j];
            }
        } else {
            // dp[i, w:] = maximum(dp[i - 1, w:], dp[i - 1, :-w] + current_runtime): the item is taken where
            // the candidate is strictly larger.
            const size_t keep = std::min(w, width);
            std::copy(prev.begin(), prev.begin() + static_cast<std::ptrdiff_t>(keep), cur.begin());
            for (size_t j = keep; j < width; ++j) {
                const float candidate = prev[j - w] + runtime;
                const bool take = candidate > prev[j];
                cur[j] = take ? candidate : prev[j];
                row[j] = take;
            }
        }
        std::swap(prev, cur);
    }

    KnapsackResult result;
    size_t j = static_cast<size_t>(capacity);
    for (size_t i = n; i-- > 0;) {
        if (took[i * width + j]) {
            result.saved.push_back(static_cast<int>(i));
            j -= static_cast<size_t>(weight[i]);
        } else {
            result.recomputed.push_back(static_cast<int>(i));
        }
    }
    std::reverse(result.saved.begin(),
                 result.saved.end()); // saved_items.reverse(); recomputed stays descending
    result.expectedRuntime = static_cast<double>(prev[static_cast<size_t>(capacity)]);
    return result;
}

#ifdef JOINTSCOPE_HAVE_CBC
namespace {

// One CBC solve of max sum(runtime * x) s.t. sum(memory * x) <= rhs, x binary. Returns the 0/1 choice.
// Each choice of `unlike` is excluded by a row of its own (a solution differs from it in one item at least).
// Returns an empty choice when the exclusions leave none.
Expected<std::vector<bool>> solveWithCbc(std::span<const double> memory, std::span<const double> runtimes,
                                         double rhs, std::span<const std::vector<bool>> unlike = {}) {
    const int n = static_cast<int>(memory.size());
    // CBC's tolerances are absolute: scale the objective so that the largest runtime is 1.
    double largest = 0;
    for (double r : runtimes)
        largest = std::max(largest, std::abs(r));
    const double scale = largest > 0 ? 1.0 / largest : 1.0;

    // Column-major: each item's memory in row 0, and per excluded choice k its +1 (not in the choice) or -1
    // (in it) in row 1 + k, which then reads sum(x outside) - sum(x inside) >= 1 - |inside|.
    const int rows = 1 + static_cast<int>(unlike.size());
    const double infinity = std::numeric_limits<double>::infinity();
    std::vector<double> rowLower(size_t(rows), -infinity), rowUpper(size_t(rows), infinity);
    rowUpper[0] = rhs;
    for (size_t k = 0; k < unlike.size(); ++k)
        rowLower[k + 1] = 1.0 - double(std::count(unlike[k].begin(), unlike[k].end(), true));
    std::vector<int> start(n + 1), index;
    std::vector<double> value;
    for (int i = 0; i < n; ++i) {
        start[i] = static_cast<int>(index.size());
        index.push_back(0);
        value.push_back(memory[i]);
        for (size_t k = 0; k < unlike.size(); ++k) {
            index.push_back(int(k) + 1);
            value.push_back(unlike[k][size_t(i)] ? -1.0 : 1.0);
        }
    }
    start[n] = static_cast<int>(index.size());
    std::vector<double> lower(n, 0.0), upper(n, 1.0), objective(n);
    for (int i = 0; i < n; ++i) {
        objective[i] = -runtimes[i] * scale; // minimize -runtime, as torch's c = -runtimes
        if (memory[i] > rhs)
            upper[i] = 0.0; // can never fit; saves CBC the work
    }

    Cbc_Model* model = Cbc_newModel();
    Cbc_loadProblem(model, n, rows, start.data(), index.data(), value.data(), lower.data(), upper.data(),
                    objective.data(), rowLower.data(), rowUpper.data());
    for (int i = 0; i < n; ++i)
        Cbc_setInteger(model, i);
    Cbc_setLogLevel(model, 0);
    Cbc_setParameter(model, "log", "0");
    Cbc_setParameter(model, "slog", "0");
    Cbc_setParameter(model, "primalT", "1e-9");
    Cbc_setParameter(model, "integerT", "1e-9");
    // A single knapsack row gains little from preprocessing and cut generation; off, solves are ~25% faster.
    Cbc_setParameter(model, "preprocess", "off");
    Cbc_setParameter(model, "cuts", "off");
    Cbc_setAllowableGap(model, 1e-12);
    Cbc_setAllowableFractionGap(model, 0.0);
    Cbc_solve(model);
    const bool optimal = Cbc_isProvenOptimal(model) != 0;
    std::vector<bool> chosen(n, false);
    if (optimal) {
        const double* x = Cbc_getColSolution(model);
        for (int i = 0; i < n; ++i)
            chosen[i] = x[i] > 0.5;
    }
    const bool infeasible = Cbc_isProvenInfeasible(model) != 0;
    Cbc_deleteModel(model);
    if (!unlike.empty() && infeasible)
        return std::vector<bool>(); // the excluded choice was the only one
    if (!optimal)
        return makeError({}, "ilp knapsack: CBC found no proven optimum");
    return chosen;
}

// The chosen items' total of `values` (their memory, or their runtime).
double sumChosen(const std::vector<bool>& chosen, std::span<const double> values) {
    double sum = 0;
    for (size_t i = 0; i < chosen.size(); ++i)
        if (chosen[i])
            sum += values[i];
    return sum;
}

// Up to `limit` choices other than `chosen` that save as much runtime within maxMemory: the best choice
// unlike those found so far, while it is as good (relative 1e-9: sums of the same runtimes in another order).
std::vector<std::vector<bool>> otherOptima(std::span<const double> memory, std::span<const double> runtimes,
                                           double rhs, double maxMemory, const std::vector<bool>& chosen,
                                           size_t limit) {
    const double best = sumChosen(chosen, runtimes);
    std::vector<std::vector<bool>> found = {chosen};
    while (found.size() <= limit) {
        Expected<std::vector<bool>> other = solveWithCbc(memory, runtimes, rhs, found);
        if (!other || other->empty() || sumChosen(*other, memory) > maxMemory ||
            std::abs(sumChosen(*other, runtimes) - best) > 1e-9 * std::max(1.0, std::abs(best)))
            break;
        found.push_back(other.take());
    }
    found.erase(found.begin());
    return found;
}

} // namespace
#endif

// Mirrors knapsack.py: ilp_knapsack
Expected<KnapsackResult> ilpKnapsack(std::span<const double> memory, std::span<const double> runtimes,
                                     double maxMemory) {
    assert(memory.size() == runtimes.size());
#ifdef JOINTSCOPE_HAVE_CBC
    KnapsackResult result;
    if (memory.empty())
        return result;
    // CBC accepts a row violated by its primal tolerance; torch's constraint is exact. Tighten the right-hand
    // side by any violation found and solve again.
    double rhs = maxMemory;
    for (int attempt = 0; attempt < 4; ++attempt) {
        Expected<std::vector<bool>> chosen = solveWithCbc(memory, runtimes, rhs);
        if (!chosen)
            return chosen.error();
        const double used = sumChosen(*chosen, memory);
        if (used > maxMemory) {
            rhs -= 2 * (used - maxMemory);
            continue;
        }
        for (size_t i = 0; i < memory.size(); ++i) {
            if ((*chosen)[i]) {
                result.saved.push_back(static_cast<int>(i));
                result.expectedRuntime += runtimes[i];
            } else {
                result.recomputed.push_back(static_cast<int>(i));
            }
        }
        result.otherOptimum = !otherOptima(memory, runtimes, rhs, maxMemory, *chosen, 1).empty();
        return result;
    }
    return makeError({}, "ilp knapsack: CBC's solution keeps exceeding the memory budget");
#else
    (void)memory;
    (void)runtimes;
    (void)maxMemory;
    return makeError({}, "ilp knapsack: jointscope was built without COIN-OR CBC");
#endif
}

std::vector<std::vector<int>> ilpOtherOptima(std::span<const double> memory, std::span<const double> runtimes,
                                             double maxMemory, const KnapsackResult& result, size_t limit) {
    std::vector<std::vector<int>> recomputed;
#ifdef JOINTSCOPE_HAVE_CBC
    std::vector<bool> chosen(memory.size(), false);
    for (int i : result.saved)
        chosen[size_t(i)] = true;
    for (const std::vector<bool>& other :
         otherOptima(memory, runtimes, maxMemory, maxMemory, chosen, limit)) {
        recomputed.emplace_back();
        for (size_t i = 0; i < other.size(); ++i)
            if (!other[i])
                recomputed.back().push_back(int(i));
    }
#else
    (void)memory;
    (void)runtimes;
    (void)maxMemory;
    (void)result;
    (void)limit;
#endif
    return recomputed;
}

namespace {
constexpr EnumName<KnapsackSolver> kSolverNames[] = {
    {KnapsackSolver::Greedy, "greedy"}, {KnapsackSolver::Dp, "dp"}, {KnapsackSolver::Ilp, "ilp"}};
} // namespace

std::optional<KnapsackSolver> parseKnapsackSolver(std::string_view name) {
    return valueNamed(kSolverNames, name);
}

std::string_view knapsackSolverName(KnapsackSolver solver) {
    return nameOf(kSolverNames, solver);
}

// Mirrors partitioners.py: _optimize_runtime_with_given_memory
Expected<KnapsackResult> solveKnapsack(KnapsackSolver solver, std::span<const double> memory,
                                       std::span<const double> runtimes, double maxMemory) {
    switch (solver) {
    case KnapsackSolver::Greedy:
        return greedyKnapsack(memory, runtimes, maxMemory);
    case KnapsackSolver::Dp:
        return dpKnapsack(memory, runtimes, maxMemory);
    case KnapsackSolver::Ilp:
        return ilpKnapsack(memory, runtimes, maxMemory);
    }
    return makeError({}, "unknown knapsack solver");
}

} // namespace jointscope::partition
