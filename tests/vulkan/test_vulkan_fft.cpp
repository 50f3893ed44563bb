// The VkFFT module (libferro_fft_vulkan.so): every fft op on vulkan:0 against the FFTW module
// on the cpu, in every dtype the device has, with padding, truncation, norms, several axes,
// strided inputs and prime lengths; gradients through it; plans shared by threads. The
// validation layer must stay silent.
#include "fft_compare.hpp"
#include "vulkan_test.hpp"

#include <ferro/fft.hpp>
#include <ferro/gradcheck.hpp>

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <thread>

using namespace ferro;
using namespace ferro::test;

namespace {

Runtime fft_vulkan_runtime(VulkanLog& log) {
    Runtime rt = vulkan_runtime(log);
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_fft.so");
    rt.load_plugin(build_dir() + "/lib/ferro/plugins/libferro_fft_vulkan.so");
    return rt;
}

bool device_has(const Runtime& rt, DType dtype) {
    for (const EngineInfo& e : rt.inventory().engines) {
        if (e.name == "vulkan:0") return std::find(e.dtypes.begin(), e.dtypes.end(), dtype) != e.dtypes.end();
    }
    return false;
}

Tensor signal(const Runtime& rt, const Shape& shape, DType dtype, uint32_t seed) { return fft_signal(rt, shape, dtype, seed); }

void check_same(const Tensor& on_vulkan, const Tensor& on_cpu, DType dtype) {
    check_fft_same("vulkan:0", on_vulkan, on_cpu, dtype);
}

void compare(const std::string& what, DType dtype, const FftCall& f, const Tensor& x) {
    compare_fft("vulkan:0", what, dtype, f, x);
}

const DType kDtypes[] = {DType::f32, DType::f64, DType::c64, DType::c128};

}  // namespace

TEST_CASE("vulkan fft: one-dimensional transforms agree with the FFTW module", "[vulkan]") {
    VulkanLog log;
    Runtime rt = fft_vulkan_runtime(log);
    require_vulkan_device(rt);
    for (DType dt : kDtypes) {
        if (!device_has(rt, dt)) continue;
        fft_cases_1d(rt, dt, compare);
    }
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan fft: two- and n-dimensional transforms agree with the FFTW module", "[vulkan]") {
    VulkanLog log;
    Runtime rt = fft_vulkan_runtime(log);
    require_vulkan_device(rt);
    for (DType dt : kDtypes) {
        if (!device_has(rt, dt)) continue;
        fft_cases_nd(rt, dt, compare);
    }
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan fft: long and prime lengths agree with the FFTW module", "[vulkan]") {
    VulkanLog log;
    Runtime rt = fft_vulkan_runtime(log);
    require_vulkan_device(rt);
    for (DType dt : {DType::c64, DType::c128}) {
        if (!device_has(rt, dt)) continue;
        compare(
            "fft 2^16", dt, [](const Tensor& t) { return fft::fft(t); }, signal(rt, {1 << 16}, dt, 31));
        compare(
            "fft 3 5 7 11 13", dt, [](const Tensor& t) { return fft::fft(t); }, signal(rt, {15015}, dt, 32));
        compare(
            "ifft 1009 (Bluestein)", dt, [](const Tensor& t) { return fft::ifft(t); }, signal(rt, {3, 1009}, dt, 33));
    }
    compare(
        "rfft 2^16 f32", DType::f32, [](const Tensor& t) { return fft::rfft(t); }, signal(rt, {1 << 16}, DType::f32, 34));
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan fft: what VkFFT cannot do is declined with the reason", "[vulkan]") {
    VulkanLog log;
    Runtime rt = fft_vulkan_runtime(log);
    require_vulkan_device(rt);
    const Tensor x = signal(rt, {2, 3, 4, 5}, DType::c64, 41).to("vulkan:0");
    check_error([&] { fft::fftn(x); }, FERRO_UNIMPLEMENTED,
                "fft_vulkan: VkFFT transforms at most 3 axes at once; this call transforms 4");
    // Bad input is the family's error, the same as on the cpu.
    check_error([&] { fft::rfft(x); }, FERRO_INVALID_ARGUMENT, "input 0 must be real (f32 or f64), got c64");
    check_no_vulkan_messages(log);
}

TEST_CASE("vulkan fft: gradients through vulkan tensors match finite differences", "[vulkan]") {
    VulkanLog log;
    Runtime rt = fft_vulkan_runtime(log);
    require_vulkan_device(rt);
    if (!device_has(rt, DType::c128)) return;
    check_fft_gradients(rt, "vulkan:0");
    check_no_vulkan_messages(log);
}

TEST_CASE("concurrency: vulkan fft plans shared by several threads", "[vulkan]") {
    VulkanLog log;
    Runtime rt = fft_vulkan_runtime(log);
    require_vulkan_device(rt);
    // Four threads, each with its own input and norm: the three norms are three plans that share
    // one buffer and one set of VkFFT kernels (one layout), used from every thread at once.
    const char* const norms[] = {"backward", "ortho", "forward", "ortho"};
    std::vector<Tensor> inputs, want;
    for (int t = 0; t < 4; ++t) {
        inputs.push_back(signal(rt, {4, 64}, DType::c64, 61 + t));
        want.push_back(fft::fft(inputs.back(), std::nullopt, -1, norms[t]));
        inputs.back() = inputs.back().to("vulkan:0");
    }
    std::vector<std::thread> threads;
    std::vector<Tensor> got(4 * 8);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < 8; ++i) got[static_cast<size_t>(t * 8 + i)] = fft::fft(inputs[t], std::nullopt, -1, norms[t]);
        });
    }
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < got.size(); ++i) check_same(got[i], want[i / 8], DType::c64);
    check_no_vulkan_messages(log);
}
