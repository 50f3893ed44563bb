// bench/run autodiff (ferro side): forward + backward through the tape. Two regimes:
//   - chains of 100 tiny ops (1-element: mul, add, tanh; 4x4: matmul, add, tanh, repeated),
//     where the cost is all bookkeeping (recording, the backward pass, the VJP rules' calls);
//   - one step of a 3-layer, 512-wide tanh MLP on a batch of 64, where the kernels dominate;
//   - the same step's 8 matrix products alone, without grad: the BLAS reference. The two sides
//     use different BLAS libraries (the process's here, OpenBLAS by default; MKL in the torch wheel), and this case shows
//     how much of the MLP ratio is the BLAS and not ferro.
// Parameters require grad and their .grad is cleared every iteration, as in training.
// Prints one {"case", "seconds"} JSON line per case; bench/run pairs it with libtorch autograd
// (torch_peer/autodiff_torch.cpp) measured in the same run. `--calls CASE N` runs case CASE
// N times untimed, for profiling.
#include "timing.hpp"

#include <ferro/ferro.hpp>

#include <cstdlib>
#include <cstring>
#include <functional>

using ferro::DType;
using ferro::Tensor;

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    ferro::Runtime::Options o;
    o.autoload = false;
    const ferro::Runtime rt(o);
    auto param = [&](ferro::Shape s, int64_t seed) {
        Tensor t = rt.rand(std::move(s), DType::f32, seed);
        t.set_requires_grad();
        return t;
    };
    // Tiny chains: 100 ops, then sum and backward.
    Tensor x1 = param({1}, 1), a1 = param({1}, 2), b1 = param({1}, 3);
    Tensor x4 = param({4, 4}, 4), a4 = param({4, 4}, 5), b4 = param({4, 4}, 6);
    auto chain = [](const Tensor& x, const Tensor& a, const Tensor& b, bool matrix) {
        Tensor y = x;
        for (int i = 0; i < 100; ++i) {
            switch (i % 3) {
                case 0: y = matrix ? ferro::matmul(y, a) : y * a; break;
                case 1: y = y + b; break;
                default: y = y.tanh(); break;
            }
        }
        y.sum().backward();
        for (const Tensor* p : {&x, &a, &b}) p->clear_grad();
    };
    // MLP: 64 x 512 -> 512 -> 512 -> 512, tanh, mean squared output.
    Tensor input = rt.rand({64, 512}, DType::f32, 7);
    Tensor w1 = param({512, 512}, 8), w2 = param({512, 512}, 9), w3 = param({512, 512}, 10);
    Tensor c1 = param({512}, 11), c2 = param({512}, 12), c3 = param({512}, 13);
    auto mlp = [&] {
        const Tensor h1 = (ferro::matmul(input, w1) + c1).tanh();
        const Tensor h2 = (ferro::matmul(h1, w2) + c2).tanh();
        const Tensor out = ferro::matmul(h2, w3) + c3;
        (out * out).mean().backward();
        for (const Tensor* p : {&w1, &w2, &w3, &c1, &c2, &c3}) p->clear_grad();
    };
    // The MLP step's products: 3 forward (NN), 3 weight gradients (TN, k = 64), 2 input
    // gradients (NT; the batch input needs none).
    Tensor g = rt.rand({64, 512}, DType::f32, 14);
    auto mlp_gemms = [&] {
        const ferro::NoGrad no_grad;
        for (const Tensor* w : {&w1, &w2, &w3}) (void)ferro::matmul(input, *w);
        for (int i = 0; i < 3; ++i) (void)ferro::matmul(input.mT(), g);
        for (const Tensor* w : {&w2, &w3}) (void)ferro::matmul(g, w->mT());
    };
    struct Case {
        const char* name;
        std::function<void()> run;
        int samples, inner;
    };
    const Case cases[] = {
        {"chain 100 ops 1-element f32", [&] { chain(x1, a1, b1, false); }, quick ? 5 : 15, quick ? 50 : 200},
        {"chain 100 ops 4x4 f32", [&] { chain(x4, a4, b4, true); }, quick ? 5 : 15, quick ? 50 : 200},
        {"mlp 3x512 batch 64 f32 step", mlp, quick ? 3 : 7, quick ? 2 : 5},
        {"mlp gemms only f32 (BLAS reference)", mlp_gemms, quick ? 3 : 7, quick ? 2 : 5},
    };
    if (argc > 3 && std::strcmp(argv[1], "--calls") == 0) {
        const auto& f = cases[std::atoi(argv[2])].run;
        for (int i = 0, n = std::atoi(argv[3]); i < n; ++i) f();
        return 0;
    }
    for (const auto& c : cases) {
        std::printf("{\"case\": \"%s\", \"seconds\": %.6e, \"samples\": %d, \"inner\": %d}\n", c.name,
                    bench::median_seconds(c.run, c.samples, c.inner), c.samples, c.inner);
    }
}
