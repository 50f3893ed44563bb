// Creation ops, the plan cache and host memory borrowing.
#include "ferro_test.hpp"

#include <cmath>
#include <limits>

using namespace ferro;
using namespace ferro::test;

TEST_CASE("core: zeros, ones, full, eye and arange fill as numpy does", "[core]") {
    Runtime rt = make_runtime();
    CHECK(rt.zeros({2, 2}, DType::c64).to_vector<std::complex<float>>() == std::vector<std::complex<float>>(4));
    CHECK(rt.ones({3}, DType::i64).to_vector<int64_t>() == std::vector<int64_t>{1, 1, 1});
    CHECK(rt.full({2}, 2.5).to_vector<double>() == std::vector<double>{2.5, 2.5});
    CHECK(rt.eye(3).to_vector<double>() == std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1});
    const Tensor e = rt.call("core.eye", {}, {Attr("n", 2), Attr("m", 3), Attr("k", 1)})[0];
    CHECK(e.to_vector<double>() == std::vector<double>{0, 1, 0, 0, 0, 1});
    CHECK(rt.arange(0, 5).to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3, 4});
    CHECK(rt.arange(0, 1, 0.25).dtype() == DType::f64);
    CHECK(rt.arange(0, 1, 0.25).to_vector<double>() == std::vector<double>{0, 0.25, 0.5, 0.75});
    CHECK(rt.arange(5, 0, -2).to_vector<int64_t>() == std::vector<int64_t>{5, 3, 1});
    CHECK(rt.arange(3, 3).numel() == 0);
    check_error([&] { rt.arange(0, 1, 0); }, FERRO_INVALID_ARGUMENT,
                "core.arange: start, stop and step must be finite and step non-zero");
    // Counts past int64 (found by fuzz_op_call: the conversion was undefined and gave an empty tensor).
    check_error([&] { rt.arange(0, 1e300); }, FERRO_RESOURCE_EXHAUSTED, "core.arange: [0, 1e+300) by 1 holds 1e+300 elements");
    check_error([&] { rt.arange(-1e308, 1e308); }, FERRO_RESOURCE_EXHAUSTED, "holds inf elements");
    check_error([&] { rt.arange(0, 1, 1e-300); }, FERRO_RESOURCE_EXHAUSTED, "more than a tensor can hold");
    check_error([&] { rt.arange(0, 0x1p62); }, FERRO_RESOURCE_EXHAUSTED, "core.arange: shape [4611686018427387904] is too large");
    check_error([&] { rt.arange(-1e300, -1e300 + 3e284, 1e284); }, FERRO_INVALID_ARGUMENT,
                "core.arange: values from -1e+300 to -9.999999999999999e+299 do not fit in i64");
    // Sizes whose product overflows (found by fuzz_op_call), and values no i64 holds.
    const int64_t big = std::numeric_limits<int64_t>::max();
    check_error([&] { rt.randn({2, big}); }, FERRO_RESOURCE_EXHAUSTED, "core.randn: shape [2,9223372036854775807] is too large");
    check_error([&] { rt.rand({big, big}, DType::f32); }, FERRO_RESOURCE_EXHAUSTED, "is too large");
    check_error([&] { rt.zeros({big, 2}); }, FERRO_RESOURCE_EXHAUSTED, "core.zeros: shape [9223372036854775807,2] is too large");
    // Empty, but its row-major strides would overflow.
    check_error(
        [&] {
            rt.randn({0, 2, big});
        },
        FERRO_RESOURCE_EXHAUSTED, "core.randn: shape [0,2,9223372036854775807] is too large");
    check_error([&] { rt.zeros({0, big, big}); }, FERRO_RESOURCE_EXHAUSTED, "is too large");
    CHECK(rt.zeros({0, int64_t{1} << 40}).numel() == 0);
    check_error([&] { rt.full({2}, 1e300, DType::i64); }, FERRO_INVALID_ARGUMENT, "core.full: value 1e+300 does not fit in i64");
    check_error([&] { rt.full({2}, std::nan(""), DType::i64); }, FERRO_INVALID_ARGUMENT,
                "core.full: value nan does not fit in i64");
    CHECK(rt.full({1}, -0x1p63, DType::i64).to_vector<int64_t>() == std::vector<int64_t>{std::numeric_limits<int64_t>::min()});
    check_error([&] { rt.zeros({2, -1}); }, FERRO_INVALID_ARGUMENT, "core.zeros: shape [2,-1] has a negative size");
    check_error([&] { rt.zeros({2}, DType::f64, "vulkan:0"); }, FERRO_NOT_FOUND,
                "core.zeros: no engine named 'vulkan:0' (available: cpu)");
}

