// Shared linalg plans executed on several threads at once, batched calls fanning out on the
// engine's pool inside them, and failures reported from pool threads (run under tsan).
#include "linalg_test.hpp"

#include <atomic>
#include <thread>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("concurrency: linalg plans run on 4 threads at once and give the single-thread answers", "[linalg]") {
    const Runtime rt = linalg_runtime();
    const Tensor A = random_matrix(rt, {16, 5, 5}, DType::f64, 50) + rt.eye(5) * 5.0;
    const Tensor singular = rt.zeros({8, 3, 3});
    const Tensor want_inv = linalg::inv(A), want_s = linalg::svdvals(A);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int round = 0; round < 20; ++round) {
                if (max_diff(linalg::inv(A), want_inv) != 0.0) ++wrong;
                if (max_diff(linalg::svdvals(A), want_s) != 0.0) ++wrong;
                if (max_diff(linalg::eigh(A + mH(A)).eigenvalues, linalg::eigvalsh(A + mH(A))) > 1e-12) ++wrong;
                try {
                    linalg::inv(singular);
                    ++wrong;
                } catch (const Error& e) {
                    if (std::string(e.what()).find("matrix [0] of the batch is singular") == std::string::npos) ++wrong;
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(wrong.load() == 0);
}
