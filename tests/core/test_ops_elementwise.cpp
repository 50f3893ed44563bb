// Elementwise core ops against host references: every dtype, broadcasting, promotion,
// strided and permuted inputs, empty and 0-d tensors, and the errors bad input gets.
#include "ferro_test.hpp"

#include <functional>

using namespace ferro;
using namespace ferro::test;
using cd = std::complex<double>;

TEST_CASE("core: add, sub, mul, div match host arithmetic for every float dtype", "[core]") {
    Runtime rt = make_runtime();
    const auto x = random_values(12, 1), y = random_values(12, 2, 0.5, 2.0);
    auto run = [&](auto tag, double rtol) {
        using T = decltype(tag);
        std::vector<T> xs(x.begin(), x.end()), ys(y.begin(), y.end());
        const Tensor a = rt.tensor<T>(xs, {3, 4}), b = rt.tensor<T>(ys, {3, 4});
        std::vector<cd> sum, diff, prod, quot;
        for (size_t i = 0; i < 12; ++i) {
            sum.push_back(cd(xs[i]) + cd(ys[i]));
            diff.push_back(cd(xs[i]) - cd(ys[i]));
            prod.push_back(cd(xs[i]) * cd(ys[i]));
            quot.push_back(cd(xs[i]) / cd(ys[i]));
        }
        CHECK((a + b).dtype() == dtype_of<T>());
        check_close((a + b).to_vector<T>(), sum, rtol, rtol);
        check_close((a - b).to_vector<T>(), diff, rtol, rtol);
        check_close((a * b).to_vector<T>(), prod, rtol, rtol);
        check_close((a / b).to_vector<T>(), quot, rtol, rtol);
    };
    run(float{}, 1e-6);
    run(double{}, 1e-15);
    run(std::complex<float>{}, 1e-6);
    run(std::complex<double>{}, 1e-15);
}

TEST_CASE("core: integer arithmetic is exact and division is true division", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.tensor<int64_t>({7, -7, 9, 0}, {4}), b = rt.tensor<int64_t>({2, 2, -4, 5}, {4});
    CHECK((a + b).to_vector<int64_t>() == std::vector<int64_t>{9, -5, 5, 5});
    CHECK((a * b).to_vector<int64_t>() == std::vector<int64_t>{14, -14, -36, 0});
    const Tensor q = a / b;
    CHECK(q.dtype() == DType::f64);
    check_close(q.to_vector<double>(), std::vector<double>{3.5, -3.5, -2.25, 0.0});
    CHECK(a.pow(b).to_vector<int64_t>() == std::vector<int64_t>{49, 49, 0, 0});  // 9^-4 -> 0
}

TEST_CASE("core: binary ops broadcast like numpy", "[core]") {
    Runtime rt = make_runtime();
    const Tensor col = rt.tensor<double>({1, 2}, {2, 1});
    const Tensor row = rt.tensor<double>({10, 20, 30}, {3});
    const Tensor out = col + row;
    CHECK(out.shape() == Shape{2, 3});
    CHECK(out.to_vector<double>() == std::vector<double>{11, 21, 31, 12, 22, 32});
    const Tensor s = rt.scalar<double>(0.5);
    CHECK((row * s).to_vector<double>() == std::vector<double>{5, 10, 15});
    // A scalar on the left of a non-commutative op (its own fast path in the kernels).
    CHECK((s - row).to_vector<double>() == std::vector<double>{-9.5, -19.5, -29.5});
    check_close((s / row.to(DType::f32)).to_vector<double>(), std::vector<double>{0.5 / 10, 0.5 / 20, 0.5 / 30}, 1e-6);
    CHECK((s * s).shape().empty());
    CHECK((s * s).item<double>() == 0.25);
}

