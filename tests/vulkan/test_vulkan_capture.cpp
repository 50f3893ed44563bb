// Capture and replay on the vulkan engine: the first runs record the program's steps into one
// engine session (one command buffer), later runs submit that recording again with their own
// input and output buffers (ABI 1.14); intermediates keep buffers of their own from run to run;
// the values are the cpu engine's eager ones; runs of elementwise steps are one fused dispatch.
#include "device_replay.hpp"
#include "vulkan_test.hpp"

#include <ferro/einsum.hpp>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <thread>

using namespace ferro;
using namespace ferro::test;

namespace {

struct Recorded {
    uint64_t recordings, resubmissions, refused;
};

Recorded recorded_of(const PreparedProgram& step) {
    const nlohmann::json r = nlohmann::json::parse(step.describe()).at("recorded_sessions");
    return {r.at("recordings").get<uint64_t>(), r.at("resubmissions").get<uint64_t>(), r.at("refused").get<uint64_t>()};
}

// Core steps, views of an input and of a step value between them, and an einsum (a plugin's
// session executor).
std::vector<Tensor> mixed(const Tensor& x, const Tensor& w) {
    const Tensor h = (einsum("ij,jk->ik", {x, w}) * 0.5 + 1.0).tanh();
    const Tensor ht = h.transpose();
    const Tensor folded = x.reshape({16, 8}).sum({1});
    return {(h * h).sum(), ht * 2.0 - 1.0, ht, folded + 1.0};
}

void check_same(const std::vector<Tensor>& replayed, const std::vector<Tensor>& eager) {
    REQUIRE(replayed.size() == eager.size());
    for (size_t k = 0; k < eager.size(); ++k) {
        CHECK(replayed[k].shape() == eager[k].shape());
        check_close(replayed[k].to("cpu").to(DType::f64).to_vector<double>(), eager[k].to(DType::f64).to_vector<double>(), 1e-4,
                    1e-5);
    }
}

Tensor on_device(const Runtime& rt, int64_t seed, const Shape& shape) { return rt.rand(shape, DType::f32, seed).to("vulkan:0"); }

// `mixed` captured on vulkan:0 ([8, 16] and [16, 4] f32), run on new inputs and checked against
// the cpu's eager values.
class MixedOnVulkan {
public:
    MixedOnVulkan() : rt_(vulkan_runtime(log_)) {}
    ~MixedOnVulkan() { check_no_vulkan_messages(log_); }
    MixedOnVulkan(const MixedOnVulkan&) = delete;
    MixedOnVulkan& operator=(const MixedOnVulkan&) = delete;

    Program capture() {
        require_vulkan_device(rt_);
        const std::vector<Tensor> in = inputs(1);
        Capture capture(rt_, in);
        return capture.end(mixed(in[0], in[1]));
    }
    std::vector<Tensor> inputs(int64_t seed) const {
        return {on_device(rt_, seed, {8, 16}), on_device(rt_, seed + 1000, {16, 4})};
    }
    static void check(const std::vector<Tensor>& in, const std::vector<Tensor>& replayed) {
        check_same(replayed, mixed(in[0].to("cpu"), in[1].to("cpu")));
    }
    void run(const PreparedProgram& step, int64_t seed) const {
        const std::vector<Tensor> in = inputs(seed);
        check(in, step(in));
    }

private:
    VulkanLog log_;
    Runtime rt_;
};

}  // namespace

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

TEST_CASE("vulkan: a program's runs submit one recorded command buffer again with their own buffers", "[vulkan]") {
    MixedOnVulkan m;
    const PreparedProgram step = m.capture().prepare();
    // The first run learns which steps may join a recording (the einsum's executor works inside
    // its session, the transposes are views), the second records the whole program as one.
    m.run(step, 3);
    m.run(step, 4);
    const Recorded learnt = recorded_of(step);
    CHECK(learnt.refused == 0);
    // From then on each run submits that recording again, and nothing else is recorded.
    for (int64_t seed = 5; seed < 9; ++seed) m.run(step, seed);
    const Recorded later = recorded_of(step);
    CHECK(later.recordings == learnt.recordings);
    CHECK(later.resubmissions == learnt.resubmissions + 4);
    CHECK(later.refused == 0);
}

