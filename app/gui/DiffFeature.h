// Graph diff in the window: the Graph Diff dock picks two graphs of the open file (two ranks of a folder of
// per-rank logs, two compiles, a recompile), or graph B from another file (a plain and a checkpointed run),
// lists their differences (views/models/DiffModel) and, for a
// folder, where the ranks diverge; the canvas shows graph A or B with the differences framed (added green,
// removed red, changed amber); Next / Previous Difference select and centre each in the graph that has it.
#pragma once

#include "Feature.h"
#include "FeatureContext.h"
#include "graph/GraphDiff.h"
#include "io/GraphFile.h"
#include "models/BackgroundJob.h"

#include <QObject>

#include <functional>
#include <memory>
#include <optional>

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QPlainTextEdit;
class QRadioButton;
class QTableView;

namespace jointscope::views {
class DiffModel;
class GraphTitlesModel;
}

namespace jointscope::gui {

class DiffFeature : public Feature {
    Q_OBJECT
public:
    // What the window places: Tools › Compare Graphs, Navigate › Next / Previous Difference.
    struct Actions {
        QAction* compare = nullptr; // shows the dock and compares the graphs picked
        QAction* next = nullptr;
        QAction* previous = nullptr;
    };

    explicit DiffFeature(const FeatureContext& context, QObject* parent = nullptr);
    ~DiffFeature() override;

    QDockWidget* dock() const { return dock_; }
    const Actions& actions() const { return actions_; }
    views::DiffModel* model() const { return model_; }

    // A newly opened file: its graphs in the pickers, preset to the first recompile; for a folder, the ranks
    // are compared on a worker, then the divergence summary shows and the pickers move to the first graph
    // that differs across ranks.
    void setFile(const std::shared_ptr<const GraphFile>& file) override;
    std::pair<int, int> picked() const; // entry indexes in the A and B pickers
    void pick(size_t a, size_t b);
    // Graph B from another file (B from File…): its graphs fill the B picker, preset to the kind of graph A;
    // an empty path goes back to the open file. False, said in the log, when the file cannot be read.
    bool setFileB(const QString& path);
    QString fileBName() const; // empty: B is a graph of the open file
    // Parses and diffs the picked graphs on a worker, lists the differences and shows graph A; `done(ok)`
    // once shown. While the ranks of a folder are still being compared, it waits for them (and their pick).
    void compare(std::function<void(bool)> done = {});
    // Selects difference `row` of the list and centres its node in the graph that has it (A for removed,
    // B for added, the graph shown for changed); `done` once centred.
    void goTo(int row, std::function<void()> done = {});
    void step(int delta, std::function<void()> done = {}); // next (+1) / previous (-1) difference
    int currentRow() const;
    std::optional<bool> shownSide() const { return shownSide_; } // true: B on the canvas
    QString summaryText() const;
    QString divergenceText() const;
    void applyOverlay() override; // the canvas has a new layout (or shows another graph)
    std::vector<DockPlacement> docks() const override;
    std::vector<MenuEntry> menuEntries() const override;

private:
    void createDock();
    void fillPicker(QComboBox* pick, const std::shared_ptr<const GraphFile>& file, const QString& prefix);
    void showSide(bool sideB, std::function<void()> then);

    FeatureContext ctx_;
    Actions actions_;
    views::BackgroundJob job_;                                // parse and diff
    views::BackgroundJob rankJob_;                            // the divergence summary of a folder
    std::optional<std::function<void(bool)>> pendingCompare_; // asked for while rankJob_ runs
    std::shared_ptr<const GraphFile> file_;
    std::shared_ptr<const GraphFile> fileB_; // null: B is a graph of file_
    std::shared_ptr<const Graph> a_, b_;
    std::shared_ptr<const GraphDiff> diff_;
    size_t entryA_ = 0, entryB_ = 0;
    std::optional<bool> shownSide_;
    const Graph* shownRoot_ = nullptr; // compared, never dereferenced

    views::DiffModel* model_ = nullptr;
    views::GraphTitlesModel* titlesA_ = nullptr; // what pickA_ and pickB_ list
    views::GraphTitlesModel* titlesB_ = nullptr;
    QDockWidget* dock_ = nullptr;
    QComboBox* pickA_ = nullptr;
    QComboBox* pickB_ = nullptr;
    QRadioButton* showA_ = nullptr;
    QRadioButton* showB_ = nullptr;
    QLabel* summary_ = nullptr;
    QPlainTextEdit* divergence_ = nullptr;
    QTableView* table_ = nullptr;
};

} // namespace jointscope::gui
