#include "thread_pool.hpp"

#include <algorithm>

namespace ferro::cpu {
namespace {
thread_local bool t_inside_region = false;

void run_chunk(const std::function<void(int64_t, int64_t)>& body, int64_t n, unsigned chunks,
               unsigned index) {
    const int64_t begin = n * index / chunks;
    const int64_t end = n * (index + 1) / chunks;
    if (begin < end) body(begin, end);
}
}  // namespace

ThreadPool::ThreadPool(unsigned threads) {
    for (unsigned i = 1; i < std::max(1u, threads); ++i) {
        workers_.emplace_back([this, i] { worker_loop(i); });
    }
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop(unsigned index) {
    t_inside_region = true;
    uint64_t seen = 0;
    for (;;) {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        const auto* body = body_;
        const int64_t n = n_;
        const unsigned chunks = chunks_;
        lock.unlock();
        if (index < chunks) run_chunk(*body, n, chunks, index);
        lock.lock();
        if (--pending_ == 0) done_.notify_one();
    }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain,
                              const std::function<void(int64_t, int64_t)>& body) {
    if (n <= 0) return;
    grain = std::max<int64_t>(grain, 1);
    const int64_t max_chunks = n / grain;
    std::unique_lock region(run_mutex_, std::defer_lock);
    if (workers_.empty() || max_chunks < 2 || t_inside_region || !region.try_lock()) {
        body(0, n);
        return;
    }
    const unsigned chunks = static_cast<unsigned>(std::min<int64_t>(max_chunks, size()));
    {
        std::lock_guard lock(mutex_);
        body_ = &body;
        n_ = n;
        chunks_ = chunks;
        pending_ = static_cast<unsigned>(workers_.size());
        ++generation_;
    }
    wake_.notify_all();
    t_inside_region = true;
    run_chunk(body, n, chunks, 0);
    t_inside_region = false;
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
}

}  // namespace ferro::cpu
