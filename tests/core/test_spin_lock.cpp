// The op handles' spin lock: mutual exclusion under contention (and, in the tsan preset, the
// happens-before edges that make the guarded data race-free).
#include "support/spin_lock.hpp"

#include <catch2/catch.hpp>

#include <mutex>
#include <thread>
#include <vector>

TEST_CASE("concurrency: the spin lock serialises critical sections on 4 threads", "[core]") {
    ferro::host::SpinLock lock;
    long counter = 0;  // plain: only the lock protects it
    long inside = 0, overlaps = 0;
    constexpr int kThreads = 4, kRounds = 20000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < kRounds; ++i) {
                std::lock_guard guard(lock);
                if (++inside != 1) ++overlaps;
                ++counter;
                --inside;
            }
        });
    }
    for (auto& t : threads) t.join();
    CHECK(overlaps == 0);
    CHECK(counter == long{kThreads} * kRounds);
}
