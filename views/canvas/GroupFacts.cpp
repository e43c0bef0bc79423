#include "canvas/GroupFacts.h"

#include "models/NodeFormat.h"

#include <algorithm>

namespace jointscope::views {

std::vector<GroupFacts> computeGroupFacts(const Graph& graph, const layout::GroupTree& tree,
                                          const PartitionOverlay* partition,
                                          const std::vector<double>& timesUs) {
    std::vector<GroupFacts> facts(tree.groups.size());
    const size_t marked = partition ? partition->nodes.size() : 0;
    const auto markOf = [&](NodeId id) {
        return id < marked ? partition->nodes[id].mark : PartitionMark::None;
    };
    for (NodeId id = 0; id < graph.size() && id < tree.groupOf.size(); ++id) {
        const Node& node = graph.node(id);
        GroupFacts own;
        own.ops = node.op == NodeOp::CallFunction ? 1 : 0;
        const PartitionMark mark = markOf(id);
        if (mark == PartitionMark::Saved) {
            own.saved = 1;
            own.savedBytes = partition->nodes[id].bytes;
            std::vector<NodeId> counted; // one cut edge per consumer, as the canvas draws them
            for (NodeId user : node.users) {
                const PartitionMark to = markOf(user);
                if ((to == PartitionMark::Backward || to == PartitionMark::Recomputed) &&
                    std::find(counted.begin(), counted.end(), user) == counted.end()) {
                    counted.push_back(user);
                    ++own.cutEdges;
                }
            }
        }
        own.recomputed = mark == PartitionMark::Recomputed ? 1 : 0;
        const double t = id < timesUs.size() ? timesUs[id] : -1.0;
        for (int32_t g = tree.groupOf[id]; g >= 0; g = tree.groups[size_t(g)].parent) {
            GroupFacts& f = facts[size_t(g)];
            f.ops += own.ops;
            f.saved += own.saved;
            f.savedBytes += own.savedBytes;
            f.recomputed += own.recomputed;
            f.cutEdges += own.cutEdges;
            if (t >= 0)
                f.timeUs = std::max(0.0, f.timeUs) + t;
        }
    }
    return facts;
}

bool hasDecision(const PartitionOverlay& overlay) {
    return std::any_of(overlay.nodes.begin(), overlay.nodes.end(), [](const NodePartitionMark& m) {
        return m.mark == PartitionMark::Saved || m.mark == PartitionMark::Recomputed;
    });
}

QString groupFactsLine(const GroupFacts& facts, bool partitioned) {
    QStringList parts;
    if (partitioned) {
        parts << QStringLiteral("saved %1").arg(formatBytes(facts.savedBytes))
              << QStringLiteral("%1 recomputed").arg(facts.recomputed)
              << QStringLiteral("%1 cut").arg(facts.cutEdges);
    }
    if (facts.timeUs >= 0)
        parts << formatMicros(facts.timeUs);
    return parts.join(QStringLiteral(" · "));
}

} // namespace jointscope::views
