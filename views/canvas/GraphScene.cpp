#include "canvas/GraphScene.h"

#include "canvas/EdgeItem.h"
#include "canvas/GroupItem.h"
#include "canvas/NodeItem.h"
#include "layout/Grouping.h"

#include <QFontMetricsF>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>

#include <algorithm>

namespace jointscope::views {

namespace {

constexpr double kMaxNodeWidth = 280;
constexpr double kNodeHeight = 38;

QString subtitleOf(const Node& node) {
    QString text = opLabel(node);
    const QString shape = formatOutputShapes(node);
    if (!shape.isEmpty() && node.outputKind == OutputKind::Tensor)
        text += QStringLiteral("  ") + formatOutputDTypes(node) + shape;
    return text;
}

} // namespace

GraphScene::GraphScene(QObject* parent) : QGraphicsScene(parent) {
    setBackgroundBrush(QColor(0xf8, 0xfa, 0xfc));
    setItemIndexMethod(QGraphicsScene::BspTreeIndex);
    connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::onSelectionChanged);
}

GraphScene::~GraphScene() {
    // Deleting a selected item emits selectionChanged; nothing may react while items go away.
    blockSignals(true);
    emphasised_.clear();
    clear();
}

void GraphScene::setGraph(const Graph* graph) {
    const QSignalBlocker blocker(this);
    clear();
    nodes_.clear();
    edges_.clear();
    groups_.clear();
    incident_.clear();
    emphasised_.clear();
    view_.reset();
    // Re-laying out the same graph (a group expanded) keeps its roles: classifying 100k nodes stalls the UI.
    const bool sameGraph = graph && graph == graph_ && roles_.size() == graph->size();
    graph_ = graph;
    if (!sameGraph)
        roles_ = graph ? classifyNodes(*graph) : std::vector<NodeRole>{};
    setSceneRect(QRectF());
}

layout::NodeSize GraphScene::measureNode(const Node& node) {
    const QFontMetricsF title(NodeItem::titleFont());
    const QFontMetricsF sub(NodeItem::subtitleFont());
    const double text = std::max(title.horizontalAdvance(QString::fromStdString(node.name)),
                                 sub.horizontalAdvance(subtitleOf(node)));
    return {std::clamp(text + 20, 70.0, kMaxNodeWidth), kNodeHeight};
}

std::vector<layout::NodeSize> GraphScene::measureNodes() const {
    std::vector<layout::NodeSize> sizes;
    if (!graph_)
        return sizes;
    const QFontMetricsF title(NodeItem::titleFont());
    const QFontMetricsF sub(NodeItem::subtitleFont());
    sizes.reserve(graph_->size());
    for (const Node& node : graph_->nodes()) {
        const double text = std::max(title.horizontalAdvance(QString::fromStdString(node.name)),
                                     sub.horizontalAdvance(subtitleOf(node)));
        sizes.push_back({std::clamp(text + 20, 70.0, kMaxNodeWidth), kNodeHeight});
    }
    return sizes;
}

void GraphScene::applyLayout(const layout::LayoutResult& result) {
    if (!graph_ || result.nodes.size() != graph_->size())
        return;
    const Graph* graph = graph_;
    setGraph(graph);
    const QSignalBlocker blocker(this);
    nodes_.resize(graph->size(), nullptr);
    incident_.resize(graph->size());
    for (NodeId id = 0; id < graph->size(); ++id)
        addNodeItem(id, result.nodes[id]);
    for (const auto& route : result.edges) {
        if (route.from >= graph->size() || route.to >= graph->size())
            continue;
        auto* edge = new EdgeItem(route);
        edge->setToolTip(EdgeItem::tensorToolTip(graph->node(route.from), graph->node(route.to)));
        addItem(edge);
        edges_.push_back(edge);
        incident_[route.from].push_back(edge);
        incident_[route.to].push_back(edge);
    }
    setSceneRect(itemsBoundingRect().adjusted(-40, -40, 40, 40));
}

