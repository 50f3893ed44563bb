// Loading and unloading plugins, and creating and destroying runtimes, again and again: the
// process's resident memory stays bounded. Under a sanitizer the allocator holds freed memory
// in quarantine, so RSS grows without a leak there: those builds run the cycles for LSan, whose
// report at exit is the bound, and skip the RSS checks.
#include "ferro_test.hpp"

#include <ferro/fft.hpp>

#include <fstream>
#include <string>

using namespace ferro;
using namespace ferro::test;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kRssMeaningful = false;
#else
constexpr bool kRssMeaningful = true;
#endif

int64_t rss_kib() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
    }
    FAIL("no VmRSS in /proc/self/status");
    return 0;
}

// RSS growth, in KiB, over `cycles` calls of `cycle` after `warmup` calls.
template <class Fn> int64_t growth_kib(int warmup, int cycles, Fn&& cycle) {
    for (int i = 0; i < warmup; ++i) cycle();
    const int64_t before = rss_kib();
    for (int i = 0; i < cycles; ++i) cycle();
    return rss_kib() - before;
}

}  // namespace

TEST_CASE("load cycles: loading and unloading the fft plugin 200 times, a threaded transform each time, keeps RSS bounded",
          "[core]") {
    // Each cycle leaked FFTW's thread and planner state before the plugin stayed resident.
    const std::string fft = build_dir() + "/lib/ferro/plugins/libferro_fft.so";
    const std::vector<double> signal = random_values(size_t{1} << 17, 5);
    const int64_t growth = growth_kib(20, 180, [&] {
        Runtime rt = make_runtime();
        rt.load_plugin(fft);
        const Tensor x = rt.tensor<double>(signal, {int64_t{1} << 17});
        const Tensor X = fft::rfft(x);  // 2^17 points: FFTW's own threads run it
        CHECK(X.shape() == Shape{(int64_t{1} << 16) + 1});
    });
    INFO("RSS grew by " << growth << " KiB over 180 cycles");
    if (kRssMeaningful) CHECK(growth < 4096);
}

TEST_CASE("load cycles: a runtime with every shipped plugin, created and destroyed 40 times, keeps RSS bounded", "[core]") {
    // Each cycle leaked libcufft's private C++ runtime pool before the cuFFT module stayed resident.
    Runtime::Options o;
    o.plugin_paths = {build_dir() + "/lib/ferro/plugins"};
    o.use_environment_path = false;
    o.use_default_dir = false;
    o.log_level = FERRO_LOG_OFF;
    const int64_t growth = growth_kib(10, 40, [&] {
        const Runtime rt(o);
        CHECK(rt.inventory().diagnostics.empty());
    });
    INFO("RSS grew by " << growth << " KiB over 40 cycles");
    if (kRssMeaningful) CHECK(growth < 1024);
}
