// Two partition decisions in the window: the Decision Diff dock compares the decision shown with a
// baseline — torch's own decision (when the file records it), a decision kept earlier (Keep This
// Decision: before a pin, at another budget) or a decision file (what `partition --json` prints and the
// window exports) — and follows every new solve, so moving the budget shows at once what moved between
// saved and recomputed. A row selects and centres its node on the canvas.
#pragma once

#include "Feature.h"
#include "FeatureContext.h"
#include "partition/DecisionDiff.h"

#include <QObject>

#include <memory>
#include <optional>
#include <vector>

class QAction;
class QComboBox;
class QDockWidget;
class QLabel;
class QTableView;

namespace jointscope::views {
class DecisionDiffModel;
}

namespace jointscope::gui {

class PartitionDocument;
struct PartitionResult;

class DecisionDiffFeature : public Feature {
    Q_OBJECT
public:
    // What the window places: Tools › Keep This Decision, Tools › Compare Decision with File…,
    // View › Decision Diff.
    struct Actions {
        QAction* keep = nullptr;
        QAction* openFile = nullptr;
        QAction* showDock = nullptr;
    };

    DecisionDiffFeature(const FeatureContext& context, PartitionDocument* document,
                        QObject* parent = nullptr);
    ~DecisionDiffFeature() override;

    QDockWidget* dock() const { return dock_; }
    views::DecisionDiffModel* model() const { return model_; }
    const Actions& actions() const { return actions_; }
    // The baselines offered, in the picker's order ("torch's decision", "kept 1: budget 1.00", a file).
    QStringList baselines() const;
    int baseline() const; // the picker's row; -1 when there is none
    void setBaseline(int row);
    // Keeps the decision shown as a baseline and compares with it; false when nothing is solved.
    bool keepDecision();
    // Reads a decision file as the baseline; a file that is not one is reported, located, and false.
    bool openDecision(const QString& path);
    QString summaryText() const;

    void setGraph(const ShownGraph& shown) override;
    std::vector<DockPlacement> docks() const override;
    std::vector<MenuEntry> menuEntries() const override;

private:
    struct Baseline {
        QString label;
        partition::DecisionDocument document;
        bool torchs = false; // follows the result: torch's decision evaluated on the graph solved
    };

    void createDock();
    void addBaseline(Baseline baseline);
    void resultChanged(const std::shared_ptr<const PartitionResult>& result);
    void compare();
    void selectNode(const QString& name);

    FeatureContext ctx_;
    PartitionDocument* document_;
    views::DecisionDiffModel* model_;
    QDockWidget* dock_ = nullptr;
    QComboBox* picker_ = nullptr;
    QLabel* summary_ = nullptr;
    QTableView* table_ = nullptr;
    Actions actions_;
    std::vector<Baseline> baselines_;
    std::optional<partition::DecisionDocument> here_; // the decision shown
    int kept_ = 0;                                    // decisions kept since the graph was shown
};

} // namespace jointscope::gui
