#include "sharding/PlanReport.h"

#include <algorithm>

namespace jointscope::sharding {

PlanReport reportPlan(const Graph& graph, const ShardingProblem& problem, const Plan& plan,
                      const ComputeModel& model) {
    PlanReport report;
    report.optimal = plan.optimal;
    const size_t n = std::min(problem.nodes.size(), plan.choice.size());
    report.nodes.resize(problem.nodes.size());
    auto chosen = [&](NodeId id) -> const Strategy* {
        if (id >= n || plan.choice[id] < 0 || size_t(plan.choice[id]) >= problem.nodes[id].options.size())
            return nullptr;
        return &problem.nodes[id].options[size_t(plan.choice[id])];
    };
    for (NodeId id = 0; id < n; ++id) {
        const NodeStrategies& ns = problem.nodes[id];
        NodeReport& r = report.nodes[id];
        r.options = ns.options.size();
        const Strategy* s = chosen(id);
        if (!s)
            continue;
        r.placed = true;
        r.outputs = s->outputs;
        r.inputs = s->inputs;
        r.computeUs = computeUs(graph, id, ns, *s, problem.mesh, model);
        // getitem only selects a tuple element and sinks read without running: neither redistributes
        // (the solver's redistributingEdge).
        if (ns.kind == RuleKind::GetItem || ns.kind == RuleKind::Sink)
            continue;
        for (size_t k = 0; k < ns.inputs.size() && k < s->inputs.size(); ++k) {
            const NodeId producer = ns.inputs[k];
            const Strategy* ps = chosen(producer);
            if (!ps || ps->outputs.empty())
                continue;
            const int32_t element = ns.inputElement[k];
            const size_t e = element >= 0 && size_t(element) < ps->outputs.size() ? size_t(element) : 0;
            const Placements& from = ps->outputs[e];
            if (from == s->inputs[k])
                continue;
            Redistribution rd =
                redistribute(from, s->inputs[k], producedTensor(graph, producer, element), problem.mesh);
            r.commUs += rd.us;
            if (rd.us > 0)
                report.transitions.push_back({producer, id, k, from, s->inputs[k], std::move(rd)});
        }
    }
    for (const NodeReport& r : report.nodes) {
        report.total.computeUs += r.computeUs;
        report.total.commUs += r.commUs;
    }
    return report;
}

std::vector<Placements> outputChoices(const ShardingProblem& problem, NodeId id) {
    std::vector<Placements> out;
    if (id >= problem.nodes.size())
        return out;
    for (const Strategy& s : problem.nodes[id].options) {
        if (s.outputs.empty())
            continue;
        bool seen = false;
        for (const Placements& p : out)
            seen = seen || p == s.outputs[0];
        if (!seen)
            out.push_back(s.outputs[0]);
    }
    return out;
}

std::string collectiveLabel(Collective c) {
    std::string label(collectiveName(c));
    std::replace(label.begin(), label.end(), '_', '-');
    return label;
}

} // namespace jointscope::sharding
