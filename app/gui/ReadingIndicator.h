// The status bar's reading indicator: a progress bar with the step ("indexing 312 of 1,024 MB · 3,120
// graphs"), a cancel button and Esc, shown while a file or a session is read on a worker.
#pragma once

#include <QObject>
#include <QString>

class QProgressBar;
class QShortcut;
class QStatusBar;
class QToolButton;
class QWidget;

namespace jointscope::gui {

class ReadingIndicator : public QObject {
    Q_OBJECT
public:
    // Adds its widgets to `bar`; Esc is bound in `window` while it shows.
    ReadingIndicator(QStatusBar* bar, QWidget* window);

    void setShown(bool reading);
    // A step whose end is not known: the bar runs to and fro.
    void setStep(const QString& step);
    // `fraction` in [0, 1], or negative when unknown.
    void setProgress(double fraction, const QString& step);

signals:
    void cancelRequested();

private:
    QProgressBar* bar_;
    QToolButton* cancel_;
    QShortcut* escape_;
};

} // namespace jointscope::gui
