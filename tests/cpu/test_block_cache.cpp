// The cpu engine's reuse of freed blocks: the block cache of large ones (size classes, reuse,
// the byte limit with oldest-first eviction) and the per-thread lists of 1-64 KiB ones, and
// allocation through the engine ABI from many threads.
#include "cpu_fixture.hpp"
#include "small_blocks.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using ferro::cpu::BlockCache;
namespace small_blocks = ferro::cpu::small_blocks;
using namespace ferro::test;

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

// Under AddressSanitizer small blocks are never kept (its quarantine must see every free).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kKeepsSmallBlocks = false;
#else
constexpr bool kKeepsSmallBlocks = true;
#endif

// A malloc'd block the cache may keep (it frees what it evicts).
void* block(uint64_t bytes) {
    void* p = std::malloc(bytes);
    REQUIRE(p != nullptr);
    return p;
}

}  // namespace

TEST_CASE("cpu: block cache size classes are an eighth of a power of two, small blocks excluded", "[cpu]") {
    const BlockCache cache(64 * MiB);
    CHECK(cache.size_class(BlockCache::kMinBytes - 1) == 0);
    CHECK(cache.size_class(64 * KiB) == 64 * KiB);
    CHECK(cache.size_class(64 * KiB + 1) == 72 * KiB);
    CHECK(cache.size_class(100 * KiB) == 104 * KiB);
    CHECK(cache.size_class(512 * KiB + 200) == 576 * KiB);
    CHECK(cache.size_class(7 * MiB) == 7 * MiB);
    CHECK(cache.size_class(2628 * MiB) == 2816 * MiB);  // gm_queen's einsum workspace
    for (uint64_t bytes = 64 * KiB; bytes < 64 * MiB; bytes = bytes * 9 / 7 + 13) {
        const uint64_t c = cache.size_class(bytes);
        CHECK(c >= bytes);
        CHECK(c - bytes < bytes / 8);  // at most 12.5% slack
    }
    CHECK(BlockCache(0).size_class(MiB) == 0);  // limit 0: the cache is off
}

TEST_CASE("cpu: block cache reuses a block of the same class, most recently freed first", "[cpu]") {
    BlockCache cache(16 * MiB);
    CHECK(cache.take(MiB) == nullptr);
    void* a = block(MiB);
    void* b = block(MiB);
    cache.give(MiB, a);
    cache.give(MiB, b);
    CHECK(cache.cached_bytes() == 2 * MiB);
    CHECK(cache.take(1280 * KiB) == nullptr);  // another class is never served
    CHECK(cache.take(MiB) == b);
    CHECK(cache.take(MiB) == a);
    CHECK(cache.take(MiB) == nullptr);
    CHECK(cache.cached_bytes() == 0);
    std::free(a);
    std::free(b);
}

TEST_CASE("cpu: block cache stays under its limit by dropping the oldest blocks", "[cpu]") {
    BlockCache cache(3 * MiB);
    void* first = block(MiB);
    void* second = block(2 * MiB);
    void* third = block(MiB);
    cache.give(MiB, first);
    cache.give(2 * MiB, second);
    CHECK(cache.cached_bytes() == 3 * MiB);
    cache.give(MiB, third);  // 4 MiB > 3: `first` (the oldest) goes
    CHECK(cache.cached_bytes() == 3 * MiB);
    CHECK(cache.take(MiB) == third);
    CHECK(cache.take(MiB) == nullptr);
    cache.give(4 * MiB, block(4 * MiB));  // larger than the limit: freed at once, nothing evicted
    CHECK(cache.cached_bytes() == 2 * MiB);
    CHECK(cache.take(2 * MiB) == second);
    std::free(second);
    std::free(third);
}

