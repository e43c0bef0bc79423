#include "Features.h"

#include "DecisionDiffFeature.h"
#include "DiffFeature.h"
#include "MemoryFeature.h"
#include "PartitionDocument.h"
#include "PartitionFeature.h"
#include "RuntimeFeature.h"
#include "SessionController.h"
#include "ShardingFeature.h"

namespace jointscope::gui {

Features createFeatures(const FeatureContext& context, SessionHost* host, QObject* parent) {
    auto* partition = new PartitionFeature(context, parent);
    auto* sharding = new ShardingFeature(context, parent);
    auto* runtime = new RuntimeFeature(
        context, [doc = partition->document()] { return doc->decisionJson(); }, parent);
    auto* memory = new MemoryFeature(context, partition->document(), parent);
    auto* decisionDiff = new DecisionDiffFeature(context, partition->document(), parent);
    auto* diff = new DiffFeature(context, parent);
    Features out;
    out.all = {partition, sharding, runtime, memory, decisionDiff, diff};
    out.sessions = new SessionController(context, host, partition, sharding, parent);
    return out;
}

} // namespace jointscope::gui
