// Capture and replay on the cuda engine: built-in steps share one session (the engine's stream),
// plugin steps (einsum, the cuSOLVER and cuFFT modules) get their own, intermediates keep
// buffers of their own from run to run; values are the cpu engine's eager ones, and a run's
// gradient node gives the eager gradients.
#include "cuda_test.hpp"
#include "device_replay.hpp"

#include <ferro/capture.hpp>
#include <ferro/einsum.hpp>
#include <ferro/fft.hpp>
#include <ferro/linalg.hpp>

using namespace ferro;
using namespace ferro::test;

namespace {

std::vector<double> host_f64(const Tensor& t) { return t.to("cpu").to(DType::f64).to_vector<double>(); }

}  // namespace

TEST_CASE("cuda: a prepared program replays on the device as the eager calls on the cpu", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    check_device_replay(
        rt, "cuda:0", DType::f64,
        [](const Tensor& x, const Tensor& w) {
            const Tensor h = (einsum("ij,jk->ik", {x, w}) * 0.5 + 1.0).tanh();
            return std::vector{(h * h).sum(), h.exp(), fft::fft(h.to(DType::c128)).abs()};
        },
        1e-12, 1e-12);
}

TEST_CASE("cuda: a prepared program's gradient node gives the eager gradients on the device", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    const auto loss = [](const Tensor& a, const Tensor& b) { return (linalg::solve(a, b).tanh() * b).sum(); };
    const auto spd = [&](int64_t seed) {
        const Tensor m = rt.rand({6, 6}, DType::f64, seed);
        return (matmul(m, m.transpose()) + rt.eye(6, DType::f64) * 6.0).to("cuda:0");
    };
    Tensor a = spd(1), b = rt.rand({6, 2}, DType::f64, 2).to("cuda:0");
    Capture capture(rt, {a, b});
    const PreparedProgram program = capture.end({loss(a, b)}).prepare();
    for (int64_t seed = 3; seed < 5; ++seed) {
        a = spd(seed);
        b = rt.rand({6, 2}, DType::f64, seed + 10).to("cuda:0");
        a.set_requires_grad();
        b.set_requires_grad();
        const std::vector<Tensor> replayed = program({a, b});
        CHECK(replayed[0].grad_fn() == "program");
        const std::vector<Tensor> got = grad({replayed[0]}, {a, b});
        Tensor ac = a.detach().to("cpu"), bc = b.detach().to("cpu");
        ac.set_requires_grad();
        bc.set_requires_grad();
        const std::vector<Tensor> want = grad({loss(ac, bc)}, {ac, bc});
        for (size_t k = 0; k < 2; ++k) check_close(host_f64(got[k]), host_f64(want[k]), 1e-10, 1e-10);
    }
}
