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
        CHECK_THAT(m.reason,
                   Catch::Contains("the cuFFT module runs on cuda engines (ferro.cuda.ctx.v1); engine cpu has ferro.cpu.ctx.v1"));
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
        fft_cases_1d(rt, dt, compare);
    }
}

TEST_CASE("cuda fft: two- and n-dimensional transforms agree with the FFTW module", "[cuda]") {
    Runtime rt = fft_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : kDtypes) {
        fft_cases_nd(rt, dt, compare);
    }
}

TEST_CASE("cuda fft: long and prime lengths agree with the FFTW module", "[cuda]") {
    Runtime rt = fft_cuda_runtime();
    require_cuda_device(rt);
    for (DType dt : {DType::c64, DType::c128}) {
        compare(
            "fft 2^20", dt, [](const Tensor& t) { return fft::fft(t); }, fft_signal(rt, {1 << 20}, dt, 31));
        compare(
            "fft 3 5 7 11 13", dt, [](const Tensor& t) { return fft::fft(t); }, fft_signal(rt, {15015}, dt, 32));
        compare(
            "ifft 1009 (Bluestein)", dt, [](const Tensor& t) { return fft::ifft(t); }, fft_signal(rt, {3, 1009}, dt, 33));
    }
    compare(
        "rfft 2^16 f32", DType::f32, [](const Tensor& t) { return fft::rfft(t); }, fft_signal(rt, {1 << 16}, DType::f32, 34));
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
    check_fft_gradients(rt, kCuda);
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
