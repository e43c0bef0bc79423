// GraphScene's collapsed-view half (layout/Grouping.h), apart so the plain scene stays small.
#include "canvas/EdgeItem.h"
#include "canvas/GraphScene.h"
#include "canvas/GroupFacts.h"
#include "canvas/GroupItem.h"
#include "canvas/NodeItem.h"
#include "layout/Grouping.h"
#include "support/EnumNames.h"

#include <QSignalBlocker>

#include <unordered_map>

namespace jointscope::views {

namespace {

QString kindName(layout::GroupKind kind) {
    using layout::GroupKind;
    static constexpr EnumName<GroupKind> kNames[] = {{GroupKind::Root, "graph"},
                                                     {GroupKind::Inputs, "placeholders"},
                                                     {GroupKind::Phase, "phase"},
                                                     {GroupKind::HopCall, "HOP call"},
                                                     {GroupKind::Module, "module"},
                                                     {GroupKind::SourceFile, "source file"},
                                                     {GroupKind::SourceLine, "source line"},
                                                     {GroupKind::Chunk, "nodes"},
                                                     {GroupKind::Layer, "layer"},
                                                     {GroupKind::Part, "model part"}};
    const std::string_view name = nameOf(kNames, kind, "");
    return QString::fromLatin1(name.data(), qsizetype(name.size()));
}

// Whether `group` lies under the backward phase (colours follow the forward / backward split).
bool underBackward(const layout::GroupTree& tree, int32_t group) {
    for (int32_t g = group; g > 0; g = tree.groups[size_t(g)].parent)
        if (tree.groups[size_t(g)].kind == layout::GroupKind::Phase)
            return tree.groups[size_t(g)].label == "backward";
    return false;
}

} // namespace

void GraphScene::applyCollapsedLayout(const layout::LayoutResult& result) {
    if (!graph_ || !result.view || result.nodes.size() != result.view->items.size() ||
        result.view->itemOfNode.size() != graph_->size())
        return;
    const Graph* graph = graph_;
    auto view = result.view;
    setGraph(graph);
    view_ = view;
    const QSignalBlocker blocker(this);
    nodes_.assign(graph->size(), nullptr);
    incident_.assign(graph->size(), {});

    // One pass over the graph for the boxes' op counts and their overlays (applyGroupOverlays below).
    const std::vector<GroupFacts> facts = overlayGroupFacts();
    addGroupFrames(result, addViewItems(result, facts));
    addViewEdges(result);
    setSceneRect(itemsBoundingRect().adjusted(-40, -40, 40, 40));
    applyGroupOverlays(facts);
}

std::vector<QRectF> GraphScene::addViewItems(const layout::LayoutResult& result,
                                             const std::vector<GroupFacts>& facts) {
    const layout::CollapsedView& view = *result.view;
    const layout::GroupTree& tree = *view.tree;
    std::vector<QRectF> frameRects(tree.groups.size());
    auto growFrames = [&](int32_t group, const QRectF& rect) {
        for (int32_t g = group; g > 0; g = tree.groups[size_t(g)].parent)
            frameRects[size_t(g)] =
                frameRects[size_t(g)].isNull() ? rect : frameRects[size_t(g)].united(rect);
    };
    for (size_t i = 0; i < view.items.size(); ++i) {
        const layout::ViewItem& item = view.items[i];
        const auto& p = result.nodes[i];
        const QRectF rect(p.x - p.width / 2, p.y - p.height / 2, p.width, p.height);
        if (item.group < 0) {
            addNodeItem(item.node, p);
            growFrames(tree.groupOf[item.node], rect);
            continue;
        }
        const layout::Group& group = tree.groups[size_t(item.group)];
        auto* box = new GroupItem(item.group, QString::fromStdString(group.label),
                                  QStringLiteral("%1 · %2 nodes · %3 ops")
                                      .arg(kindName(group.kind))
                                      .arg(group.total)
                                      .arg(facts[size_t(item.group)].ops),
                                  QSizeF(p.width, p.height), underBackward(tree, item.group));
        box->setPos(p.x, p.y);
        addItem(box);
        groups_.push_back(box);
        growFrames(group.parent, rect);
    }
    return frameRects;
}

// The layout kept each frame's members together (a Graphviz cluster, a layered block): its box holds them and
// no other box. Without one (dot failed on the clusters), frames are drawn around the members.
void GraphScene::addGroupFrames(const layout::LayoutResult& result, const std::vector<QRectF>& memberRects) {
    const layout::CollapsedView& view = *result.view;
    const layout::GroupTree& tree = *view.tree;
    const bool clustered = result.clusters.size() == view.frames.size();
    for (size_t f = 0; f < view.frames.size(); ++f) {
        const int32_t g = view.frames[f];
        if (clustered) {
            const auto& c = result.clusters[f];
            if (c.width > 0 && c.height > 0) {
                addItem(new GroupFrameItem(g, QString::fromStdString(tree.groups[size_t(g)].label),
                                           QRectF(c.x - c.width / 2, c.y - c.height / 2, c.width, c.height),
                                           underBackward(tree, g), int(tree.groups[size_t(g)].depth)));
                continue;
            }
        }
        const QRectF rect = memberRects[size_t(g)];
        if (rect.isNull())
            continue;
        // Deeper frames sit inside their parents: pad outer ones more, and leave room for the title.
        const double outer = double(8 - std::min<uint32_t>(8, tree.groups[size_t(g)].depth));
        const double pad = 10.0 + 6.0 * outer;
        const double title = 16.0 + 18.0 * outer; // an outer title sits above the inner ones
        addItem(new GroupFrameItem(g, QString::fromStdString(tree.groups[size_t(g)].label),
                                   rect.adjusted(-pad, -pad - title, pad, pad), underBackward(tree, g),
                                   int(tree.groups[size_t(g)].depth)));
    }
}

// Edges between the view's items, with the tensor (one merged edge) or the count and bytes (several) they
// carry as their tooltip.
void GraphScene::addViewEdges(const layout::LayoutResult& result) {
    const layout::CollapsedView& view = *result.view;
    const Graph* graph = graph_;
    std::unordered_map<uint64_t, const layout::ViewEdge*> mergedEdges;
    for (const layout::ViewEdge& e : view.edges)
        mergedEdges.emplace((uint64_t(e.from) << 32) | e.to, &e);
    for (const auto& route : result.edges) {
        if (route.from >= view.items.size() || route.to >= view.items.size())
            continue;
        const layout::ViewItem& from = view.items[route.from];
        const layout::ViewItem& to = view.items[route.to];
        layout::EdgeRoute mapped = route;
        mapped.from = from.node;
        mapped.to = to.node;
        auto* edge = new EdgeItem(mapped);
        const auto found = mergedEdges.find((uint64_t(route.from) << 32) | route.to);
        const layout::ViewEdge* merged = found == mergedEdges.end() ? nullptr : found->second;
        if (merged && merged->count == 1 && merged->producer < graph->size()) {
            NodeId consumer = to.node;
            if (consumer >= graph->size())
                for (NodeId user : graph->node(merged->producer).users)
                    if (view.itemOfNode[user] == route.to) {
                        consumer = user;
                        break;
                    }
            if (consumer < graph->size())
                edge->setToolTip(
                    EdgeItem::tensorToolTip(graph->node(merged->producer), graph->node(consumer)));
        } else if (merged) {
            edge->setToolTip(
                QStringLiteral("%1 edges<br>%2").arg(merged->count).arg(formatBytes(merged->bytes)));
        }
        addItem(edge);
        edges_.push_back(edge);
        if (mapped.from < graph->size())
            incident_[mapped.from].push_back(edge);
        if (mapped.to < graph->size())
            incident_[mapped.to].push_back(edge);
    }
}

std::vector<GroupFacts> GraphScene::overlayGroupFacts() const {
    const bool heatShown = graph_ == overlayGraph_ && !heat_.empty();
    static const std::vector<double> kNoTimes;
    return computeGroupFacts(*graph_, *view_->tree, partition_.get(), heatShown ? heat_ : kNoTimes);
}

void GraphScene::applyGroupOverlays() {
    groupHeatScale_ = {};
    if (!graph_ || !view_ || groups_.empty())
        return;
    applyGroupOverlays(overlayGroupFacts());
}

void GraphScene::applyGroupOverlays(const std::vector<GroupFacts>& facts) {
    groupHeatScale_ = {};
    if (!graph_ || !view_ || groups_.empty())
        return;
    const bool heatShown = graph_ == overlayGraph_ && !heat_.empty();
    // A group's time is the sum of its members': on the op scale every layer would be the hottest colour,
    // so boxes get their own scale over the boxes shown.
    std::vector<double> times;
    for (const GroupItem* box : groups_)
        times.push_back(facts[size_t(box->group())].timeUs);
    groupHeatScale_ = HeatScale::of(times);
    const bool partitioned = partition_ && hasDecision(*partition_);
    for (GroupItem* box : groups_) {
        const GroupFacts& f = facts[size_t(box->group())];
        box->setFacts(groupFactsLine(f, partitioned));
        box->setHeatColor(heatShown && f.timeUs >= 0 && groupHeatScale_.valid()
                              ? heatColor(groupHeatScale_.fraction(f.timeUs))
                              : QColor());
    }
}

} // namespace jointscope::views
