// GraphScene's partition overlay.
#include "canvas/EdgeItem.h"
#include "canvas/GraphScene.h"
#include "canvas/NodeItem.h"

namespace jointscope::views {

void GraphScene::setPartitionOverlay(std::shared_ptr<const PartitionOverlay> overlay) {
    partition_ = std::move(overlay);
    const size_t known = partition_ ? partition_->nodes.size() : 0;
    auto markOf = [&](NodeId id) { return id < known ? partition_->nodes[id] : NodePartitionMark{}; };
    for (size_t id = 0; id < nodes_.size(); ++id)
        if (nodes_[id])
            nodes_[id]->setPartitionMark(markOf(NodeId(id)));
    for (EdgeItem* edge : edges_) {
        const PartitionMark from = markOf(edge->from()).mark;
        const PartitionMark to = markOf(edge->to()).mark;
        edge->setCut(from == PartitionMark::Saved &&
                     (to == PartitionMark::Backward || to == PartitionMark::Recomputed));
    }
    applyGroupOverlays();
}

} // namespace jointscope::views
