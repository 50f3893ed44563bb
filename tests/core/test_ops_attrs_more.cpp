// Attribute normalisation through real ops, and op variants the other suites do not reach:
// three-way broadcasting in where, every cast pair, negative axes and offsets, complex fills.
#include "ferro_test.hpp"

using namespace ferro;
using namespace ferro::test;
using cd = std::complex<double>;

TEST_CASE("attrs: wrong types, duplicates and coercions are handled as documented", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.ones({2, 3});
    check_error([&] { a.call("core.sum", {Attr("keepdim", int64_t{1})}); }, FERRO_INVALID_ARGUMENT,
                "core.sum: attribute 'keepdim' expects bool, got i64");
    check_error([&] { a.call("core.sum", {Attr("axes", "0")}); }, FERRO_INVALID_ARGUMENT,
                "core.sum: attribute 'axes' expects i64[] or None, got str");
    check_error(
        [&] {
            a.call("core.sum", {Attr("keepdim", true), Attr("keepdim", false)});
        },
        FERRO_INVALID_ARGUMENT, "core.sum: attribute 'keepdim' given twice");
    // An integer is accepted where a float is expected (full's value).
    const Tensor f = rt.call("core.full", {}, {Attr("shape", {2}), Attr("value", int64_t{3})})[0];
    CHECK(f.to_vector<double>() == std::vector<double>{3, 3});
    check_error([&] { a.call("core.transpose", {Attr("dim0", 2.5)}); }, FERRO_INVALID_ARGUMENT,
                "core.transpose: attribute 'dim0' expects i64, got f64");
    // None for an attribute with a default means the default (keepdim=None sums as keepdim=False);
    // a required attribute has none to fall back on.
    CHECK(a.call("core.sum", {Attr("keepdim", std::nullopt)}).shape() == Shape{});
    CHECK(a.call("core.transpose", {Attr("dim0", std::nullopt), Attr("dim1", std::nullopt)}).shape() == Shape{3, 2});
    check_error([&] { a.call("core.reshape", {Attr("shape", std::nullopt)}); }, FERRO_INVALID_ARGUMENT,
                "core.reshape: attribute 'shape' expects i64[], got None");
}

TEST_CASE("core: where broadcasts condition and both branches and promotes them", "[core]") {
    Runtime rt = make_runtime();
    const Tensor cond = rt.tensor<bool>({true, false, true}, {3});
    const Tensor a = rt.tensor<int64_t>({10, 20}, {2, 1});
    const Tensor b = rt.scalar<double>(-1.0);
    const Tensor w = where(cond, a, b);
    CHECK(w.shape() == Shape{2, 3});
    CHECK(w.dtype() == DType::f64);
    CHECK(w.to_vector<double>() == std::vector<double>{10, -1, 10, 20, -1, 20});
}

TEST_CASE("core: cast converts between every pair of dtypes", "[core]") {
    Runtime rt = make_runtime();
    const Tensor src = rt.tensor<double>({0.0, 2.75, -3.5}, {3});
    const DType all[] = {DType::f32, DType::f64, DType::c64, DType::c128, DType::i64, DType::boolean};
    for (DType from : all) {
        for (DType to : all) {
            INFO(dtype_name(from) << " -> " << dtype_name(to));
            const Tensor x = src.to(from).to(to);
            CHECK(x.dtype() == to);
            if (to == DType::boolean) {
                CHECK(x.to_vector<bool>() == std::vector<bool>{false, true, true});
            } else if (from == DType::boolean) {
                CHECK(x.to_vector<double>() == std::vector<double>{0, 1, 1});
            } else if (from == DType::i64 || to == DType::i64) {
                CHECK(x.to_vector<double>() == std::vector<double>{0, 2, -3});  // truncation toward 0
            } else {
                CHECK(x.to_vector<double>() == std::vector<double>{0, 2.75, -3.5});
            }
        }
    }
}