TEST_CASE("core: dtypes promote as numpy's rules say", "[core]") {
    Runtime rt = make_runtime();
    const Tensor i = rt.tensor<int64_t>({1, 2}, {2});
    const Tensor f = rt.tensor<float>({0.5f, 0.25f}, {2});
    const Tensor d = rt.tensor<double>({0.5, 0.25}, {2});
    const Tensor z = rt.tensor<std::complex<float>>({{1, 1}, {0, 2}}, {2});
    const Tensor flag = rt.tensor<bool>({true, false}, {2});
    CHECK((i + f).dtype() == DType::f64);  // int64 with float32 -> float64
    CHECK((f + d).dtype() == DType::f64);
    CHECK((f + z).dtype() == DType::c64);
    CHECK((d + z).dtype() == DType::c128);
    CHECK((i + z).dtype() == DType::c128);
    CHECK((flag + i).dtype() == DType::i64);
    CHECK((flag + flag).dtype() == DType::i64);
    check_close((i + f).to_vector<double>(), std::vector<double>{1.5, 2.25});
    check_close((d + z).to_vector<cd>(), std::vector<cd>{{1.5, 1}, {0.25, 2}});
}

TEST_CASE("core: unary functions match the standard library in f64, f32 and c128", "[core]") {
    Runtime rt = make_runtime();
    struct Case {
        const char* op;
        std::function<cd(cd)> ref;
        bool real_only;
    };
    const std::vector<Case> cases = {
        {"core.exp", [](cd z) { return std::exp(z); }, false},
        {"core.log", [](cd z) { return std::log(z); }, false},
        {"core.sin", [](cd z) { return std::sin(z); }, false},
        {"core.cos", [](cd z) { return std::cos(z); }, false},
        {"core.tan", [](cd z) { return std::tan(z); }, false},
        {"core.tanh", [](cd z) { return std::tanh(z); }, false},
        {"core.sqrt", [](cd z) { return std::sqrt(z); }, false},
        {"core.rsqrt", [](cd z) { return 1.0 / std::sqrt(z); }, false},
        {"core.reciprocal", [](cd z) { return 1.0 / z; }, false},
        {"core.square", [](cd z) { return z * z; }, false},
        {"core.neg", [](cd z) { return -z; }, false},
        {"core.conj", [](cd z) { return std::conj(z); }, false},
        {"core.sinh", [](cd z) { return std::sinh(z); }, false},
        {"core.cosh", [](cd z) { return std::cosh(z); }, false},
        {"core.arctan", [](cd z) { return std::atan(z); }, false},
        {"core.sigmoid", [](cd z) { return 1.0 / (1.0 + std::exp(-z)); }, false},
        {"core.sign", [](cd z) { return std::abs(z) == 0 ? cd(0) : z / std::abs(z); }, false},
        {"core.erf", [](cd z) { return cd(std::erf(z.real())); }, true},
        {"core.floor", [](cd z) { return cd(std::floor(z.real())); }, true},
        {"core.expm1", [](cd z) { return std::exp(z) - 1.0; }, false},
        {"core.log1p", [](cd z) { return std::log(1.0 + z); }, false},
    };
    const auto xr = random_values(10, 3, 0.1, 2.0);
    const auto xc = random_complex(10, 4);
    for (const auto& c : cases) {
        INFO(c.op);
        std::vector<cd> want_r;
        for (double v : xr) want_r.push_back(c.ref(v));
        const Tensor d = rt.tensor<double>(xr, {2, 5});
        check_close(d.call(c.op).to_vector<double>(), want_r, 1e-14, 1e-14);
        std::vector<float> xf(xr.begin(), xr.end());
        const Tensor f = rt.tensor<float>(xf, {10});
        CHECK(f.call(c.op).dtype() == DType::f32);
        check_close(f.call(c.op).to_vector<float>(), want_r, 2e-6, 2e-6);
        if (c.real_only) {
            check_error([&] { rt.tensor<cd>(xc, {10}).call(c.op); }, FERRO_INVALID_ARGUMENT,
                        std::string(c.op) + ": complex input is not supported");
            continue;
        }
        std::vector<cd> want_c;
        for (cd v : xc) want_c.push_back(c.ref(v));
        check_close(rt.tensor<cd>(xc, {10}).call(c.op).to_vector<cd>(), want_c, 1e-13, 1e-13);
    }
}

