// The repeated-call path of the dispatcher (an op handle reuses its last plan and attributes
// when a call repeats the previous one exactly) and the single-block output tensors: both are
// shortcuts, so these tests check that they never change an answer or hide an error.
#include "ferro_test.hpp"

#include <cstring>

using namespace ferro;
using namespace ferro::test;

namespace {

// core.sum of `x` over `axes` given as a caller-owned array, through the C API (so the test
// controls the array's address and contents).
Tensor sum_over(const Runtime& rt, const Tensor& x, const int64_t* axes, uint32_t n_axes) {
    ferro_named_attr attr{};
    attr.name = "axes";
    attr.value.type = FERRO_ATTR_I64_ARRAY;
    attr.value.count = n_axes;
    attr.value.v.i64_array = axes;
    ferro_tensor in = x.get(), out = nullptr;
    check(ferro_call(rt.get(), "core.sum", &attr, 1, &in, 1, &out, 1, nullptr));
    return {x.runtime_ref(), out};
}

}  // namespace

TEST_CASE("dispatch: a repeated call reuses its plan, a changed attribute does not", "[core]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    int64_t axes[1] = {0};
    CHECK(sum_over(rt, x, axes, 1).to_vector<double>() == std::vector<double>{5, 7, 9});
    const auto before = rt.plan_cache_stats();
    CHECK(sum_over(rt, x, axes, 1).to_vector<double>() == std::vector<double>{5, 7, 9});
    CHECK(rt.plan_cache_stats().hits == before.hits + 1);
    // Same array, new contents: a different call, whatever the address says.
    axes[0] = 1;
    CHECK(sum_over(rt, x, axes, 1).to_vector<double>() == std::vector<double>{6, 15});
    CHECK(rt.plan_cache_stats().misses == before.misses + 1);
    axes[0] = -1;
    CHECK(sum_over(rt, x, axes, 1).to_vector<double>() == std::vector<double>{6, 15});
}

TEST_CASE("dispatch: a repeated call whose string attribute or name differs in any one byte is a new call", "[core]") {
    // The repeated-call key packs each string into words from overlapping loads (1-3, 4-7 and
    // 8 bytes take different paths); a byte it dropped would let a changed call repeat the last.
    Runtime rt = make_runtime();
    const Tensor x = rt.tensor<double>({1.5, -2}, {2});
    char name[] = "dtype";
    char value[8] = {};
    const auto cast = [&] {
        ferro_named_attr attr{};
        attr.name = name;
        attr.value.type = FERRO_ATTR_STR;
        attr.value.v.str = value;
        ferro_tensor in = x.get(), out = nullptr;
        check(ferro_call(rt.get(), "core.cast", &attr, 1, &in, 1, &out, 1, nullptr));
        return Tensor(x.runtime_ref(), out);
    };
    for (const char* dtype : {"f32", "f64", "c64", "c128", "bool", "i64"}) {
        std::strcpy(value, dtype);
        const DType expected = cast().dtype();
        for (size_t i = 0; i < std::strlen(dtype); ++i) {
            CHECK(cast().dtype() == expected);  // the last call repeated
            const char kept = value[i];
            value[i] = '?';
            INFO("dtype '" << value << "'");
            check_error(cast, FERRO_INVALID_ARGUMENT, "core.cast");
            value[i] = kept;
        }
    }
    std::strcpy(value, "f32");
    CHECK(cast().dtype() == DType::f32);
    std::strcpy(value, "f64");  // two of three bytes change
    CHECK(cast().dtype() == DType::f64);
    for (size_t i = 0; i < std::strlen(name); ++i) {
        CHECK(cast().dtype() == DType::f64);
        const char kept = name[i];
        name[i] = '?';
        INFO("attribute name '" << name << "'");
        check_error(cast, FERRO_INVALID_ARGUMENT, "core.cast");
        name[i] = kept;
    }
}

