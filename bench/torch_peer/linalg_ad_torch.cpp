// bench/run linalg_ad (peer side): the cases of bench/linalg_ad.cpp through torch.linalg and
// libtorch autograd (the torch wheel from PyPI), one intra-op thread.
#include "../timing.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>

#include <cstring>
#include <functional>
#include <string>

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    at::set_num_threads(1);
    const auto f64 = at::TensorOptions().dtype(at::kDouble);
    for (const char* op : {"svd", "eigh", "qr", "solve"}) {
        for (int64_t n : {8, 256, 1024}) {
            if (quick && n > 256) continue;
            at::Tensor A = (at::rand({n, n}, f64) + at::eye(n, f64) * static_cast<double>(n)).set_requires_grad(true);
            const at::Tensor B = at::rand({n, n}, f64);
            const at::Tensor w1 = at::randn({n, n}, f64), w2 = at::randn({n}, f64), w3 = at::randn({n, n}, f64);
            const std::string name = op;
            std::function<at::Tensor()> loss;
            if (name == "svd")
                loss = [&] {
                    auto [u, s, vh] = at::linalg_svd(A, false);
                    return (u * w1).sum() + (s * w2).sum() + (vh * w3).sum();
                };
            if (name == "eigh")
                loss = [&] {
                    auto [w, v] = at::linalg_eigh(A + A.mT());
                    return (w * w2).sum() + (v * w1).sum();
                };
            if (name == "qr")
                loss = [&] {
                    auto [q, r] = at::linalg_qr(A);
                    return (q * w1).sum() + (r * w3).sum();
                };
            if (name == "solve") loss = [&] { return (at::linalg_solve(A, B) * w1).sum(); };
            const auto step = [&] {
                loss().backward();
                A.mutable_grad().reset();
            };
            const int inner = n <= 8 ? 200 : n <= 256 ? 2 : 1;
            const int samples = quick ? 5 : n <= 256 ? 9 : 3;
            std::printf("{\"case\": \"%s n=%lld f64 forward+backward\", \"seconds\": %.6e, \"samples\": %d, \"inner\": %d}\n", op,
                        static_cast<long long>(n), bench::median_seconds(step, samples, inner), samples, inner);
            std::fflush(stdout);
        }
    }
}
