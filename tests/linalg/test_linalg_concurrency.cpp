// Shared linalg plans executed on several threads at once, batched calls fanning out on the
// engine's pool inside them, and failures reported from pool threads (run under tsan).
#include "linalg_test.hpp"

#include <dlfcn.h>

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

// The cpu module runs small decompositions on one OpenBLAS thread (holds on the cpu engine's
// ferro_cpu_context.blas_one_thread) through a process-wide setting: however calls overlap, the
// count it found must come back.
TEST_CASE("concurrency: linalg restores OpenBLAS's thread count after its one-thread LAPACK calls", "[linalg]") {
    const Runtime rt = linalg_runtime();
    // Looked up at run time: ferro links the reference BLAS interface, and another backend
    // (BLIS, chosen with LD_LIBRARY_PATH) has no thread count to restore.
    const auto get_threads = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
    const auto set_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    if (get_threads == nullptr || set_threads == nullptr) {
        WARN("the BLAS is not OpenBLAS: nothing to check");
        return;
    }
    const int before = get_threads();
    set_threads(2);
    const Tensor A = random_matrix(rt, {40, 40}, DType::f64, 51) + rt.eye(40) * 40.0;
    const Tensor want = linalg::eigvalsh(A + mH(A));
    CHECK(get_threads() == 2);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int round = 0; round < 10; ++round) {
                if (max_diff(linalg::eigvalsh(A + mH(A)), want) != 0.0) ++wrong;
                (void)linalg::solve(A, A);  // keeps its threads
                (void)linalg::qr(A);
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(wrong.load() == 0);
    CHECK(get_threads() == 2);
    set_threads(before);
}