TEST_CASE("dispatch: a repeated call with a NULL array or name is still an error", "[core]") {
    Runtime rt = make_runtime();
    const Tensor x = rt.tensor<double>({1, 2, 3, 4}, {2, 2});
    const int64_t last[1] = {-1};
    CHECK(sum_over(rt, x, last, 1).to_vector<double>() == std::vector<double>{3, 7});
    check_error([&] { sum_over(rt, x, nullptr, 1); }, FERRO_INVALID_ARGUMENT, "core.sum: attribute 'axes' is a NULL array");
    ferro_named_attr unnamed{};
    unnamed.value.type = FERRO_ATTR_BOOL;
    ferro_tensor in = x.get(), out = nullptr;
    const ferro_status st = ferro_call(rt.get(), "core.sum", &unnamed, 1, &in, 1, &out, 1, nullptr);
    REQUIRE(st != nullptr);
    CHECK(ferro_status_code(st) == FERRO_INVALID_ARGUMENT);
    CHECK(std::string(ferro_status_message(st)) == "core.sum: attribute name is NULL");
    ferro_status_free(st);
}

TEST_CASE("dispatch: a repeated call on inputs of another layout is planned again", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    const Tensor b = rt.tensor<double>({10, 20, 30}, {3});
    CHECK((a + a).to_vector<double>() == std::vector<double>{2, 4, 6, 8, 10, 12});
    CHECK((a + b).to_vector<double>() == std::vector<double>{11, 22, 33, 14, 25, 36});
    const Tensor at = a.transpose(0, 1);  // same shape as a 3x2, other strides
    CHECK((at + at).to_vector<double>() == std::vector<double>{2, 8, 4, 10, 6, 12});
    CHECK((a.to(DType::f32) + a).dtype() == DType::f64);
}

TEST_CASE("dispatch: repeated host-op calls (views) follow their attributes, layouts and grad", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3});
    for (int round = 0; round < 2; ++round) {  // the second round takes the repeated path
        CHECK(a.unsqueeze(0).shape() == Shape{1, 2, 3});
        CHECK(a.unsqueeze(1).shape() == Shape{2, 1, 3});
        CHECK(a.transpose(0, 1).to_vector<double>() == std::vector<double>{1, 4, 2, 5, 3, 6});
        // 3 x 2 inputs of two layouts: the same call on each is its own key.
        const Tensor c = rt.tensor<double>({1, 2, 3, 4, 5, 6}, {3, 2});
        CHECK(c.transpose(0, 1).to_vector<double>() == std::vector<double>{1, 3, 5, 2, 4, 6});
        CHECK(a.transpose(0, 1).transpose(0, 1).to_vector<double>() == a.to_vector<double>());
    }
    const auto before = rt.plan_cache_stats();
    CHECK(a.transpose(0, 1).shape() == Shape{3, 2});
    CHECK(rt.plan_cache_stats().hits == before.hits);  // no plan behind a view: not a plan cache hit
    // A repeated view of an input that requires grad is recorded like the first.
    Tensor x = rt.tensor<double>({1, 2, 3}, {3});
    x.set_requires_grad();
    for (int round = 0; round < 2; ++round) {
        (x.unsqueeze(0) * rt.tensor<double>({1, 10, 100}, {1, 3})).sum().backward();
        CHECK(x.grad().to_vector<double>() == std::vector<double>{1, 10, 100});
        x.clear_grad();
    }
}

TEST_CASE("tensors: views outlive the op output they view, small and large", "[core]") {
    Runtime rt = make_runtime();
    for (int64_t n : {3, 100}) {  // 100 doubles do not fit in the tensor's own block
        const Tensor x = rt.arange(0, static_cast<double>(2 * n)).reshape({2, n});
        Tensor view;
        {
            const Tensor doubled = x + x;
            view = doubled.transpose(0, 1);
        }
        CHECK(view.shape() == Shape{n, 2});
        const std::vector<double> got = view.contiguous().to_vector<double>();
        for (int64_t i = 0; i < n; ++i) {
            CHECK(got[static_cast<size_t>(2 * i)] == 2.0 * static_cast<double>(i));
            CHECK(got[static_cast<size_t>(2 * i + 1)] == 2.0 * static_cast<double>(n + i));
        }
    }
}
