// Shared by the fft module suites of the device engines (vulkan, cuda): seeded signals, and
// "this transform on the engine gives the FFTW module's answer on the cpu", norm-wise.
#pragma once

#include "ferro_test.hpp"

#include <catch2/catch.hpp>
#include <ferro/gradcheck.hpp>  // detail::values_of

#include <cmath>
#include <functional>
#include <string>

namespace ferro::test {

inline Tensor fft_signal(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const auto count = static_cast<size_t>(n);
    if (dtype == DType::c64 || dtype == DType::c128) {
        return rt.tensor<std::complex<double>>(random_complex(count, seed), shape).to(dtype);
    }
    return rt.tensor<double>(random_values(count, seed), shape).to(dtype);
}

// ||engine - cpu|| <= tol ||cpu|| over the whole result (an FFT's error is norm-wise), with
// the same dtype and shape.
inline void check_fft_same(const std::string& engine, const Tensor& on_engine, const Tensor& on_cpu, DType dtype) {
    REQUIRE(on_engine.engine() == engine);
    const Tensor got = on_engine.to("cpu");
    CHECK(got.dtype() == on_cpu.dtype());
    REQUIRE(got.shape() == on_cpu.shape());
    const auto a = detail::values_of(got), b = detail::values_of(on_cpu);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        diff += std::norm(a[i] - b[i]);
        norm += std::norm(b[i]);
    }
    const double tol = dtype == DType::f32 || dtype == DType::c64 ? 2e-6 : 1e-13;
    INFO("relative error " << std::sqrt(diff / std::max(norm, 1e-300)));
    CHECK(std::sqrt(diff) <= tol * std::sqrt(norm) + 1e-30);
}

using FftCall = std::function<Tensor(const Tensor&)>;

// `f` on the cpu and on `engine` agree; a call the cpu refuses (rfft of complex input) is skipped.
inline void compare_fft(const std::string& engine, const std::string& what, DType dtype, const FftCall& f, const Tensor& x) {
    INFO(what << " on " << dtype_name(dtype));
    Tensor want;
    try {
        want = f(x);
    } catch (const Error&) {
        return;
    }
    check_fft_same(engine, f(x.to(engine)), want, dtype);
}

}  // namespace ferro::test
