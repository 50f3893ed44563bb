// bench/run fft (ferro side): the cases of the fft issue — c2c 1-D n = 2^10, 2^16, 2^20 and
// 3*5*7*11*13, r2c 1-D 2^20, 2-D 1024 x 1024 c2c, batched 1-D 64 x 4096, in f64 and f32 —
// and batched 1-D 1024 x 1024, the least a pass of the 2^20-point and 2-D transforms does
// (bench/README.md) —
// through ferro::fft, through a bound call writing into one destination (ferro::BoundOp::into,
// as FFTW's plan writes its own array) and through FFTW called directly with the same planner
// flags and thread count, sampled in turn. One JSON line per case with plan_s, the time of
// ferro's first call (it plans), and fftw_plan_s (FFTW's plan creation, after ferro's: it
// reuses the wisdom ferro's planning left in the process); bench/run adds the Python peers.
// --threads N: FFTW's threads for both sides on transforms of 2^16 points and more (ferro's
// rule, docs/fft.md), 1 below. --planner estimate|measure: FFTW's effort, both sides.
// --case NAME: only that case (e.g. "c2c n=2^20"), in both precisions; --list: the names.
#include "timing.hpp"

#include <ferro/ferro.hpp>

#include <fftw3.h>

#include <chrono>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <string>

using ferro::Tensor;

