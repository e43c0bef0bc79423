#include "sharding/Cost.h"

#include "cost/OpTensors.h"
#include "cost/OpWork.h"
#include "sharding/CommModel.h"
#include "support/EnumNames.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <unordered_map>

namespace jointscope::sharding {

std::string_view collectiveName(Collective c) {
    static constexpr EnumName<Collective> kNames[] = {{Collective::AllGather, "all_gather"},
                                                      {Collective::ReduceScatter, "reduce_scatter"},
                                                      {Collective::AllReduce, "all_reduce"},
                                                      {Collective::AllToAll, "all_to_all"}};
    return nameOf(kNames, c);
}

double collectiveUs(Collective c, double bytes, const DeviceMesh& mesh, size_t meshDim) {
    const double n = static_cast<double>(mesh.shape[meshDim]);
    if (n <= 1 || bytes <= 0)
        return 0;
    if (mesh.comm)
        return mesh.comm->us(c, bytes, meshDim);
    const MeshLink& link = mesh.links[meshDim];
    const double steps = c == Collective::AllReduce ? 2 * (n - 1) : n - 1;
    const double wire = bytes * steps / n;
    return link.latencyUs + steps * link.stepLatencyUs + wire / link.bandwidth * 1e6;
}

std::string Redistribution::str() const {
    std::string out;
    for (const RedistributeStep& s : steps) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s%s(d%zu) %.3gus", out.empty() ? "" : " + ",
                      std::string(collectiveName(s.collective)).c_str(), s.meshDim, s.us);
        out += buf;
    }
    return out;
}

TensorMeta localMeta(const TensorMeta& global, const Placements& p, const DeviceMesh& mesh) {
    TensorMeta local = global;
    local.strides.clear();
    for (size_t d = 0; d < local.sizes.size(); ++d) {
        const int64_t f = shardFactor(p, mesh.shape, static_cast<int32_t>(d));
        if (f > 1) {
            const uint64_t size = cost::concreteSize(local.sizes[d]);
            local.sizes[d] = SymInt{static_cast<int64_t>((size + f - 1) / f), {}};
        }
    }
    return local;
}

