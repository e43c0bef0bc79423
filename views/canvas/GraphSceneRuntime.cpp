// Runtime overlays of GraphScene: the measured-time heat map (jointscope-cli profile) and mismatch markers
// (jointscope-cli validate).
#include "canvas/GraphScene.h"

#include "canvas/NodeItem.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace jointscope::views {

QColor GraphScene::heatColor(double fraction) {
    // Pale yellow -> orange -> dark red (ColorBrewer YlOrRd), so the hot ops stand out against pale role
    // colours.
    struct Stop {
        double at;
        QColor color;
    };
    static const Stop stops[] = {{0.0, QColor(0xff, 0xf7, 0xbc)},
                                 {0.25, QColor(0xfe, 0xc4, 0x4f)},
                                 {0.5, QColor(0xfb, 0x8a, 0x2c)},
                                 {0.75, QColor(0xe3, 0x4a, 0x33)},
                                 {1.0, QColor(0xb3, 0x00, 0x00)}};
    const double f = std::clamp(std::isfinite(fraction) ? fraction : 0.0, 0.0, 1.0);
    for (size_t i = 1; i < std::size(stops); ++i) {
        if (f > stops[i].at)
            continue;
        const double t = (f - stops[i - 1].at) / (stops[i].at - stops[i - 1].at);
        const QColor& a = stops[i - 1].color;
        const QColor& b = stops[i].color;
        return QColor::fromRgbF(float(a.redF() + (b.redF() - a.redF()) * t),
                                float(a.greenF() + (b.greenF() - a.greenF()) * t),
                                float(a.blueF() + (b.blueF() - a.blueF()) * t));
    }
    return stops[std::size(stops) - 1].color;
}

void GraphScene::setHeat(const std::vector<double>& timesUs) {
    heat_ = timesUs;
    overlayGraph_ = graph_;
    heatScale_ = HeatScale::of(heat_);
    for (NodeItem* item : nodes_)
        if (item)
            applyRuntimeOverlays(item);
    applyGroupOverlays();
}

void GraphScene::setMismatches(const std::vector<NodeId>& ids) {
    mismatches_ = ids;
    overlayGraph_ = graph_;
    std::sort(mismatches_.begin(), mismatches_.end());
    for (NodeItem* item : nodes_)
        if (item)
            applyRuntimeOverlays(item);
}

void GraphScene::applyRuntimeOverlays(NodeItem* item) const {
    const NodeId id = item->nodeId();
    const bool shown = graph_ == overlayGraph_;
    QColor heat;
    if (shown && !heat_.empty()) {
        // Nodes that were not run (views, getitem, placeholders) fade out so the timed ones carry the
        // picture.
        const double t = id < heat_.size() ? heat_[id] : -1.0;
        heat = t >= 0 && heatScale_.valid() ? heatColor(heatScale_.fraction(t)) : QColor(0xf1, 0xf5, 0xf9);
    }
    item->setHeatColor(heat);
    item->setMismatch(shown && std::binary_search(mismatches_.begin(), mismatches_.end(), id));
}

} // namespace jointscope::views
