// DLPack export and import: zero-copy both ways, deleters called exactly once, clear errors.
#include "ferro_test.hpp"

#include <dlpack/dlpack.h>

#include <cstring>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("dlpack: export shares memory, layout and dtype, and holds its tensor", "[core]") {
    Runtime rt = make_runtime();
    DLManagedTensor* m = nullptr;
    {
        const Tensor a = rt.arange(0, 6).reshape({2, 3}).transpose();  // strides [1, 3]
        check(ferro_tensor_to_dlpack(a.get(), &m));
    }  // the export keeps the tensor alive
    const DLTensor& t = m->dl_tensor;
    CHECK(t.device.device_type == kDLCPU);
    CHECK(t.dtype.code == kDLInt);
    CHECK(t.dtype.bits == 64);
    CHECK(t.ndim == 2);
    CHECK(t.shape[0] == 3);
    CHECK(t.strides[0] == 1);
    CHECK(t.strides[1] == 3);
    const auto* data = reinterpret_cast<const int64_t*>(static_cast<const char*>(t.data) + t.byte_offset);
    CHECK(data[1 * t.strides[0] + 1 * t.strides[1]] == 4);  // element (1, 1) of the transpose
    m->deleter(m);
}

namespace {
struct Producer {
    std::vector<double> data = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    int64_t strides[2] = {1, 2};  // column-major 2 x 3
    int deleted = 0;
    DLManagedTensor managed{};
};
void producer_deleter(DLManagedTensor* m) { ++static_cast<Producer*>(m->manager_ctx)->deleted; }
}  // namespace

TEST_CASE("dlpack: import adopts the producer's memory and calls its deleter once", "[core]") {
    Runtime rt = make_runtime();
    Producer p;
    p.managed.dl_tensor = {p.data.data(), {kDLCPU, 0}, 2, {kDLFloat, 64, 1}, p.shape, p.strides, 0};
    p.managed.manager_ctx = &p;
    p.managed.deleter = producer_deleter;
    {
        ferro_tensor raw = nullptr;
        check(ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw));
        const Tensor t(rt.ref(), raw);
        CHECK(t.to_vector<double>() == std::vector<double>{1, 3, 5, 2, 4, 6});
        p.data[0] = 100;  // shared, not copied
        CHECK(t.sum().item<double>() == 120);
        // Round trip: export the imported tensor; it still points at the producer's memory.
        DLManagedTensor* again = nullptr;
        check(ferro_tensor_to_dlpack(t.get(), &again));
        CHECK(static_cast<char*>(again->dl_tensor.data) + again->dl_tensor.byte_offset == reinterpret_cast<char*>(p.data.data()));
        again->deleter(again);
        CHECK(p.deleted == 0);
    }
    CHECK(p.deleted == 1);
}

TEST_CASE("dlpack: unsupported devices and dtypes are refused and leave ownership with the caller", "[core]") {
    Runtime rt = make_runtime();
    Producer p;
    p.managed.dl_tensor = {p.data.data(), {kDLVulkan, 0}, 2, {kDLFloat, 64, 1}, p.shape, p.strides, 0};
    p.managed.manager_ctx = &p;
    p.managed.deleter = producer_deleter;
    ferro_tensor raw = nullptr;
    ferro_status st = ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw);
    CHECK(ferro_status_code(st) == FERRO_NOT_FOUND);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("no engine for DLPack device type 7"));
    ferro_status_free(st);
    // A device type newer than this DLPack header's enum, as a C producer writes it (found by
    // fuzz_dlpack: loading it as the enum was undefined).
    const int32_t future_device = 40;
    std::memcpy(&p.managed.dl_tensor.device.device_type, &future_device, sizeof future_device);
    st = ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("no engine for DLPack device type 40"));
    ferro_status_free(st);
    // Offsets and layouts that wrap around the address space (found by fuzz_dlpack: the
    // pointer arithmetic overflowed).
    p.managed.dl_tensor.device = {kDLCPU, 0};
    p.managed.dl_tensor.dtype = {kDLFloat, 64, 1};
    p.managed.dl_tensor.byte_offset = UINT64_MAX - 8;
    st = ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("byte_offset 18446744073709551607 reaches beyond addressable memory"));
    ferro_status_free(st);
    p.managed.dl_tensor.byte_offset = 0;
    const int64_t backwards[] = {-(int64_t{1} << 55), 1};  // 2^58 bytes below element 0: below address 0
    p.managed.dl_tensor.strides = const_cast<int64_t*>(backwards);
    st = ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("shape and strides reach beyond addressable memory"));
    ferro_status_free(st);
    p.managed.dl_tensor.device = {kDLCPU, 0};
    p.managed.dl_tensor.dtype = {kDLFloat, 64, 2};  // vector lanes
    st = ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("ferro_tensor_from_dlpack: unsupported dtype f64x2"));
    ferro_status_free(st);
    // Named as DLPack names it, not as a raw hex code.
    p.managed.dl_tensor.dtype = {kDLInt, 32, 1};
    st = ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw);
    CHECK_THAT(ferro_status_message(st), Catch::EndsWith("ferro_tensor_from_dlpack: unsupported dtype i32"));
    ferro_status_free(st);
    p.managed.dl_tensor.dtype = {kDLBfloat, 16, 1};
    st = ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw);
    CHECK_THAT(ferro_status_message(st), Catch::EndsWith("unsupported dtype bf16"));
    ferro_status_free(st);
    p.managed.dl_tensor.dtype = {kDLOpaqueHandle, 64, 1};
    st = ferro_tensor_from_dlpack(rt.get(), &p.managed, &raw);
    CHECK_THAT(ferro_status_message(st), Catch::EndsWith("unsupported dtype dtype(code 3, 64 bits)"));
    ferro_status_free(st);
    CHECK(p.deleted == 0);
}

TEST_CASE("plan cache: a prepared plan pins its epoch, and a reconfiguration makes calls prepare anew", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.ones({3});
    (void)(a + a);
    const auto s1 = rt.plan_cache_stats();
    (void)(a + a);
    CHECK(rt.plan_cache_stats().hits == s1.hits + 1);
    rt.load_plugin(corpus_file("good_family"));
    const auto s2 = rt.plan_cache_stats();
    (void)(a + a);  // new epoch: the old plan is unreachable (and was purged)
    const auto s3 = rt.plan_cache_stats();
    CHECK(s3.misses == s2.misses + 1);
    CHECK(s3.hits == s2.hits);
}
