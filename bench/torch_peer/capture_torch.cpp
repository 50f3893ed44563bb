// bench/run capture (peer side): the computations bench/capture.cpp captures, as libtorch eager
// calls (ATen, from the torch wheel on PyPI, one intra-op thread, default mode). Prints one
// {"case", "seconds"} JSON line per case, named as bench_capture names them.
#include "../timing.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

at::Tensor chain(const at::Tensor& x, const at::Tensor& y) {
    at::Tensor t = x;
    for (int i = 0; i < 25; ++i) t = ((t + y) * y - x).tanh();
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int samples = quick ? 5 : 15, inner = quick ? 50 : 200;
    at::set_num_threads(1);
    auto report = [&](const std::string& name, const std::function<void()>& f) {
        std::printf("{\"case\": \"%s\", \"seconds\": %.6e, \"samples\": %d, \"inner\": %d}\n", name.c_str(),
                    bench::median_seconds(f, samples, inner), samples, inner);
    };
    for (const int64_t n : {1, 16}) {
        const at::Tensor x = at::rand({n}), y = at::rand({n});
        report("chain of 100 elementwise ops, " + std::to_string(n) + " f32", [&] { (void)chain(x, y); });
    }
    const at::Tensor x = at::rand({32, 64}), w1 = at::rand({64, 64}), b1 = at::rand({64}), w2 = at::rand({64, 8});
    report("MLP forward 32x64x64x8 f32", [&] { (void)(at::matmul(x, w1) + b1).tanh().matmul(w2).sum(); });
    const std::vector<at::Tensor> weights = {w1.detach().requires_grad_(), b1.detach().requires_grad_(),
                                             w2.detach().requires_grad_()};
    report("MLP step (forward + backward) 32x64x64x8 f32", [&] {
        const at::Tensor loss = (at::matmul(x, weights[0]) + weights[1]).tanh().matmul(weights[2]).sum();
        (void)torch::autograd::grad({loss}, weights);
    });
}
