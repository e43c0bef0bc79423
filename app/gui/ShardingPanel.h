// The Sharding dock: mesh shape, names and topology, Solve / Cancel, the plan's ShardingModel table and a
// comparison of the current plan with a stored one (only the nodes whose placements differ).
#pragma once

#include "graph/Graph.h"

#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTreeView;

namespace jointscope::views {
class ShardingModel;
}

namespace jointscope::gui {

class ShardingDocument;

class ShardingPanel : public QWidget {
    Q_OBJECT
public:
    explicit ShardingPanel(ShardingDocument* document, QWidget* parent = nullptr);

    views::ShardingModel* model() const { return model_; }
    views::ShardingModel* compareModel() const { return compare_; }
    // Applies the mesh fields to the document and solves; false (with the reason shown) on a bad field.
    bool solveWithFields();
    void setMeshFields(const QString& shape, const QString& names, const QString& topology);
    // The models follow the document's graph, result and stored plan.
    void refresh();
    // Loads autoparallel's plan as the stored plan (ShardingDocument::loadAutoparallelPlan, off the UI
    // thread); an error shows in the Compare tab's status.
    void loadAutoparallelPlan(const QString& path);
    QString compareStatusText() const;
    void showCompare(); // raises the Compare tab

signals:
    void locateNode(jointscope::NodeId id); // a row naming a node was clicked

private:
    void onFinished();

    ShardingDocument* doc_;
    views::ShardingModel* model_;
    views::ShardingModel* compare_;
    QLineEdit* shape_;
    QLineEdit* names_;
    QComboBox* topology_;
    QPushButton* solve_;
    QPushButton* cancel_;
    QProgressBar* busy_;
    QLabel* status_;
    QTabWidget* tabs_;
    QTreeView* tree_;
    QLabel* compareStatus_;
    QTreeView* compareTree_;
};

} // namespace jointscope::gui
