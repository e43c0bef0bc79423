// Colour key of the measured-time heat map, floating in the bottom-left corner of the canvas.
#pragma once

#include "canvas/HeatScale.h"

#include <QWidget>

#include <vector>

namespace jointscope::views {

class HeatLegend : public QWidget {
    Q_OBJECT
public:
    explicit HeatLegend(QWidget* canvas);

    // The scene's colour scale and the Σ of all timed ops in µs.
    void setScale(const HeatScale& scale, double sumUs, const QString& device);
    // A line under the scale (empty: the default, "log scale · grey: not run").
    void setNote(const QString& note);
    QString note() const { return note_; }
    // The times written under the bar, left to right: both ends and the round times between them that fit.
    QStringList tickLabels() const;
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void place();
    struct Tick {
        double x;
        QString text;
        bool end; // the fastest or slowest op: no tick mark, the label aligned to the bar's end
    };
    std::vector<Tick> layoutTicks(const QRectF& bar, const QFontMetrics& metrics) const;
    QRectF barRect(const QFontMetrics& metrics) const;
    QFont legendFont() const;

    HeatScale scale_;
    double sumUs_ = 0;
    QString device_;
    QString note_;
};

} // namespace jointscope::views
