// Capture and replay on the vulkan engine: a run's built-in steps share one session (one
// command buffer), plugin steps (einsum) get their own, intermediates keep buffers of their own
// from run to run; the values are the cpu engine's eager ones.
#include "device_replay.hpp"
#include "vulkan_test.hpp"

#include <ferro/einsum.hpp>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("vulkan: a prepared program replays on the device as the eager calls on the cpu", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    check_device_replay(
        rt, "vulkan:0", DType::f32,
        [](const Tensor& x, const Tensor& w) {
            const Tensor h = (einsum("ij,jk->ik", {x, w}) * 0.5 + 1.0).tanh();
            return std::vector{(h * h).sum(), h.exp()};
        },
        1e-4, 1e-5);
    check_no_vulkan_messages(log);
}
