#include "block_cache.hpp"

#include <bit>
#include <cstdlib>
#include <iterator>

// Under AddressSanitizer a parked block is poisoned, so a use after free is still reported
// while the block waits in the cache.
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define FERRO_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define FERRO_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define FERRO_POISON(p, n) ((void)(p), (void)(n))
#define FERRO_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace ferro::cpu {

BlockCache::~BlockCache() {
    for (const Block& b : by_age_) {
        FERRO_UNPOISON(b.address, b.bytes);
        std::free(b.address);
    }
}

uint64_t BlockCache::size_class(uint64_t bytes) const {
    if (limit_ == 0 || bytes < kMinBytes || bytes > (uint64_t{1} << 62)) return 0;
    const uint64_t eighth = std::bit_floor(bytes) / 8;
    return (bytes + eighth - 1) / eighth * eighth;
}

void* BlockCache::take(uint64_t size_class) {
    const std::lock_guard lock(mutex_);
    const auto [first, last] = by_size_.equal_range(size_class);
    if (first == last) return nullptr;
    const auto it = std::prev(last);  // the most recently freed: likeliest still in cache
    void* address = it->second->address;
    by_age_.erase(it->second);
    by_size_.erase(it);
    cached_ -= size_class;
    FERRO_UNPOISON(address, size_class);
    return address;
}

void BlockCache::give(uint64_t size_class, void* block) {
    if (size_class > limit_) {
        std::free(block);
        return;
    }
    FERRO_POISON(block, size_class);
    const std::lock_guard lock(mutex_);
    while (cached_ + size_class > limit_) evict_oldest();
    by_age_.push_front({size_class, block});
    by_size_.emplace(size_class, by_age_.begin());
    cached_ += size_class;
}

void BlockCache::evict_oldest() {
    const Block oldest = by_age_.back();
    auto [first, last] = by_size_.equal_range(oldest.bytes);
    for (auto it = first; it != last; ++it) {
        if (it->second == std::prev(by_age_.end())) {
            by_size_.erase(it);
            break;
        }
    }
    by_age_.pop_back();
    cached_ -= oldest.bytes;
    FERRO_UNPOISON(oldest.address, oldest.bytes);
    std::free(oldest.address);
}

uint64_t BlockCache::cached_bytes() const {
    const std::lock_guard lock(mutex_);
    return cached_;
}

}  // namespace ferro::cpu
