// The cpu engine's thread pool: one fan-out level (a body never fans out again), the calling
// thread takes a share, and work below a size threshold never leaves the calling thread —
// waking a second thread costs more than small kernels take (DESIGN §6).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ferro::cpu {

class ThreadPool {
public:
    explicit ThreadPool(unsigned threads);  // total, including the calling thread
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

    // Runs body(begin, end) over [0, n) in contiguous chunks of at least `grain` items.
    // Serial when n < 2 * grain, when the pool has one thread, or when called from inside a
    // body (no nested fan-out). Bodies must not throw.
    void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

private:
    void worker_loop(unsigned index);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::mutex run_mutex_;  // one parallel region at a time; others run serially meanwhile
    const std::function<void(int64_t, int64_t)>* body_ = nullptr;
    int64_t n_ = 0;
    unsigned chunks_ = 0;
    unsigned pending_ = 0;
    uint64_t generation_ = 0;
    bool stop_ = false;
};

}  // namespace ferro::cpu