TEST_CASE("cpu: small block classes cover 1-64 KiB in eighths of a power of two", "[cpu]") {
    if (!kKeepsSmallBlocks) {
        CHECK(small_blocks::size_class(8 * KiB) == 0);
        return;
    }
    CHECK(small_blocks::size_class(small_blocks::kMinBytes - 1) == 0);  // glibc's own cache serves these
    CHECK(small_blocks::size_class(KiB) == KiB);
    CHECK(small_blocks::size_class(KiB + 1) == KiB + 128);
    CHECK(small_blocks::size_class(8 * KiB + 80) == 9 * KiB);  // an fft of 1024 c64 points, header included
    CHECK(small_blocks::size_class(60 * KiB) == 60 * KiB);
    CHECK(small_blocks::size_class(60 * KiB + 1) == 0);  // would round to 64 KiB: the block cache's
    CHECK(small_blocks::size_class(BlockCache::kMinBytes) == 0);
    for (uint64_t bytes = KiB; bytes <= 60 * KiB; bytes = bytes * 11 / 10 + 7) {
        const uint64_t c = small_blocks::size_class(bytes);
        CHECK(c >= bytes);
        CHECK(c - bytes < bytes / 8);
    }
}

TEST_CASE("cpu: small blocks are reused per thread, most recently freed first, up to the thread's limit", "[cpu]") {
    if (!kKeepsSmallBlocks) return;
    const uint64_t before = small_blocks::thread_bytes();
    CHECK(small_blocks::take(9 * KiB) == nullptr);
    void* a = block(9 * KiB);
    void* b = block(9 * KiB);
    small_blocks::give(9 * KiB, a);
    small_blocks::give(9 * KiB, b);
    CHECK(small_blocks::thread_bytes() == before + 18 * KiB);
    CHECK(small_blocks::take(10 * KiB) == nullptr);  // another class is never served
    void* elsewhere = a;
    std::thread([&] { elsewhere = small_blocks::take(9 * KiB); }).join();
    CHECK(elsewhere == nullptr);  // another thread's lists are its own
    CHECK(small_blocks::take(9 * KiB) == b);
    CHECK(small_blocks::take(9 * KiB) == a);
    CHECK(small_blocks::take(9 * KiB) == nullptr);
    CHECK(small_blocks::thread_bytes() == before);
    // Past kThreadBytes a freed block goes back to malloc (LeakSanitizer would see one lost).
    std::vector<void*> kept;
    for (uint64_t held = 0; held <= small_blocks::kThreadBytes; held += 60 * KiB) kept.push_back(block(60 * KiB));
    for (void* p : kept) small_blocks::give(60 * KiB, p);
    CHECK(small_blocks::thread_bytes() <= small_blocks::kThreadBytes);
    CHECK(small_blocks::thread_bytes() > small_blocks::kThreadBytes - 60 * KiB);
    while (void* p = small_blocks::take(60 * KiB)) std::free(p);
    std::free(a);
    std::free(b);
}

