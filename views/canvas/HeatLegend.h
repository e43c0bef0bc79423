// Colour key of the measured-time heat map, floating in the bottom-left corner of the canvas.
#pragma once

#include <QWidget>

namespace jointscope::views {

class HeatLegend : public QWidget {
    Q_OBJECT
public:
    explicit HeatLegend(QWidget* canvas);

    // The slowest op's time and the Σ of all timed ops, both in µs.
    void setRange(double maxUs, double sumUs, const QString& device);
    QSize sizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void place();

    double maxUs_ = 0;
    double sumUs_ = 0;
    QString device_;
};

} // namespace jointscope::views
