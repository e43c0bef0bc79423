// What every canvas overlay does first: drop its own decorations, then find the node and edge items to
// decorate anew.
#pragma once

#include <initializer_list>
#include <vector>

namespace jointscope::views {

class EdgeItem;
class GraphScene;
class NodeItem;

struct SceneItems {
    std::vector<NodeItem*> nodes;
    std::vector<EdgeItem*> edges;
};

// Deletes the items whose type() is one of `overlayTypes`; returns the node and edge items shown.
SceneItems clearOverlayItems(GraphScene& scene, std::initializer_list<int> overlayTypes);

} // namespace jointscope::views
