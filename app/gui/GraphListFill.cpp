#include "GraphListFill.h"

#include "models/DocumentLoader.h"
#include "models/GraphListModel.h"

#include <QDockWidget>
#include <QTimer>
#include <QWidget>

#include <utility>

namespace jointscope::gui {

GraphListFill::GraphListFill(const views::DocumentLoader* loader, views::GraphListModel* model, QWidget* list,
                             QDockWidget* dock, QObject* parent)
    : QObject(parent), loader_(loader), model_(model), list_(list), dock_(dock), refresh_(new QTimer(this)),
      found_(std::make_shared<GraphList>()) {
    connect(loader_, &views::DocumentLoader::started, this, &GraphListFill::restart);
    connect(loader_, &views::DocumentLoader::graphsFound, this,
            [this](quint64 ticket, std::shared_ptr<const GraphList> graphs) {
                if (ticket == loader_->ticket())
                    add(*graphs);
            });
    refresh_->setSingleShot(true);
    refresh_->setInterval(250); // a model reset per batch would stall a list of 100k graphs
    connect(refresh_, &QTimer::timeout, this, [this] {
        listed_ = true;
        list_->setEnabled(false);
        model_->setEntries(found_);
        dock_->setVisible(true);
    });
}

void GraphListFill::restart() {
    found_ = std::make_shared<GraphList>(); // the model may still show the last one
    refresh_->stop();
}

void GraphListFill::add(const GraphList& graphs) {
    found_->append(graphs);
    if (!refresh_->isActive())
        refresh_->start();
}

void GraphListFill::end(std::shared_ptr<const GraphList> shown) {
    restart();
    list_->setEnabled(true);
    if (std::exchange(listed_, false) && shown) {
        dock_->setVisible(shown->size() > 1);
        model_->setEntries(std::move(shown));
    }
}

} // namespace jointscope::gui