TEST_CASE("core: rand and randn are reproducible per seed and have the right moments", "[core]") {
    Runtime rt = make_runtime();
    const auto a = rt.rand({1000}, DType::f64, 42).to_vector<double>();
    CHECK(a == rt.rand({1000}, DType::f64, 42).to_vector<double>());
    CHECK(a != rt.rand({1000}, DType::f64, 43).to_vector<double>());
    CHECK(*std::min_element(a.begin(), a.end()) >= 0.0);
    CHECK(*std::max_element(a.begin(), a.end()) < 1.0);
    const Tensor n = rt.randn({100000}, DType::f64, 7);
    CHECK(n.mean().item<double>() == Approx(0).margin(0.02));
    CHECK((n * n).mean().item<double>() == Approx(1).epsilon(0.02));
    const Tensor z = rt.randn({100000}, DType::c128, 7);
    CHECK((z * z.conj()).real().mean().item<double>() == Approx(1).epsilon(0.02));  // unit total variance
    CHECK(rt.rand({4}, DType::f32, 1).dtype() == DType::f32);
    check_error([&] { rt.rand({2}, DType::i64); }, FERRO_INVALID_ARGUMENT,
                "core.rand: dtype must be f32, f64, c64 or c128, got i64");
}

TEST_CASE("plan cache: repeated calls hit, new signatures miss, clear empties it", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.ones({4}), b = rt.ones({4});
    ferro_runtime_plan_cache_clear(rt.get());
    const auto before = rt.plan_cache_stats();
    (void)(a + b);
    (void)(a + b);
    (void)(a + b);
    auto s = rt.plan_cache_stats();
    CHECK(s.misses - before.misses == 1);
    CHECK(s.hits - before.hits == 2);
    CHECK(s.entries == 1);
    (void)(a.reshape({2, 2}) + b.reshape({2, 2}));  // another signature
    s = rt.plan_cache_stats();
    CHECK(s.misses - before.misses == 2);
    CHECK(s.entries == 2);
    ferro_runtime_plan_cache_clear(rt.get());
    CHECK(rt.plan_cache_stats().entries == 0);
}

namespace {
// A runtime without plugins whose plan cache keeps at most `max_plans` plans.
ferro_runtime* runtime_with_plans_up_to(uint64_t max_plans) {
    ferro_runtime_options o;
    ferro_runtime_options_init(&o);
    o.autoload = 0;
    o.use_default_dir = 0;
    o.use_environment_path = 0;
    o.plan_cache_max_entries = max_plans;
    ferro_runtime* raw = nullptr;
    check(ferro_runtime_create(&o, &raw));
    return raw;
}
}  // namespace

TEST_CASE("plan cache: the entry bound evicts least recently used plans", "[core]") {
    ferro_runtime* raw = runtime_with_plans_up_to(2);
    ferro_tensor a = nullptr, out = nullptr;
    for (int64_t n = 1; n <= 4; ++n) {
        const int64_t shape[1] = {n};
        check(ferro_tensor_empty(raw, "cpu", FERRO_DTYPE_F64, 1, shape, &a));
        check(ferro_add(raw, a, a, &out));
        ferro_tensor_release(out);
        ferro_tensor_release(a);
    }
    ferro_plan_cache_stats s{};
    s.struct_size = sizeof s;
    check(ferro_runtime_plan_cache_stats(raw, &s));
    CHECK(s.entries == 2);
    CHECK(s.evictions == 2);
    CHECK(s.misses == 4);
    ferro_runtime_destroy(raw);
}

