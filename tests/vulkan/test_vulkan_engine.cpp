// The vulkan engine itself: what it reports, transfers, out-of-memory, and the machines
// without Vulkan (no loader, no driver), where it must load and report 0 devices with the
// reason. The last tests run in processes of their own with the environment ctest gives them.
#include "vulkan_test.hpp"

#include <ferro/gradcheck.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <thread>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("vulkan: the engine reports its device, dtypes and the validation layer", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    const Inventory inv = rt.inventory();
    const EngineInfo* engine = nullptr;
    for (const EngineInfo& e : inv.engines) {
        if (e.name == "vulkan:0") engine = &e;
    }
    REQUIRE(engine != nullptr);
    CHECK(engine->kind == "vulkan");
    CHECK((engine->flags & FERRO_ENGINE_HOST_ADDRESSABLE) == 0);
    CHECK(engine->memory_bytes > 0);
    CHECK(std::find(engine->dtypes.begin(), engine->dtypes.end(), DType::f32) != engine->dtypes.end());
    CHECK_THAT(engine->details, Catch::Contains("Vulkan 1."));
    CHECK_THAT(engine->details, Catch::Contains("validation layer on"));
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan: tensors round-trip between the cpu and vulkan in every dtype", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    const std::vector<double> values = random_values(1000, 7);
    for (DType dt : {DType::f32, DType::f64, DType::c64, DType::c128, DType::i64, DType::boolean}) {
        INFO(dtype_name(dt));
        const Tensor x = rt.tensor<double>(values, {10, 100}).to(dt);
        Tensor v;
        try {
            v = x.to("vulkan:0");
        } catch (const Error& e) {  // a dtype the device lacks is refused with the reason
            CHECK(e.code() == FERRO_UNIMPLEMENTED);
            continue;
        }
        CHECK(v.engine() == "vulkan:0");
        CHECK(v.shape() == Shape{10, 100});
        const Tensor back = v.to("cpu");
        CHECK(detail::values_of(back) == detail::values_of(x));
        // Host data straight onto the device, and back.
        const Tensor direct = rt.tensor<double>(values, {1000}, "vulkan:0");
        CHECK(direct.to("cpu").to_vector<double>() == values);
    }
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan: an impossible allocation is RESOURCE_EXHAUSTED and the engine keeps working", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    check_error([&] { (void)rt.zeros({int64_t{1} << 40}, DType::f64, "vulkan:0"); }, FERRO_RESOURCE_EXHAUSTED,
                "vulkan engine: cannot allocate");
    const Tensor x = rt.ones({256}, DType::f32, "vulkan:0");
    CHECK(x.sum().to("cpu").to_vector<double>() == std::vector<double>{256.0});
    // Validation may warn about the failed allocation; nothing else.
    const std::lock_guard<std::mutex> lock(log.mutex);
    for (const std::string& m : log.messages) {
        INFO(m);
        CHECK_THAT(m, Catch::Contains("vkAllocateMemory") || Catch::Contains("allocation"));
    }
}

TEST_CASE("vulkan: many small sessions in a row release their memory", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    Tensor acc = rt.zeros({64}, DType::f32, "vulkan:0");
    for (int i = 0; i < 300; ++i) acc = acc + rt.ones({64}, DType::f32, "vulkan:0");
    CHECK(acc.to("cpu").to_vector<double>() == std::vector<double>(64, 300.0));
    check_no_vulkan_messages(log);
}

// Run by ctest with FERRO_VULKAN_STAGING=1: transfers through staging buffers, as on a
// discrete GPU whose memory the host cannot map.
TEST_CASE("vulkan: staged transfers round-trip and feed kernels", "[.staging]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    const std::vector<double> values = random_values(100000, 9);  // several staging chunks? one
    const Tensor v = rt.tensor<double>(values, {100000}, "vulkan:0");
    CHECK(v.to("cpu").to_vector<double>() == values);
    const std::vector<double> doubled = (v * 2.0).to("cpu").to_vector<double>();
    for (size_t i = 0; i < values.size(); ++i) CHECK(doubled[i] == 2.0 * values[i]);
    for (const EngineInfo& e : rt.inventory().engines) {
        if (e.name == "vulkan:0") CHECK_THAT(e.details, Catch::Contains("staged"));
    }
    check_no_vulkan_messages(log);
}

// Run by ctest with FERRO_VULKAN_LIBRARY pointing at a file that does not exist.
TEST_CASE("vulkan: without a Vulkan loader the plugin loads and reports 0 devices with the reason", "[.no-loader]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    const EngineKindInfo k = vulkan_kind(rt);
    CHECK(k.kind == "vulkan");
    CHECK(k.device_count == 0);
    CHECK_THAT(k.reason, Catch::Contains("no Vulkan loader"));
    check_error([&] { (void)rt.zeros({2}, DType::f32, "vulkan:0"); }, FERRO_NOT_FOUND, "vulkan:0");
}

// Run by ctest with VK_DRIVER_FILES (and VK_ICD_FILENAMES) pointing at no driver.
TEST_CASE("vulkan: without a Vulkan driver the plugin loads and reports 0 devices with the reason", "[.no-driver]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    const EngineKindInfo k = vulkan_kind(rt);
    CHECK(k.kind == "vulkan");
    CHECK(k.device_count == 0);
    CHECK_THAT(k.reason, Catch::Contains("VK_ERROR_INCOMPATIBLE_DRIVER"));
}

