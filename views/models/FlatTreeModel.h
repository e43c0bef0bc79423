// A tree model built in one go and then only read, kept as one vector: item 0 is the invisible root, each
// item knows its parent, its row under it and its children, and an index carries its item's position in the
// vector. Derived models add their own fields through `Fields` and give their column count, itemData and
// headerData.
#pragma once

#include <QAbstractItemModel>

#include <utility>
#include <vector>

namespace jointscope::views {

template <typename Fields> class FlatTreeModel : public QAbstractItemModel {
public:
    explicit FlatTreeModel(int columns, QObject* parent = nullptr)
        : QAbstractItemModel(parent), items_(1), columns_(columns) {}

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override {
        const size_t p = itemId(parent);
        if (p >= items_.size() || row < 0 || size_t(row) >= items_[p].children.size() || column < 0 ||
            column >= columnCount(parent))
            return {};
        return createIndex(row, column, quintptr(items_[p].children[size_t(row)]));
    }

    QModelIndex parent(const QModelIndex& child) const override {
        if (!child.isValid() || child.internalId() >= items_.size())
            return {};
        const int p = items_[child.internalId()].parent;
        if (p <= 0)
            return {};
        return createIndex(items_[size_t(p)].row, 0, quintptr(p));
    }

    int rowCount(const QModelIndex& parent = {}) const override {
        if (parent.isValid() && parent.column() != 0)
            return 0;
        const size_t p = itemId(parent);
        return p < items_.size() ? int(items_[p].children.size()) : 0;
    }

    int columnCount(const QModelIndex& = {}) const override { return columns_; }

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override {
        const Item* item = itemAt(index);
        return item ? itemData(*item, index.column(), role) : QVariant();
    }

protected:
    struct Item : Fields {
        int parent = -1;
        int row = 0;
        std::vector<int> children;
    };

    // A new last child of `parent`; returns its id.
    int addItem(int parent, Fields fields = {}) {
        Item item;
        static_cast<Fields&>(item) = std::move(fields);
        item.parent = parent;
        item.row = int(items_[size_t(parent)].children.size());
        items_.push_back(std::move(item));
        const int id = int(items_.size() - 1);
        items_[size_t(parent)].children.push_back(id);
        return id;
    }

    // What `item` shows in `column` for `role`.
    virtual QVariant itemData(const Item& item, int column, int role) const = 0;

    // Only the root left (inside begin / endResetModel).
    void clearItems() { items_.assign(1, Item{}); }

    // The item behind an index of this model; null for an invalid one.
    const Item* itemAt(const QModelIndex& index) const {
        return index.isValid() && index.internalId() < items_.size() ? &items_[index.internalId()] : nullptr;
    }

    // An index of item `id` in `column`.
    QModelIndex indexOfItem(int id, int column = 0) const {
        return createIndex(items_[size_t(id)].row, column, quintptr(id));
    }

    std::vector<Item> items_; // items_[0] is the invisible root

private:
    int columns_;

    static size_t itemId(const QModelIndex& index) {
        return index.isValid() ? size_t(index.internalId()) : 0;
    }
};

} // namespace jointscope::views
