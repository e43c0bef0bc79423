#include "ReadingIndicator.h"

#include <QKeySequence>
#include <QProgressBar>
#include <QShortcut>
#include <QStatusBar>
#include <QToolButton>

namespace jointscope::gui {

ReadingIndicator::ReadingIndicator(QStatusBar* bar, QWidget* window) : QObject(window) {
    bar_ = new QProgressBar(window);
    bar_->setRange(0, 0);
    bar_->setMaximumWidth(320); // "indexing 312 of 1,024 MB · 3,120 graphs"
    bar_->setVisible(false);
    cancel_ = new QToolButton(window);
    cancel_->setText(tr("Cancel (Esc)"));
    cancel_->setToolTip(tr("Stop reading the file; the graph shown stays"));
    cancel_->setVisible(false);
    escape_ = new QShortcut(QKeySequence(Qt::Key_Escape), window);
    escape_->setEnabled(false);
    connect(cancel_, &QToolButton::clicked, this, &ReadingIndicator::cancelRequested);
    connect(escape_, &QShortcut::activated, this, &ReadingIndicator::cancelRequested);
    bar->addPermanentWidget(bar_);
    bar->addPermanentWidget(cancel_);
}

void ReadingIndicator::setShown(bool reading) {
    bar_->setVisible(reading);
    cancel_->setVisible(reading);
    escape_->setEnabled(reading);
}

void ReadingIndicator::setStep(const QString& step) {
    setProgress(-1, step);
}

void ReadingIndicator::setProgress(double fraction, const QString& step) {
    bar_->setRange(0, fraction < 0 ? 0 : 1000);
    bar_->setValue(fraction < 0 ? 0 : int(fraction * 1000));
    bar_->setFormat(step);
}

} // namespace jointscope::gui
