// The cuFFT module (libferro_fft_cuda.so): every fft op on cuda:0 against the FFTW module on
// the cpu, in every dtype, with padding, truncation, norms, several axes, strided inputs and
// prime lengths; gradients through it; one plan used by several threads. Without a GPU only
// the module's decline on other engines runs.
#include "cuda_test.hpp"
#include "fft_compare.hpp"

#include <ferro/fft.hpp>
#include <ferro/gradcheck.hpp>
#include <ferro/inventory.hpp>

#include <string>
#include <thread>

using namespace ferro;
using namespace ferro::test;

namespace {

const char* const kCuda = "cuda:0";
const DType kDtypes[] = {DType::f32, DType::f64, DType::c64, DType::c128};

Runtime fft_cuda_runtime() {
    Runtime rt = cuda_runtime();
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_fft_cuda.so");
    return rt;
}

void compare(const std::string& what, DType dtype, const FftCall& f, const Tensor& x) { compare_fft(kCuda, what, dtype, f, x); }

}  // namespace

TEST_CASE("cuda fft: the module loads everywhere and declines engines other than cuda with the reason", "[cuda-probe]") {
    Runtime rt = fft_cuda_runtime();
    bool declined = false;
    for (const ModuleInfo& m : rt.inventory().modules) {
        if (m.plugin != "fft_cuda" || m.engine != "cpu") continue;
        CHECK(m.family == "fft");
        CHECK(!m.available);
        CHECK_THAT(m.reason, Catch::Contains("the cuFFT module runs on cuda engines (ferro.cuda.ctx.v1); engine cpu has ferro.cpu.ctx.v1"));
        declined = true;
    }
    CHECK(declined);
    // The cpu keeps the FFTW module.
    const Tensor x = fft_signal(rt, {8}, DType::c128, 1);
    CHECK(fft::fft(x).engine() == "cpu");
}

TEST_CASE("cuda fft: one-dimensional transforms agree with the FFTW module", "[cuda]") {
    Runtime rt = fft_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kDtypes) {
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
}

TEST_CASE("cuda fft: two- and n-dimensional transforms agree with the FFTW module", "[cuda]") {
    Runtime rt = fft_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kDtypes) {
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
    }
}

TEST_CASE("cuda fft: long and prime lengths agree with the FFTW module", "[cuda]") {
    Runtime rt = fft_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : {DType::c64, DType::c128}) {
        compare("fft 2^20", dt, [](const Tensor& t) { return fft::fft(t); }, fft_signal(rt, {1 << 20}, dt, 31));
        compare("fft 3 5 7 11 13", dt, [](const Tensor& t) { return fft::fft(t); }, fft_signal(rt, {15015}, dt, 32));
        compare("ifft 1009 (Bluestein)", dt, [](const Tensor& t) { return fft::ifft(t); }, fft_signal(rt, {3, 1009}, dt, 33));
    }
    compare("rfft 2^16 f32", DType::f32, [](const Tensor& t) { return fft::rfft(t); }, fft_signal(rt, {1 << 16}, DType::f32, 34));
}

TEST_CASE("cuda fft: what cuFFT cannot do is declined with the reason", "[cuda]") {
    Runtime rt = fft_cuda_runtime();
    require_cuda_device(rt);
    const Tensor x = fft_signal(rt, {2, 3, 4, 5}, DType::c64, 41).to(kCuda);
    check_error([&] { fft::fftn(x); }, FERRO_UNIMPLEMENTED,
                "cuFFT transforms at most 3 axes at once; this call transforms 4 axes longer than 1");
    check_error([&] { fft::rfft(x); }, FERRO_INVALID_ARGUMENT, "input 0 must be real (f32 or f64), got c64");
}

TEST_CASE("cuda fft: gradients through cuda tensors match finite differences", "[cuda]") {
    Runtime rt = fft_cuda_runtime();
    require_cuda_device(rt);
    const Tensor z = fft_signal(rt, {3, 8}, DType::c128, 51).to(kCuda);
    const Tensor r = fft_signal(rt, {3, 8}, DType::f64, 52).to(kCuda);
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

TEST_CASE("concurrency: one cuda fft plan used by several threads", "[cuda]") {
    Runtime rt = fft_cuda_runtime();
    require_cuda_device(rt);
    std::vector<Tensor> inputs, want;
    for (int t = 0; t < 4; ++t) {
        inputs.push_back(fft_signal(rt, {4, 4096}, DType::c64, 61 + t));
        want.push_back(fft::fft(inputs.back()));
        inputs.back() = inputs.back().to(kCuda);
    }
    std::vector<std::thread> threads;
    std::vector<Tensor> got(4 * 8);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 8; ++i) got[static_cast<size_t>(t * 8 + i)] = fft::fft(inputs[t]);
        });
    }
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < got.size(); ++i) check_fft_same(kCuda, got[i], want[i / 8], DType::c64);
}