bool GraphScene::moveToLayout(const layout::LayoutResult& result) {
    if (!graph_ || view_ || result.view || result.nodes.size() != graph_->size() ||
        nodes_.size() != graph_->size() || result.edges.size() != edges_.size())
        return false;
    for (NodeId id = 0; id < nodes_.size(); ++id)
        if (!nodes_[id])
            return false;
    for (size_t i = 0; i < edges_.size(); ++i)
        if (edges_[i]->from() != result.edges[i].from || edges_[i]->to() != result.edges[i].to)
            return false;
    for (NodeId id = 0; id < nodes_.size(); ++id) {
        const layout::NodePlacement& p = result.nodes[id];
        nodes_[id]->setSize(QSizeF(p.width, p.height));
        nodes_[id]->setPos(p.x, p.y);
    }
    for (size_t i = 0; i < edges_.size(); ++i)
        edges_[i]->setRoute(result.edges[i]);
    setSceneRect(itemsBoundingRect().adjusted(-40, -40, 40, 40));
    return true;
}

NodeItem* GraphScene::addNodeItem(NodeId id, const layout::NodePlacement& p) {
    const Node& node = graph_->node(id);
    auto* item = new NodeItem(id, roles_[id], QString::fromStdString(node.name), subtitleOf(node),
                              QSizeF(p.width, p.height), node.subgraph >= 0);
    item->setPos(p.x, p.y);
    item->setToolTip(QStringLiteral("<b>%1</b><br>%2<br>%3")
                         .arg(QString::fromStdString(node.name).toHtmlEscaped(),
                              QString::fromStdString(node.target.text).toHtmlEscaped(),
                              formatOutputShapes(node)));
    addItem(item);
    nodes_[id] = item;
    applyRuntimeOverlays(item);
    return item;
}

NodeId GraphScene::selectedNode() const {
    for (QGraphicsItem* item : selectedItems())
        if (item->type() == NodeItem::Type)
            return static_cast<NodeItem*>(item)->nodeId();
    return kNoNode;
}

void GraphScene::selectNode(NodeId id) {
    NodeItem* item = nodeItem(id);
    if (item && item->isSelected() && selectedItems().size() == 1)
        return;
    {
        const QSignalBlocker blocker(this);
        clearSelection();
        if (item)
            item->setSelected(true);
    }
    onSelectionChanged();
}

void GraphScene::setMatches(const std::vector<NodeId>& ids) {
    std::vector<bool> matched(nodes_.size(), false);
    for (NodeId id : ids)
        if (id < matched.size())
            matched[id] = true;
    for (size_t i = 0; i < nodes_.size(); ++i)
        if (nodes_[i])
            nodes_[i]->setMatched(matched[i]);
}

QImage GraphScene::renderImage(double scale) const {
    const QRectF rect = sceneRect();
    QImage image((rect.size() * scale).toSize().expandedTo(QSize(1, 1)), QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    const_cast<GraphScene*>(this)->render(&painter, QRectF(QPointF(0, 0), QSizeF(image.size())), rect);
    return image;
}

void GraphScene::mouseDoubleClickEvent(QGraphicsSceneMouseEvent* event) {
    QGraphicsScene::mouseDoubleClickEvent(event);
    for (QGraphicsItem* item : items(event->scenePos()))
        if (item->type() == NodeItem::Type) {
            emit nodeActivated(static_cast<NodeItem*>(item)->nodeId());
            return;
        } else if (item->type() == GroupItem::Type) {
            emit groupActivated(static_cast<GroupItem*>(item)->group(), true);
            return;
        } else if (item->type() == GroupFrameItem::Type) {
            emit groupActivated(static_cast<GroupFrameItem*>(item)->group(), false);
            return;
        }
}

void GraphScene::onSelectionChanged() {
    for (EdgeItem* edge : emphasised_)
        edge->setEmphasis(false);
    emphasised_.clear();
    const NodeId id = selectedNode();
    if (id < incident_.size())
        for (EdgeItem* edge : incident_[id]) {
            edge->setEmphasis(true);
            emphasised_.push_back(edge);
        }
    emit nodeSelected(id);
}

} // namespace jointscope::views
