// The cuda engine itself: what the probe says with and without a device, what the engine
// reports, transfers (through several staging chunks), out-of-memory, DLPack-style import and
// concurrent use. The device tests exit 77 (skipped) where there is no GPU.
#include "cuda_test.hpp"

#include <catch2/catch.hpp>
#include <ferro/gradcheck.hpp>  // detail::values_of

#include <algorithm>
#include <thread>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("cuda: the plugin loads and reports its devices or why it has none", "[cuda-probe]") {
    Runtime rt = cuda_runtime();
    bool loaded = false;
    for (const PluginInfo& p : rt.inventory().plugins) {
        if (p.name == "engine_cuda") loaded = true;
    }
    CHECK(loaded);
    const EngineKindInfo k = cuda_kind(rt);
    REQUIRE(k.kind == "cuda");
    if (k.device_count == 0) {  // no GPU: the runtime's own error, by name
        CHECK_THAT(k.reason, Catch::Contains("cudaGetDeviceCount failed: cudaError") ||
                                 Catch::Contains("the CUDA driver reports no devices"));
        check_error([&] { (void)rt.zeros({2}, DType::f32, "cuda:0"); }, FERRO_NOT_FOUND, "cuda:0");
        return;
    }
    CHECK(k.reason.empty());
    const Inventory inv = rt.inventory();
    const auto engine =
        std::find_if(inv.engines.begin(), inv.engines.end(), [](const EngineInfo& e) { return e.name == "cuda:0"; });
    REQUIRE(engine != inv.engines.end());
    CHECK(engine->kind == "cuda");
    CHECK((engine->flags & FERRO_ENGINE_HOST_ADDRESSABLE) == 0);
    CHECK(engine->memory_bytes > (uint64_t{1} << 30));
    CHECK(engine->dtypes.size() == 6);
    CHECK_THAT(engine->details, Catch::Contains("compute capability"));
    CHECK(!engine->device.empty());
}

// Run by ctest with CUDA_VISIBLE_DEVICES="" : on a GPU machine cudaErrorNoDevice, here
// cudaErrorInsufficientDriver; either way 0 devices, the reason, and no crash.
TEST_CASE("cuda: with no visible device the plugin loads and reports 0 devices with the CUDA error", "[.no-device]") {
    Runtime rt = cuda_runtime();
    const EngineKindInfo k = cuda_kind(rt);
    CHECK(k.kind == "cuda");
    CHECK(k.device_count == 0);
    CHECK_THAT(k.reason, Catch::Contains("cudaGetDeviceCount failed: cudaError"));
    CHECK(rt.inventory().engines.size() >= 1);  // the cpu engine is unaffected
    const Tensor x = rt.ones({3}, DType::f64);
    CHECK(x.sum().item<double>() == 3.0);
}

TEST_CASE("cuda: tensors round-trip between the cpu and cuda in every dtype", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    // 3.5 M doubles: 28 MB, four staging chunks of 8 MB, the last one partial.
    const std::vector<double> values = random_values(3500000, 7);
    for (DType dt : {DType::f32, DType::f64, DType::c64, DType::c128, DType::i64, DType::boolean}) {
        INFO(dtype_name(dt));
        const Tensor x = rt.tensor<double>(values, {3500, 1000}).to(dt);
        const Tensor v = x.to("cuda:0");
        CHECK(v.engine() == "cuda:0");
        CHECK(v.shape() == Shape{3500, 1000});
        CHECK(detail::values_of(v.to("cpu")) == detail::values_of(x));
    }
    const Tensor direct = rt.tensor<double>(values, {3500000}, "cuda:0");
    CHECK(direct.to("cpu").to_vector<double>() == values);
    // A view's elements, not its buffer: a transposed slice comes back as the cpu has it.
    const Tensor x = rt.tensor<double>(values, {3500, 1000});
    check_close(x.to("cuda:0").slice(0, 10, 20).transpose(0, 1).contiguous().to("cpu").to_vector<double>(),
                x.slice(0, 10, 20).transpose(0, 1).contiguous().to_vector<double>(), 0, 0);
}

TEST_CASE("cuda: an impossible allocation is RESOURCE_EXHAUSTED and the engine keeps working", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    check_error([&] { (void)rt.zeros({int64_t{1} << 47}, DType::f64, "cuda:0"); }, FERRO_RESOURCE_EXHAUSTED,
                "cuda engine: allocating");
    const Tensor x = rt.ones({256}, DType::f32, "cuda:0");
    CHECK(x.sum().to("cpu").to_vector<double>() == std::vector<double>{256.0});
}

TEST_CASE("cuda: tensors on cuda and on the cpu do not mix without an explicit to()", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    const Tensor a = rt.ones({4}, DType::f32, "cuda:0"), b = rt.ones({4}, DType::f32);
    try {
        (void)(a + b);
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK_THAT(e.what(), Catch::Contains("cuda:0") && Catch::Contains("cpu"));
    }
    CHECK((a + b.to("cuda:0")).to("cpu").to_vector<double>() == std::vector<double>(4, 2.0));
}

TEST_CASE("cuda: many small sessions in a row release their memory", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    Tensor acc = rt.zeros({64}, DType::f32, "cuda:0");
    for (int i = 0; i < 2000; ++i) acc = acc + rt.ones({64}, DType::f32, "cuda:0");
    CHECK(acc.to("cpu").to_vector<double>() == std::vector<double>(64, 2000.0));
}

TEST_CASE("concurrency: cuda sessions, allocations and transfers from several threads", "[cuda]") {
    Runtime rt = cuda_runtime();
    require_cuda_device(rt);
    std::vector<std::thread> threads;
    std::vector<int> wrong(4, 0);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < 50; ++round) {
                const Tensor x = rt.full({1000}, static_cast<double>(t + round), DType::f64, "cuda:0");
                const Tensor m = rt.full({8, 8}, 1.0, DType::f64, "cuda:0");
                const Tensor y = (x * 2.0 + 1.0).sum() + matmul(m, m).sum();
                const double want = 1000.0 * (2.0 * (t + round) + 1.0) + 512.0;
                if (y.to("cpu").item<double>() != want) ++wrong[static_cast<size_t>(t)];
            }
        });
    }
    for (auto& th : threads) th.join();
    CHECK(wrong == std::vector<int>(4, 0));
}