TEST_CASE("core: tanh keeps signed zeros, infinities and NaN, and is accurate in both precisions", "[core]") {
    // Long enough for the cpu engine's vector path (libmvec) and its scalar tail.
    Runtime rt = make_runtime();
    const double inf = INFINITY;
    const std::vector<double> xs{0.0, -0.0, inf, -inf, NAN, 1e-30, 20.0, -20.0, 0.5, -0.5, 1e-7, 3.0, -0.75};
    const auto f64 = rt.tensor<double>(xs, {13}).tanh().to_vector<double>();
    const auto f32 = rt.tensor<double>(xs, {13}).to(DType::f32).tanh().to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
        INFO("x = " << xs[i]);
        const double want = std::tanh(xs[i]);
        if (std::isnan(want)) {
            CHECK(std::isnan(f64[i]));
            CHECK(std::isnan(f32[i]));
            continue;
        }
        CHECK(std::signbit(f64[i]) == std::signbit(want));
        CHECK(std::signbit(f32[i]) == std::signbit(want));
        CHECK(std::abs(f64[i] - want) <= 4e-16 * std::abs(want));
        CHECK(std::abs(f32[i] - std::tanh(static_cast<float>(xs[i]))) <= 4e-7 * std::abs(want));
    }
}

TEST_CASE("core: abs, real, imag and angle of complex tensors are real", "[core]") {
    Runtime rt = make_runtime();
    const Tensor z = rt.tensor<cd>({{3, 4}, {-1, 0}, {0, -2}}, {3});
    const Tensor a = z.abs();
    CHECK(a.dtype() == DType::f64);
    check_close(a.to_vector<double>(), std::vector<double>{5, 1, 2});
    check_close(z.real().to_vector<double>(), std::vector<double>{3, -1, 0});
    check_close(z.imag().to_vector<double>(), std::vector<double>{4, 0, -2});
    check_close(z.call("core.angle").to_vector<double>(), std::vector<double>{std::atan2(4, 3), M_PI, -M_PI / 2});
    const Tensor r = rt.tensor<double>({1.5, -2}, {2});
    check_close(r.imag().to_vector<double>(), std::vector<double>{0, 0});
    check_close(r.real().to_vector<double>(), std::vector<double>{1.5, -2});
}

TEST_CASE("core: comparisons and logical ops give bool and respect NaN", "[core]") {
    Runtime rt = make_runtime();
    const double nan = std::nan("");
    const Tensor a = rt.tensor<double>({1, 2, nan, 4}, {4}), b = rt.tensor<double>({1, 3, nan, 2}, {4});
    const Tensor lt = a.call("core.lt", {}, {b});
    CHECK(lt.dtype() == DType::boolean);
    CHECK(lt.to_vector<bool>() == std::vector<bool>{false, true, false, false});
    CHECK(a.call("core.eq", {}, {b}).to_vector<bool>() == std::vector<bool>{true, false, false, false});
    CHECK(a.call("core.isnan").to_vector<bool>() == std::vector<bool>{false, false, true, false});
    const auto mx = a.call("core.maximum", {}, {b}).to_vector<double>();
    CHECK(mx[1] == 3);
    CHECK(std::isnan(mx[2]));
    const Tensor t = rt.tensor<bool>({true, false, true}, {3}), f = rt.tensor<bool>({false, false, true}, {3});
    CHECK(t.call("core.logical_and", {}, {f}).to_vector<bool>() == std::vector<bool>{false, false, true});
    CHECK(t.call("core.logical_not").to_vector<bool>() == std::vector<bool>{false, true, false});
    const Tensor where_out = where(lt, a, b);
    const auto w = where_out.to_vector<double>();
    CHECK(w[0] == 1);
    CHECK(w[1] == 2);
    CHECK(w[3] == 2);
}

