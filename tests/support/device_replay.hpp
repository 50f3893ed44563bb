// Shared by the engine suites (vulkan, cuda): a program captured on an engine's tensors replays
// new inputs there as the eager calls compute them on the cpu engine.
#pragma once

#include "ferro_test.hpp"

#include <ferro/capture.hpp>

#include <functional>
#include <string>
#include <vector>

namespace ferro::test {

using Compute = std::function<std::vector<Tensor>(const Tensor& x, const Tensor& w)>;

// compute(x [8, 16], w [16, 4]) in `dtype`, captured on `engine` and replayed there on three
// new pairs of inputs: each output is on `engine`, within (rtol, atol) of the cpu's eager one,
// and the intermediates keep buffers of their own from run to run (these engines' buffers are
// not addresses, so there is no arena).
inline void check_device_replay(const Runtime& rt, const std::string& engine, DType dtype, const Compute& compute, double rtol,
                                double atol) {
    const auto on_device = [&](int64_t seed, Shape shape) { return rt.rand(shape, dtype, seed).to(engine); };
    Tensor x = on_device(1, {8, 16}), w = on_device(2, {16, 4});
    Capture capture(rt, {x, w});
    const PreparedProgram step = capture.end(compute(x, w)).prepare();
    CHECK(step.memory().run_bytes == step.memory().intermediate_bytes);
    for (int64_t seed = 3; seed < 6; ++seed) {
        x = on_device(seed, {8, 16});
        w = on_device(seed + 10, {16, 4});
        const std::vector<Tensor> replayed = step({x, w}), eager = compute(x.to("cpu"), w.to("cpu"));
        REQUIRE(replayed.size() == eager.size());
        CHECK(replayed[0].engine() == engine);
        for (size_t k = 0; k < eager.size(); ++k) {
            check_close(replayed[k].to("cpu").to(DType::f64).to_vector<double>(), eager[k].to(DType::f64).to_vector<double>(),
                        rtol, atol);
        }
    }
}

}  // namespace ferro::test
