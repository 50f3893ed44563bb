// Freed blocks of 1 to 64 KiB, kept per thread for reuse by the cpu engine's allocator (the
// block cache takes them from 64 KiB).
//
// Why: glibc's per-thread cache stops at about 1 KiB. A block between that and 64 KiB goes
// through malloc's bins, and its free merges it with its neighbours: malloc and free were a
// sixth of the host's time in an fft of 1024 points (an 8 KiB output), a call that is all
// host overhead but for FFTW's microsecond.
//
// Each thread keeps its own lists, so taking and giving are a few loads and stores, without a
// lock; a block freed on another thread than the one that allocated it simply joins that
// thread's lists. Each thread keeps at most kThreadBytes and frees the rest, and frees what it
// holds when it exits. Classes are the block cache's: an eighth of a power of two. Under
// AddressSanitizer nothing is kept, so that its own quarantine still catches a use after free.
#pragma once

#include <cstdint>

namespace ferro::cpu::small_blocks {

inline constexpr uint64_t kMinBytes = uint64_t{1} << 10;
inline constexpr uint64_t kMaxBytes = uint64_t{64} << 10;  // BlockCache::kMinBytes
inline constexpr uint64_t kThreadBytes = uint64_t{1} << 20;

// The class a block of `bytes` is served from: `bytes` rounded up to an eighth of its leading
// power of two, when that is in [kMinBytes, kMaxBytes); 0 otherwise (not kept here).
uint64_t size_class(uint64_t bytes);

// A block of exactly `size_class` bytes this thread freed before, or nullptr.
void* take(uint64_t size_class);

// Keeps a malloc'd block of `size_class` bytes for this thread, or frees it when the thread
// holds kThreadBytes already (or is exiting).
void give(uint64_t size_class, void* block);

// Bytes this thread holds (for tests).
uint64_t thread_bytes();

}  // namespace ferro::cpu::small_blocks
