// Independent graphs built and back-propagated on several threads at once (run under tsan).
#include "ferro_test.hpp"

#include <atomic>
#include <thread>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("concurrency: independent graphs back-propagate on 4 threads", "[autodiff]") {
    Runtime rt = make_runtime();
    const Tensor shared_weight = rt.tensor<double>({2.0, -1.0, 0.5}, {3});  // read by every graph
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 50; ++round) {
                Tensor x = rt.tensor<double>({1.0 + t, 2.0, 3.0 - t}, {3});
                x.set_requires_grad();
                // L = sum(w * x^2) -> dL/dx = 2 w x
                (shared_weight * x * x).sum().backward();
                const auto g = x.grad().to_vector<double>();
                const double want[3] = {2 * 2.0 * (1.0 + t), 2 * -1.0 * 2.0, 2 * 0.5 * (3.0 - t)};
                for (int i = 0; i < 3; ++i) {
                    if (std::abs(g[static_cast<size_t>(i)] - want[i]) > 1e-12) ++wrong;
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(wrong.load() == 0);
}

TEST_CASE("concurrency: one leaf shared by graphs on 4 threads accumulates every gradient", "[autodiff]") {
    Runtime rt = make_runtime();
    Tensor w = rt.tensor<double>({1.0, 2.0}, {2});
    w.set_requires_grad();
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int round = 0; round < 25; ++round) (w * 3.0).sum().backward();
        });
    }
    for (auto& th : threads) th.join();
    check_close(w.grad().to_vector<double>(), std::vector<double>{300.0, 300.0});
}
