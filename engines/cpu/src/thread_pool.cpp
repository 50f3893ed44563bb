#include "thread_pool.hpp"

#include <algorithm>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace ferro::cpu {
namespace {
thread_local bool t_inside_region = false;

// Chunks per thread: enough that the caller can take a late worker's share, few enough that
// claiming them costs nothing next to a region's work.
constexpr unsigned kChunksPerThread = 4;

// How long a thread spins for the next region (a worker) or the last chunk (the caller)
// before it sleeps on a condition variable. Longer than a wake-up takes on these VMs
// (~0.1-0.3 ms); 99 skinny 21 x 400 x 400 products in a row (a matrix chain) ran 1.4x faster
// with their halves on two threads, and not at all faster when the worker slept between them.
constexpr auto kSpinWindow = std::chrono::microseconds(200);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
}

// Spins until done() or kSpinWindow has passed; returns done(). It yields every few
// microseconds, so that a thread waiting for this core (OpenBLAS's, or the caller's on a
// machine with fewer cores than threads) is not held up by a thread with nothing to do.
template <class Done> bool spin_until(Done done) {
    const auto deadline = std::chrono::steady_clock::now() + kSpinWindow;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (done()) return true;
            cpu_relax();
        }
        if (std::chrono::steady_clock::now() >= deadline) return done();
        std::this_thread::yield();
    }
}

void run_chunk(const ThreadPool::Body& body, int64_t n, unsigned chunks, unsigned index) {
    const int64_t begin = n * index / chunks;
    const int64_t end = n * (index + 1) / chunks;
    if (begin < end) body(begin, end);
}
}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
    for (unsigned i = 1; i < std::max(1u, threads); ++i) {
        workers_.emplace_back([this] { worker_loop(); });
    }
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
        generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop() {
    t_inside_region = true;
    uint64_t seen = 0;
    for (;;) {
        const Body* body = nullptr;
        int64_t n = 0;
        unsigned chunks = 0;
        // Not before the first region: a pool made at start-up has nothing to spin for.
        if (seen != 0) spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
        {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
            if (stop_) return;
            seen = generation_.load(std::memory_order_relaxed);
            body = body_;
            n = n_;
            chunks = chunks_;
        }
        run_chunks(seen, body, n, chunks);  // nothing, if the region ended meanwhile
    }
}

void ThreadPool::run_chunks(uint64_t generation, const Body* body, int64_t n, unsigned chunks) {
    const uint64_t tag = (generation & 0xffffffffu) << 32;
    uint64_t next = next_.load(std::memory_order_acquire);
    for (;;) {
        if ((next & ~uint64_t{0xffffffffu}) != tag || (next & 0xffffffffu) >= chunks) return;
        if (!next_.compare_exchange_weak(next, next + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
        run_chunk(*body, n, chunks, static_cast<unsigned>(next & 0xffffffffu));
        std::lock_guard lock(mutex_);
        if (finished_.fetch_add(1, std::memory_order_release) + 1 == chunks) done_.notify_one();
        next = next_.load(std::memory_order_acquire);
    }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const Body& body) {
    if (n <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    const int64_t max_chunks = n / grain;
    std::unique_lock region(run_mutex_, std::defer_lock);
    if (workers_.empty() || max_chunks < 2 || t_inside_region || !region.try_lock()) {
        body(0, n);
        return;
    }
    const unsigned chunks = static_cast<unsigned>(std::min<int64_t>(max_chunks, int64_t{kChunksPerThread} * size()));
    uint64_t generation = 0;
    {
        std::lock_guard lock(mutex_);
        body_ = &body;
        n_ = n;
        chunks_ = chunks;
        finished_.store(0, std::memory_order_relaxed);
        generation = generation_.load(std::memory_order_relaxed) + 1;
        next_.store((generation & 0xffffffffu) << 32, std::memory_order_release);
        generation_.store(generation, std::memory_order_release);
    }
    wake_.notify_all();
    t_inside_region = true;
    run_chunks(generation, &body, n, chunks);
    t_inside_region = false;
    if (spin_until([&] { return finished_.load(std::memory_order_acquire) == chunks; })) return;
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return finished_.load(std::memory_order_relaxed) == chunks; });
}

}  // namespace ferro::cpu