TEST_CASE("cpu: engine memory of a freed large tensor is reused and stays 64-byte aligned", "[cpu]") {
    CpuEngine engine;
    const auto& f = engine.f();
    ferro_buffer buf = nullptr;
    void* first = nullptr;
    REQUIRE(f.alloc(engine.inst.self, 300 * KiB, 64, &buf, &first) == nullptr);
    std::memset(first, 1, 300 * KiB);
    f.free(engine.inst.self, buf);
    void* again = nullptr;
    REQUIRE(f.alloc(engine.inst.self, 290 * KiB, 64, &buf, &again) == nullptr);  // same class
    CHECK(again == first);
    CHECK(reinterpret_cast<uintptr_t>(again) % 64 == 0);
    f.free(engine.inst.self, buf);
    // A block of 1-64 KiB comes back from the thread's small blocks.
    const uint64_t held = small_blocks::thread_bytes();
    void* small = nullptr;
    REQUIRE(f.alloc(engine.inst.self, 8 * KiB, 64, &buf, &small) == nullptr);
    CHECK(reinterpret_cast<uintptr_t>(small) % 64 == 0);
    f.free(engine.inst.self, buf);
    CHECK(small_blocks::thread_bytes() == held + (kKeepsSmallBlocks ? 9 * KiB : 0));
    void* small_again = nullptr;
    REQUIRE(f.alloc(engine.inst.self, 8 * KiB + 64, 64, &buf, &small_again) == nullptr);  // same class
    if (kKeepsSmallBlocks) CHECK(small_again == small);
    CHECK(small_blocks::thread_bytes() == held);
    f.free(engine.inst.self, buf);
    // Tiny blocks and unusual alignments bypass the caches and still come back aligned.
    for (const auto& [bytes, align] : {std::pair<uint64_t, uint64_t>{100, 64}, {MiB, 4096}, {0, 64}}) {
        void* p = nullptr;
        REQUIRE(f.alloc(engine.inst.self, bytes, align, &buf, &p) == nullptr);
        CHECK(reinterpret_cast<uintptr_t>(p) % align == 0);
        f.free(engine.inst.self, buf);
    }
    ferro_device_props props{};
    REQUIRE(f.properties(engine.inst.self, &props) == nullptr);
    CHECK(std::strstr(props.details, "FERRO_CPU_CACHE_MB") != nullptr);
}

namespace {

// The VmFlags of the mapping that holds `address` (/proc/self/smaps), or "" when not found.
std::string vm_flags_at(uintptr_t address) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        // A mapping's header is "begin-end perms offset dev inode path"; its fields are "Name: value".
        unsigned long long begin = 0, end = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx ", &begin, &end) == 2 && line.find(':') > line.find(' ')) {
            inside = begin <= address && address < end;
        } else if (inside && line.rfind("VmFlags:", 0) == 0) {
            return line;
        }
    }
    return "";
}

// Allocates `bytes` through the engine and returns the VmFlags at its first 2 MiB boundary.
std::string flags_of_fresh_block(uint64_t bytes) {
    CpuEngine engine;
    const auto& f = engine.f();
    ferro_buffer buf = nullptr;
    void* p = nullptr;
    REQUIRE(f.alloc(engine.inst.self, bytes, 64, &buf, &p) == nullptr);
    const uintptr_t boundary = (reinterpret_cast<uintptr_t>(p) + 2 * MiB - 1) & ~uintptr_t{2 * MiB - 1};
    const std::string flags = vm_flags_at(boundary);
    f.free(engine.inst.self, buf);
    return flags;
}

}  // namespace

TEST_CASE("cpu: fresh blocks of 4 MiB and more are advised for huge pages unless FERRO_CPU_HUGE_PAGES=0", "[cpu]") {
    INFO("the test reads the mappings' VmFlags from /proc/self/smaps (Linux)");
    REQUIRE_FALSE(vm_flags_at(reinterpret_cast<uintptr_t>(&vm_flags_at)).empty());
    // "hg": the range was given MADV_HUGEPAGE.
    CHECK(flags_of_fresh_block(64 * MiB).find(" hg") != std::string::npos);
    CHECK(flags_of_fresh_block(3 * MiB).find(" hg") == std::string::npos);  // below 4 MiB: no advice
    REQUIRE(setenv("FERRO_CPU_HUGE_PAGES", "0", 1) == 0);
    const std::string off = flags_of_fresh_block(64 * MiB);
    unsetenv("FERRO_CPU_HUGE_PAGES");
    CHECK_FALSE(off.empty());
    CHECK(off.find(" hg") == std::string::npos);
    CpuEngine engine;
    ferro_device_props props{};
    REQUIRE(engine.f().properties(engine.inst.self, &props) == nullptr);
    CHECK(std::strstr(props.details, "FERRO_CPU_HUGE_PAGES") != nullptr);
}

