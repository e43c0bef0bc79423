// A capacitated flow network with an exact max-flow (Dinic) and the cut torch takes from networkx.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace jointscope::partition {

using Capacity = int64_t;
// networkx's math.inf: never saturated. Far above any sum of finite capacities we build.
inline constexpr Capacity kInfiniteCapacity = std::numeric_limits<Capacity>::max() / 4;

class FlowNetwork {
public:
    explicit FlowNetwork(uint32_t vertexCount) : firstEdge_(vertexCount + 1, 0), vertexCount_(vertexCount) {}

    uint32_t vertexCount() const { return vertexCount_; }
    void addEdge(uint32_t from, uint32_t to, Capacity capacity) { pending_.push_back({from, to, capacity}); }

    // Builds the residual graph and pushes a maximum flow. Returns its value (kInfiniteCapacity when an
    // all-infinite path joins source and sink).
    Capacity maxFlow(uint32_t source, uint32_t sink);

    // After maxFlow: vertices that can still reach the sink in the residual graph. networkx's minimum_cut
    // returns exactly these as the sink side, so among several minimum cuts torch takes the one whose sink
    // side is smallest (the source side is everything else).
    std::vector<bool> sinkSide(uint32_t sink) const;

    struct Edge {
        uint32_t from, to;
        Capacity capacity;
    };
    // Every edge as added (capacities, not residuals); for visualisation and for comparing max-flow codes.
    std::vector<Edge> edges() const;

    // Vertices on a path of infinite-capacity edges from source to sink (source and sink included), or empty.
    std::vector<uint32_t> infinitePath(uint32_t source, uint32_t sink);

private:
    void build();
    bool levelGraph(uint32_t source, uint32_t sink);
    Capacity augment(uint32_t v, uint32_t sink, Capacity limit);

    std::vector<Edge> pending_;
    // CSR residual graph: edges of vertex v are [firstEdge_[v], firstEdge_[v+1]); edge e's twin is twin_[e].
    std::vector<uint32_t> firstEdge_;
    std::vector<uint32_t> head_;
    std::vector<uint32_t> twin_;
    std::vector<Capacity> residual_;
    std::vector<Capacity> capacity_; // of forward edges; -1 on the reverse twins
    std::vector<bool> infinite_;
    std::vector<int32_t> level_;
    std::vector<uint32_t> nextEdge_;
    uint32_t vertexCount_;
    bool built_ = false;
};

} // namespace jointscope::partition
