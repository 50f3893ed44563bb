// Op calls on several threads while plugins load and unload and the plan cache churns: every
// call sees a consistent snapshot and computes the right answer. Run under the tsan preset.
#include "ferro_test.hpp"

#include <atomic>
#include <thread>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("concurrency: op calls on 3 threads while plugins load, unload and caches clear", "[core]") {
    Runtime rt = make_runtime();
    const std::string family = corpus_file("good_family");
    std::atomic<bool> stop{false};
    std::atomic<long> wrong{0}, calls{0};
    auto worker = [&](int seed) {
        const Tensor a = rt.full({16}, seed), b = rt.full({4, 4}, 1.0);
        while (!stop.load()) {
            const double s = (a.reshape({4, 4}) + b).sum().item<double>();
            if (s != 16.0 * (seed + 1)) ++wrong;
            if (matmul(b, b).sum().item<double>() != 64.0) ++wrong;
            ++calls;
        }
    };
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) threads.emplace_back(worker, i);
    while (calls.load() == 0) std::this_thread::yield();  // reconfigure while calls run
    for (int round = 0; round < 30; ++round) {
        rt.load_plugin(family);
        ferro_runtime_plan_cache_clear(rt.get());
        rt.unload_plugin("fixture_good");
    }
    while (calls.load() < 30) std::this_thread::yield();
    stop = true;
    for (auto& t : threads) t.join();
    CHECK(wrong.load() == 0);
}
