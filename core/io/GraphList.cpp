#include "io/GraphList.h"

#include <algorithm>
#include <limits>

namespace jointscope {

GraphList::GraphList(std::initializer_list<GraphEntry> entries) {
    for (const GraphEntry& entry : entries)
        push_back(entry);
}

std::string_view GraphList::compileId(size_t position) const {
    return compileIdOf(rows_[position]);
}

std::string_view GraphList::compileIdOf(const Row& row) const {
    if (row.aside && !aside_[row.aside - 1].compileId.empty())
        return aside_[row.aside - 1].compileId;
    return std::string_view(compileIds_).substr(row.compileIdAt, row.compileIdSize);
}

GraphEntry GraphList::operator[](size_t position) const {
    const Row row = rows_[position];
    GraphEntry entry;
    entry.index = row.index;
    entry.rank = row.rank;
    entry.line = row.line;
    entry.payloadLine = row.payloadLine;
    entry.payloadColumn = row.payloadColumn;
    entry.nodes = row.nodes;
    entry.payloadOffset = row.payloadOffset;
    entry.payloadBytes = row.payloadBytes;
    if (row.hasDigest)
        entry.digest = row.digest;
    entry.kind = texts_[row.kind];
    entry.compileId = compileIdOf(row);
    entry.heading = texts_[row.heading];
    entry.file = texts_[row.file];
    if (row.aside) {
        const Aside& aside = aside_[row.aside - 1];
        entry.payload = aside.payload;
        entry.error = aside.error;
        entry.staticInputIndices = aside.staticInputIndices;
    }
    return entry;
}

bool GraphList::rowHoldsCompileId(std::string_view id) const {
    return id.size() <= std::numeric_limits<uint8_t>::max() &&
           compileIds_.size() + id.size() <= std::numeric_limits<uint32_t>::max();
}

bool GraphList::needsAside(const GraphEntry& entry) const {
    return !entry.payload.empty() || !entry.error.empty() || entry.staticInputIndices ||
           !rowHoldsCompileId(entry.compileId);
}

uint32_t GraphList::intern(std::string_view text) {
    if (text.empty())
        return 0;
    if (const auto it = textIds_.find(text); it != textIds_.end())
        return it->second;
    const uint32_t id = uint32_t(texts_.size());
    texts_.emplace_back(text);
    textIds_.emplace(std::string(text), id);
    return id;
}

uint32_t GraphList::internCompileId(std::string_view id) {
    // The graphs of a compile come one after another: only the last id is looked at.
    if (!rows_.empty()) {
        const Row last = rows_.back();
        if (std::string_view(compileIds_).substr(last.compileIdAt, last.compileIdSize) == id)
            return last.compileIdAt;
    }
    const size_t at = compileIds_.size();
    compileIds_ += id;
    return uint32_t(at);
}

GraphList::Row GraphList::pack(const GraphEntry& entry, uint32_t aside) {
    Row row;
    row.payloadOffset = entry.payloadOffset;
    row.payloadBytes = entry.payloadBytes;
    if (entry.digest) {
        row.digest = *entry.digest;
        row.hasDigest = true;
    }
    row.index = entry.index;
    row.line = entry.line;
    row.payloadLine = entry.payloadLine;
    row.payloadColumn = entry.payloadColumn;
    row.nodes = uint32_t(std::min<uint64_t>(entry.nodes, std::numeric_limits<uint32_t>::max()));
    row.rank = entry.rank;
    row.kind = intern(entry.kind);
    row.heading = intern(entry.heading);
    row.file = intern(entry.file);
    row.aside = aside;
    if (rowHoldsCompileId(entry.compileId)) {
        row.compileIdAt = internCompileId(entry.compileId);
        row.compileIdSize = uint8_t(entry.compileId.size());
    }
    if (aside) {
        Aside& kept = aside_[aside - 1];
        kept.payload = entry.payload;
        kept.error = entry.error;
        kept.staticInputIndices = entry.staticInputIndices;
        kept.compileId = row.compileIdSize == entry.compileId.size() ? std::string() : entry.compileId;
    }
    return row;
}

void GraphList::push_back(const GraphEntry& entry) {
    uint32_t aside = 0;
    if (needsAside(entry)) {
        aside_.emplace_back();
        aside = uint32_t(aside_.size());
    }
    rows_.push_back(pack(entry, aside));
}

void GraphList::set(size_t position, const GraphEntry& entry) {
    uint32_t aside = rows_[position].aside;
    if (!aside && needsAside(entry)) {
        aside_.emplace_back();
        aside = uint32_t(aside_.size());
    }
    rows_.set(position, pack(entry, aside));
}

void GraphList::append(const GraphList& other, size_t from, size_t to) {
    appendRows(other, from, std::min(to, other.size()));
}

void GraphList::append(GraphList&& other) {
    appendRows(other, 0, other.size());
    other.clear();
}

void GraphList::appendRows(const GraphList& other, size_t from, size_t to) {
    if (from >= to)
        return;
    // Rows are copied with their texts looked up once per distinct text of `other`.
    std::vector<uint32_t> textIds(other.texts_.size(), UINT32_MAX);
    auto remap = [&](uint32_t id) {
        if (textIds[id] == UINT32_MAX)
            textIds[id] = intern(other.texts_[id]);
        return textIds[id];
    };
    for (size_t i = from; i < to; ++i) {
        Row row = other.rows_[i];
        if (!rowHoldsCompileId(other.compileIdOf(row))) {
            push_back(other[i]);
            continue;
        }
        row.kind = remap(row.kind);
        row.heading = remap(row.heading);
        row.file = remap(row.file);
        row.compileIdAt =
            internCompileId(std::string_view(other.compileIds_).substr(row.compileIdAt, row.compileIdSize));
        if (row.aside) {
            aside_.push_back(other.aside_[row.aside - 1]);
            row.aside = uint32_t(aside_.size());
        }
        rows_.push_back(row);
    }
}

void GraphList::shiftRows(size_t from, uint32_t lineBase, uint32_t firstIndex) {
    uint32_t index = firstIndex;
    rows_.update(from, rows_.size(), [&](Row& row) {
        row.line += lineBase;
        if (row.payloadLine)
            row.payloadLine += lineBase;
        row.index = index++;
    });
}

void GraphList::setOrigin(size_t from, int32_t rank, std::string_view file) {
    const uint32_t fileId = intern(file);
    rows_.update(from, rows_.size(), [&](Row& row) {
        row.rank = rank;
        row.file = fileId;
    });
}

GraphList GraphList::slice(size_t from, size_t to) const {
    GraphList out;
    out.append(*this, from, to);
    return out;
}

size_t GraphList::heldBytes() const {
    size_t bytes = rows_.heldBytes() + aside_.capacity() * sizeof(Aside) + compileIds_.capacity();
    for (const Aside& aside : aside_)
        bytes += aside.payload.capacity() + aside.error.capacity() + aside.compileId.capacity() +
                 (aside.staticInputIndices ? aside.staticInputIndices->capacity() * sizeof(int64_t) : 0);
    for (const std::string& text : texts_)
        bytes += 2 * (sizeof(std::string) + text.capacity()) + sizeof(uint32_t);
    return bytes;
}

} // namespace jointscope
