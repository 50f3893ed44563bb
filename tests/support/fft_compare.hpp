// Shared by the fft module suites of the device engines (vulkan, cuda): seeded signals, and
// "this transform on the engine gives the FFTW module's answer on the cpu", norm-wise.
#pragma once

#include "ferro_test.hpp"

#include <catch2/catch.hpp>
#include <ferro/gradcheck.hpp>  // detail::values_of

#include <cmath>
#include <ferro/fft.hpp>
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

using FftCompare = std::function<void(const std::string& what, DType dtype, const FftCall& f, const Tensor& x)>;

// Tables of cases, one per line: clang-format would break every call whose lambda is not last.
// clang-format off
// numpy's one-dimensional cases in `dt`: every op in every norm, odd and prime lengths,
// padding, truncation, another axis, length 1, strided views.
inline void fft_cases_1d(const Runtime& rt, DType dt, const FftCompare& compare) {
    const Tensor x = fft_signal(rt, {3, 16}, dt, 11), odd = fft_signal(rt, {2, 15}, dt, 12), prime = fft_signal(rt, {17}, dt, 13);
    const Tensor tall = fft_signal(rt, {10, 4}, dt, 14), one = fft_signal(rt, {4, 1}, dt, 15);
    for (const char* norm : {"backward", "ortho", "forward"}) {
        const std::string n = norm;
        compare("fft " + n, dt, [&](const Tensor& t) { return fft::fft(t, std::nullopt, -1, n); }, x);
        compare("ifft " + n, dt, [&](const Tensor& t) { return fft::ifft(t, std::nullopt, -1, n); }, x);
        compare("rfft " + n, dt, [&](const Tensor& t) { return fft::rfft(t, std::nullopt, -1, n); }, x);
        compare("irfft " + n, dt, [&](const Tensor& t) { return fft::irfft(t, std::nullopt, -1, n); }, x);
        compare("hfft " + n, dt, [&](const Tensor& t) { return fft::hfft(t, std::nullopt, -1, n); }, x);
        compare("ihfft " + n, dt, [&](const Tensor& t) { return fft::ihfft(t, std::nullopt, -1, n); }, x);
    }
    compare("fft odd", dt, [](const Tensor& t) { return fft::fft(t); }, odd);
    compare("fft prime", dt, [](const Tensor& t) { return fft::fft(t); }, prime);
    compare("rfft odd", dt, [](const Tensor& t) { return fft::rfft(t); }, odd);
    compare("irfft to odd n", dt, [](const Tensor& t) { return fft::irfft(t, 15); }, odd);
    compare("irfft to prime n", dt, [](const Tensor& t) { return fft::irfft(t, 17); }, prime);
    compare("irfft to n = 1", dt, [](const Tensor& t) { return fft::irfft(t, 1); }, x);
    compare("fft n = 20 pads", dt, [](const Tensor& t) { return fft::fft(t, 20); }, x);
    compare("fft n = 9 truncates", dt, [](const Tensor& t) { return fft::fft(t, 9); }, x);
    compare("rfft n = 24 pads", dt, [](const Tensor& t) { return fft::rfft(t, 24); }, x);
    compare("irfft n = 7 truncates", dt, [](const Tensor& t) { return fft::irfft(t, 7); }, x);
    compare("fft along axis 0", dt, [](const Tensor& t) { return fft::fft(t, std::nullopt, 0); }, tall);
    compare("rfft along axis 0", dt, [](const Tensor& t) { return fft::rfft(t, std::nullopt, 0); }, tall);
    compare("ifft of length 1", dt, [](const Tensor& t) { return fft::ifft(t); }, one);
    compare("rfft of length 1", dt, [](const Tensor& t) { return fft::rfft(t); }, one);
    compare("fft of a transposed view", dt, [](const Tensor& t) { return fft::fft(t.transpose()); }, tall);
    compare("irfft of a sliced view", dt, [](const Tensor& t) { return fft::irfft(t.slice(1, 1, 9)); }, x);
}

// Two- and n-dimensional cases in `dt`: axis orders, s, norms, a batch axis between the
// transformed ones, permuted views.
inline void fft_cases_nd(const Runtime& rt, DType dt, const FftCompare& compare) {
    const Tensor x = fft_signal(rt, {2, 6, 10}, dt, 21), cube = fft_signal(rt, {4, 6, 5}, dt, 22);
    compare("fft2", dt, [](const Tensor& t) { return fft::fft2(t); }, x);
    compare("ifft2 ortho", dt, [](const Tensor& t) { return fft::ifft2(t, {}, {-2, -1}, "ortho"); }, x);
    compare("rfft2", dt, [](const Tensor& t) { return fft::rfft2(t); }, x);
    compare("irfft2", dt, [](const Tensor& t) { return fft::irfft2(t); }, x);
    compare("irfft2 over axes (0, 2): a batch axis between", dt, [](const Tensor& t) { return fft::irfft2(t, {}, {0, 2}); }, x);
    compare("fft2 over axes (2, 0)", dt, [](const Tensor& t) { return fft::fft2(t, {}, {2, 0}); }, x);
    compare("fftn", dt, [](const Tensor& t) { return fft::fftn(t); }, cube);
    compare("ifftn forward", dt, [](const Tensor& t) { return fft::ifftn(t, {}, {}, "forward"); }, cube);
    compare("rfftn", dt, [](const Tensor& t) { return fft::rfftn(t); }, cube);
    compare("irfftn", dt, [](const Tensor& t) { return fft::irfftn(t); }, cube);
    compare("rfftn s = (5, 3) over axes (2, 0)", dt, [](const Tensor& t) { return fft::rfftn(t, {5, 3}, {2, 0}); }, x);
    compare("irfftn s = (7, 4) over axes (0, 1)", dt, [](const Tensor& t) { return fft::irfftn(t, {7, 4}, {0, 1}); }, cube);
    compare("fftn of a permuted view", dt, [](const Tensor& t) { return fft::fftn(t.permute({2, 0, 1}), {}, {0, 1}); }, cube);
    compare("hfft2", dt, [](const Tensor& t) { return fft::hfft2(t); }, x);
    compare("ihfft2 ortho", dt, [](const Tensor& t) { return fft::ihfft2(t, {}, {-2, -1}, "ortho"); }, x);
    compare("hfftn s = (7, 4) over axes (0, 1)", dt, [](const Tensor& t) { return fft::hfftn(t, {7, 4}, {0, 1}); }, cube);
    compare("ihfftn forward", dt, [](const Tensor& t) { return fft::ihfftn(t, {}, {}, "forward"); }, cube);
}
// clang-format on

// Gradients of an fft and of an rfft/irfft product, with their inputs on `engine`, match
// finite differences (f64 and c128).
inline void check_fft_gradients(const Runtime& rt, const std::string& engine) {
    const Tensor z = fft_signal(rt, {3, 8}, DType::c128, 51).to(engine);
    const Tensor r = fft_signal(rt, {3, 8}, DType::f64, 52).to(engine);
    const auto through_fft = [](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{fft::fft(x[0], 10, -1, "ortho").abs().sum({0, 1})};
    };
    const auto through_rfft = [](const std::vector<Tensor>& x) {
        const Tensor y = fft::irfft(fft::rfft(x[0]) * fft::rfft(x[0]), 8);
        return std::vector<Tensor>{(y * y).sum({0, 1})};
    };
    const GradcheckResult a = gradcheck(through_fft, {z}), b = gradcheck(through_rfft, {r});
    INFO(a.report << b.report);
    CHECK(a.ok);
    CHECK(b.ok);
}

}  // namespace ferro::test