TEST_CASE("concurrency: vulkan sessions, allocations and transfers from several threads", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    std::vector<std::thread> threads;
    std::vector<int> wrong(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 20; ++round) {
                const Tensor x = rt.full({1000}, static_cast<double>(t + round), DType::f32, "vulkan:0");
                const Tensor y = (x * 2.0 + 1.0).sum();
                const double want = 1000.0 * (2.0 * (t + round) + 1.0);
                if (y.to("cpu").item<float>() != static_cast<float>(want)) ++wrong[static_cast<size_t>(t)];
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(wrong == std::vector<int>(4, 0));
    check_no_vulkan_messages(log);
}

// llvmpipe ends a shader's loop nest after 65535 iterations without an error: a reduction of
// millions of elements into one output, or a product with a long k, must still be exact (the
// engine splits such work over dispatches). Broadcast views keep the inputs small.
TEST_CASE("vulkan: reductions and products longer than one dispatch's loops are exact", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    const int64_t n = 6'000'000;  // one output: 23438 elements per invocation in one dispatch
    CHECK(rt.ones({1}, DType::f64, "vulkan:0").expand({n}).sum().to("cpu").item<double>() == static_cast<double>(n));
    CHECK(rt.ones({1}, DType::f32, "vulkan:0").expand({n}).sum().to("cpu").item<double>() == static_cast<double>(n));
    const Tensor ramp = rt.arange(0, static_cast<double>(n), 1.0, "vulkan:0");  // every split boundary matters
    CHECK(ramp.sum().to("cpu").item<double>() == static_cast<double>(n) * (n - 1) / 2);
    CHECK(ramp.max().to("cpu").item<double>() == static_cast<double>(n - 1));
    CHECK(ramp.min().to("cpu").item<double>() == 0.0);
    const Tensor last = rt.full({1}, static_cast<double>(n - 1), ramp.dtype(), "vulkan:0");
    CHECK(last.call("core.ge", {}, {ramp}).call("core.all").to("cpu").item<bool>());
    CHECK_FALSE(last.call("core.gt", {}, {ramp}).call("core.all").to("cpu").item<bool>());
    CHECK(last.call("core.gt", {}, {ramp}).call("core.any").to("cpu").item<bool>());
    // Many outputs, one invocation each, 30000 elements per output.
    const std::vector<double> rows =
        rt.ones({4096, 1}, DType::f32, "vulkan:0").expand({4096, 30000}).sum({1}).to("cpu").to_vector<double>();
    CHECK(rows == std::vector<double>(4096, 30000.0));
    // Products with k beyond one dispatch: the skinny shader and the tiled one.
    const Tensor a = rt.ones({8, 1}, DType::f32, "vulkan:0").expand({8, 70000});
    const Tensor b = rt.ones({1, 8}, DType::f32, "vulkan:0").expand({70000, 8});
    CHECK(a.matmul(b).to("cpu").to_vector<double>() == std::vector<double>(64, 70000.0));
    const Tensor c = rt.ones({64, 1}, DType::f32, "vulkan:0").expand({64, 120000});
    const Tensor d = rt.ones({1, 64}, DType::f32, "vulkan:0").expand({120000, 64});
    CHECK(c.matmul(d).to("cpu").to_vector<double>() == std::vector<double>(64 * 64, 120000.0));
    check_no_vulkan_messages(log);
}

// Floating sums are compensated in each invocation's run (reduce.comp), so they are as accurate
// as the cpu engine's pairwise sums: numpy's case (10^6 copies of 1 + 8196 eps; 1.5e-15 is
// numpy's bound), and f32 sums of 0.1 that uncompensated runs got wrong by 1.6e-5 (all of one
// output, 2048 elements per invocation) and 4.1e-6 (columns, one invocation each).
TEST_CASE("vulkan: floating sums are compensated: numpy's accuracy case and long f32 sums", "[vulkan]") {
    VulkanLog log;
    Runtime rt = vulkan_runtime(log);
    require_vulkan_device(rt);
    const auto relative = [](double got, double want) { return std::abs(got - want) / std::abs(want); };
    const int64_t rows = 1 << 17;
    const float tenth = 0.1f;
    const double tenth_sum = static_cast<double>(tenth) * static_cast<double>(4 * rows);
    const Tensor f32 = rt.full({1}, tenth, DType::f32, "vulkan:0").expand({4 * rows});
    CHECK(relative(f32.sum().to("cpu").item<double>(), tenth_sum) < 1e-6);
    const Tensor columns = rt.full({1, 1}, tenth, DType::f32, "vulkan:0").expand({rows, 4}).contiguous();
    for (double v : columns.sum({0}).to("cpu").to_vector<double>()) CHECK(relative(v, tenth_sum / 4) < 1e-6);
    const Tensor c64 = rt.full({1}, tenth, DType::f32, "vulkan:0").expand({4 * rows}).to(DType::c64);
    CHECK(relative(c64.sum().real().to("cpu").item<double>(), tenth_sum) < 1e-6);
    const double eps = std::numeric_limits<double>::epsilon(), v = 1 + 8196 * eps;
    const Tensor f64 = rt.full({1}, v, DType::f64, "vulkan:0").expand({1'000'000});
    CHECK(relative(f64.sum().to("cpu").item<double>(), 1e6 * v) < 1.5e-15);
    const Tensor column = rt.full({1, 1}, v, DType::f64, "vulkan:0").expand({1'000'000, 2}).contiguous();
    for (double s : column.sum({0}).to("cpu").to_vector<double>()) CHECK(relative(s, 1e6 * v) < 1.5e-15);
    check_no_vulkan_messages(log);
}
