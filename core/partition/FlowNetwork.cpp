#include "partition/FlowNetwork.h"

#include <algorithm>

namespace jointscope::partition {

void FlowNetwork::build() {
    std::vector<uint32_t> degree(vertexCount_ + 1, 0);
    for (const Edge& e : pending_) {
        ++degree[e.from];
        ++degree[e.to];
    }
    firstEdge_.assign(vertexCount_ + 1, 0);
    for (uint32_t v = 0; v < vertexCount_; ++v)
        firstEdge_[v + 1] = firstEdge_[v] + degree[v];
    const size_t edgeCount = firstEdge_[vertexCount_];
    head_.assign(edgeCount, 0);
    twin_.assign(edgeCount, 0);
    residual_.assign(edgeCount, 0);
    capacity_.assign(edgeCount, -1);
    infinite_.assign(edgeCount, false);
    std::vector<uint32_t> fill(firstEdge_.begin(), firstEdge_.end() - 1);
    for (const Edge& e : pending_) {
        const uint32_t forward = fill[e.from]++;
        const uint32_t backward = fill[e.to]++;
        head_[forward] = e.to;
        head_[backward] = e.from;
        twin_[forward] = backward;
        twin_[backward] = forward;
        residual_[forward] = e.capacity;
        capacity_[forward] = e.capacity;
        infinite_[forward] = e.capacity >= kInfiniteCapacity;
    }
    pending_.clear();
    pending_.shrink_to_fit();
    built_ = true;
}

bool FlowNetwork::levelGraph(uint32_t source, uint32_t sink) {
    level_.assign(vertexCount_, -1);
    std::vector<uint32_t> queue;
    queue.reserve(vertexCount_);
    queue.push_back(source);
    level_[source] = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
        const uint32_t v = queue[i];
        for (uint32_t e = firstEdge_[v]; e < firstEdge_[v + 1]; ++e) {
            const uint32_t w = head_[e];
            if (residual_[e] > 0 && level_[w] < 0) {
                level_[w] = level_[v] + 1;
                queue.push_back(w);
            }
        }
    }
    return level_[sink] >= 0;
}

// Iterative blocking-flow DFS along the level graph.
Capacity FlowNetwork::augment(uint32_t start, uint32_t sink, Capacity limit) {
    struct Frame {
        uint32_t vertex;
        uint32_t viaEdge;
    };
    std::vector<Frame> path;
    Capacity total = 0;
    path.push_back({start, 0});
    while (!path.empty() && total < limit) {
        const uint32_t v = path.back().vertex;
        if (v == sink) {
            Capacity push = limit - total;
            for (size_t i = 1; i < path.size(); ++i)
                push = std::min(push, residual_[path[i].viaEdge]);
            for (size_t i = 1; i < path.size(); ++i) {
                residual_[path[i].viaEdge] -= push;
                residual_[twin_[path[i].viaEdge]] += push;
            }
            total += push;
            // Retreat to the vertex before the first saturated edge.
            size_t keep = path.size();
            for (size_t i = 1; i < path.size(); ++i)
                if (residual_[path[i].viaEdge] == 0) {
                    keep = i;
                    break;
                }
            path.resize(keep);
            continue;
        }
        bool advanced = false;
        for (uint32_t& e = nextEdge_[v]; e < firstEdge_[v + 1]; ++e) {
            const uint32_t w = head_[e];
            if (residual_[e] > 0 && level_[w] == level_[v] + 1) {
                path.push_back({w, e});
                advanced = true;
                break;
            }
        }
        if (!advanced) {
            level_[v] = -1; // dead end for this phase
            path.pop_back();
            if (!path.empty())
                ++nextEdge_[path.back().vertex];
        }
    }
    return total;
}

Capacity FlowNetwork::maxFlow(uint32_t source, uint32_t sink) {
    if (!built_)
        build();
    if (!infinitePath(source, sink).empty())
        return kInfiniteCapacity;
    Capacity flow = 0;
    while (levelGraph(source, sink)) {
        nextEdge_.assign(firstEdge_.begin(), firstEdge_.end() - 1);
        flow += augment(source, sink, kInfiniteCapacity);
    }
    return flow;
}

std::vector<FlowNetwork::Edge> FlowNetwork::edges() const {
    if (!built_)
        return std::vector<Edge>(pending_.begin(), pending_.end());
    std::vector<Edge> out;
    for (uint32_t v = 0; v < vertexCount_; ++v)
        for (uint32_t e = firstEdge_[v]; e < firstEdge_[v + 1]; ++e)
            if (capacity_[e] >= 0)
                out.push_back({v, head_[e], capacity_[e]});
    return out;
}

std::vector<bool> FlowNetwork::sinkSide(uint32_t sink) const {
    std::vector<bool> reaches(vertexCount_, false);
    std::vector<uint32_t> stack{sink};
    reaches[sink] = true;
    while (!stack.empty()) {
        const uint32_t w = stack.back();
        stack.pop_back();
        // v reaches w when the residual edge v->w is positive; that edge is the twin of an edge stored at w.
        for (uint32_t e = firstEdge_[w]; e < firstEdge_[w + 1]; ++e) {
            const uint32_t v = head_[e];
            if (!reaches[v] && residual_[twin_[e]] > 0) {
                reaches[v] = true;
                stack.push_back(v);
            }
        }
    }
    return reaches;
}

std::vector<uint32_t> FlowNetwork::infinitePath(uint32_t source, uint32_t sink) {
    if (!built_)
        build();
    constexpr uint32_t kUnseen = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> parent(vertexCount_, kUnseen);
    std::vector<uint32_t> queue{source};
    parent[source] = source;
    for (size_t i = 0; i < queue.size() && parent[sink] == kUnseen; ++i) {
        const uint32_t v = queue[i];
        for (uint32_t e = firstEdge_[v]; e < firstEdge_[v + 1]; ++e)
            if (infinite_[e] && parent[head_[e]] == kUnseen) {
                parent[head_[e]] = v;
                queue.push_back(head_[e]);
            }
    }
    std::vector<uint32_t> path;
    if (parent[sink] == kUnseen)
        return path;
    for (uint32_t v = sink; v != source; v = parent[v])
        path.push_back(v);
    path.push_back(source);
    std::reverse(path.begin(), path.end());
    return path;
}

} // namespace jointscope::partition