TEST_CASE("plan cache: a plan used since the last eviction outlives an unused one", "[core]") {
    ferro_runtime* raw = runtime_with_plans_up_to(2);
    const auto add_of_length = [&](int64_t n) {
        const int64_t shape[1] = {n};
        ferro_tensor a = nullptr, out = nullptr;
        check(ferro_tensor_empty(raw, "cpu", FERRO_DTYPE_F64, 1, shape, &a));
        check(ferro_add(raw, a, a, &out));
        ferro_tensor_release(out);
        ferro_tensor_release(a);
    };
    const auto stats = [&] {
        ferro_plan_cache_stats s{};
        s.struct_size = sizeof s;
        check(ferro_runtime_plan_cache_stats(raw, &s));
        return s;
    };
    add_of_length(1);
    add_of_length(2);
    add_of_length(1);  // used again: kept over length 2's plan
    add_of_length(3);  // evicts length 2's
    auto s = stats();
    CHECK(s.evictions == 1);
    CHECK(s.misses == 3);
    add_of_length(1);
    CHECK(stats().hits == s.hits + 1);
    add_of_length(2);
    CHECK(stats().misses == s.misses + 1);
    ferro_runtime_destroy(raw);
}

namespace {
struct Owner {
    int released = 0;
};
void release_owner(void* ctx) { ++static_cast<Owner*>(ctx)->released; }
}  // namespace

TEST_CASE("c api: borrowed host memory is used in place and released through the deleter", "[core]") {
    Runtime rt = make_runtime();
    Owner owner;
    std::vector<double> data = {1, 2, 3, 4, 5, 6};
    {
        const int64_t shape[2] = {3, 2}, strides[2] = {1, 3};  // a column-major 3x2 view of data
        ferro_tensor raw = nullptr;
        check(ferro_tensor_borrow_host(rt.get(), FERRO_DTYPE_F64, 2, shape, strides, data.data(), release_owner, &owner, &raw));
        const Tensor t(rt.ref(), raw);
        CHECK(t.to_vector<double>() == std::vector<double>{1, 4, 2, 5, 3, 6});
        data[0] = 10;  // no copy was made
        CHECK(t.sum().item<double>() == 30);
        CHECK(owner.released == 0);
    }
    CHECK(owner.released == 1);
}

TEST_CASE("c api: NULL arguments and bad shapes give INVALID_ARGUMENT naming the function", "[core]") {
    Runtime rt = make_runtime();
    ferro_tensor out = nullptr;
    ferro_status st = ferro_tensor_from_host(rt.get(), "cpu", FERRO_DTYPE_F64, -1, nullptr, nullptr, &out);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("ferro_tensor_from_host: ndim -1 is outside [0, 64]"));
    ferro_status_free(st);
    st = ferro_add(rt.get(), nullptr, nullptr, &out);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("core.add: input 0 is NULL"));
    ferro_status_free(st);
    // Strides whose span cannot be addressed are refused instead of wrapping around.
    const int64_t huge_shape[1] = {4}, huge_strides[1] = {int64_t{1} << 61};
    double cell = 0;
    st = ferro_tensor_borrow_host(rt.get(), FERRO_DTYPE_F64, 1, huge_shape, huge_strides, &cell, nullptr, nullptr, &out);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(ferro_status_message(st),
               Catch::Contains("ferro_tensor_borrow_host: shape and strides reach beyond addressable memory"));
    ferro_status_free(st);
    const Tensor t = rt.zeros({2});
    double small[1];
    st = ferro_tensor_copy_to_host(t.get(), small, sizeof small);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK_THAT(ferro_status_message(st), Catch::Contains("copy to host: 8 bytes given, the tensor [2] f64 holds 16"));
    ferro_status_free(st);
}
