#include "canvas/ShardingOverlay.h"

#include "canvas/EdgeItem.h"
#include "canvas/GraphScene.h"
#include "canvas/NodeItem.h"
#include "canvas/OverlayItems.h"
#include "models/ShardingModel.h"

#include <algorithm>

#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

#include <map>

namespace jointscope::views {

using namespace jointscope::sharding;

namespace {

const QColor kPartial(0xf9, 0x73, 0x16);
const QColor kReplicate(0x9c, 0xa3, 0xaf);
const QColor kRedistribute(0xea, 0x58, 0x0c);

QString meshName(const std::vector<std::string>& names, size_t i) {
    return i < names.size() && !names[i].empty() ? QString::fromStdString(names[i])
                                                 : QStringLiteral("d%1").arg(i);
}

QString shortText(const Placement& p) {
    switch (p.kind) {
    case PlacementKind::Shard:
        return QStringLiteral("S%1").arg(p.dim);
    case PlacementKind::Partial:
        return QStringLiteral("P");
    case PlacementKind::Replicate:
        break;
    }
    return QStringLiteral("R");
}

// One colour segment per mesh dimension under the node's box.
class PlacementStrip : public QGraphicsItem {
public:
    enum { Type = UserType + 40 };
    static constexpr double kHeight = 11;
    static constexpr double kComparedHeight = 4;

    PlacementStrip(const QRectF& box, NodeShardingMark mark, const std::vector<std::string>& names)
        : rect_(box.left() + 4, box.bottom() + 1.5, box.width() - 8, kHeight), mark_(std::move(mark)) {
        QStringList lines;
        for (size_t i = 0; i < mark_.output.size(); ++i)
            lines << QStringLiteral("%1: %2").arg(meshName(names, i),
                                                  QString::fromStdString(mark_.output[i].str()));
        if (differs())
            lines
                << QStringLiteral("compared plan: %1").arg(QString::fromStdString(toString(*mark_.compared)));
        setToolTip(QStringLiteral("output %1%2\n%3")
                       .arg(QString::fromStdString(toString(mark_.output)),
                            mark_.pinned ? QStringLiteral(" (pinned)") : QString(), lines.join('\n')));
        setAcceptedMouseButtons(Qt::NoButton);
    }
    int type() const override { return Type; }
    QRectF boundingRect() const override {
        return rect_.adjusted(-1.5, -1.5, 1.5, 1.5 + (differs() ? kComparedHeight + 1 : 0));
    }
    bool differs() const { return mark_.compared && !(*mark_.compared == mark_.output); }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        const size_t n = mark_.output.size();
        if (n == 0)
            return;
        const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
        const double w = rect_.width() / double(n);
        painter->setPen(Qt::NoPen);
        for (size_t i = 0; i < n; ++i) {
            const QRectF seg(rect_.left() + w * double(i), rect_.top(), w, rect_.height());
            painter->setBrush(placementColor(mark_.output[i]));
            painter->drawRect(seg.adjusted(i ? 0.5 : 0, 0, i + 1 < n ? -0.5 : 0, 0));
            if (lod >= NodeItem::kLabelLevelOfDetail) {
                painter->setPen(Qt::white);
                painter->setFont(NodeItem::badgeFont(6.5));
                painter->drawText(seg, Qt::AlignCenter, shortText(mark_.output[i]));
                painter->setPen(Qt::NoPen);
            }
        }
        if (differs()) {
            // The compared plan's placement, one thin segment per mesh dimension, under ours.
            const size_t m = mark_.compared->size();
            const double cw = rect_.width() / double(std::max<size_t>(m, 1));
            for (size_t i = 0; i < m; ++i) {
                painter->setBrush(placementColor((*mark_.compared)[i]));
                painter->drawRect(
                    QRectF(rect_.left() + cw * double(i), rect_.bottom() + 1, cw, kComparedHeight));
            }
        }
        if (mark_.pinned) {
            painter->setPen(QPen(QColor(0x0f, 0x17, 0x2a), 1.5));
            painter->setBrush(Qt::NoBrush);
            painter->drawRect(rect_.adjusted(-0.75, -0.75, 0.75, 0.75));
        }
    }

private:
    QRectF rect_;
    NodeShardingMark mark_;
};

// An edge that redistributes: its curve in orange and a pill at the middle naming the collectives.
class RedistributionMark : public QGraphicsItem {
public:
    enum { Type = UserType + 41 };

