#include "partition/DecisionJson.h"

namespace jointscope::partition {

using Json = nlohmann::ordered_json;

Json nodeIdentityJson(const Node& node) {
    Json j = Json::object();
    j["target"] = node.op == NodeOp::Placeholder ? std::string("placeholder") : node.target.text;
    if (const TensorMeta* meta = node.tensor()) {
        Json shape = Json::array();
        for (const SymInt& dim : meta->sizes)
            shape.push_back(dim.isSymbolic() ? Json(dim.expr) : Json(dim.value));
        j["shape"] = shape;
        j["dtype"] = std::string(torchName(meta->dtype));
    }
    return j;
}

Json nodeNamesJson(const Graph& graph, const std::vector<NodeId>& ids) {
    Json list = Json::array();
    for (NodeId id : ids)
        list.push_back(graph.node(id).name);
    return list;
}

Json explanationJson(const Partition& p, NodeId id) {
    const NodeExplanation e = explainNode(p, id);
    Json j = Json::object();
    j["node"] = p.graph.node(id).name;
    j["decision"] = e.decision;
    j["rule"] = e.rule;
    if (!e.banReason.empty())
        j["ban"] = e.banReason;
    if (!e.policy.empty())
        j["policy"] = e.policy;
    j["weight"] = e.weight >= kInfiniteCapacity ? Json("inf") : Json(e.weight);
    j["dist_from_bw"] = e.distFromBw;
    j["bytes"] = e.bytes;
    return j;
}

Json decisionJson(const Partition& p, const Ruleset& rules, const PartitionOptions& options) {
    const Graph& g = p.graph;
    Json j = Json::object();
    j["format"] = "jointscope-decision";
    j["version"] = 1;
    j["graph"] = g.name;
    j["ruleset"] = rules.name;
    j["strategy"] = p.escalation == Escalation::Edited     ? "edited"
                    : options.strategy == Strategy::MinCut ? "min-cut"
                                                           : "default";
    j["memory_budget"] = p.memoryBudget;
    if (options.estimator)
        j["cost_model"] = std::string(options.estimator->name());
    j["decided_by"] = std::string(escalationName(p.escalation));
    j["saved"] = nodeNamesJson(g, p.saved);
    j["saved_sym"] = nodeNamesJson(g, p.savedSym);
    j["saved_bytes"] = p.savedBytes;
    j["activation_bytes"] = p.activationBytes; // saved_bytes without the saved inputs (parameters, batch)
    j["recomputed"] = nodeNamesJson(g, p.recomputed);
    j["rng_states"] = nodeNamesJson(g, p.rngStates);
    Json banned = Json::object();
    if (p.cut)
        for (NodeId id : p.cut->banned)
            banned[g.node(id).name] = std::string(banReasonText(p.cut->banReason[id]));
    j["banned"] = banned;
    j["cut_value"] = p.cut ? Json(p.cut->cutValue) : Json(nullptr);
    j["seconds"] = p.seconds;
    Json merged = Json::object();
    for (const auto& [removed, kept] : p.merged)
        merged[removed] = kept;
    j["cse_merged"] = merged;
    if (Expected<MemoryTimeline> timeline = memoryTimeline(p, rules)) {
        j["peak_bytes"] = timeline->peakBytes;
        j["memory_timeline"] = memoryTimelineJson(g, *timeline);
    } else {
        j["peak_bytes"] = nullptr;
    }
    j["warnings"] = p.warnings;
    Json nodes = Json::object();
    for (const auto* list : {&p.saved, &p.savedSym, &p.recomputed})
        for (NodeId id : *list)
            nodes[g.node(id).name] = nodeIdentityJson(g.node(id));
    j["nodes"] = nodes;
    return j;
}

Json memoryTimelineJson(const Graph& graph, const MemoryTimeline& timeline) {
    Json j = Json::object();
    j["forward_steps"] = timeline.forwardSteps;
    j["saved_bytes"] = timeline.savedBytes;
    j["peak_step"] = timeline.peakStep;
    j["peak_node"] = timeline.peak() ? Json(graph.node(timeline.peak()->node).name) : Json(nullptr);
    Json nodes = Json::array(), live = Json::array(), recomputed = Json::array();
    for (size_t i = 0; i < timeline.steps.size(); ++i) {
        const MemoryStep& step = timeline.steps[i];
        nodes.push_back(graph.node(step.node).name);
        live.push_back(step.liveBytes);
        if (step.recomputed)
            recomputed.push_back(i);
    }
    j["nodes"] = std::move(nodes);
    j["live_bytes"] = std::move(live);
    j["recomputed_steps"] = std::move(recomputed);
    return j;
}

} // namespace jointscope::partition
