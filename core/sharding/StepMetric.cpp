#include "sharding/StepMetric.h"

#include "support/Vectorise.h"

#include <algorithm>
#include <limits>

namespace jointscope::sharding {

StepGraph::StepGraph(std::vector<int32_t> start, std::vector<int32_t> to, std::vector<double> cost)
    : outStart_(std::move(start)), outTo_(std::move(to)), outCost_(std::move(cost)) {
    const size_t n = states();
    inStart_.assign(n + 1, 0);
    for (int32_t t : outTo_)
        ++inStart_[static_cast<size_t>(t) + 1];
    for (size_t s = 0; s < n; ++s)
        inStart_[s + 1] += inStart_[s];
    inFrom_.resize(outTo_.size());
    inCost_.resize(outTo_.size());
    std::vector<int32_t> fill(inStart_.begin(), inStart_.end() - 1);
    for (size_t s = 0; s < n; ++s)
        for (int32_t a = outStart_[s]; a < outStart_[s + 1]; ++a) {
            const int32_t slot = fill[outTo_[a]]++;
            inFrom_[slot] = static_cast<int32_t>(s);
            inCost_[slot] = outCost_[a];
        }
}

namespace {

// to[j] = min(to[j], from[j] + add); whether any went down. Four running sums of the drops, as in minOfSums,
// so that the loop vectorises; the rows hold no infinity (see distances()), so a drop is never NaN.
JOINTSCOPE_VECTORISE bool lowerRow(const double* __restrict from, double add, double* __restrict to,
                                   size_t n) {
    double dropped[4] = {0, 0, 0, 0};
    size_t j = 0;
    for (; j + 4 <= n; j += 4)
        for (size_t k = 0; k < 4; ++k) {
            const double via = from[j + k] + add, old = to[j + k];
            const double low = via < old ? via : old;
            to[j + k] = low;
            dropped[k] += old - low;
        }
    for (; j < n; ++j) {
        const double via = from[j] + add, old = to[j];
        const double low = via < old ? via : old;
        to[j] = low;
        dropped[0] += old - low;
    }
    return dropped[0] + dropped[1] + dropped[2] + dropped[3] > 0;
}

} // namespace

std::vector<double> StepGraph::distances() const {
    const size_t n = states();
    // "No path" is a huge finite number while sweeping: infinity minus infinity would make a drop NaN.
    constexpr double kNone = std::numeric_limits<double>::max() / 4;
    std::vector<double> d(n * n, kNone);
    for (size_t s = 0; s < n; ++s)
        d[s * n + s] = 0;
    // Row t holds the distances into t from every source: it pulls, over each arc into t, the row of the
    // arc's tail. Gauss-Seidel sweeps in alternating order until one changes nothing, as in minPlus, with
    // every source at once along each row.
    for (bool ascending = true, changed = true; changed; ascending = !ascending) {
        changed = false;
        for (size_t j = 0; j < n; ++j) {
            const size_t t = ascending ? j : n - 1 - j;
            for (int32_t a = inStart_[t]; a < inStart_[t + 1]; ++a)
                changed =
                    lowerRow(&d[static_cast<size_t>(inFrom_[a]) * n], inCost_[a], &d[t * n], n) || changed;
        }
    }
    std::vector<double> bySource(n * n);
    for (size_t t = 0; t < n; ++t)
        for (size_t f = 0; f < n; ++f) {
            const double x = d[t * n + f];
            bySource[f * n + t] = x < kNone / 2 ? x : std::numeric_limits<double>::infinity();
        }
    return bySource;
}

void StepMetric::row(int32_t k, std::vector<double>& out) const {
    const double* from = &(*distances)[static_cast<size_t>(state[k]) * graph->states()];
    out.resize(state.size());
    for (size_t l = 0; l < state.size(); ++l)
        out[l] = scale * from[state[l]];
}

namespace {

// Bellman-Ford in Gauss-Seidel order, alternating directions, until a sweep changes nothing: each state pulls
// over `pull` (the arcs into it for distances from the labelled states, those out of it for distances to
// them). Paths are a few steps long (one or two per mesh dimension), so a handful of sweeps over the arcs
// settle every state, and no heap is kept. The fixed point is the shortest-path distance from the labels.
void settle(const StepGraph::Arcs& pull, double scale, std::vector<double>& dist) {
    const size_t n = dist.size();
    auto relax = [&](size_t s) {
        double best = dist[s];
        for (int32_t a = pull.start[s]; a < pull.start[s + 1]; ++a) {
            const double via = dist[pull.head[a]] + scale * pull.cost[a];
            best = via < best ? via : best;
        }
        const bool lower = best < dist[s];
        dist[s] = best;
        return lower;
    };
    for (bool ascending = true, changed = true; changed; ascending = !ascending) {
        changed = false;
        for (size_t j = 0; j < n; ++j)
            changed = relax(ascending ? j : n - 1 - j) || changed;
    }
}

} // namespace

std::vector<double> StepGraph::distancesFrom(int32_t source) const {
    std::vector<double> dist(states(), std::numeric_limits<double>::infinity());
    dist[source] = 0;
    settle(in(), 1.0, dist);
    return dist;
}

void MetricProduct::minPlus(const StepMetric& metric, bool forward, const std::vector<double>& h,
                            std::vector<double>& out) {
    dist_.assign(metric.graph->states(), std::numeric_limits<double>::infinity());
    for (size_t k = 0; k < metric.state.size(); ++k)
        dist_[metric.state[k]] = std::min(dist_[metric.state[k]], h[k]);
    settle(forward ? metric.graph->in() : metric.graph->out(), metric.scale, dist_);
    out.resize(metric.state.size());
    for (size_t k = 0; k < metric.state.size(); ++k)
        out[k] = dist_[metric.state[k]];
}

} // namespace jointscope::sharding