namespace {

double tensorBytes(const TensorMeta& t) {
    return static_cast<double>(cost::numel(t)) * static_cast<double>(itemSize(t.dtype));
}

// A layout as a number: 8 bits per mesh dimension (R 0, S(d) 1 + d, P(op) 128 + op).
using LayoutCode = uint64_t;

LayoutCode placementCode(const Placement& p) {
    if (p.isShard())
        return 1 + static_cast<LayoutCode>(p.dim);
    if (p.isPartial())
        return 128 + static_cast<LayoutCode>(p.reduce);
    return 0;
}

// Whether mesh dimension i may change to b: a tensor dimension sharded over several mesh dimensions is split
// by the first one, then within each piece by the next (torch's default shard order), so only its innermost
// shard can be gathered, moved or added; anything else leaves a strided shard, not the layout its placements
// name.
bool innermostShard(const Placements& current, size_t i, const Placement& b) {
    for (size_t k = i + 1; k < current.size(); ++k)
        if (current[k].isShard() && ((current[i].isShard() && current[k].dim == current[i].dim) ||
                                     (b.isShard() && current[k].dim == b.dim)))
            return false;
    return true;
}

LayoutCode layoutCode(const Placements& p) {
    LayoutCode code = 0;
    for (size_t i = 0; i < p.size(); ++i)
        code |= placementCode(p[i]) << (8 * i);
    return code;
}

// A tensor of `full` bytes laid out as `p`: the bytes on one device.
double localBytes(const Placements& p, double full, const DeviceMesh& mesh) {
    double b = full;
    for (size_t i = 0; i < p.size() && i < mesh.shape.size(); ++i)
        if (p[i].isShard())
            b /= static_cast<double>(mesh.shape[i]);
    return b;
}

// Mesh dimension i of `current` changing to b: its collective, or a free step.
RedistributeStep oneStep(const Placements& current, size_t i, const Placement& b, double full,
                         const DeviceMesh& mesh) {
    const Placement& a = current[i];
    const double local = localBytes(current, full, mesh);
    std::optional<Collective> c;
    double bytes = local;
    if (a.isShard() && (b.isReplicate() || b.isPartial())) {
        c = Collective::AllGather;
        bytes = local * static_cast<double>(mesh.shape[i]);
    } else if (a.isShard() && b.isShard()) {
        c = Collective::AllToAll;
    } else if (a.isPartial() && b.isShard()) {
        c = Collective::ReduceScatter;
    } else if (a.isPartial()) {
        c = Collective::AllReduce;
    }
    if (!c)
        return {i, Collective::AllGather, 0, 0};
    return {i, *c, bytes, collectiveUs(*c, bytes, mesh, i)};
}

// Redistribution as torch's min-cost planner sees it (use_min_cost_redistribution_plan): a shortest path over
// layouts, each step changing one mesh dimension with one collective. Steps: S->R all-gather, P->R
// all-reduce, P->S reduce-scatter, S(i)->S(j) all-to-all, R->S and R->P local (free).
class RedistributionPlanner {
public:
    RedistributionPlanner(const Placements& from, const std::vector<const Placements*>& targets,
                          const TensorMeta& global, const DeviceMesh& mesh)
        : mesh_(mesh), full_(tensorBytes(global)), candidates_(from.size()) {
        const auto rank = static_cast<int32_t>(global.sizes.size());
        for (size_t i = 0; i < from.size(); ++i) {
            std::vector<Placement>& c = candidates_[i];
            auto add = [&](const Placement& p) {
                if (std::find(c.begin(), c.end(), p) == c.end())
                    c.push_back(p);
            };
            add(Placement::replicate());
            for (int32_t d = 0; d < rank; ++d)
                add(Placement::shard(d));
            // Partial only where an end has it: nothing gains from making a partial sum on the way.
            add(from[i]);
            for (const Placements* t : targets)
                if (i < t->size())
                    add((*t)[i]);
        }
    }

    // Dijkstra from `from` until `stop` is settled (every layout when stop is null).
    void run(const Placements& from, const Placements* stop) {
        using Item = std::pair<double, LayoutCode>;
        std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
        const LayoutCode start = layoutCode(from);
        const LayoutCode goal = stop ? layoutCode(*stop) : ~LayoutCode{0};
        states_[start] = {0.0, start, {}, from, false};
        queue.push({0.0, start});
        while (!queue.empty()) {
            const auto [d, code] = queue.top();
            queue.pop();
            State& s = states_[code];
            if (s.settled)
                continue;
            s.settled = true;
            if (code == goal)
                return;
            const Placements current = s.layout;
            for (size_t i = 0; i < current.size() && i < mesh_.ndim(); ++i)
                for (const Placement& b : candidates_[i]) {
                    if (b == current[i] || !innermostShard(current, i, b))
                        continue;
                    const RedistributeStep step = stepTo(current, i, b);
                    Placements next = current;
                    next[i] = b;
                    const LayoutCode nextCode = layoutCode(next);
                    auto it = states_.find(nextCode);
                    if (it != states_.end() && (it->second.settled || it->second.us <= d + step.us))
                        continue;
                    states_[nextCode] = {d + step.us, code, step, std::move(next), false};
                    queue.push({d + step.us, nextCode});
                }
        }
    }

    // Every settled layout's cost.
    std::unordered_map<LayoutCode, double> costs() const {
        std::unordered_map<LayoutCode, double> out;
        for (const auto& [code, state] : states_)
            if (state.settled)
                out.emplace(code, state.us);
        return out;
    }

    Redistribution plan(const Placements& from, const Placements& to) const {
        Redistribution r;
        const LayoutCode start = layoutCode(from);
        auto it = states_.find(layoutCode(to));
        if (it == states_.end())
            return r;
        r.us = it->second.us;
        for (LayoutCode code = it->first; code != start;) {
            const State& s = states_.at(code);
            if (s.step.us > 0) // local steps run no collective
                r.steps.push_back(s.step);
            code = s.parent;
        }
        std::reverse(r.steps.begin(), r.steps.end());
        return r;
    }

private:
    struct State {
        double us = 0;
        LayoutCode parent = 0;
        RedistributeStep step;
        Placements layout;
        bool settled = false;
    };

