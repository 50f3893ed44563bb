// bench/run autodiff (peer side): the same chains and MLP step as bench/autodiff.cpp through
// libtorch autograd (from the torch wheel on PyPI), one intra-op thread.
#include "../timing.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>

#include <cstdlib>
#include <cstring>
#include <functional>

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    at::set_num_threads(1);
    auto param = [](at::IntArrayRef s) { return at::rand(s).set_requires_grad(true); };
    at::Tensor x1 = param({1}), a1 = param({1}), b1 = param({1});
    at::Tensor x4 = param({4, 4}), a4 = param({4, 4}), b4 = param({4, 4});
    auto chain = [](at::Tensor& x, at::Tensor& a, at::Tensor& b, bool matrix) {
        at::Tensor y = x;
        for (int i = 0; i < 100; ++i) {
            switch (i % 3) {
                case 0: y = matrix ? at::matmul(y, a) : y * a; break;
                case 1: y = y + b; break;
                default: y = y.tanh(); break;
            }
        }
        y.sum().backward();
        for (at::Tensor* p : {&x, &a, &b}) p->mutable_grad().reset();
    };
    at::Tensor input = at::rand({64, 512});
    at::Tensor w1 = param({512, 512}), w2 = param({512, 512}), w3 = param({512, 512});
    at::Tensor c1 = param({512}), c2 = param({512}), c3 = param({512});
    auto mlp = [&] {
        const at::Tensor h1 = (at::matmul(input, w1) + c1).tanh();
        const at::Tensor h2 = (at::matmul(h1, w2) + c2).tanh();
        const at::Tensor out = at::matmul(h2, w3) + c3;
        (out * out).mean().backward();
        for (at::Tensor* p : {&w1, &w2, &w3, &c1, &c2, &c3}) p->mutable_grad().reset();
    };
    at::Tensor g = at::rand({64, 512});
    auto mlp_gemms = [&] {
        const at::NoGradGuard no_grad;
        for (const at::Tensor* w : {&w1, &w2, &w3}) (void)at::matmul(input, *w);
        for (int i = 0; i < 3; ++i) (void)at::matmul(input.mT(), g);
        for (const at::Tensor* w : {&w2, &w3}) (void)at::matmul(g, w->mT());
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
