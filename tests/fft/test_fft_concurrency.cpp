// fft under threads (run by the TSan preset): FFTW's planner is not thread-safe, so the module
// serialises planning and plan destruction; finished plans execute concurrently.
#include "fft_test.hpp"

#include <latch>
#include <thread>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("concurrency: fft plans made, executed and dropped from several threads at once", "[fft][concurrency]") {
    const Runtime rt = fft_runtime();
    // A transform whose columns run as buffered passes on the engine's pool (one plan, run by
    // every thread at once, each call with buffers of its own), against its single-threaded result.
    const Tensor image = random_signal(rt, {256, 256}, DType::c128, 7);
    const Tensor image_fft = fft::fft2(image);
    std::vector<std::thread> threads;
    std::vector<double> errors(4, INFINITY), errors_f32(4, INFINITY);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            double worst = 0, worst_f32 = 0;
            for (int i = 0; i < 6; ++i) {
                const int64_t n = 16 + 3 * i + t;  // a new signature (a new plan) on every iteration
                const Tensor x = random_signal(rt, {2, n}, DType::c128, static_cast<uint32_t>(t * 10 + i));
                worst = std::max(worst, max_abs(Array::of(fft::ifft(fft::fft(x)) - x).v));
                const Tensor xr = random_signal(rt, {n}, DType::f32, static_cast<uint32_t>(t * 10 + i + 100));
                worst_f32 = std::max(worst_f32, max_abs(Array::of(fft::irfft(fft::rfft(xr), n) - xr).v));
                // Real input to fft: a half spectrum expanded on the engine's pool.
                const Tensor x2 = random_signal(rt, {64, n}, DType::f64, static_cast<uint32_t>(t * 10 + i + 200));
                worst = std::max(worst, max_abs(Array::of(fft::fft(x2) - fft::fft(x2.to(DType::c128))).v));
            }
            for (int i = 0; i < 2; ++i) worst = std::max(worst, max_abs(Array::of(fft::fft2(image) - image_fft).v));
            errors[static_cast<size_t>(t)] = worst;
            errors_f32[static_cast<size_t>(t)] = worst_f32;
        });
    }
    for (std::thread& th : threads) th.join();
    for (double e : errors) CHECK(e <= 1e-12);
    for (double e : errors_f32) CHECK(e <= 1e-5);
}

TEST_CASE("concurrency: threads that miss on one call at once prepare its plan once", "[fft][concurrency]") {
    const Runtime rt = fft_runtime();
    // FFTW_MEASURE plans take milliseconds, so the threads' misses overlap.
    const Tensor x = random_signal(rt, {8, 4096}, DType::c128, 3);
    const Array want = Array::of(fft::fft(x));
    const auto before = rt.plan_cache_stats();
    constexpr int kThreads = 4;
    std::latch start(kThreads);
    std::vector<std::thread> threads;
    std::vector<double> errors(kThreads, INFINITY);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            const Tensor y = fft::fft(x, std::nullopt, -1, "backward", "measure");
            errors[static_cast<size_t>(t)] = relative_error(Array::of(y), want);
        });
    }
    for (std::thread& th : threads) th.join();
    const auto after = rt.plan_cache_stats();
    CHECK(after.misses == before.misses + 1);
    CHECK(after.hits == before.hits + kThreads - 1);
    for (double e : errors) CHECK(e <= 1e-13);
}