TEST_CASE("concurrency: cpu engine allocates and frees large blocks from many threads", "[cpu]") {
    CpuEngine engine;
    const auto& f = engine.f();
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                const uint64_t bytes = (64 + 32 * ((i + t) % 5)) * KiB;
                ferro_buffer buf = nullptr;
                void* p = nullptr;
                if (f.alloc(engine.inst.self, bytes, 64, &buf, &p) != nullptr) {
                    ++failures;
                    continue;
                }
                auto* bytes_of = static_cast<unsigned char*>(p);
                std::memset(p, t + 1, bytes);
                std::this_thread::yield();
                for (uint64_t k = 0; k < bytes; k += 4093) failures += bytes_of[k] != t + 1;  // nobody else wrote it
                f.free(engine.inst.self, buf);
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(failures.load() == 0);
}

TEST_CASE("cpu: FERRO_CPU_CACHE_MB=0 keeps no freed blocks, small ones included", "[cpu]") {
    REQUIRE(setenv("FERRO_CPU_CACHE_MB", "0", 1) == 0);
    CpuEngine engine;
    unsetenv("FERRO_CPU_CACHE_MB");
    const auto& f = engine.f();
    const uint64_t held = small_blocks::thread_bytes();
    for (const uint64_t bytes : {8 * KiB, 300 * KiB}) {
        ferro_buffer buf = nullptr;
        void* p = nullptr;
        REQUIRE(f.alloc(engine.inst.self, bytes, 64, &buf, &p) == nullptr);
        CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
        f.free(engine.inst.self, buf);
    }
    CHECK(small_blocks::thread_bytes() == held);
    ferro_device_props props{};
    REQUIRE(f.properties(engine.inst.self, &props) == nullptr);
    CHECK(std::strstr(props.details, "up to 0 MiB") != nullptr);
}

TEST_CASE("concurrency: cpu engine small blocks freed on another thread than their own", "[cpu]") {
    // Each thread fills its blocks and hands them to the next thread, which checks and frees
    // them (into its own small blocks) before allocating again from them.
    CpuEngine engine;
    const auto& f = engine.f();
    constexpr int kThreads = 4, kRounds = 200, kBlocks = 8;
    struct Handoff {
        std::mutex mutex;
        std::vector<std::pair<ferro_buffer, unsigned char>> blocks;
    };
    std::vector<Handoff> inbox(kThreads);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < kRounds; ++round) {
                std::vector<std::pair<ferro_buffer, unsigned char>> mine;
                for (int i = 0; i < kBlocks; ++i) {
                    const uint64_t bytes = (2 + 7 * ((round + i + t) % 8)) * KiB;
                    ferro_buffer buf = nullptr;
                    void* p = nullptr;
                    if (f.alloc(engine.inst.self, bytes, 64, &buf, &p) != nullptr) {
                        ++failures;
                        continue;
                    }
                    const auto mark = static_cast<unsigned char>(1 + (t * 31 + round + i) % 250);
                    std::memset(p, mark, 2 * KiB);
                    mine.emplace_back(buf, mark);
                }
                Handoff& next = inbox[static_cast<size_t>((t + 1) % kThreads)];
                std::vector<std::pair<ferro_buffer, unsigned char>> received;
                {
                    const std::lock_guard lock(next.mutex);
                    next.blocks.insert(next.blocks.end(), mine.begin(), mine.end());
                }
                {
                    const std::lock_guard lock(inbox[static_cast<size_t>(t)].mutex);
                    received.swap(inbox[static_cast<size_t>(t)].blocks);
                }
                for (const auto& [buf, mark] : received) {
                    const auto* bytes_of = reinterpret_cast<const unsigned char*>(buf);  // cpu: the address
                    for (uint64_t k = 0; k < 2 * KiB; k += 61) failures += bytes_of[k] != mark;
                    f.free(engine.inst.self, buf);
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    for (Handoff& h : inbox) {
        for (const auto& [buf, mark] : h.blocks) f.free(engine.inst.self, buf);
    }
    CHECK(failures.load() == 0);
}
