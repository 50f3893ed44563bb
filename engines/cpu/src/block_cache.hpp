// Freed large blocks kept for reuse by the cpu engine's allocator.
//
// Why: glibc serves a large malloc from fresh mmap'd pages (or from heap it has trimmed), and
// the first write to each page faults into the kernel. Measured on a 256 x 256 f64 QR
// forward + backward, whose tensors are 512 KiB each, page faults were 27% of the time and
// reusing blocks made the step 1.4x faster (eigh 1.17x, solve 1.09x).
//
// Blocks are grouped by size class (an eighth of a power of two: at most 12.5% slack) and
// reused only within their class. Quarters had rounded gm_queen's 2.6 GiB einsum workspace up
// to 3 GiB, over the default limit on a 24 GiB machine, so it was never kept and was faulted
// in again on every call (1.13-1.22 s a call against 1.03-1.06 s with eighths). The cache
// holds at most `limit` bytes and drops the least recently freed blocks first. Small blocks
// never come here: malloc reuses those cheaply.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <mutex>

namespace ferro::cpu {

class BlockCache {
public:
    // Blocks below this size go straight to malloc/free.
    static constexpr uint64_t kMinBytes = uint64_t{64} << 10;

    explicit BlockCache(uint64_t limit_bytes) : limit_(limit_bytes) {}
    ~BlockCache();
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;

    // The class a request of `bytes` is served from: `bytes` rounded up to an eighth of its
    // leading power of two; 0 when the block is not to be cached (too small, or no cache).
    uint64_t size_class(uint64_t bytes) const;

    // A cached block of exactly `size_class` bytes, or nullptr.
    void* take(uint64_t size_class);
    // Keeps a malloc'd block of `size_class` bytes, freeing older blocks to stay under the
    // limit (or the block itself, when it alone is larger).
    void give(uint64_t size_class, void* block);

    uint64_t limit() const { return limit_; }
    uint64_t cached_bytes() const;

private:
    struct Block {
        uint64_t bytes;
        void* address;
    };
    void evict_oldest();  // requires mutex_

    const uint64_t limit_;
    mutable std::mutex mutex_;
    uint64_t cached_ = 0;
    std::list<Block> by_age_;                                      // front: most recently freed
    std::multimap<uint64_t, std::list<Block>::iterator> by_size_;  // size class -> entry in by_age_
};

}  // namespace ferro::cpu
