// bench/run linalg_ad (ferro side): forward + backward of svd, eigh, qr and solve on n x n
// f64 matrices, n = 8, 256 and 1024 (--quick: 8 and 256), with every output in the loss
// (random weights), as a training step would. bench/run pairs it with torch.linalg under
// libtorch autograd (torch_peer/linalg_ad_torch.cpp), one thread each side.
#include "timing.hpp"

#include <ferro/ferro.hpp>

#include <cstring>
#include <functional>
#include <string>

using ferro::Tensor;

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const ferro::Runtime rt;
    for (const char* op : {"svd", "eigh", "qr", "solve"}) {
        for (int64_t n : {8, 256, 1024}) {
            if (quick && n > 256) continue;
            Tensor A = (rt.rand({n, n}, ferro::DType::f64, 21) + rt.eye(n) * static_cast<double>(n)).contiguous();
            A.set_requires_grad();
            const Tensor B = rt.rand({n, n}, ferro::DType::f64, 22);
            const Tensor w1 = rt.randn({n, n}, ferro::DType::f64, 23), w2 = rt.randn({n}, ferro::DType::f64, 24),
                         w3 = rt.randn({n, n}, ferro::DType::f64, 25);
            const std::string name = op;
            std::function<Tensor()> loss;
            if (name == "svd")
                loss = [&] {
                    auto [u, s, vh] = ferro::linalg::svd(A, false);
                    return (u * w1).sum() + (s * w2).sum() + (vh * w3).sum();
                };
            if (name == "eigh")
                loss = [&] {
                    auto [w, v] = ferro::linalg::eigh(A + A.mT());
                    return (w * w2).sum() + (v * w1).sum();
                };
            if (name == "qr")
                loss = [&] {
                    auto [q, r] = ferro::linalg::qr(A);
                    return (q * w1).sum() + (r * w3).sum();
                };
            if (name == "solve") loss = [&] { return (ferro::linalg::solve(A, B) * w1).sum(); };
            const auto step = [&] {
                loss().backward();
                A.clear_grad();
            };
            const int inner = n <= 8 ? 200 : n <= 256 ? 2 : 1;
            const int samples = quick ? 5 : n <= 256 ? 9 : 3;
            std::printf("{\"case\": \"%s n=%lld f64 forward+backward\", \"seconds\": %.6e, \"samples\": %d, \"inner\": %d}\n", op,
                        static_cast<long long>(n), bench::median_seconds(step, samples, inner), samples, inner);
            std::fflush(stdout);
        }
    }
}
