// The graphs a file lists, packed: a row of numbers per graph, its texts interned or kept aside. A 10 GB
// TORCH_TRACE log lists 225 thousand graphs; as GraphEntry values (six strings each) they held 120 MB.
#pragma once

#include "io/GraphEntry.h"
#include "support/PositionIterator.h"
#include "support/SpillBlocks.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace jointscope {

class GraphList {
public:
    // Reads GraphEntry values, built from a row when read (nothing refers into the list).
    using const_iterator = PositionIterator<GraphList, GraphEntry>;
    using value_type = GraphEntry;
    using iterator = const_iterator;

    GraphList() = default;
    GraphList(std::initializer_list<GraphEntry> entries);
    // Rows but those of the newest `residentRowBlocks` blocks of 4096 wait in a temporary file (SpillVector).
    explicit GraphList(size_t residentRowBlocks) : rows_(residentRowBlocks) {}

    size_t size() const { return rows_.size(); }
    bool empty() const { return rows_.empty(); }
    GraphEntry operator[](size_t position) const;
    GraphEntry front() const { return (*this)[0]; }
    GraphEntry back() const { return (*this)[size() - 1]; }
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, size()}; }

    // The fields read for every graph of a big log (a listing, a search), without building the entry.
    std::string_view kind(size_t position) const { return texts_[rows_[position].kind]; }
    std::string_view compileId(size_t position) const;
    int32_t rank(size_t position) const { return rows_[position].rank; }
    uint32_t entryIndex(size_t position) const { return rows_[position].index; } // GraphEntry::index
    std::string_view file(size_t position) const { return texts_[rows_[position].file]; }

    void push_back(const GraphEntry& entry);
    void set(size_t position, const GraphEntry& entry); // entry `position` becomes `entry`
    // Entries [from, size()) of a part of a log, placed after the part's first `lineBase` lines: their lines
    // move down as much and they are numbered from `firstIndex`.
    void shiftRows(size_t from, uint32_t lineBase, uint32_t firstIndex);
    // Entries [from, size()) came from the log of rank `rank` in a folder of per-rank logs, file `file`.
    void setOrigin(size_t from, int32_t rank, std::string_view file);
    // Appends entries [from, to) of `other`.
    void append(const GraphList& other, size_t from = 0, size_t to = SIZE_MAX);
    // Appends all of `other`, freeing its rows as they are copied (a part of a log joining the whole).
    void append(GraphList&& other);
    GraphList slice(size_t from, size_t to) const;
    void clear() { *this = GraphList(rows_.residentBlocks()); }
    // Bytes held in memory (the rows not in the file, their texts and what is kept aside), for benchmarks.
    size_t heldBytes() const;
    size_t spilledRows() const { return rows_.spilledValues(); }

private:
    struct Row {
        uint64_t payloadOffset = 0;
        uint64_t payloadBytes = 0;
        std::array<uint8_t, 16> digest{};
        uint32_t index = 0;
        uint32_t line = 0;
        uint32_t payloadLine = 0;
        uint32_t payloadColumn = 0;
        uint32_t nodes = 0; // a graph of 4 billion nodes is never parsed
        int32_t rank = -1;
        uint32_t compileIdAt = 0; // bytes [compileIdAt, compileIdAt + compileIdSize) of compileIds_
        uint32_t aside = 0;       // 1 + position in aside_; 0 when nothing is kept aside
        uint32_t kind = 0;        // positions in texts_
        uint32_t heading = 0;
        uint32_t file = 0;
        uint8_t compileIdSize = 0;
        bool hasDigest = false;
    };
    // What most graphs of a log leave empty.
    struct Aside {
        std::string payload;
        std::string error;
        std::optional<std::vector<int64_t>> staticInputIndices;
        std::string compileId; // one longer than 255 bytes (a hostile log's)
    };
    void appendRows(const GraphList& other, size_t from, size_t to);
    std::string_view compileIdOf(const Row& row) const;
    bool rowHoldsCompileId(std::string_view id) const; // else it is kept aside
    bool needsAside(const GraphEntry& entry) const;
    Row pack(const GraphEntry& entry, uint32_t aside);
    uint32_t intern(std::string_view text);
    uint32_t internCompileId(std::string_view id);

    // In blocks: a list that grows never copies its rows nor holds twice their room, and those of a big log
    // wait on the disk.
    SpillVector<Row> rows_;
    std::vector<Aside> aside_;
    std::vector<std::string> texts_{std::string()}; // kinds, headings, files; 0 is ""
    struct TextHash {
        using is_transparent = void;
        size_t operator()(std::string_view text) const { return std::hash<std::string_view>()(text); }
    };
    std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> textIds_;
    std::string compileIds_; // graphs of one compile share their id's bytes
};

} // namespace jointscope
