// The cpu engine's thread pool: one fan-out level (a body never fans out again), the calling
// thread takes a share, and work below a size threshold never leaves the calling thread —
// waking a second thread costs more than small kernels take (DESIGN §6).
//
// A region is cut into a few chunks per thread that each thread claims in turn, and the caller
// waits for the chunks, not for the workers: a worker that wakes late (on these VMs a sleeping
// vCPU took ~0.3 ms to run a woken thread) finds the chunks taken and goes back to sleep. With
// one chunk per thread, the caller waited for the late worker's half: a 1M-element broadcast
// multiply took 0.73-0.88 ms in some stretches of calls and 0.37 in others.
//
// After a region a worker spins for a while (kSpinWindow) before it sleeps, and so does a
// caller waiting for the last chunk: back-to-back regions, as a contraction's pairwise steps
// make, then cost no wake-up at all.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ferro::cpu {

class ThreadPool {
public:
    using Body = std::function<void(int64_t, int64_t)>;

    explicit ThreadPool(unsigned threads);  // total, including the calling thread
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

    // Runs body(begin, end) over [0, n) in contiguous chunks of at least `grain` items.
    // Serial when n < 2 * grain, when the pool has one thread, or when called from inside a
    // body (no nested fan-out). Bodies must not throw.
    void parallel_for(int64_t n, int64_t grain, const Body& body);

private:
    void worker_loop();
    // Claims and runs chunks of region `generation` until none is left. `body` is called (and
    // so must be alive) only for a chunk claimed in that region, which cannot have ended yet.
    void run_chunks(uint64_t generation, const Body* body, int64_t n, unsigned chunks);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    std::mutex run_mutex_;  // one parallel region at a time; others run serially meanwhile
    // The current region, under mutex_.
    const Body* body_ = nullptr;
    int64_t n_ = 0;
    unsigned chunks_ = 0;
    std::atomic<unsigned> finished_{0};  // its chunks done (written under mutex_, read spinning)
    // The current region's number, written under mutex_; workers spin on it without the lock.
    // The destructor bumps it once more, so that spinning workers go to the lock and see stop_.
    std::atomic<uint64_t> generation_{0};
    bool stop_ = false;
    // The next chunk to claim, with the region's generation in the high 32 bits: a thread that
    // looked at an older region claims nothing from a newer one.
    std::atomic<uint64_t> next_{0};
};

}  // namespace ferro::cpu
