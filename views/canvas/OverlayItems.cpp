#include "canvas/OverlayItems.h"

#include "canvas/EdgeItem.h"
#include "canvas/GraphScene.h"
#include "canvas/NodeItem.h"

#include <algorithm>

namespace jointscope::views {

SceneItems clearOverlayItems(GraphScene& scene, std::initializer_list<int> overlayTypes) {
    SceneItems shown;
    std::vector<QGraphicsItem*> stale;
    for (QGraphicsItem* item : scene.items()) {
        if (std::find(overlayTypes.begin(), overlayTypes.end(), item->type()) != overlayTypes.end())
            stale.push_back(item);
        else if (item->type() == NodeItem::Type)
            shown.nodes.push_back(static_cast<NodeItem*>(item));
        else if (item->type() == EdgeItem::Type)
            shown.edges.push_back(static_cast<EdgeItem*>(item));
    }
    for (QGraphicsItem* item : stale)
        delete item;
    return shown;
}

} // namespace jointscope::views
