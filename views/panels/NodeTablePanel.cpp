#include "panels/NodeTablePanel.h"

#include "models/NodeTableModel.h"
#include "panels/ResultTable.h"

#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QVBoxLayout>

namespace jointscope::views {

NodeTablePanel::NodeTablePanel(QWidget* parent)
    : QWidget(parent), model_(new NodeTableModel(this)), proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView(this)) {
    proxy_->setSourceModel(model_);
    proxy_->setSortRole(NodeTableModel::SortRole);
    proxy_->setFilterRole(NodeTableModel::SearchTextRole);
    proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
    table_->setModel(proxy_);
    // Graph order until a header is clicked: sorting 100k names on every open took most of the UI-thread
    // event that shows a new graph (bench/gui_open show_ms).
    styleResultTable(table_, -1, Qt::AscendingOrder);
    // Columns fit the rows on screen and 200 more, not Qt's 1,000: measuring a cell shapes its text, and
    // fitting 1,000 rows of every column was most of the UI-thread event that shows a new graph.
    table_->horizontalHeader()->setResizeContentsPrecision(200);
    auto* filter = new QLineEdit(this);
    filter->setPlaceholderText(tr("Filter nodes (name, op, target)"));
    filter->setClearButtonEnabled(true);
    connect(filter, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(filter);
    layout->addWidget(table_);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!showing_ && current.isValid())
                    emit nodePicked(current.data(NodeTableModel::NodeIdRole).toUInt());
            });
}

void NodeTablePanel::setGraph(const Graph* graph, std::vector<NodeRole> roles) {
    model_->setGraph(graph, std::move(roles));
    table_->resizeColumnsToContents();
}

void NodeTablePanel::showNode(NodeId id) {
    const QModelIndex row = proxy_->mapFromSource(model_->index(int(id), 0));
    if (!row.isValid())
        return;
    showing_ = true;
    table_->selectionModel()->setCurrentIndex(row, QItemSelectionModel::ClearAndSelect |
                                                       QItemSelectionModel::Rows);
    table_->scrollTo(row);
    showing_ = false;
}

} // namespace jointscope::views
