// Per-thread counters (an engine's memory statistics): exact totals once the adds are done,
// from any number of threads, with slots handed over as threads exit, and more threads than
// slots sharing the overflow slot (in the tsan preset: no data race between owners, readers
// and the next owner of a slot).
#include "support/thread_counters.hpp"

#include <catch2/catch.hpp>

#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

using ferro::host::ThreadCounters;
using ferro::host::ThreadSlot;

TEST_CASE("thread counters: one thread's adds are read back", "[core]") {
    ThreadCounters<3> c;
    CHECK(c.read() == ThreadCounters<3>::Values{0, 0, 0});
    c.add({1, 4096, 1});
    c.add({1, 100, 1});
    c.add({-1, -4096, 0});
    CHECK(c.read() == ThreadCounters<3>::Values{1, 100, 2});
    CHECK(ThreadSlot::current() < ThreadSlot::kOwned);
    CHECK(ThreadSlot::current() == ThreadSlot::current());
}

TEST_CASE("concurrency: thread counters sum the adds of threads that come and go", "[core]") {
    ThreadCounters<2> c;
    const unsigned owned_before = ThreadSlot::owned();
    constexpr int kWaves = 4, kThreads = 6, kAdds = 20000;
    std::atomic<bool> stop{false}, negative{false};
    std::thread reader([&] {  // reads while others add: values move, nothing races
        while (!stop.load()) {
            if (c.read()[0] < 0) negative = true;  // only adds of 1: a read never goes below 0
        }
    });
    for (int wave = 0; wave < kWaves; ++wave) {
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < kAdds; ++i) c.add({1, t});
            });
        }
        for (auto& t : threads) t.join();
        // The wave's slots are back: the next wave's threads take them over, counts and all.
        CHECK(ThreadSlot::owned() <= owned_before + 1);  // + the reader's
    }
    stop = true;
    reader.join();
    CHECK_FALSE(negative);
    CHECK(c.read() ==
          ThreadCounters<2>::Values{int64_t{kWaves} * kThreads * kAdds, int64_t{kWaves} * kAdds * (0 + 1 + 2 + 3 + 4 + 5)});
}

TEST_CASE("concurrency: thread counters stay exact with more threads than slots", "[core]") {
    ThreadCounters<1> c;
    constexpr int kThreads = ThreadSlot::kOwned + 16, kAdds = 500;
    std::barrier all_added(kThreads);  // every thread holds its slot (or the shared one) at once
    std::atomic<int> shared{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < kAdds; ++i) c.add({1});
            if (ThreadSlot::current() == ThreadSlot::kShared) ++shared;
            all_added.arrive_and_wait();
            for (int i = 0; i < kAdds; ++i) c.add({-1});  // taken back on the same thread...
            c.add({2});                                   // ...and a net 2 each
        });
    }
    for (auto& t : threads) t.join();
    CHECK(shared >= 16);
    CHECK(c.read()[0] == 2 * kThreads);
}

TEST_CASE("concurrency: thread counters net adds and removals made on different threads", "[core]") {
    ThreadCounters<1> c;
    std::thread([&] { c.add({1000}); }).join();
    std::thread([&] { c.add({-600}); }).join();
    c.add({-400});
    CHECK(c.read()[0] == 0);
}
