// Cost tables that are shortest-path metrics over a sparse graph: a tensor's redistribution costs, where the
// layouts are states and one-collective steps are arcs. A min-sum product with such a table,
// min_k (h[k] + cost(k, l)) for every l, is a shortest-path search from every labelled key at once: on a 4-D
// mesh a tensor has up to 1,296 layouts and some 15 steps out of each, so a few sweeps over the arcs replace
// a pass over the table's 1.7M entries (the TRW-S messages of PairBound.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace jointscope::sharding {

// A directed graph with non-negative arc costs in compressed rows, and its reverse.
class StepGraph {
public:
    // Arcs out of state s: [start[s], start[s + 1]) of `to` and `cost`.
    StepGraph(std::vector<int32_t> start, std::vector<int32_t> to, std::vector<double> cost);

    size_t states() const { return outStart_.size() - 1; }
    size_t arcs() const { return outTo_.size(); }
    // The shortest path from `source` to every state; infinity where none leads.
    std::vector<double> distancesFrom(int32_t source) const;
    // Every pair's shortest path, result[source * states() + target]; infinity where none leads.
    std::vector<double> distances() const;

    struct Arcs {
        const std::vector<int32_t>& start;
        const std::vector<int32_t>& head;
        const std::vector<double>& cost;
    };
    Arcs out() const { return {outStart_, outTo_, outCost_}; }
    Arcs in() const { return {inStart_, inFrom_, inCost_}; }

private:
    std::vector<int32_t> outStart_, outTo_, inStart_, inFrom_;
    std::vector<double> outCost_, inCost_;
};

// A table over keys whose entry (k, l) is `scale` times the shortest path from state[k] to state[l], read
// from the graph's distances: every table over one graph shares them (on a 4-D mesh a dense table per edge
// would take gigabytes).
struct StepMetric {
    std::shared_ptr<const StepGraph> graph;
    std::shared_ptr<const std::vector<double>> distances; // graph->distances()
    std::vector<int32_t> state;                           // per key
    double scale = 1;
    double at(int32_t k, int32_t l) const {
        return scale *
               (*distances)[static_cast<size_t>(state[k]) * graph->states() + static_cast<size_t>(state[l])];
    }
    // Row k over every key: out[l] = at(k, l).
    void row(int32_t k, std::vector<double>& out) const;
};

// Min-sum products through step metrics, with the search's buffers kept between calls.
class MetricProduct {
public:
    // forward: out[l] = min_k (h[k] + cost(k, l)); backward: out[k] = min_l (cost(k, l) + h[l]). An infinite
    // h is no source; a key nothing reaches reads infinity.
    void minPlus(const StepMetric& metric, bool forward, const std::vector<double>& h,
                 std::vector<double>& out);

private:
    std::vector<double> dist_;
};

} // namespace jointscope::sharding