TEST_CASE("core: negative axes, offsets and steps follow numpy", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.arange(0, 24).reshape({2, 3, 4});
    CHECK(a.sum({-1}).to_vector<int64_t>() == std::vector<int64_t>{6, 22, 38, 54, 70, 86});
    CHECK(stack({a, a}, -1).shape() == Shape{2, 3, 4, 2});
    CHECK(concat({a, a}, -2).shape() == Shape{2, 6, 4});
    CHECK(a.diagonal(0, 1, 2).shape() == Shape{2, 3});
    CHECK(a.diagonal(0, 1, 2).to_vector<int64_t>() == std::vector<int64_t>{0, 5, 10, 12, 17, 22});
    CHECK(a.diagonal(-1, -2, -1).to_vector<int64_t>() == std::vector<int64_t>{4, 9, 16, 21});
    const Tensor e = rt.call("core.eye", {}, {Attr("n", 3), Attr("k", -1)})[0];
    CHECK(e.to_vector<double>() == std::vector<double>{0, 0, 0, 1, 0, 0, 0, 1, 0});
    check_error([&] { a.call("core.squeeze", {Attr("axes", {0})}); }, FERRO_INVALID_ARGUMENT,
                "core.squeeze: axis 0 has size 2, not 1");
    check_error([&] { a.diagonal(0, 1, 1); }, FERRO_INVALID_ARGUMENT, "core.diagonal: axis1 and axis2 must differ");
}

TEST_CASE("core: complex fills, means and explicit arange dtypes", "[core]") {
    Runtime rt = make_runtime();
    const Tensor z =
        rt.call("core.full", {}, {Attr("shape", {2}), Attr("value", 1.5), Attr("value_imag", -2.0), Attr("dtype", "c128")})[0];
    CHECK(z.to_vector<cd>() == std::vector<cd>{{1.5, -2}, {1.5, -2}});
    check_close(rt.tensor<cd>({{1, 2}, {3, -4}}, {2}).mean().to_vector<cd>(), std::vector<cd>{{2, -1}});
    const Tensor r = rt.call("core.arange", {}, {Attr("stop", 3.0), Attr("dtype", "f32")})[0];
    CHECK(r.dtype() == DType::f32);
    CHECK(r.to_vector<float>() == std::vector<float>{0, 1, 2});
}

TEST_CASE("core: matmul of mixed dtypes promotes, with broadcast batches and vectors", "[core]") {
    Runtime rt = make_runtime();
    const auto xa = random_values(2 * 3 * 4, 21), xb = random_values(4 * 5, 22);
    const std::vector<float> fa(xa.begin(), xa.end());
    const Tensor a = rt.tensor<float>(fa, {2, 1, 3, 4});               // f32, batch [2, 1]
    const Tensor b = rt.tensor<double>(xb, {4, 5}).expand({3, 4, 5});  // f64, batch [3], stride 0
    const Tensor c = matmul(a, b);
    CHECK(c.dtype() == DType::f64);
    CHECK(c.shape() == Shape{2, 3, 3, 5});
    const auto cv = c.to_vector<double>();
    for (int64_t p = 0; p < 2; ++p)
        for (int64_t r = 0; r < 3; ++r)
            for (int64_t i = 0; i < 3; ++i)
                for (int64_t j = 0; j < 5; ++j) {
                    double want = 0;
                    for (int64_t q = 0; q < 4; ++q)
                        want += double(fa[static_cast<size_t>(p * 12 + i * 4 + q)]) * xb[static_cast<size_t>(q * 5 + j)];
                    CHECK(cv[static_cast<size_t>(((p * 3 + r) * 3 + i) * 5 + j)] == Approx(want).epsilon(1e-12));
                }
    const Tensor v = rt.tensor<int64_t>({1, 2, 3, 4}, {4}).to(DType::f32);
    const auto vb = matmul(v, rt.tensor<double>(xb, {4, 5})).to_vector<double>();  // f32 vector @ f64 matrix
    for (int64_t j = 0; j < 5; ++j) {
        double want = 0;
        for (int64_t q = 0; q < 4; ++q) want += double(q + 1) * xb[static_cast<size_t>(q * 5 + j)];
        CHECK(vb[static_cast<size_t>(j)] == Approx(want).epsilon(1e-12));
    }
}

TEST_CASE("plan cache: calls whose key outgrows the inline buffer still hit the shared cache", "[core]") {
    Runtime rt = make_runtime();
    std::vector<Tensor> parts;
    for (int i = 0; i < 20; ++i) parts.push_back(rt.full({1, 2}, i));  // key: > 100 words
    const Tensor first = concat(parts, 0);
    const auto before = rt.plan_cache_stats();
    const Tensor second = concat(parts, 0);
    const auto after = rt.plan_cache_stats();
    CHECK(after.hits == before.hits + 1);
    CHECK(after.misses == before.misses);
    CHECK(second.shape() == Shape{20, 2});
    CHECK(second.to_vector<double>() == first.to_vector<double>());
    CHECK(second.sum().item<double>() == 2 * 190);
}
