#include "canvas/HeatLegend.h"

#include "canvas/GraphScene.h"
#include "models/NodeFormat.h"

#include <QEvent>
#include <QFontMetrics>
#include <QLinearGradient>
#include <QPainter>

namespace jointscope::views {

namespace {

constexpr int kWidth = 280;
constexpr int kHeight = 80;
constexpr int kMargin = 10;
constexpr int kLabelGap = 6;

// Round tick times read best without trailing zeros: "10 µs", "1 ms", "2 s".
QString formatTick(double us) {
    if (us >= 1e6)
        return QStringLiteral("%1 s").arg(QString::number(us / 1e6, 'g', 3));
    if (us >= 1000)
        return QStringLiteral("%1 ms").arg(QString::number(us / 1000, 'g', 3));
    return QStringLiteral("%1 µs").arg(QString::number(us, 'g', 3));
}

} // namespace

HeatLegend::HeatLegend(QWidget* canvas) : QWidget(canvas) {
    setAttribute(Qt::WA_TransparentForMouseEvents);
    resize(sizeHint());
    canvas->installEventFilter(this);
    place();
    hide();
}

QSize HeatLegend::sizeHint() const {
    return {kWidth, kHeight};
}

void HeatLegend::setScale(const HeatScale& scale, double sumUs, const QString& device) {
    scale_ = scale;
    sumUs_ = sumUs;
    device_ = device;
    place();
    update();
}

void HeatLegend::setNote(const QString& note) {
    if (note == note_)
        return;
    note_ = note;
    update();
}

QFont HeatLegend::legendFont() const {
    QFont f = font();
    f.setPointSizeF(8);
    return f;
}

QRectF HeatLegend::barRect(const QFontMetrics& metrics) const {
    return {8, 4.0 + metrics.height() + 5, width() - 16.0, 12};
}

std::vector<HeatLegend::Tick> HeatLegend::layoutTicks(const QRectF& bar, const QFontMetrics& metrics) const {
    std::vector<Tick> ticks;
    if (!scale_.valid())
        return ticks;
    const QString first = formatMicros(scale_.minUs);
    const QString last = formatMicros(scale_.maxUs);
    ticks.push_back({bar.left(), first, true});
    // Round times between the ends, each where the log scale puts it, unless its label would run into a
    // neighbour's.
    double freeFrom = bar.left() + metrics.horizontalAdvance(first) + kLabelGap;
    const double freeTo = bar.right() - metrics.horizontalAdvance(last) - kLabelGap;
    for (double t : scale_.ticks()) {
        const double x = bar.left() + scale_.fraction(t) * bar.width();
        const QString text = formatTick(t);
        const double half = metrics.horizontalAdvance(text) / 2.0;
        if (x - half < freeFrom || x + half > freeTo)
            continue;
        ticks.push_back({x, text, false});
        freeFrom = x + half + kLabelGap;
    }
    if (scale_.maxUs > scale_.minUs)
        ticks.push_back({bar.right(), last, true});
    return ticks;
}

QStringList HeatLegend::tickLabels() const {
    const QFontMetrics metrics(legendFont());
    QStringList labels;
    for (const Tick& tick : layoutTicks(barRect(metrics), metrics))
        labels << tick.text;
    return labels;
}

bool HeatLegend::eventFilter(QObject* watched, QEvent* event) {
    if (watched == parentWidget() && event->type() == QEvent::Resize)
        place();
    return QWidget::eventFilter(watched, event);
}

void HeatLegend::place() {
    if (QWidget* canvas = parentWidget())
        // Bottom left: the minimap takes the bottom right, and the graph's inputs start at the top.
        move(kMargin, canvas->height() - height() - kMargin - 16); // 16: clear of the horizontal scroll bar
    raise();
}

void HeatLegend::paintEvent(QPaintEvent*) {
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.setPen(QColor(0xcb, 0xd5, 0xe1));
    p.setBrush(QColor(255, 255, 255, 235));
    p.drawRoundedRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5), 6, 6);

    const QFont font = legendFont();
    p.setFont(font);
    const QFontMetrics metrics(font);
    p.setPen(QColor(0x11, 0x18, 0x27));
    const QRect title(8, 4, width() - 16, metrics.height());
    p.drawText(title, Qt::AlignLeft | Qt::AlignVCenter, tr("Measured time (%1)").arg(device_));
    p.setPen(QColor(0x4b, 0x55, 0x63));
    p.drawText(title, Qt::AlignRight | Qt::AlignVCenter, tr("Σ %1").arg(formatMicros(sumUs_)));

    // The bar runs along the scale's fraction, so equal distances are equal time ratios.
    const QRectF bar = barRect(metrics);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 8; ++i)
        gradient.setColorAt(i / 8.0, GraphScene::heatColor(i / 8.0));
    p.setPen(QColor(0x94, 0xa3, 0xb8));
    p.setBrush(gradient);
    p.drawRect(bar);

    const double labelTop = bar.bottom() + 5;
    for (const Tick& tick : layoutTicks(bar, metrics)) {
        const double w = metrics.horizontalAdvance(tick.text);
        QRectF box(tick.x - w / 2, labelTop, w, metrics.height());
        if (tick.end) {
            box.moveLeft(tick.x == bar.left() ? tick.x : tick.x - w);
        } else {
            p.setPen(QColor(0x47, 0x55, 0x69));
            p.drawLine(QPointF(tick.x, bar.top() + 2), QPointF(tick.x, bar.bottom() + 3));
        }
        p.setPen(QColor(0x4b, 0x55, 0x63));
        p.drawText(box, Qt::AlignCenter, tick.text);
    }

    const QRectF noteRow(8, labelTop + metrics.height() + 2, width() - 16, metrics.height());
    p.setPen(note_.isEmpty() ? QColor(0x6b, 0x72, 0x80) : QColor(0xb4, 0x53, 0x09));
    const QString note = note_.isEmpty() ? tr("log scale · grey: not run") : note_;
    p.drawText(noteRow, Qt::AlignLeft | Qt::AlignVCenter,
               metrics.elidedText(note, Qt::ElideRight, int(noteRow.width())));
}

} // namespace jointscope::views
