// fft error paths: each bad call is INVALID_ARGUMENT with a message that names the op, the
// argument, what was expected and what came.
#include "fft_test.hpp"

using namespace ferro;
using namespace ferro::test;

TEST_CASE("fft errors: bad axis, n <= 0, wrong dtypes, s and axes that disagree, bad norm and planner", "[fft]") {
    const Runtime rt = fft_runtime();
    const Tensor x = random_signal(rt, {4, 6}, DType::c128, 81), xr = random_signal(rt, {4, 6}, DType::f64, 82);
    const uint32_t bad = FERRO_INVALID_ARGUMENT;
    check_error([&] { fft::fft(x, std::nullopt, 2); }, bad,
                "fft.fft: attribute axis 2 is out of range for input 0 with 2 dimensions");
    check_error([&] { fft::ifft(x, std::nullopt, -3); }, bad, "fft.ifft: attribute axis -3 is out of range");
    check_error([&] { fft::fft(x, 0); }, bad, "fft.fft: attribute n must be positive, got 0");
    check_error([&] { fft::irfft(x, -4); }, bad, "fft.irfft: attribute n must be positive, got -4");
    check_error([&] { fft::irfft(rt.arange(0, 4).to(DType::i64)); }, bad,
                "fft.irfft: input 0 must be f32, f64, c64 or c128, got i64");
    check_error([&] { fft::rfft(x); }, bad,
                "fft.rfft: input 0 must be real (f32 or f64), got c128; the transform of complex input is fft.fft");
    check_error([&] { fft::ihfft(x); }, bad,
                "fft.ihfft: input 0 must be real (f32 or f64), got c128; the transform of complex input is fft.ifft");
    check_error([&] { fft::rfftn(x); }, bad, "transform of complex input is fft.fftn");
    check_error(
        [&] {
            fft::irfft(random_signal(rt, {3, 1}, DType::c64, 83));
        },
        bad, "fft.irfft: the output length along axis 1 would be 2 (m - 1) = 0 for m = 1 input points; give n explicitly");
    check_error(
        [&] {
            fft::fft(random_signal(rt, {3, 0}, DType::c64, 84));
        },
        bad, "fft.fft: axis 1 of input 0 (shape [3, 0]) is empty; a transform needs at least one point (give n)");
    check_error([&] { fft::fft2(x, std::vector<int64_t>{4}); }, bad, "fft.fft2: attribute s has 1 entries but axes names 2 axes");
    check_error(
        [&] {
            fft::fftn(x, std::vector<int64_t>{4, 4, 4});
        },
        bad, "fft.fftn: attribute s has 3 entries, more than input 0's 2 dimensions");
    check_error([&] { fft::fftn(x, std::nullopt, std::vector<int64_t>{1, -1}); }, bad, "fft.fftn: axes entry 1 repeats axis 1");
    check_error(
        [&] {
            fft::fft2(x, std::nullopt, {0, 5});
        },
        bad, "fft.fft2: axes entry 1 is 5, out of range for input 0 with 2 dimensions");
    check_error([&] { fft::ifftn(x, std::vector<int64_t>{3, 0}); }, bad, "fft.ifftn: s entry 1 must be positive, got 0");
    check_error([&] { fft::rfftn(xr, std::nullopt, std::vector<int64_t>{}); }, bad,
                "fft.rfftn: a real transform needs at least one axis");
    check_error([&] { fft::fft(x, std::nullopt, -1, "none"); }, bad,
                "fft.fft: attribute norm must be backward, ortho or forward, got \"none\"");
    check_error([&] { fft::fft(x, std::nullopt, -1, "backward", "fast"); }, bad,
                "fft.fft: attribute planner must be estimate, measure, patient or exhaustive, got \"fast\"");
}

TEST_CASE("fft: axes not given and norm=None are the defaults, through the typed calls and by name", "[fft]") {
    const Runtime rt = fft_runtime();
    const Tensor x = random_signal(rt, {3, 4, 6}, DType::c128, 85);
    const std::vector<std::complex<double>> want = fft::fft2(x, {}, {-2, -1}, "ortho").to_vector<std::complex<double>>();
    // fft2(x, {}, {}, "ortho") said "attribute 'axes' expects i64[], got None".
    check_close(fft::fft2(x, {}, {}, "ortho").to_vector<std::complex<double>>(), want, 0, 0);
    const Tensor by_name = rt.call("fft.fft", {x}, {Attr("n", std::nullopt), Attr("norm", std::nullopt)})[0];
    check_close(by_name.to_vector<std::complex<double>>(), fft::fft(x).to_vector<std::complex<double>>(), 0, 0);
    // An explicit None is numpy's: fft2(x, axes=None) transforms every axis, as fftn.
    const Tensor axes_none = rt.call("fft.fft2", {x}, {Attr("axes", std::nullopt)})[0];
    check_close(axes_none.to_vector<std::complex<double>>(), fft::fftn(x).to_vector<std::complex<double>>(), 0, 0);
    // The same for the 2-D and N-D Hermitian transforms.
    check_close(fft::hfft2(x, {}, {}).to_vector<double>(), fft::hfft2(x, {}, {-2, -1}).to_vector<double>(), 0, 0);
    check_close(rt.call("fft.hfftn", {x}, {Attr("s", std::nullopt), Attr("norm", std::nullopt)})[0].to_vector<double>(),
                fft::hfftn(x).to_vector<double>(), 0, 0);
    const Tensor xr = random_signal(rt, {3, 4, 6}, DType::f64, 86);
    check_close(fft::ihfft2(xr, {}, {}).to_vector<std::complex<double>>(),
                fft::ihfft2(xr, {}, {1, 2}).to_vector<std::complex<double>>(), 0, 0);
}