TEST_CASE("core: strided and permuted inputs give the same values as contiguous ones", "[core]") {
    Runtime rt = make_runtime();
    const auto x = random_values(24, 5);
    const Tensor a = rt.tensor<double>(x, {2, 3, 4});
    const Tensor p = a.permute({2, 0, 1});             // shape [4, 2, 3], non-contiguous
    const Tensor s = a.slice(2, 3, std::nullopt, -2);  // columns 3, 1 of each row
    CHECK(p.shape() == Shape{4, 2, 3});
    CHECK(s.shape() == Shape{2, 3, 2});
    const auto pe = p.exp().to_vector<double>();
    const auto se = (s + s).to_vector<double>();
    for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 2; ++j)
            for (int64_t k = 0; k < 3; ++k)
                CHECK(pe[static_cast<size_t>(i * 6 + j * 3 + k)] == Approx(std::exp(x[static_cast<size_t>(j * 12 + k * 4 + i)])));
    for (int64_t j = 0; j < 2; ++j)
        for (int64_t k = 0; k < 3; ++k) {
            CHECK(se[static_cast<size_t>(j * 6 + k * 2 + 0)] == 2 * x[static_cast<size_t>(j * 12 + k * 4 + 3)]);
            CHECK(se[static_cast<size_t>(j * 6 + k * 2 + 1)] == 2 * x[static_cast<size_t>(j * 12 + k * 4 + 1)]);
        }
}

TEST_CASE("core: empty and 0-d tensors flow through elementwise ops", "[core]") {
    Runtime rt = make_runtime();
    const Tensor e = rt.zeros({0, 3});
    const Tensor r = rt.tensor<double>({1, 2, 3}, {3});
    const Tensor out = e + r;
    CHECK(out.shape() == Shape{0, 3});
    CHECK(out.numel() == 0);
    CHECK(out.to_vector<double>().empty());
    const Tensor s = rt.scalar<double>(2.0);
    CHECK(s.ndim() == 0);
    CHECK(s.exp().item<double>() == Approx(std::exp(2.0)));
}

TEST_CASE("core: large elementwise ops split across threads give exact results", "[core]") {
    Runtime rt = make_runtime();
    const size_t n = size_t{1} << 18;  // above the parallel threshold
    const auto x = random_values(n, 8);
    const Tensor a = rt.tensor<double>(x, {static_cast<int64_t>(n)});
    const auto y = (a * a + a).to_vector<double>();
    for (size_t i = 0; i < n; i += 997) CHECK(y[i] == x[i] * x[i] + x[i]);
}

TEST_CASE("core: bad input gets INVALID_ARGUMENT naming the op and argument", "[core]") {
    Runtime rt = make_runtime();
    const Tensor a = rt.zeros({2, 3}), b = rt.zeros({4});
    check_error([&] { a + b; }, FERRO_INVALID_ARGUMENT,
                "core.add: input 0 has shape [2,3] and input 1 has shape [4], which do not broadcast "
                "(dimension -1: 3 vs 4)");
    const Tensor z = rt.tensor<cd>({{1, 0}}, {1});
    check_error([&] { z.call("core.lt", {}, {z}); }, FERRO_INVALID_ARGUMENT, "core.lt: complex inputs have no order");
    check_error([&] { where(a, a, a); }, FERRO_INVALID_ARGUMENT, "core.where: input 0 (cond) must be bool, got f64");
    check_error([&] { a.call("core.cast", {Attr("dtype", "float16")}); }, FERRO_INVALID_ARGUMENT,
                "core.cast: dtype 'float16' is not one of");
    check_error([&] { a.call("core.cast"); }, FERRO_INVALID_ARGUMENT, "core.cast: required attribute 'dtype' (str) is missing");
    check_error([&] { a.call("core.exp", {Attr("axis", 1)}); }, FERRO_INVALID_ARGUMENT,
                "core.exp: unknown attribute 'axis' (accepted: none)");
    check_error([&] { a.call("core.add"); }, FERRO_INVALID_ARGUMENT, "core.add: expects 2 input(s), got 1");
    check_error([&] { rt.call("core.nothing", {a}); }, FERRO_NOT_FOUND, "no op named 'core.nothing'");
}