    RedistributeStep stepTo(const Placements& current, size_t i, const Placement& b) const {
        return oneStep(current, i, b, full_, mesh_);
    }

    const DeviceMesh& mesh_;
    double full_;
    std::vector<std::vector<Placement>> candidates_; // per mesh dimension
    std::unordered_map<LayoutCode, State> states_;
};

// Partial reductions a layout list uses, one bit per ReduceOp.
uint8_t partialMask(const std::vector<const Placements*>& layouts) {
    uint8_t mask = 0;
    for (const Placements* p : layouts)
        for (const Placement& x : *p)
            if (x.isPartial())
                mask |= static_cast<uint8_t>(1u << static_cast<unsigned>(x.reduce));
    return mask;
}

} // namespace

// Every layout of one tensor whose placements per mesh dimension come from one list (R, S(0) .. S(rank - 1),
// the partial reductions in play), numbered in mixed radix, with every one-collective step as an arc: a
// search from each of many sources then touches arrays only. Partials no end has are left out as in
// redistribute() (a partial on the way never helps), so the costs are its costs.
class LayoutSpace {
public:
    LayoutSpace(double full, size_t rank, uint8_t partials, const DeviceMesh& mesh) : ndim_(mesh.ndim()) {
        choices_.push_back(Placement::replicate());
        for (size_t d = 0; d < rank; ++d)
            choices_.push_back(Placement::shard(static_cast<int32_t>(d)));
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max})
            if (partials & (1u << static_cast<unsigned>(op)))
                choices_.push_back(Placement::partial(op));
        size_t states = 1;
        for (size_t i = 0; i < ndim_; ++i)
            states *= choices_.size();
        std::vector<int32_t> arcStart, arcTo; // arcs out of state s: [arcStart[s], arcStart[s + 1])
        std::vector<double> arcUs;
        arcStart.reserve(states + 1);
        Placements current(ndim_);
        for (size_t s = 0; s < states; ++s) {
            arcStart.push_back(static_cast<int32_t>(arcTo.size()));
            size_t rest = s;
            for (size_t i = 0; i < ndim_; ++i, rest /= choices_.size())
                current[i] = choices_[rest % choices_.size()];
            size_t stride = 1;
            for (size_t i = 0; i < ndim_; stride *= choices_.size(), ++i) {
                const size_t own = (s / stride) % choices_.size();
                for (size_t c = 0; c < choices_.size(); ++c) {
                    if (c == own || !innermostShard(current, i, choices_[c]))
                        continue;
                    arcTo.push_back(static_cast<int32_t>(s + (c - own) * stride));
                    arcUs.push_back(oneStep(current, i, choices_[c], full, mesh).us);
                }
            }
        }
        arcStart.push_back(static_cast<int32_t>(arcTo.size()));
        steps_ = std::make_shared<const StepGraph>(std::move(arcStart), std::move(arcTo), std::move(arcUs));
    }

    // The layout's number; -1 when a placement is not in the list.
    int32_t index(const Placements& p) const {
        if (p.size() != ndim_)
            return -1;
        int32_t code = 0, stride = 1;
        for (size_t i = 0; i < ndim_; stride *= static_cast<int32_t>(choices_.size()), ++i) {
            const auto it = std::find(choices_.begin(), choices_.end(), p[i]);
            if (it == choices_.end())
                return -1;
            code += static_cast<int32_t>(it - choices_.begin()) * stride;
        }
        return code;
    }

    // The cheapest cost from `source` to every layout; infinity where none reaches.
    const std::vector<double>& costsFrom(int32_t source) {
        auto [it, fresh] = rows_.try_emplace(source);
        if (fresh)
            it->second = steps_->distancesFrom(source);
        return it->second;
    }

    const std::shared_ptr<const StepGraph>& steps() const { return steps_; }

    // The cheapest cost from `source` to `target`; infinity where none reaches. Once some call has asked for
    // many sources, every pair is searched at once.
    double cost(int32_t source, int32_t target) {
        if (pairs_)
            return (*pairs_)[static_cast<size_t>(source) * steps_->states() + static_cast<size_t>(target)];
        return costsFrom(source)[target];
    }
    void expectSources(size_t count) {
        if (!pairs_ && count * 16 > steps_->states())
            allPairs();
    }
    const std::shared_ptr<const std::vector<double>>& allPairs() {
        if (!pairs_) {
            pairs_ = std::make_shared<const std::vector<double>>(steps_->distances());
            connected_ = std::all_of(pairs_->begin(), pairs_->end(),
                                     [](double x) { return x < std::numeric_limits<double>::infinity(); });
        }
        return pairs_;
    }
    // Every layout reaches every other (known once allPairs() ran).
    bool connected() const { return connected_; }

