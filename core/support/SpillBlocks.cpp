#include "support/SpillBlocks.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>

namespace jointscope {

namespace {

// An unnamed file in $TMPDIR (or /tmp): the system removes it when it is closed, a crash included.
int openTemporaryFile() {
    const char* dir = std::getenv("TMPDIR");
    const std::string where = dir && *dir ? dir : "/tmp";
#ifdef O_TMPFILE
    if (const int fd = ::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600); fd >= 0)
        return fd;
#endif
    std::string name = where + "/jointscope-spill-XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd >= 0)
        ::unlink(name.c_str());
    return fd;
}

bool writeAll(int fd, const std::byte* bytes, size_t size, uint64_t at) {
    while (size) {
        const ssize_t wrote = ::pwrite(fd, bytes, size, off_t(at));
        if (wrote <= 0)
            return false;
        bytes += wrote, size -= size_t(wrote), at += uint64_t(wrote);
    }
    return true;
}

void readAll(int fd, std::byte* bytes, size_t size, uint64_t at) {
    while (size) {
        const ssize_t got = ::pread(fd, bytes, size, off_t(at));
        if (got <= 0) {
            // The file was written by this process a moment ago: failing to read it back is a lost disk.
            std::perror("jointscope: reading back a temporary file");
            std::abort();
        }
        bytes += got, size -= size_t(got), at += uint64_t(got);
    }
}

} // namespace

struct SpillBlocks::File {
    // Two blocks read back: a scan in order reads each block from the disk once, while another thread reads
    // elsewhere.
    struct Cached {
        size_t block = SIZE_MAX;
        std::unique_ptr<std::byte[]> bytes;
        uint64_t used = 0;
    };

    int fd = -1;
    std::mutex mutex;
    std::array<Cached, 2> cache;
    uint64_t clock = 0;

    ~File() {
        if (fd >= 0)
            ::close(fd);
    }
};

SpillBlocks::SpillBlocks(size_t blockBytes, size_t residentBlocks)
    : blockBytes_(blockBytes), residentBlocks_(std::max<size_t>(residentBlocks, 1)) {}
SpillBlocks::SpillBlocks(SpillBlocks&& other) noexcept {
    *this = std::move(other);
}

SpillBlocks& SpillBlocks::operator=(SpillBlocks&& other) noexcept {
    // The moved-from blocks are none: no block counts as spilled any more.
    blockBytes_ = other.blockBytes_;
    residentBlocks_ = other.residentBlocks_;
    blocks_ = std::move(other.blocks_);
    other.blocks_.clear();
    spilled_ = std::exchange(other.spilled_, 0);
    file_ = std::move(other.file_);
    fileFailed_ = std::exchange(other.fileFailed_, false);
    return *this;
}
SpillBlocks::~SpillBlocks() = default;

std::byte* SpillBlocks::addBlock() {
    blocks_.push_back(std::make_unique_for_overwrite<std::byte[]>(blockBytes_));
    // Blocks go to the file oldest first, so those in the file are always the first `spilled_`.
    while (blocks_.size() - spilled_ > residentBlocks_ && spill(spilled_))
        ++spilled_;
    return blocks_.back().get();
}

bool SpillBlocks::spill(size_t block) {
    if (fileFailed_)
        return false;
    if (!file_) {
        auto file = std::make_unique<File>();
        file->fd = openTemporaryFile();
        if (file->fd < 0) {
            fileFailed_ = true;
            return false;
        }
        file_ = std::move(file);
    }
    if (!writeAll(file_->fd, blocks_[block].get(), blockBytes_, uint64_t(block) * blockBytes_)) {
        fileFailed_ = true; // a full disk: what is left stays in memory
        return false;
    }
    blocks_[block].reset();
    return true;
}

void SpillBlocks::read(size_t block, size_t offset, void* out, size_t bytes) const {
    if (const std::byte* kept = resident(block)) {
        std::memcpy(out, kept + offset, bytes);
        return;
    }
    std::lock_guard lock(file_->mutex);
    File::Cached* slot = nullptr;
    for (File::Cached& cached : file_->cache)
        if (cached.block == block)
            slot = &cached;
    if (!slot) {
        slot = &file_->cache[0];
        for (File::Cached& cached : file_->cache)
            if (cached.used < slot->used)
                slot = &cached;
        if (!slot->bytes)
            slot->bytes = std::make_unique_for_overwrite<std::byte[]>(blockBytes_);
        readAll(file_->fd, slot->bytes.get(), blockBytes_, uint64_t(block) * blockBytes_);
        slot->block = block;
    }
    slot->used = ++file_->clock;
    std::memcpy(out, slot->bytes.get() + offset, bytes);
}

void SpillBlocks::write(size_t block, size_t offset, const void* in, size_t bytes) {
    if (std::byte* kept = resident(block)) {
        std::memcpy(kept + offset, in, bytes);
        return;
    }
    std::lock_guard lock(file_->mutex);
    if (!writeAll(file_->fd, static_cast<const std::byte*>(in), bytes,
                  uint64_t(block) * blockBytes_ + offset)) {
        std::perror("jointscope: writing a temporary file");
        std::abort();
    }
    for (File::Cached& cached : file_->cache)
        if (cached.block == block)
            std::memcpy(cached.bytes.get() + offset, in, bytes);
}

size_t SpillBlocks::heldBytes() const {
    size_t bytes = (blocks_.size() - spilled_) * blockBytes_ + blocks_.capacity() * sizeof(blocks_[0]);
    if (file_) {
        std::lock_guard lock(file_->mutex);
        for (const File::Cached& cached : file_->cache)
            bytes += cached.bytes ? blockBytes_ : 0;
    }
    return bytes;
}

} // namespace jointscope
