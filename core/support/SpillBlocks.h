// Fixed-size blocks of bytes of which only the newest few stay in memory; older ones are written to an
// unnamed temporary file and read back when asked for. What an index holds per graph or per record of a log
// grows with the log; kept this way, the memory it takes does not.
#pragma once

#include "support/PositionIterator.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace jointscope {

class SpillBlocks {
public:
    SpillBlocks(size_t blockBytes, size_t residentBlocks);
    SpillBlocks(SpillBlocks&& other) noexcept;
    SpillBlocks& operator=(SpillBlocks&& other) noexcept;
    SpillBlocks(const SpillBlocks&) = delete;
    SpillBlocks& operator=(const SpillBlocks&) = delete;
    ~SpillBlocks();

    size_t blockBytes() const { return blockBytes_; }
    size_t residentBlocks() const { return residentBlocks_; }
    size_t blocks() const { return blocks_.size(); }
    // Adds a block, in memory, and returns it. Past the resident count the oldest block in memory goes to the
    // file; where no temporary file can be written, blocks stay in memory.
    std::byte* addBlock();
    // Block `block` when it is in memory, else null.
    std::byte* resident(size_t block) { return blocks_[block].get(); }
    const std::byte* resident(size_t block) const { return blocks_[block].get(); }
    // Bytes [offset, offset + bytes) of any block. Reads may run on several threads at once (beside no
    // write).
    void read(size_t block, size_t offset, void* out, size_t bytes) const;
    void write(size_t block, size_t offset, const void* in, size_t bytes);
    size_t spilledBlocks() const { return spilled_; }
    // Memory held: the blocks in memory and those read back from the file.
    size_t heldBytes() const;

private:
    struct File; // the temporary file and the blocks last read from it

    bool spill(size_t block);

    size_t blockBytes_;
    size_t residentBlocks_;
    std::vector<std::unique_ptr<std::byte[]>> blocks_; // null: in the file, at block * blockBytes_
    size_t oldestResident_ = 0;
    size_t spilled_ = 0;
    std::unique_ptr<File> file_;
    bool fileFailed_ = false;
};

// A growing array of plain values on SpillBlocks: values are read and written by value, never referred to.
template <class T> class SpillVector {
    static_assert(std::is_trivially_copyable_v<T>);

public:
    static constexpr size_t kBlockValues = 4096;
    // The block being filled and the one before it; a scan in order reads each block on the disk once.
    static constexpr size_t kResidentBlocks = 2;

    using const_iterator = PositionIterator<SpillVector, T>;
    using value_type = T;
    using iterator = const_iterator;

    explicit SpillVector(size_t residentBlocks = kResidentBlocks)
        : blocks_(kBlockValues * sizeof(T), residentBlocks) {}
    SpillVector(std::initializer_list<T> values) : SpillVector() {
        for (const T& value : values)
            push_back(value);
    }
    // A moved-from vector is empty.
    SpillVector(SpillVector&& other) noexcept
        : blocks_(std::move(other.blocks_)), size_(std::exchange(other.size_, 0)) {}
    SpillVector& operator=(SpillVector&& other) noexcept {
        blocks_ = std::move(other.blocks_);
        size_ = std::exchange(other.size_, 0);
        return *this;
    }
    SpillVector(const SpillVector& other) : SpillVector(other.blocks_.residentBlocks()) { *this = other; }
    SpillVector& operator=(const SpillVector& other) {
        if (this != &other) {
            clear();
            for (const T value : other)
                push_back(value);
        }
        return *this;
    }

    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T operator[](size_t position) const {
        T value;
        const size_t block = position / kBlockValues, offset = position % kBlockValues * sizeof(T);
        if (const std::byte* bytes = blocks_.resident(block))
            std::memcpy(&value, bytes + offset, sizeof(T));
        else
            blocks_.read(block, offset, &value, sizeof(T));
        return value;
    }
    T back() const { return (*this)[size_ - 1]; }
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, size_}; }

    void push_back(const T& value) {
        std::byte* block = size_ % kBlockValues ? blocks_.resident(blocks_.blocks() - 1) : blocks_.addBlock();
        std::memcpy(block + size_ % kBlockValues * sizeof(T), &value, sizeof(T));
        ++size_;
    }
    void set(size_t position, const T& value) {
        const size_t block = position / kBlockValues, offset = position % kBlockValues * sizeof(T);
        if (std::byte* bytes = blocks_.resident(block))
            std::memcpy(bytes + offset, &value, sizeof(T));
        else
            blocks_.write(block, offset, &value, sizeof(T));
    }
    // edit(T&) on values [from, to), a block at a time.
    template <class Edit> void update(size_t from, size_t to, Edit&& edit) {
        std::vector<T> spilled;
        while (from < to) {
            const size_t block = from / kBlockValues, first = from % kBlockValues;
            const size_t count = std::min(to - from, kBlockValues - first);
            if (std::byte* bytes = blocks_.resident(block)) {
                for (size_t i = 0; i < count; ++i) {
                    T value;
                    std::memcpy(&value, bytes + (first + i) * sizeof(T), sizeof(T));
                    edit(value);
                    std::memcpy(bytes + (first + i) * sizeof(T), &value, sizeof(T));
                }
            } else {
                spilled.resize(count);
                blocks_.read(block, first * sizeof(T), spilled.data(), count * sizeof(T));
                for (T& value : spilled)
                    edit(value);
                blocks_.write(block, first * sizeof(T), spilled.data(), count * sizeof(T));
            }
            from += count;
        }
    }
    void clear() {
        blocks_ = SpillBlocks(blocks_.blockBytes(), blocks_.residentBlocks());
        size_ = 0;
    }
    size_t residentBlocks() const { return blocks_.residentBlocks(); }
    size_t spilledValues() const { return std::min(size_, blocks_.spilledBlocks() * kBlockValues); }
    size_t heldBytes() const { return blocks_.heldBytes(); }

private:
    SpillBlocks blocks_;
    size_t size_ = 0;
};

} // namespace jointscope
