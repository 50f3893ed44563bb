// A lock for critical sections of a few dozen instructions on the dispatch hot path (an op
// handle's plan-cache entries): taking it is one atomic exchange and releasing it a plain store, where
// std::mutex costs two atomic read-modify-writes and ~50 instructions per call. Waiters spin
// briefly, then yield, so a holder that was preempted does not hold a core hostage.
#pragma once

#include <atomic>
#include <thread>

namespace ferro::host {

class SpinLock {
public:
    [[gnu::always_inline]] void lock() noexcept {
        if (!locked_.exchange(true, std::memory_order_acquire)) [[likely]]
            return;
        wait_and_lock();
    }
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
    // Taken by another thread: spin, then yield, until it is released.
    [[gnu::noinline]] void wait_and_lock() noexcept {
        int spins = 0;
        while (locked_.exchange(true, std::memory_order_acquire)) {
            while (locked_.load(std::memory_order_relaxed)) {
                if (++spins < kSpinsBeforeYield) {
                    pause();
                } else {
                    std::this_thread::yield();
                }
            }
        }
    }
    static constexpr int kSpinsBeforeYield = 64;
    static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    std::atomic<bool> locked_{false};
};

}  // namespace ferro::host
