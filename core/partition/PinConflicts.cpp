#include "partition/PinConflicts.h"

#include <initializer_list>

namespace jointscope::partition {

namespace {

// One flag per node of the partitioned graph: pins are checked one by one, and a session may hold many.
std::vector<bool> flagsOf(size_t size, std::initializer_list<const std::vector<NodeId>*> lists) {
    std::vector<bool> flags(size, false);
    for (const std::vector<NodeId>* ids : lists)
        for (NodeId id : *ids)
            if (id < size)
                flags[id] = true;
    return flags;
}

} // namespace

std::vector<PinConflict> pinConflicts(const Partition& partition,
                                      const std::vector<std::pair<std::string, Policy>>& pins) {
    std::vector<PinConflict> conflicts;
    const size_t size = partition.graph.size();
    const std::vector<bool> saved = flagsOf(size, {&partition.saved, &partition.savedSym});
    const std::vector<bool> recomputed = flagsOf(size, {&partition.recomputed});
    for (const auto& [name, policy] : pins) {
        if (policy != Policy::MustSave && policy != Policy::MustRecompute)
            continue;
        const std::optional<NodeId> id = partition.graph.find(name);
        if (!id) // dead or merged by CSE: nothing was decided for it
            continue;
        const char* outcome = policy == Policy::MustSave && recomputed[*id]   ? "recomputed"
                              : policy == Policy::MustRecompute && saved[*id] ? "saved"
                                                                              : nullptr;
        if (outcome)
            conflicts.push_back({name, policy, outcome, explainNode(partition, *id).rule});
    }
    return conflicts;
}

} // namespace jointscope::partition