private:
    size_t ndim_;
    std::vector<Placement> choices_;
    std::shared_ptr<const StepGraph> steps_;
    std::unordered_map<int32_t, std::vector<double>> rows_; // by source
    std::shared_ptr<const std::vector<double>> pairs_;      // all of them: [source * states + target]
    bool connected_ = false;
};

Redistribution redistribute(const Placements& from, const Placements& to, const TensorMeta& global,
                            const DeviceMesh& mesh) {
    if (from == to || from.size() != to.size())
        return {};
    RedistributionPlanner planner(from, {&to}, global, mesh);
    planner.run(from, &to);
    return planner.plan(from, to);
}

RedistributionCache::RedistributionCache(const DeviceMesh& mesh) : mesh_(mesh) {}
RedistributionCache::~RedistributionCache() = default;

LayoutSpace* RedistributionCache::space(const TensorMeta& global,
                                        const std::vector<const Placements*>& layouts) {
    const size_t rank = global.sizes.size();
    for (const Placements* p : layouts) {
        if (p->size() != mesh_.ndim())
            return nullptr;
        for (const Placement& x : *p)
            if (x.isShard() && (x.dim < 0 || static_cast<size_t>(x.dim) >= rank))
                return nullptr;
    }
    auto [it, fresh] = spaces_.try_emplace({tensorBytes(global), rank, partialMask(layouts)});
    if (fresh)
        it->second =
            std::make_unique<LayoutSpace>(std::get<0>(it->first), rank, std::get<2>(it->first), mesh_);
    return it->second.get();
}

std::vector<double> RedistributionCache::table(const std::vector<const Placements*>& from,
                                               const std::vector<const Placements*>& to,
                                               const TensorMeta& global, double scale) {
    std::vector<double> out(from.size() * to.size(), 0.0);
    std::vector<const Placements*> all = from;
    all.insert(all.end(), to.begin(), to.end());
    LayoutSpace* s = space(global, all);
    if (!s) {
        for (size_t q = 0; q < from.size(); ++q)
            for (size_t p = 0; p < to.size(); ++p)
                out[q * to.size() + p] = scale * us(*from[q], *to[p], global);
        return out;
    }
    std::vector<int32_t> target;
    for (const Placements* p : to)
        target.push_back(s->index(*p));
    s->expectSources(from.size());
    for (size_t q = 0; q < from.size(); ++q) {
        const int32_t source = s->index(*from[q]);
        for (size_t p = 0; p < to.size(); ++p) {
            const double d = s->cost(source, target[p]);
            // Unreachable reads 0, as us() has it.
            out[q * to.size() + p] = d < std::numeric_limits<double>::infinity() ? scale * d : 0.0;
        }
    }
    return out;
}

RedistributionCache::MetricTable
RedistributionCache::metricTable(const std::vector<const Placements*>& layouts, const TensorMeta& global,
                                 double scale) {
    MetricTable t;
    LayoutSpace* s = space(global, layouts);
    if (!s) {
        t.cost = table(layouts, layouts, global, scale);
        return t;
    }
    StepMetric m{s->steps(), s->allPairs(), {}, scale};
    for (const Placements* p : layouts)
        m.state.push_back(s->index(*p));
    // An unreachable pair reads 0 in the table, which no path over the arcs gives.
    bool reachable = true;
    if (!s->connected())
        for (int32_t from : m.state)
            for (int32_t to : m.state)
                reachable = reachable && s->cost(from, to) < std::numeric_limits<double>::infinity();
    if (reachable)
        t.metric = std::move(m);
    else
        t.cost = table(layouts, layouts, global, scale);
    return t;
}

