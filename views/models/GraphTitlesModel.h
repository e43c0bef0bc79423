// The graphs of a file as one list of titles ("12: [3/0] aot_joint_graph"), for pickers such as the Graph
// Diff dock's A and B. The model shares the file's list and builds a title only when a row is shown: a log of
// 225 thousand graphs in two combo boxes held 450 thousand items before.
#pragma once

#include "io/GraphList.h"

#include <QAbstractListModel>
#include <QString>

#include <memory>

namespace jointscope::views {

class GraphTitlesModel : public QAbstractListModel {
    Q_OBJECT
public:
    explicit GraphTitlesModel(QObject* parent = nullptr);

    // `prefix` goes before every title (the file's name when it is not the file shown).
    void setEntries(std::shared_ptr<const GraphList> entries, QString prefix = {});

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const GraphList> entries_;
    QString prefix_;
};

} // namespace jointscope::views