TEST_CASE(
    "vulkan: a recording follows inputs that alias or sit at another offset, and records again when views no "
    "longer share a buffer",
    "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    const auto f = [](const Tensor& a, const Tensor& b) { return std::vector{(a * b + a).exp(), a - b}; };
    const auto device = [&](int64_t seed, const Shape& shape) { return on_device(rt, seed, shape); };
    Tensor a = device(1, {5, 7}), b = device(2, {5, 7});
    Capture capture(rt, {a, b});
    const Program program = capture.end(f(a, b));
    const PreparedProgram step = program.prepare();
    const auto run_on = [&](const PreparedProgram& prepared, const Tensor& p, const Tensor& q) {
        check_same(prepared({p, q}), f(p.to("cpu"), q.to("cpu")));
    };
    const auto run = [&](const Tensor& p, const Tensor& q) { run_on(step, p, q); };
    run(device(3, {5, 7}), device(4, {5, 7}));
    run(device(5, {5, 7}), device(6, {5, 7}));
    const Recorded first = recorded_of(step);
    CHECK(first.resubmissions == 1);
    // Both inputs one tensor: one buffer for both parameters.
    const Tensor same = device(7, {5, 7});
    run(same, same);
    // Rows 1..5 and 2..6 of one tensor: the same layouts at other byte offsets of one buffer.
    const Tensor rows = device(8, {7, 7});
    const Tensor lower = rows.slice(0, 2, 7), upper = rows.slice(0, 1, 6);
    REQUIRE(lower.strides() == Shape{7, 1});
    run(lower, upper);
    run(upper, lower);
    CHECK(recorded_of(step).resubmissions == first.resubmissions + 3);
    CHECK(recorded_of(step).recordings == first.recordings);

    // Recorded with both inputs in one buffer: a run where they are not so placed records again.
    const PreparedProgram shared = program.prepare();
    run_on(shared, lower, upper);
    const Tensor other = device(9, {7, 7});
    run_on(shared, other.slice(0, 2, 7), other.slice(0, 1, 6));  // one buffer, the same offsets: submitted again
    CHECK(recorded_of(shared).resubmissions == 1);
    run_on(shared, upper, lower);  // one buffer, the offsets swapped
    run_on(shared, device(10, {5, 7}), device(11, {5, 7}));
    CHECK(recorded_of(shared).resubmissions == 1);
    CHECK(recorded_of(shared).recordings == 3);
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan: FERRO_RECORD=0 at prepare records each run's session afresh, with the same values", "[vulkan]") {
    MixedOnVulkan m;
    const Program program = m.capture();
    REQUIRE(setenv("FERRO_RECORD", "0", 1) == 0);
    const PreparedProgram step = program.prepare();
    unsetenv("FERRO_RECORD");
    for (int64_t seed = 3; seed < 6; ++seed) m.run(step, seed);
    const Recorded r = recorded_of(step);
    CHECK(r.recordings + r.resubmissions + r.refused == 0);
}

TEST_CASE("concurrency: one prepared program run on vulkan from several threads (a recording per run state)", "[vulkan]") {
    MixedOnVulkan m;
    const PreparedProgram step = m.capture().prepare();
    constexpr int kThreads = 4, kRuns = 6;
    std::vector<std::vector<Tensor>> inputs(kThreads * kRuns), results(kThreads * kRuns);
    for (int i = 0; i < kThreads * kRuns; ++i) inputs[i] = m.inputs(100 + i);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int r = 0; r < kRuns; ++r) results[t * kRuns + r] = step(inputs[t * kRuns + r]);
        });
    }
    for (std::thread& t : threads) t.join();
    for (int i = 0; i < kThreads * kRuns; ++i) MixedOnVulkan::check(inputs[i], results[i]);
    CHECK(recorded_of(step).resubmissions > 0);
}

namespace {

// The ops of each step of a prepared program ("fused" steps: the ops fused into them).
std::vector<std::vector<std::string>> steps_of(const PreparedProgram& step) {
    std::vector<std::vector<std::string>> out;
    const nlohmann::json doc = nlohmann::json::parse(step.describe());
    for (const auto& s : doc.at("steps")) {
        out.push_back(s["op"] == "fused" ? s["ops"].get<std::vector<std::string>>() : std::vector{s["op"].get<std::string>()});
    }
    return out;
}

}  // namespace

TEST_CASE("vulkan: a run of elementwise steps is one fused step that computes exactly what the steps compute", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    // Broadcast (a row; a scalar on f32), a transposed operand, two outputs, in each dtype with
    // its ops (a double scalar would make i64 values f64).
    const auto f = [](const Tensor& x, const Tensor& row, bool real) {
        const Tensor h = (x * row + x) * x.transpose().transpose() - row;
        const Tensor g = real ? (h.tanh() * h).exp() * 0.5 : h * h + x;
        return std::vector{g, g - h - h};
    };
    for (const DType dtype : {DType::f32, DType::c64, DType::i64}) {
        INFO("dtype " << static_cast<int>(dtype));
        const bool real = dtype == DType::f32;
        const auto make = [&](int64_t seed, const Shape& shape) {
            return (rt.rand(shape, DType::f64, seed) * 4.0 - 2.0).to(dtype).to("vulkan:0");
        };
        const Tensor x = make(1, {33, 70}), row = make(2, {70});
        Capture capture(rt, {x, row});
        const Program program = capture.end(f(x, row, real));
        const PreparedProgram fused = program.prepare();
        REQUIRE(setenv("FERRO_FUSE", "0", 1) == 0);
        const PreparedProgram unfused = program.prepare();
        unsetenv("FERRO_FUSE");
        const std::vector<std::vector<std::string>> steps = steps_of(fused);
        CHECK(steps.size() < steps_of(unfused).size());
        CHECK(std::any_of(steps.begin(), steps.end(), [](const auto& s) { return s.size() >= 5; }));
        for (int64_t seed = 3; seed < 5; ++seed) {
            const Tensor x2 = make(seed, {33, 70}), row2 = make(seed + 10, {70});
            const std::vector<Tensor> a = fused({x2, row2}), b = unfused({x2, row2}), eager = f(x2, row2, real);
            for (size_t k = 0; k < eager.size(); ++k) {
                const std::vector<double> got = a[k].to("cpu").to(DType::c128).to_vector<double>();
                CHECK(got == b[k].to("cpu").to(DType::c128).to_vector<double>());
                CHECK(got == eager[k].to("cpu").to(DType::c128).to_vector<double>());
            }
        }
    }
    check_no_vulkan_messages(log);
}
