// The Graphs dock while a TORCH_TRACE log is indexed: the graphs found so far are listed (refreshed at most
// every quarter second, the list disabled: nothing can be picked before the file is read), until the file
// opens or not.
#pragma once

#include "io/GraphList.h"

#include <QObject>

#include <functional>
#include <memory>
#include <vector>

class QDockWidget;
class QTimer;
class QWidget;

namespace jointscope::views {
class DocumentLoader;
class GraphListModel;
} // namespace jointscope::views

namespace jointscope::gui {

class GraphListFill : public QObject {
    Q_OBJECT
public:
    // Lists what `loader`'s newest open finds (DocumentLoader::graphsFound).
    GraphListFill(const views::DocumentLoader* loader, views::GraphListModel* model, QWidget* list,
                  QDockWidget* dock, QObject* parent = nullptr);

    // The read ended. `shown`: the entries of the file shown now, put back when the list shows a partial
    // index (a log that did not open); nullptr when the caller lists a new file itself.
    void end(std::shared_ptr<const GraphList> shown);

private:
    void restart(); // a new file is being read: what the last one found goes
    void add(const GraphList& graphs);

    const views::DocumentLoader* loader_;
    views::GraphListModel* model_;
    QWidget* list_;
    QDockWidget* dock_;
    QTimer* refresh_;
    std::shared_ptr<GraphList> found_;               // shared with the model once listed
    bool listed_ = false;                            // the model shows found_, not the file shown
};

} // namespace jointscope::gui
