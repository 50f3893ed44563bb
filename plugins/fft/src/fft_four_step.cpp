#include "fft_four_step.hpp"

#include "fft_transpose.hpp"
#include "fftw_api.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

#include <unistd.h>

namespace ferro::fft {
namespace {

// From this many points on, a 1-D c2c transform takes the four-step path: with estimate plans
// from 2^16, once the signal no longer fits in a core's L2 cache, with measured ones from
// 2^19, where FFTW's own plan stops keeping up (AMD EPYC, 1 MiB L2: 2^18 c128 1.0 -> 1.35 ms as
// passes, 2^19 c64 4.2 -> 1.7). FFTW_ESTIMATE's recursion runs well on a signal its L2 holds:
// as passes, 2^16 c128 (1 MiB) was 0.35 -> 0.26 ms with a 1 MiB L2 but 0.47 -> 0.58 ms with a
// 2 MiB one (Intel Xeon), where 2^17 c128 and 2^18 c64 (2 MiB) run 0.79 and 0.57 of FFTW's
// time; below 2^16, single precision is 1.2-3x slower as passes. Each factor must be at least
// kMinFactor points, so that the passes' blocks are transforms FFTW runs well and the copies
// move whole cache lines.
constexpr int64_t kFourStepPoints = int64_t{1} << 16;
constexpr int64_t kFourStepPointsMeasured = int64_t{1} << 19;
constexpr int64_t kMinFactor = 32;
// A core's L2 cache, as the cpu engine also asks (kernels_small_gemm.cpp); each builds against
// the plugin headers only, so each keeps its own few lines.
constexpr int64_t kAssumedL2Bytes = int64_t{1} << 20;  // when the C library cannot tell

int64_t l2_cache_bytes() {
    static const int64_t bytes = [] {
        const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
        return reported > 0 ? int64_t{reported} : kAssumedL2Bytes;
    }();
    return bytes;
}

// A step-1 buffer, and a step-2 block of A's rows: within L2 beside the data streaming through.
constexpr int64_t kBlockBytes = int64_t{64} << 10;
// Twiddles are made for groups of kGroup consecutive k1 from one product each
// (twiddle_row_body).
constexpr int64_t kGroup = 64;

// a b, without the NaN checks of __muldc3 (std::complex's operator*).
inline std::complex<double> mul(std::complex<double> a, std::complex<double> b) {
    return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// w_N^m for 0 <= m < N.
inline std::complex<double> twiddle(const FourStep& f, int64_t m) {
    return mul(f.hi[static_cast<size_t>(m >> f.lo_bits)], f.lo[static_cast<size_t>(m & ((int64_t{1} << f.lo_bits) - 1))]);
}

// The largest divisor of n that is at most sqrt(n).
int64_t smaller_factor(int64_t n) {
    int64_t best = 1;
    for (int64_t d = 1; d * d <= n; ++d) {
        if (n % d == 0) best = d;
    }
    return best;
}

// Lines of `len` elements per block: a power of two from 4 to 64 that keeps the block within
// kBlockBytes (a power of two, so that the AVX tiles of the copies cover whole blocks).
int64_t lines_per_block(int64_t len, int64_t elem, int64_t lines) {
    const auto fit = static_cast<uint64_t>(std::max<int64_t>(1, kBlockBytes / (len * elem)));
    return std::min(lines, std::clamp<int64_t>(static_cast<int64_t>(std::bit_floor(fit)), 4, 64));
}

// Rows a cache line apart beyond their length: 4 KiB-aliased rows would share cache sets.
int64_t padded(int64_t len, int64_t elem) { return ((len * elem + 63) / 64 * 64 + 64) / elem; }

int64_t aligned(int64_t bytes) { return (bytes + 63) / 64 * 64; }

template <class R> void plan_all(FourStep& f, const Transform& t) {
    const unsigned flags = planner_flags(t.planner);
    f.col_plan = plan_lines<R>(t, f.n1, f.col_block, f.dist, f.dist, t.sign, flags);
    if (f.n2 % f.col_block != 0) f.col_tail_plan = plan_lines<R>(t, f.n1, f.n2 % f.col_block, f.dist, f.dist, t.sign, flags);
    f.row_plan = plan_lines<R>(t, f.n2, f.row_block, f.a_ld, f.a_ld, t.sign, flags);
    if (f.n1 % f.row_block != 0) f.row_tail_plan = plan_lines<R>(t, f.n2, f.n1 % f.row_block, f.a_ld, f.a_ld, t.sign, flags);
}

// Row j2 of a step-1 buffer (the n1-point DFT of column j2) times scale * w_N^(j2 k1), k1 < n1.
// Twiddles come from two tables (twiddle()) for kGroup values of k1 and one per group, and are
// combined by one complex product each: w^(j2 (a + e)) = w^(j2 a) w^(j2 e).
template <class R> [[gnu::always_inline]] inline void twiddle_row_body(const FourStep& f, std::complex<R>* row, int64_t j2) {
    R base_re[kGroup], base_im[kGroup];
    const int64_t group = std::min(kGroup, f.n1);
    for (int64_t e = 0; e < group; ++e) {
        const std::complex<double> w = twiddle(f, j2 * e) * f.scale;
        base_re[e] = static_cast<R>(w.real());
        base_im[e] = static_cast<R>(w.imag());
    }
    R* x = reinterpret_cast<R*>(row);
    for (int64_t a = 0; a < f.n1; a += group) {
        const std::complex<double> s = twiddle(f, j2 * a);
        const R sr = static_cast<R>(s.real()), si = static_cast<R>(s.imag());
        const int64_t m = std::min(group, f.n1 - a);
        R* p = x + 2 * a;
        for (int64_t e = 0; e < m; ++e) {
            const R tr = sr * base_re[e] - si * base_im[e], ti = sr * base_im[e] + si * base_re[e];
            const R xr = p[2 * e], xi = p[2 * e + 1];
            p[2 * e] = xr * tr - xi * ti;
            p[2 * e + 1] = xr * ti + xi * tr;
        }
    }
}

template <class R> void twiddle_rows_baseline(const FourStep& f, std::complex<R>* rows, int64_t count, int64_t j2) {
    for (int64_t k = 0; k < count; ++k) twiddle_row_body(f, rows + k * f.dist, j2 + k);
}

#if defined(__x86_64__)
template <class R>
[[gnu::target("avx2,fma")]] void twiddle_rows_avx2(const FourStep& f, std::complex<R>* rows, int64_t count, int64_t j2) {
    for (int64_t k = 0; k < count; ++k) twiddle_row_body(f, rows + k * f.dist, j2 + k);
}
#endif

// Rows j2 .. j2 + count of a step-1 buffer, twiddled, with AVX2 and FMA where the CPU has them:
// in a one-thread prototype of a 2^20-point c64 transform the baseline build's products took
// 1.3-1.6 ms, 0.3 ms with them.
template <class R> void twiddle_rows(const FourStep& f, std::complex<R>* rows, int64_t count, int64_t j2) {
#if defined(__x86_64__)
    static const bool avx2 = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    }();
    if (avx2) return twiddle_rows_avx2(f, rows, count, j2);
#endif
    twiddle_rows_baseline(f, rows, count, j2);
}

template <class R> struct FourStepRun {
    using C = std::complex<R>;
    using Plan = typename Fftw<R>::plan;
    const FourStep* f;
    const C* x;   // this transform's input, n1 x n2
    C* a;         // A, n1 x a_ld
    C* out;       // this transform's output, n2 x n1
    char* slots;  // per-thread buffers, slot_bytes apart
    // Blocks per chunk of each step: chunk `begin / grain` owns slot `begin / grain`.
    int64_t col_grain, row_grain;

    C* slot(int64_t begin, int64_t grain) const { return reinterpret_cast<C*>(slots + (begin / grain) * f->slot_bytes); }

    void columns(int64_t begin, int64_t end) const {
        const FourStep& q = *f;
        C* lines = slot(begin, col_grain);
        C* spectra = lines + q.col_block * q.dist;
        for (int64_t b = begin; b < end; ++b) {
            const int64_t c = b * q.col_block, count = std::min(q.col_block, q.n2 - c);
            transpose(x + c, q.n2, lines, q.dist, q.n1, count);
            Fftw<R>::run(static_cast<Plan>(count == q.col_block ? q.col_plan : q.col_tail_plan), Kind::c2c, lines, spectra);
            twiddle_rows(q, spectra, count, c);
            transpose(spectra, q.dist, a + c, q.a_ld, count, q.n1);
        }
    }

    void rows(int64_t begin, int64_t end) const {
        const FourStep& q = *f;
        C* spectra = slot(begin, row_grain);
        for (int64_t b = begin; b < end; ++b) {
            const int64_t r = b * q.row_block, count = std::min(q.row_block, q.n1 - r);
            Fftw<R>::run(static_cast<Plan>(count == q.row_block ? q.row_plan : q.row_tail_plan), Kind::c2c, a + r * q.a_ld,
                         spectra);
            transpose(spectra, q.a_ld, out + r, q.n1, count, q.n2);
        }
    }
};

template <class R> void run_typed(const FourStep& f, const void* fit, void* out, void* workspace, const ferro_cpu_context* ctx) {
    using C = std::complex<R>;
    const uintptr_t base =
        (reinterpret_cast<uintptr_t>(workspace) + static_cast<uintptr_t>(f.region_offset) + 63) & ~uintptr_t{63};
    const int64_t n = f.n1 * f.n2;
    const int64_t col_blocks = (f.n2 + f.col_block - 1) / f.col_block;
    const int64_t row_blocks = (f.n1 + f.row_block - 1) / f.row_block;
    const int64_t used = std::max<int64_t>(1, std::min<int64_t>(f.slots, ctx->num_threads));
    FourStepRun<R> job{&f,
                       nullptr,
                       reinterpret_cast<C*>(base),
                       nullptr,
                       reinterpret_cast<char*>(base + static_cast<uintptr_t>(f.a_bytes)),
                       (col_blocks + used - 1) / used,
                       (row_blocks + used - 1) / used};
    for (int64_t i = 0; i < f.batch; ++i) {
        job.x = static_cast<const C*>(fit) + i * n;
        job.out = static_cast<C*>(out) + i * n;
        ctx->parallel_for(
            ctx, col_blocks, job.col_grain,
            [](void* user, int64_t b, int64_t e) { static_cast<const FourStepRun<R>*>(user)->columns(b, e); }, &job);
        ctx->parallel_for(
            ctx, row_blocks, job.row_grain,
            [](void* user, int64_t b, int64_t e) { static_cast<const FourStepRun<R>*>(user)->rows(b, e); }, &job);
    }
}

}  // namespace

void FourStepDeleter::operator()(FourStep* f) const {
    {
        std::lock_guard lock(planner_mutex());
        for (void* p : {f->col_plan, f->col_tail_plan, f->row_plan, f->row_tail_plan}) {
            if (p == nullptr) continue;
            if (f->single) Fftw<float>::destroy(static_cast<fftwf_plan>(p));
            else Fftw<double>::destroy(static_cast<fftw_plan>(p));
        }
    }
    delete f;
}

FourStepPtr plan_four_step(const Transform& t, bool single, int threads, int64_t& workspace) {
    if (t.kind != Kind::c2c || t.axes.size() != 1 || t.axes[0] + 1 != static_cast<int64_t>(t.out_shape.size())) {
        return nullptr;
    }
    const int64_t n = t.lengths[0];
    const int64_t elem = single ? 8 : 16;
    if (t.planner == Planner::estimate ? n < kFourStepPoints || n * elem < l2_cache_bytes() : n < kFourStepPointsMeasured) {
        return nullptr;
    }
    const int64_t n1 = smaller_factor(n);
    if (n1 < kMinFactor) return nullptr;
    FourStepPtr f(new FourStep);
    f->n1 = n1;
    f->n2 = n / n1;
    for (size_t d = 0; d + 1 < t.out_shape.size(); ++d) f->batch *= t.out_shape[d];
    f->col_block = lines_per_block(f->n1, elem, f->n2);
    f->row_block = lines_per_block(f->n2, elem, f->n1);
    f->dist = padded(f->n1, elem);
    f->a_ld = padded(f->n2, elem);
    f->single = single;
    f->scale = t.scale;
    // Tables in long double, rounded once: w^m = exp(sign 2 pi i m / N).
    f->lo_bits = static_cast<int>(std::bit_width(static_cast<uint64_t>(std::ceil(std::sqrt(static_cast<double>(n)))) - 1));
    const int64_t lo_count = int64_t{1} << f->lo_bits, hi_count = (n + lo_count - 1) / lo_count;
    const auto w = [&](int64_t m) {
        const long double angle =
            t.sign * 2 * std::numbers::pi_v<long double> * static_cast<long double>(m) / static_cast<long double>(n);
        return std::complex<double>(static_cast<double>(std::cos(angle)), static_cast<double>(std::sin(angle)));
    };
    for (int64_t m = 0; m < lo_count; ++m) f->lo.push_back(w(m));
    for (int64_t m = 0; m < hi_count; ++m) f->hi.push_back(w(m * lo_count));
    f->slots = std::max(1, threads);
    f->a_bytes = aligned(f->n1 * f->a_ld * elem);
    // A slot holds step 1's lines and their spectra, or step 2's spectra (rows a_ld apart).
    f->slot_bytes = aligned(std::max(2 * f->col_block * f->dist, f->row_block * f->a_ld) * elem);
    f->region_offset = workspace;
    workspace += f->a_bytes + f->slots * f->slot_bytes + 64;
    if (single) plan_all<float>(*f, t);
    else plan_all<double>(*f, t);
    return f;
}

void run_four_step(const FourStep& f, const void* fit, void* out, void* workspace, const ferro_cpu_context* ctx) {
    if (f.single) run_typed<float>(f, fit, out, workspace, ctx);
    else run_typed<double>(f, fit, out, workspace, ctx);
}

}  // namespace ferro::fft
