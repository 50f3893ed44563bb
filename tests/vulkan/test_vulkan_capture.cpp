// Capture and replay on the vulkan engine: a run's built-in steps share one session (one
// command buffer), plugin steps (einsum) get their own, intermediates keep buffers of their own
// from run to run; the values are the cpu engine's eager ones.
#include "vulkan_test.hpp"

#include <ferro/capture.hpp>
#include <ferro/einsum.hpp>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("vulkan: a prepared program replays on the device as the eager calls on the cpu", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    const auto compute = [](const Tensor& x, const Tensor& w) {
        const Tensor h = (einsum("ij,jk->ik", {x, w}) * 0.5 + 1.0).tanh();
        return std::vector{(h * h).sum(), h.exp()};
    };
    const auto on_device = [&](int64_t seed, Shape shape) { return rt.rand(shape, DType::f32, seed).to("vulkan:0"); };
    Tensor x = on_device(1, {8, 16}), w = on_device(2, {16, 4});
    Capture capture(rt, {x, w});
    const PreparedProgram step = capture.end(compute(x, w)).prepare();
    CHECK(step.memory().run_bytes == step.memory().intermediate_bytes);  // buffers of their own, kept
    for (int64_t seed = 3; seed < 6; ++seed) {
        x = on_device(seed, {8, 16});
        w = on_device(seed + 10, {16, 4});
        const std::vector<Tensor> replayed = step({x, w}), eager = compute(x.to("cpu"), w.to("cpu"));
        REQUIRE(replayed.size() == 2);
        CHECK(replayed[0].engine() == "vulkan:0");
        for (size_t k = 0; k < 2; ++k) {
            const std::vector<double> got = replayed[k].to("cpu").to(DType::f64).to_vector<double>();
            const std::vector<double> want = eager[k].to(DType::f64).to_vector<double>();
            check_close(got, want, 1e-4, 1e-5);
        }
    }
    check_no_vulkan_messages(log);
}
