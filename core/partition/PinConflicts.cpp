#include "partition/PinConflicts.h"

#include <algorithm>

namespace jointscope::partition {

namespace {

bool holds(const std::vector<NodeId>& ids, NodeId id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

} // namespace

std::vector<PinConflict> pinConflicts(const Partition& partition,
                                      const std::vector<std::pair<std::string, Policy>>& pins) {
    std::vector<PinConflict> conflicts;
    for (const auto& [name, policy] : pins) {
        if (policy != Policy::MustSave && policy != Policy::MustRecompute)
            continue;
        const std::optional<NodeId> id = partition.graph.find(name);
        if (!id) // dead or merged by CSE: nothing was decided for it
            continue;
        const bool saved = holds(partition.saved, *id) || holds(partition.savedSym, *id);
        const bool recomputed = holds(partition.recomputed, *id);
        const char* outcome = policy == Policy::MustSave && recomputed   ? "recomputed"
                              : policy == Policy::MustRecompute && saved ? "saved"
                                                                         : nullptr;
        if (outcome)
            conflicts.push_back({name, policy, outcome, explainNode(partition, *id).rule});
    }
    return conflicts;
}

} // namespace jointscope::partition
