// bench/run dispatch (peer side): the same tiny ops through libtorch's C++ API (ATen), from
// the torch wheel on PyPI, one intra-op thread. Default mode is what a PyTorch user gets; the
// inference-mode figure (no autograd bookkeeping) is reported alongside for completeness.
#include "../timing.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>

#include <cstring>

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int samples = quick ? 5 : 15, inner = quick ? 5000 : 20000;
    at::set_num_threads(1);
    const at::Tensor one_a = at::full({1}, 1.5f), one_b = at::full({1}, 2.5f);
    const at::Tensor m_a = at::rand({4, 4}), m_b = at::rand({4, 4});
    const at::Tensor v16 = at::rand({16});
    auto measure = [&](const char* name, auto&& f) {
        const double plain = bench::median_seconds(f, samples, inner);
        double inference = 0;
        {
            c10::InferenceMode guard;
            inference = bench::median_seconds(f, samples, inner);
        }
        std::printf("{\"case\": \"%s\", \"seconds\": %.6e, \"inference_mode_seconds\": %.6e, \"samples\": %d, \"inner\": %d}\n",
                    name, plain, inference, samples, inner);
    };
    measure("add 1-element f32", [&] { (void)(one_a + one_b); });
    measure("matmul 4x4 f32", [&] { (void)at::matmul(m_a, m_b); });
    measure("sum 16 f32", [&] { (void)v16.sum(); });
}
