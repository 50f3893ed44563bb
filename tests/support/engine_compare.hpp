// Shared by the engine conformance suites (vulkan, cuda): seeded inputs in every dtype, and
// "the same op on this engine gives the cpu engine's answer".
#pragma once

#include "ferro_test.hpp"

#include <catch2/catch.hpp>
#include <ferro/gradcheck.hpp>  // detail::values_of

#include <cmath>
#include <limits>
#include <set>
#include <string>

namespace ferro::test {

inline const DType kEngineDtypes[] = {DType::f32, DType::f64, DType::c64, DType::c128, DType::i64, DType::boolean};

inline bool is_complex_dtype(DType d) { return d == DType::c64 || d == DType::c128; }
inline bool is_single_dtype(DType d) { return d == DType::f32 || d == DType::c64; }

// The dtypes `engine` reports.
inline std::set<DType> engine_dtypes(const Runtime& rt, const std::string& engine) {
    for (const EngineInfo& e : rt.inventory().engines) {
        if (e.name == engine) return {e.dtypes.begin(), e.dtypes.end()};
    }
    return {};
}

// Seeded values of `dtype` on the cpu: reals and complexes in (-0.9, 0.9), integers in
// [-20, 20], booleans in a pattern.
inline Tensor seeded_input(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const size_t count = static_cast<size_t>(n);
    if (is_complex_dtype(dtype)) {
        auto v = random_complex(count, seed);
        for (auto& z : v) z *= 0.9;
        return rt.tensor<std::complex<double>>(v, shape).to(dtype);
    }
    std::vector<double> v = random_values(count, seed, -0.9, 0.9);
    if (dtype == DType::i64) {
        for (auto& x : v) x = std::round(x * 22.0);
    } else if (dtype == DType::boolean) {
        for (size_t i = 0; i < count; ++i) v[i] = (i + seed) % 3 == 0 ? 1.0 : 0.0;
    }
    return rt.tensor<double>(v, shape).to(dtype);
}

inline double engine_tolerance(DType d) { return is_single_dtype(d) ? 2e-5 : 1e-12; }

// The result on `engine`, brought to the cpu, equals the cpu result.
inline void check_same_on(const std::string& engine, const Tensor& got_on_engine, const Tensor& on_cpu, DType dtype) {
    REQUIRE(got_on_engine.engine() == engine);
    const Tensor got = got_on_engine.to("cpu");
    CHECK(got.dtype() == on_cpu.dtype());
    CHECK(got.shape() == on_cpu.shape());
    const double tol = engine_tolerance(dtype);
    check_close(detail::values_of(got), detail::values_of(on_cpu), tol, tol);
}

// Runs `f` on the cpu and on `engine`; an op the cpu engine lacks for the dtype is skipped,
// and the engine must run every other one.
template <class F>
void compare_on(const std::string& engine, const std::string& what, DType dtype, F&& f, const Tensor& x_cpu) {
    INFO(what << " on " << dtype_name(dtype));
    Tensor want;
    try {
        want = f(x_cpu);
    } catch (const Error&) {
        return;  // the cpu engine does not define it either
    }
    try {
        check_same_on(engine, f(x_cpu.to(engine)), want, dtype);
    } catch (const Error& e) {
        FAIL_CHECK(engine << " refused what the cpu engine runs: " << e.what());
    }
}

// NaN, infinities and out-of-range floats cast to i64 (INT64_MIN, as numpy on x86) and the
// angle of NaN (NaN) on `engine` as on the cpu engine, in every float dtype the engine has.
inline void check_special_casts(const Runtime& rt, const std::string& engine) {
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> specials{std::nan(""), inf, -inf, 1e19, -1e19, 9.3e18, -9.3e18, 9.2e18, 2.5, -2.5, -0.0, 0.0};
    const Tensor x = rt.tensor<double>(specials, {static_cast<int64_t>(specials.size())});
    for (DType dt : {DType::f32, DType::f64, DType::c64, DType::c128}) {
        if (!engine_dtypes(rt, engine).count(dt)) continue;
        INFO(dtype_name(dt));
        const Tensor v = x.to(dt);
        check_same_on(engine, v.to(engine).to(DType::i64), v.to(DType::i64), DType::i64);
        if (dt == DType::f32 || dt == DType::f64) check_same_on(engine, v.to(engine).call("core.angle"), v.call("core.angle"), dt);
    }
}

inline const char* const kUnaryOps[] = {"neg", "conj", "abs", "exp", "log", "sin", "cos", "tan", "tanh", "sqrt", "rsqrt",
                                        "sign", "real", "imag", "reciprocal", "square", "expm1", "log1p", "sinh", "cosh",
                                        "arcsin", "arccos", "arctan", "sigmoid", "erf", "floor", "ceil", "round", "angle",
                                        "logical_not", "isnan", "isinf", "isfinite"};

inline const char* const kBinaryOps[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "arctan2", "eq",
                                         "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "complex"};

}  // namespace ferro::test