    RedistributionMark(const QPainterPath& path, QString label) : path_(path), label_(std::move(label)) {
        const QFontMetricsF metrics(NodeItem::badgeFont(6.5));
        const QPointF mid = path_.pointAtPercent(0.5);
        const double w = metrics.horizontalAdvance(label_) + 8;
        pill_ = QRectF(mid.x() - w / 2, mid.y() - 7, w, 14);
        setToolTip(label_);
        setZValue(3); // above node boxes when a label crosses one
        setAcceptedMouseButtons(Qt::NoButton);
    }
    int type() const override { return Type; }
    QRectF boundingRect() const override { return path_.boundingRect().adjusted(-3, -3, 3, 3).united(pill_); }
    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        const double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
        painter->setPen(QPen(kRedistribute, lod < NodeItem::kLabelLevelOfDetail ? 5.0 : 2.4));
        painter->setBrush(Qt::NoBrush);
        painter->drawPath(path_);
        if (lod < NodeItem::kLabelLevelOfDetail)
            return;
        painter->setPen(QPen(kRedistribute, 1));
        painter->setBrush(QColor(0xff, 0xf7, 0xed));
        painter->drawRoundedRect(pill_, 4, 4);
        painter->setPen(QColor(0x7c, 0x2d, 0x12));
        painter->setFont(NodeItem::badgeFont(6.5));
        painter->drawText(pill_, Qt::AlignCenter, label_);
    }

private:
    QPainterPath path_;
    QString label_;
    QRectF pill_;
};

} // namespace

QColor placementColor(const Placement& p) {
    switch (p.kind) {
    case PlacementKind::Replicate:
        return kReplicate;
    case PlacementKind::Partial:
        return kPartial;
    case PlacementKind::Shard:
        break;
    }
    // Tensor dims 0..4 get distinct hues away from grey / orange (and from the partition's green and purple).
    static constexpr QRgb hues[] = {0x2563eb, 0x0d9488, 0xc026d3, 0xca8a04, 0xdb2777};
    return QColor::fromRgb(hues[size_t(std::max(0, p.dim)) % std::size(hues)]);
}

QString transitionLabel(const Redistribution& r, const std::vector<std::string>& meshNames) {
    QStringList parts;
    const bool named = meshNames.size() > 1;
    for (const RedistributeStep& s : r.steps) {
        QString text = QString::fromUtf8(collectiveLabel(s.collective).data());
        if (named)
            text += QStringLiteral("(%1)").arg(meshName(meshNames, s.meshDim));
        parts << text + QLatin1Char(' ') + formatMicros(s.us);
    }
    return parts.join(QStringLiteral(" + "));
}

void applyShardingOverlay(GraphScene& scene, const ShardingOverlay* overlay) {
    const SceneItems shown = clearOverlayItems(scene, {PlacementStrip::Type, RedistributionMark::Type});
    if (!overlay)
        return;
    for (NodeItem* node : shown.nodes) {
        const NodeId id = node->nodeId();
        if (id < overlay->nodes.size() && overlay->nodes[id].placed) {
            auto* strip =
                new PlacementStrip(node->shape().boundingRect(), overlay->nodes[id], overlay->meshNames);
            strip->setParentItem(node);
        }
    }
    // Several inputs may read the same producer: one label per drawn edge, the collectives summed.
    std::map<std::pair<NodeId, NodeId>, Redistribution> byEdge;
    for (const EdgeShardingMark& e : overlay->edges) {
        Redistribution& r = byEdge[{e.from, e.to}];
        r.steps.insert(r.steps.end(), e.redistribution.steps.begin(), e.redistribution.steps.end());
        r.us += e.redistribution.us;
    }
    for (EdgeItem* edge : shown.edges) {
        const auto it = byEdge.find({edge->from(), edge->to()});
        if (it != byEdge.end()) {
            // A scene item of its own, not the edge's child: its label must stay above the node boxes.
            auto* mark = new RedistributionMark(edge->mapToScene(edge->path()),
                                                transitionLabel(it->second, overlay->meshNames));
            scene.addItem(mark);
        }
    }
}

} // namespace jointscope::views
