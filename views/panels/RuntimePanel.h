// The "Runtime" dock: validate the partition and profile the graph through jointscope-cli (a child process,
// with progress and cancel), the results as tables and as canvas overlays (heat map, mismatch markers).
#pragma once

#include "graph/Graph.h"
#include "models/CliJob.h"

#include <QWidget>

#include <functional>
#include <string>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableView;
class QCheckBox;

namespace jointscope::views {

class CliJob;
class GraphScene;
class HeatLegend;
class ProfileModel;
class ValidationModel;

class RuntimePanel : public QWidget {
    Q_OBJECT
public:
    // `canvas` hosts the heat-map legend; `scene` receives the overlays.
    RuntimePanel(GraphScene* scene, QWidget* canvas, QWidget* parent = nullptr);
    ~RuntimePanel() override;

    // The root graph shown (results refer to it): `graphSpec` is --graph's value, empty for one-graph files.
    void setGraph(const QString& file, const QString& graphSpec, const Graph* graph);
    void validate();
    // Times the graph's ops; signatures the profile DB knows (timed over at least Reps runs) come from it.
    void profile();
    // Measures every op again and replaces its DB row (a noisy first measurement, another machine load).
    void remeasure();
    void setReps(int reps);
    void setDevice(const QString& device);
    // Fills the device list from `jointscope-cli devices --json` (a child process: probing CUDA may be slow
    // or crash); until it answers, and when it fails, the list offers cpu and cuda:0.
    void listDevices();
    CliJob* devicesJob() const { return devicesJob_; }
    QStringList devices() const;
    // The canvas shows another graph: the overlays and the legend follow it (results are kept while a HOP
    // body of the profiled graph is open and shown again when it comes back).
    void sceneGraphChanged();
    // Validate checks this decision JSON (what `partition --json` prints) when the dock's field is empty: the
    // partition the window shows. An empty string falls back to the decision recorded in the file.
    void setDecisionSource(std::function<std::string()> source) { decisionSource_ = std::move(source); }

    CliJob* job() const { return job_; }
    ProfileModel* profileModel() const { return profileModel_; }
    ValidationModel* validationModel() const { return validationModel_; }

signals:
    void nodeRequested(jointscope::NodeId id);
    void message(const QString& text); // for the log

private:
    void onProgress(int value, int maximum);
    void onFinished();
    void setRunning(bool running);
    void applyOverlays();
    void onDevicesListed();
    void startProfile(bool remeasure);
    // A `kind` run of this panel's file, graph and device.
    CliRequest newRequest(CliRequest::Kind kind) const;
    // Runs `request`, `status` said and `table` shown; busy until the job reports progress (validate never
    // does).
    void start(const CliRequest& request, const QString& status, QTableView* table);
    void showProfile(); // the job's document (complete or partial) in the table and on the canvas

    GraphScene* scene_;
    HeatLegend* legend_;
    CliJob* job_;
    CliJob* devicesJob_;
    ProfileModel* profileModel_;
    ValidationModel* validationModel_;
    QString file_;
    QString graphSpec_;
    const Graph* graph_ = nullptr;
    std::function<std::string()> decisionSource_;
    QString decisionPath_; // the shown decision, written for the child

    QComboBox* device_ = nullptr;
    QSpinBox* reps_ = nullptr;
    QLineEdit* partition_ = nullptr;
    QPushButton* validateButton_ = nullptr;
    QPushButton* profileButton_ = nullptr;
    QPushButton* remeasureButton_ = nullptr;
    QPushButton* cancelButton_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QCheckBox* heatBox_ = nullptr;
    QLabel* status_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QTableView* profileTable_ = nullptr;
    QTableView* validationTable_ = nullptr;
};

} // namespace jointscope::views
