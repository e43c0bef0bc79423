#include "models/PartitionModel.h"

#include "partition/DecisionDiff.h"

#include "models/ColumnTitles.h"
#include "models/NodeFormat.h"

#include <QFont>

#include <algorithm>
#include <set>

namespace jointscope::views {

using namespace jointscope::partition;

namespace {

std::vector<std::string> savedNames(const Partition& p) {
    std::vector<std::string> names;
    for (const auto* list : {&p.saved, &p.savedSym})
        for (NodeId id : *list)
            names.push_back(p.graph.node(id).name);
    return names;
}

std::vector<std::string> namesOf(const Partition& p, const std::vector<NodeId>& ids) {
    std::vector<std::string> names;
    for (NodeId id : ids)
        names.push_back(p.graph.node(id).name);
    return names;
}

// "1 node", "4 nodes" (no translator is installed to resolve tr()'s %n plurals).
QString count(size_t n, const char* noun) {
    return QStringLiteral("%1 %2%3").arg(n).arg(QLatin1String(noun), n == 1 ? "" : "s");
}

} // namespace

PartitionModel::PartitionModel(QObject* parent) : FlatTreeModel(ColumnCount, parent) {}

void PartitionModel::clear() {
    beginResetModel();
    clearItems();
    shown_ = nullptr;
    endResetModel();
}

void PartitionModel::addNodes(const QString& title, const std::vector<std::string>& names,
                              const QString& detail) {
    const int section = add(0, title, count(names.size(), "node"));
    for (const std::string& name : names)
        addNode(section, name, detail);
}

void PartitionModel::addNode(int section, const std::string& name, const QString& detail) {
    const int row = add(section, QString::fromStdString(name), detail);
    items_[size_t(row)].names = true;
    if (shown_)
        if (const auto id = shown_->find(name))
            items_[size_t(row)].ref = *id;
}

void PartitionModel::addLoggedRun(const LoggedRun& run) {
    const CompileSettings& s = run.settings;
    const int settings = add(0, tr("Log settings"), tr("as torch ran this compile"));
    // Notes go in the value column: a long key would push every value of the tree out of the dock.
    for (const std::string& note : s.notes)
        add(settings, tr("setting"), QString::fromStdString(note));
    for (const std::string& u : s.unsupported)
        add(settings, tr("⚠ not followed"), QString::fromStdString(u));
    if (!s.replayJointPasses)
        return;
    // The graph the partitioner saw: each pass that changed it, and the nodes it removed or replaced.
    size_t touched = 0;
    for (const PassChange& c : run.passes.changes)
        touched += c.removed.size() + c.replaced.size() + c.added.size();
    const int passes =
        add(0, tr("Joint-graph passes"),
            run.passes.changed()
                ? tr("%1 changed %2")
                      .arg(run.passes.changes.size() == 1 ? tr("1 pass")
                                                          : tr("%1 passes").arg(run.passes.changes.size()),
                           count(touched, "node"))
                : tr("replayed: nothing to change"));
    for (const PassChange& c : run.passes.changes) {
        const int pass = add(passes, QString::fromStdString(c.pass),
                             tr("%1 removed, %2 replaced, %3 added")
                                 .arg(c.removed.size())
                                 .arg(c.replaced.size())
                                 .arg(c.added.size()));
        for (const std::string& name : c.removed)
            addNode(pass, name, tr("removed"));
        for (const auto& [old, replacement] : c.replaced)
            addNode(pass, old, tr("replaced by %1").arg(QString::fromStdString(replacement)));
        for (const std::string& name : c.added)
            addNode(pass, name, tr("added"));
    }
    for (const std::string& n : run.passes.notReplayed)
        add(passes, tr("⚠ not replayed"), QString::fromStdString(n));
}

void PartitionModel::setPartition(const Graph* shown, std::shared_ptr<const Partition> current,
                                  double recomputeCost, std::shared_ptr<const Partition> previous,
                                  std::optional<std::vector<std::string>> torchSaved) {
    beginResetModel();
    clearItems();
    shown_ = shown;
    if (current) {
        const Partition& p = *current;
        const int summary = add(0, tr("Summary"));
        add(summary, tr("Saved"),
            count(p.saved.size(), "tensor") + QStringLiteral(", ") + formatBytes(p.savedBytes));
        // The budget bounds activations: saved inputs (parameters, the batch) are alive anyway.
        add(summary, tr("Saved activations"), formatBytes(p.activationBytes));
        add(summary, tr("Saved inputs"), formatBytes(p.savedBytes - p.activationBytes));
        add(summary, tr("Saved symbols"), QString::number(p.savedSym.size()));
        add(summary, tr("Recomputed"), count(p.recomputed.size(), "node"));
        add(summary, tr("Recompute cost"), formatFlops(recomputeCost));
        if (peakBytes_)
            add(summary, tr("Peak memory"), formatBytes(*peakBytes_));
        if (torchPeakBytes_)
            add(summary, tr("Torch's peak memory"), formatBytes(*torchPeakBytes_));
        add(summary, tr("Banned"), QString::number(p.cut ? p.cut->banned.size() : 0));
        add(summary, tr("Decided by"), toQString(escalationName(p.escalation)));
        add(summary, tr("Memory budget"), QString::number(p.memoryBudget, 'g', 3));
        add(summary, tr("Cut value"), p.cut ? QString::number(p.cut->cutValue) : tr("—"));
        add(summary, tr("Engine time"), tr("%1 ms").arg(p.seconds * 1e3, 0, 'f', 1));
        if (!pinConflicts_.empty()) {
            add(summary, tr("Pins overridden"), QStringLiteral("⚠ ") + count(pinConflicts_.size(), "node"));
            const int section = add(0, tr("Pins the solve overrode"), count(pinConflicts_.size(), "node"));
            for (const PinConflict& c : pinConflicts_)
                addNode(section, c.node,
                        tr("%1 pin, but %2: %3")
                            .arg(toQString(policyName(c.pinned)), toQString(c.outcome), toQString(c.rule)));
        }
        const std::vector<std::string> ours = savedNames(p);
        if (torchSaved) {
            const auto onlyTorch = partition::namesMissingFrom(*torchSaved, ours);
            const auto onlyOurs = partition::namesMissingFrom(ours, *torchSaved);
            add(summary, tr("Torch's decision"),
                onlyTorch.empty() && onlyOurs.empty()
                    ? tr("same saved set")
                    : tr("differs in %1").arg(count(onlyTorch.size() + onlyOurs.size(), "node")));
            addNodes(tr("Torch saves, jointscope does not"), onlyTorch, tr("saved by torch"));
            addNodes(tr("jointscope saves, torch does not"), onlyOurs, tr("saved by jointscope"));
        }
        if (loggedRun_)
            addLoggedRun(*loggedRun_);
        if (previous) {
            const std::vector<std::string> before = savedNames(*previous);
            addNodes(tr("Became saved"), partition::namesMissingFrom(ours, before), tr("now saved"));
            addNodes(tr("No longer saved"), partition::namesMissingFrom(before, ours), tr("was saved"));
            addNodes(tr("Became recomputed"),
                     partition::namesMissingFrom(namesOf(p, p.recomputed),
                                                 namesOf(*previous, previous->recomputed)),
                     tr("now recomputed"));
        }
    }
    endResetModel();
}

int PartitionModel::sectionRow(const QString& title) const {
    for (int child : items_[0].children)
        if (items_[size_t(child)].key == title)
            return items_[size_t(child)].row;
    return -1;
}

QStringList PartitionModel::sectionNodes(const QString& title) const {
    QStringList names;
    const int row = sectionRow(title);
    if (row < 0)
        return names;
    for (int child : items_[size_t(items_[0].children[size_t(row)])].children)
        names << items_[size_t(child)].key;
    return names;
}

QString PartitionModel::summaryValue(const QString& key) const {
    const int row = sectionRow(tr("Summary"));
    if (row < 0)
        return {};
    for (int child : items_[size_t(items_[0].children[size_t(row)])].children)
        if (items_[size_t(child)].key == key)
            return items_[size_t(child)].value;
    return {};
}

QVariant PartitionModel::itemData(const Item& item, int column, int role) const {
    switch (role) {
    case Qt::DisplayRole:
        return column == KeyColumn ? item.key : item.value;
    case Qt::ToolTipRole:
        return item.names ? tr("Click to locate %1 on the canvas").arg(item.key) : QVariant();
    case Qt::FontRole:
        if (item.parent == 0 && column == KeyColumn) {
            QFont bold;
            bold.setBold(true);
            return bold;
        }
        return {};
    case NodeIdRole:
        return item.ref == kNoNode ? QVariant() : QVariant::fromValue(uint(item.ref));
    case NodeNameRole:
        return item.names ? QVariant(item.key) : QVariant();
    default:
        return {};
    }
}

QVariant PartitionModel::headerData(int section, Qt::Orientation orientation, int role) const {
    return columnTitle({tr("Partition"), tr("Value")}, section, orientation, role);
}

} // namespace jointscope::views
