#include "canvas/HeatLegend.h"

#include "canvas/GraphScene.h"

#include <QEvent>
#include <QFontMetrics>
#include <QLinearGradient>
#include <QPainter>

namespace jointscope::views {

namespace {

constexpr int kWidth = 230;
constexpr int kHeight = 64;
constexpr int kMargin = 10;

QString formatUs(double us) {
    return us >= 1000 ? QStringLiteral("%1 ms").arg(us / 1000, 0, 'f', us >= 10000 ? 1 : 2)
                      : QStringLiteral("%1 µs").arg(us, 0, 'f', us >= 100 ? 0 : 1);
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

void HeatLegend::setRange(double maxUs, double sumUs, const QString& device) {
    maxUs_ = maxUs;
    sumUs_ = sumUs;
    device_ = device;
    place();
    update();
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

    QFont font = p.font();
    font.setPointSizeF(8);
    p.setFont(font);
    const QFontMetrics metrics(font);
    p.setPen(QColor(0x11, 0x18, 0x27));
    const QRect title(8, 4, width() - 16, metrics.height());
    p.drawText(title, Qt::AlignLeft | Qt::AlignVCenter, tr("Measured time (%1)").arg(device_));
    p.setPen(QColor(0x4b, 0x55, 0x63));
    p.drawText(title, Qt::AlignRight | Qt::AlignVCenter, tr("Σ %1").arg(formatUs(sumUs_)));

    const QRectF bar(8, title.bottom() + 5, width() - 16, 12);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (int i = 0; i <= 8; ++i)
        gradient.setColorAt(i / 8.0, GraphScene::heatColor(i / 8.0));
    p.setPen(QColor(0x94, 0xa3, 0xb8));
    p.setBrush(gradient);
    p.drawRect(bar);

    const QRect labels(8, int(bar.bottom()) + 3, width() - 16, metrics.height());
    p.setPen(QColor(0x4b, 0x55, 0x63));
    p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("0"));
    p.drawText(labels, Qt::AlignHCenter | Qt::AlignVCenter, tr("grey: not run"));
    p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter, formatUs(maxUs_));
}

} // namespace jointscope::views
