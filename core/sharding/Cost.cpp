#include "sharding/Cost.h"

#include "cost/OpTensors.h"
#include "cost/OpWork.h"

#include <cstdio>
#include <optional>

namespace jointscope::sharding {

std::string_view collectiveName(Collective c) {
    switch (c) {
    case Collective::AllGather:
        return "all_gather";
    case Collective::ReduceScatter:
        return "reduce_scatter";
    case Collective::AllReduce:
        return "all_reduce";
    case Collective::AllToAll:
        return "all_to_all";
    }
    return "?";
}

double collectiveUs(Collective c, double bytes, const DeviceMesh& mesh, size_t meshDim) {
    const double n = static_cast<double>(mesh.shape[meshDim]);
    if (n <= 1 || bytes <= 0)
        return 0;
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

} // namespace

Redistribution redistribute(const Placements& from, const Placements& to, const TensorMeta& global,
                            const DeviceMesh& mesh) {
    Redistribution r;
    Placements current = from;
    const double full = tensorBytes(global);
    auto localBytes = [&](const Placements& p) {
        double b = full;
        for (size_t i = 0; i < p.size() && i < mesh.shape.size(); ++i)
            if (p[i].isShard())
                b /= static_cast<double>(mesh.shape[i]);
        return b;
    };
    for (size_t i = 0; i < from.size() && i < to.size() && i < mesh.ndim(); ++i) {
        const Placement a = current[i];
        const Placement b = to[i];
        if (a == b)
            continue;
        const double local = localBytes(current);
        const double n = static_cast<double>(mesh.shape[i]);
        std::optional<Collective> c;
        double bytes = local;
        if (a.isShard() && (b.isReplicate() || b.isPartial())) {
            c = Collective::AllGather;
            bytes = local * n;
        } else if (a.isShard() && b.isShard()) {
            c = Collective::AllToAll;
        } else if (a.isPartial() && b.isShard()) {
            c = Collective::ReduceScatter;
        } else if (a.isPartial()) {
            c = Collective::AllReduce;
        }
        if (c) {
            const double us = collectiveUs(*c, bytes, mesh, i);
            r.steps.push_back({i, *c, bytes, us});
            r.us += us;
        }
        current[i] = b;
    }
    return r;
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

double computeUs(const Graph& graph, NodeId id, const NodeStrategies& ns, const Strategy& s,
                 const DeviceMesh& mesh, const cost::RooflineModel& model) {
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
    return model.timeUs(work);
}

} // namespace jointscope::sharding