namespace {

struct Case {
    const char* name;
    std::vector<int64_t> shape;
    bool real;  // r2c
    int axes;   // transformed trailing axes: 1 (batched 1-D) or 2
};

// FFTW on its own arrays: plan once (with the given flags), execute out of place. The two
// precisions' APIs differ only in their prefix.
template <class R> struct Api;
template <> struct Api<double> {
    using plan = fftw_plan;
    using cpx = fftw_complex;
    static constexpr auto malloc = fftw_malloc;
    static constexpr auto free = fftw_free;
    static constexpr auto many_dft = fftw_plan_many_dft;
    static constexpr auto many_r2c = fftw_plan_many_dft_r2c;
    static constexpr auto execute = fftw_execute;
    static constexpr auto destroy = fftw_destroy_plan;
    static constexpr auto threads = fftw_plan_with_nthreads;
};
template <> struct Api<float> {
    using plan = fftwf_plan;
    using cpx = fftwf_complex;
    static constexpr auto malloc = fftwf_malloc;
    static constexpr auto free = fftwf_free;
    static constexpr auto many_dft = fftwf_plan_many_dft;
    static constexpr auto many_r2c = fftwf_plan_many_dft_r2c;
    static constexpr auto execute = fftwf_execute;
    static constexpr auto destroy = fftwf_destroy_plan;
    static constexpr auto threads = fftwf_plan_with_nthreads;
};

template <class R> struct Direct {
    using A = Api<R>;
    typename A::plan plan = nullptr;
    void* in = nullptr;
    void* out = nullptr;
    double plan_s = 0;
    Direct(const Case& c, int threads, unsigned flags) {
        const auto t0 = std::chrono::steady_clock::now();
        int64_t total = 1;
        for (int64_t d : c.shape) total *= d;
        const size_t bytes = static_cast<size_t>(total) * 2 * sizeof(R);
        in = A::malloc(bytes);
        out = A::malloc(bytes);
        A::threads(threads);
        const int nd = static_cast<int>(c.shape.size());
        std::vector<int> n(c.shape.end() - c.axes, c.shape.end());
        int howmany = 1, dist = 1;
        for (int d = 0; d < nd - c.axes; ++d) howmany *= static_cast<int>(c.shape[static_cast<size_t>(d)]);
        for (int v : n) dist *= v;
        auto* cin = static_cast<typename A::cpx*>(in);
        auto* cout = static_cast<typename A::cpx*>(out);
        if (c.real) {
            const int odist = dist / n.back() * (n.back() / 2 + 1);
            plan = A::many_r2c(c.axes, n.data(), howmany, static_cast<R*>(in), nullptr, 1, dist, cout, nullptr, 1, odist, flags);
        } else {
            plan = A::many_dft(c.axes, n.data(), howmany, cin, nullptr, 1, dist, cout, nullptr, 1, dist, FFTW_FORWARD, flags);
        }
        std::memset(in, 0, bytes);  // measuring planners overwrite it
        plan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    Direct(const Direct&) = delete;
    Direct& operator=(const Direct&) = delete;
    void run() const { A::execute(plan); }
    ~Direct() {
        A::destroy(plan);
        A::free(in);
        A::free(out);
    }
};

template <class R> void bench_case(const ferro::Runtime& rt, const Case& c, int threads, const std::string& planner, bool quick) {
    int64_t total = 1;
    for (int64_t d : c.shape) total *= d;
    const int fftw_threads = total >= (int64_t{1} << 16) ? threads : 1;
    const ferro::DType real = sizeof(R) == 4 ? ferro::DType::f32 : ferro::DType::f64;
    const Tensor re = rt.rand(c.shape, real, 5);
    const Tensor x = c.real ? re : ferro::call_one(re.runtime_ref(), "core.complex", {re, rt.rand(c.shape, real, 6)});
    const Tensor xc = x.contiguous();
    const ferro::fft::Axes axes = c.axes == 1 ? ferro::fft::Axes{-1} : ferro::fft::Axes{-2, -1};
    auto mine = [&] {
        if (c.real) (void)ferro::fft::rfftn(xc, {}, axes, "backward", planner);
        else (void)ferro::fft::fftn(xc, {}, axes, "backward", planner);
    };
    const double plan_s = bench::sample_seconds(mine, 1);  // the first call plans
    // The same transform as a bound call writing into one destination, as FFTW's plan runs on
    // its arrays: what ferro adds to FFTW beyond numpy's calling convention.
    const ferro::BoundOp bound(
        rt, c.real ? "fft.rfftn" : "fft.fftn",
        {ferro::Attr("axes", c.axes == 1 ? ferro::Shape{-1} : ferro::Shape{-2, -1}), ferro::Attr("planner", planner)});
    const Tensor out = bound(xc);
    auto mine_into = [&] { bound.into(out, xc); };
    // Planned second: FFTW's wisdom is per process, so this plan reuses what ferro's measured.
    const Direct<R> direct(c, fftw_threads, planner == "measure" ? FFTW_MEASURE : FFTW_ESTIMATE);
    auto theirs = [&] { direct.run(); };
    const int inner = total <= 4096 ? 200 : total <= 65536 ? 10 : 1;
    const int samples = quick ? 5 : 11;
    const auto [ferro_s, into_s, fftw_s] = bench::interleaved_medians(samples, inner, mine, mine_into, theirs);
    std::printf(
        "{\"case\": \"%s %s\", \"planner\": \"%s\", \"ferro_s\": %.6e, \"bound_into_s\": %.6e, "
        "\"fftw_s\": %.6e, \"plan_s\": %.3e, \"fftw_plan_s\": %.3e, \"threads\": %d, \"samples\": %d, "
        "\"inner\": %d}\n",
        c.name, sizeof(R) == 4 ? "f32" : "f64", planner.c_str(), ferro_s, into_s, fftw_s, plan_s, direct.plan_s, fftw_threads,
        samples, inner);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    bool quick = false;
    int threads = 1;
    bool list = false;
    std::string planner = "estimate", only;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0) quick = true;
        if (std::strcmp(argv[i], "--list") == 0) list = true;
        if (std::strcmp(argv[i], "--planner") == 0 && i + 1 < argc) planner = argv[++i];
        if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) threads = std::atoi(argv[++i]);
        if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) only = argv[++i];
    }
    setenv("FERRO_CPU_THREADS", std::to_string(threads).c_str(), 1);  // ferro's FFTW threads follow the engine's
    fftw_init_threads();
    fftwf_init_threads();
    const ferro::Runtime rt;
    const Case cases[] = {
        {"c2c n=2^10", {1024}, false, 1},
        {"c2c n=2^16", {65536}, false, 1},
        {"c2c n=2^20", {1 << 20}, false, 1},
        {"c2c n=15015 (3*5*7*11*13)", {15015}, false, 1},
        {"r2c n=2^20", {1 << 20}, true, 1},
        {"c2c 2-D 1024x1024", {1024, 1024}, false, 2},
        {"c2c batched 64x4096", {64, 4096}, false, 1},
        {"c2c batched 1024x1024", {1024, 1024}, false, 1},
    };
    for (const Case& c : cases) {
        if (list) std::printf("%s\n", c.name);
        if (list || (!only.empty() && only != c.name)) continue;
        bench_case<double>(rt, c, threads, planner, quick);
        bench_case<float>(rt, c, threads, planner, quick);
    }
}
