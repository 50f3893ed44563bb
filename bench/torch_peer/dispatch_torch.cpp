// bench/run dispatch (peer side): the same tiny ops through libtorch's C++ API (ATen), from
// the torch wheel on PyPI, one intra-op thread. Default mode is what a PyTorch user gets; the
// inference-mode figure (no autograd bookkeeping) is reported alongside for completeness.
#include "../timing.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstdlib>
#include <cstring>
#include <functional>

// `--calls CASE N` runs case CASE exactly N times untimed, for instruction counting.
int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int samples = quick ? 5 : 15, inner = quick ? 5000 : 20000;
    at::set_num_threads(1);
    const at::Tensor one_a = at::full({1}, 1.5f), one_b = at::full({1}, 2.5f);
    const at::Tensor m_a = at::rand({4, 4}), m_b = at::rand({4, 4});
    const at::Tensor v16 = at::rand({16});
    const std::pair<const char*, std::function<void()>> cases[] = {
        {"add 1-element f32", [&] { (void)(one_a + one_b); }},
        {"matmul 4x4 f32", [&] { (void)at::matmul(m_a, m_b); }},
        {"sum 16 f32", [&] { (void)v16.sum(); }},
    };
    if (argc > 3 && std::strcmp(argv[1], "--calls") == 0) {
        const auto& f = cases[std::atoi(argv[2])].second;
        for (int i = 0, n = std::atoi(argv[3]); i < n; ++i) f();
        return 0;
    }
    auto measure = [&](const char* name, const std::function<void()>& f) {
        const double plain = bench::median_seconds(f, samples, inner);
        double inference = 0;
        {
            c10::InferenceMode guard;
            inference = bench::median_seconds(f, samples, inner);
        }
        std::printf("{\"case\": \"%s\", \"seconds\": %.6e, \"inference_mode_seconds\": %.6e, \"samples\": %d, \"inner\": %d}\n",
                    name, plain, inference, samples, inner);
    };
    for (const auto& [name, f] : cases) measure(name, f);
}
