// ProfiledModel apart from the roofline: it alone needs the profile DB (and SQLite).
#include "cost/CostModel.h"
#include "cost/OpSignature.h"
#include "cost/ProfileDb.h"

namespace jointscope::cost {

ProfiledModel::ProfiledModel(const ProfileDb& db, std::string device, std::string torchVersion,
                             RooflineModel fallback)
    : db_(db), device_(std::move(device)), torchVersion_(std::move(torchVersion)),
      fallback_(std::move(fallback)) {}

NodeCost ProfiledModel::cost(const Graph& graph, NodeId id) const {
    NodeCost c = fallback_.cost(graph, id);
    if (c.work.free)
        return c;
    if (std::optional<OpStats> stats =
            db_.lookup(ProfileKey{device_, torchVersion_, opSignature(graph, id)})) {
        c.timeUs = stats->medianUs;
        c.source = CostSource::Profiled;
    }
    return c;
}

} // namespace jointscope::cost