double RedistributionCache::us(const Placements& from, const Placements& to, const TensorMeta& global) {
    if (from == to || from.size() != to.size())
        return 0;
    if (LayoutSpace* s = space(global, {&from, &to})) {
        const double d = s->cost(s->index(from), s->index(to));
        return d < std::numeric_limits<double>::infinity() ? d : 0.0;
    }
    const Key key{tensorBytes(global), global.sizes.size(), layoutCode(from)};
    auto it = searched_.find(key);
    if (it == searched_.end()) {
        // Every partial as a candidate: a search that serves any target (partials on the way never help,
        // so the costs are those of redistribute()).
        std::vector<Placements> partials;
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Avg, ReduceOp::Max})
            partials.push_back(Placements(from.size(), Placement::partial(op)));
        std::vector<const Placements*> ends;
        for (const Placements& p : partials)
            ends.push_back(&p);
        RedistributionPlanner planner(from, ends, global, mesh_);
        planner.run(from, nullptr);
        it = searched_.emplace(key, planner.costs()).first;
    }
    auto found = it->second.find(layoutCode(to));
    return found == it->second.end() ? 0.0 : found->second;
}

TensorMeta producedTensor(const Graph& graph, NodeId producer, int32_t element) {
    const Node& node = graph.node(producer);
    if (node.outputKind == OutputKind::Tensor && !node.outputs.empty())
        return node.outputs[0];
    const cost::OpTensors t = cost::gatherTensors(graph, producer);
    if (element >= 0 && static_cast<size_t>(element) < t.outputs.size())
        return t.outputs[element];
    return {};
}

void ComputeModel::calibrate(const Graph& graph, const cost::CostModel& profiled) {
    factor_.assign(graph.size(), 1.0);
    calibrated_ = 0;
    for (NodeId id = 0; id < graph.size(); ++id) {
        const cost::NodeCost measured = profiled.cost(graph, id);
        if (measured.source != cost::CostSource::Profiled)
            continue;
        const double roofline = roofline_.timeUs(measured.work);
        if (roofline > 0 && measured.timeUs > 0) {
            factor_[id] = measured.timeUs / roofline;
            ++calibrated_;
        }
    }
}

double computeUs(const Graph& graph, NodeId id, const NodeStrategies& ns, const Strategy& s,
                 const DeviceMesh& mesh, const ComputeModel& model) {
    if (ns.kind != RuleKind::Rule && ns.kind != RuleKind::Unknown)
        return 0;
    cost::OpTensors tensors = cost::gatherTensors(graph, id);
    for (size_t k = 0; k < ns.inputs.size() && k < s.inputs.size(); ++k)
        if (const TensorMeta* t = tensors.input(ns.inputs[k]))
            tensors.setInput(ns.inputs[k], localMeta(*t, s.inputs[k], mesh));
    for (size_t i = 0; i < tensors.outputs.size() && i < s.outputs.size(); ++i)
        if (tensors.outputs[i].known())
            tensors.outputs[i] = localMeta(tensors.outputs[i], s.outputs[i], mesh);
    const cost::OpWork work = cost::opWork(graph.node(id), tensors);
    if (work.free)
        return 0;
    return model.timeUs(id, work);
}

ComputeModel autoparallelComputeModel(cost::DeviceSpec device) {
    if (device.name.find("H100") != std::string::npos)
        device.memoryBandwidth = 3.35 * 1024.0 * 1024.0 * 1024.0 * 1024.0;
    ComputeModel model(cost::RooflineModel(device, cost::Efficiency{0.7, 0.7}, 0.0, cost::Fp32Matmul::Tf32));
    model.setFloorUs(7.0);
    return model;
}

} // namespace jointscope::sharding
