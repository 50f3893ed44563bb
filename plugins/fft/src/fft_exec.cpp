// The cpu module's plans: one FFTW guru64 plan per call signature, made in prepare and kept
// in the host's plan cache (with buffered passes for long-strided axes in estimate plans, see
// Pass), and the executor that feeds it.
//
// Layout: FFTW transforms out of place from a row-major array of the fitted input shape
// (padded or truncated to the transform lengths) into the row-major output. When the input
// already is that array (contiguous, same dtype, nothing to pad, conjugate or promote, and
// aligned as FFTW planned) it reads the input directly; otherwise the executor gathers it
// into the workspace first. c2r always gathers: FFTW's multi-dimensional c2r overwrites its
// input. numpy's scaling and ihfft's conjugate follow in one pass over the output.
//
// FFTW's planner is not thread-safe: planning, plan destruction and wisdom I/O hold one
// mutex (and FFTW's own planner lock guards against other FFTW users in the process);
// execution of a finished plan (new-array execute) is thread-safe.
#include "fft.hpp"
#include "fft_four_step.hpp"
#include "fft_transpose.hpp"
#include "fftw_api.hpp"

#include <ferro/cpu_context.h>

#include <fftw3.h>

#include <algorithm>
#include <bit>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

namespace ferro::fft {
namespace {

// FERRO_FFT_WISDOM=PREFIX: FFTW wisdom read from PREFIX.f64 / PREFIX.f32 when the module starts
// and written back after every plan made with more effort than estimate.
const char* wisdom_prefix() { return std::getenv("FERRO_FFT_WISDOM"); }

void export_wisdom() {  // planner mutex held
    if (const char* prefix = wisdom_prefix(); prefix != nullptr && *prefix != '\0') {
        fftw_export_wisdom_to_filename((std::string(prefix) + ".f64").c_str());
        fftwf_export_wisdom_to_filename((std::string(prefix) + ".f32").c_str());
    }
}

// FFTW's own threads for transforms large enough to pay (measured: bench/run fft), as many as
// the engine's budget.
int fftw_threads_for(const Transform& t, int threads) {
    int64_t points = 1;
    for (int64_t d : t.out_shape) points *= d;
    constexpr int64_t kThreadedPoints = int64_t{1} << 16;
    return points < kThreadedPoints ? 1 : threads;
}

int64_t dtype_bytes(ferro_dtype d) {
    switch (d) {
        case FERRO_DTYPE_F32: return 4;
        case FERRO_DTYPE_F64:
        case FERRO_DTYPE_C64: return 8;
        case FERRO_DTYPE_C128: return 16;
        default: return 0;
    }
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

int64_t numel(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

}  // namespace

// One transformed axis of a contiguous complex array, run in blocks: `block` neighbouring lines
// along the axis are copied into a buffer as rows `dist` elements apart, transformed there by
// one FFTW plan (`block` contiguous 1-D transforms, single-threaded), and copied back.
//
// Why: FFTW_ESTIMATE plans an axis whose stride is long (the columns of a 1024 x 1024 array) as
// transforms straight over the strided data, which miss the cache on every element: 26 ms of
// the 30 ms of a 1024 x 1024 c2c f64 transform here, against 2.6 ms for the rows. Its measuring
// planners find buffered plans like this one themselves, so only estimate plans are split.
struct Pass {
    int64_t outer = 1, n = 1, inner = 1;  // the array as [outer, n, inner]; the axis is n long
    int64_t block = 1, dist = 1;          // lines per buffer (dividing inner), their distance in it
    void* fftw = nullptr;
};

struct Plan {
    Transform t;
    bool single = false;     // f32 / c64
    int threads = 1;         // the engine's thread budget (FFTW's threads on large transforms)
    void* fftw = nullptr;    // fftw_plan or fftwf_plan; null when there is nothing to transform
    bool direct_ok = false;  // the input's layout is the fitted array's (alignment checked per call)
    int64_t fit_bytes = 0;
    std::vector<int64_t> fit_strides, out_strides;
    // fft*/ifft* of real input: an r2c transform into a half spectrum (the last transformed axis
    // n/2 + 1 long, in the workspace), expanded to the full one by Hermitian symmetry,
    // X[k] = conj(X[-k]): half the work of promoting the input to complex.
    bool real_input = false;
    std::vector<int64_t> half_shape, half_strides;
    int64_t half_bytes = 0;
    // Estimate plans: the long-strided axes run as buffered passes (Pass) after FFTW's plan for
    // the others (before it for c2r); `fftw` is null when a c2c transform's every axis is a pass.
    std::vector<Pass> passes;
    int slots = 0;  // per-thread pass buffers in the workspace, from pass_offset
    int64_t slot_bytes = 0;
    int64_t pass_offset = 0;
    // With passes, FFTW's plan runs on the engine's pool as well, in main_parts parts of its
    // outermost loop, main_in_step and main_out_step bytes apart (the last part through
    // `fftw_tail` when it is shorter); 0 parts: one call, on FFTW's own threads. So one pool
    // does the whole transform: as fast as FFTW's threads on an idle machine, and 1024 x 1024
    // c64 took 9.3 -> 6.4 ms with both cores busy compiling.
    int64_t main_parts = 0, main_in_step = 0, main_out_step = 0;
    void* fftw_tail = nullptr;
    // Long 1-D c2c transforms: the four-step passes instead of FFTW's plan (`fftw` is null).
    FourStepPtr four_step;
};

namespace {

// FFTW's plan from the fitted array to an array of `out_strides` (the output, or for real
// input the half spectrum), as transform `kind`, over the transformed axes `main` (the
// others are loops of it, and the passes' work).
// The axes FFTW's plan over `main` loops over, outermost first: those neither transformed
// there nor of length 1.
std::vector<size_t> loop_axes(const Transform& t, const std::vector<int64_t>& main) {
    std::vector<size_t> axes;
    for (size_t a = 0; a < t.out_shape.size(); ++a) {
        if (std::find(main.begin(), main.end(), static_cast<int64_t>(a)) == main.end() && t.out_shape[a] != 1) axes.push_back(a);
    }
    return axes;
}

// `first_loop` > 0 replaces the outermost loop's length, and the plan runs on one thread.
template <class R>
void* plan_fftw(const Plan& p, Kind kind, const std::vector<int64_t>& out_strides, int64_t out_bytes,
                const std::vector<int64_t>& main, int64_t first_loop = 0) {
    const Transform& t = p.t;
    std::vector<fftw_iodim64> dims, loops;
    for (size_t i = 0; i < t.axes.size(); ++i) {
        const int64_t a = t.axes[i];
        if (std::find(main.begin(), main.end(), a) != main.end())
            dims.push_back({t.lengths[i], p.fit_strides[a], out_strides[a]});
    }
    for (size_t a : loop_axes(t, main)) loops.push_back({t.out_shape[a], p.fit_strides[a], out_strides[a]});
    if (first_loop > 0) loops.at(0).n = first_loop;
    const unsigned flags = planner_flags(t.planner) | (kind == Kind::c2r ? FFTW_DESTROY_INPUT : FFTW_PRESERVE_INPUT);
    std::lock_guard lock(planner_mutex());
    // Planning arrays of the executor's alignment (FFTW's malloc: SIMD-aligned); measuring
    // planners overwrite them, never the caller's data.
    void* in = Fftw<R>::malloc(static_cast<size_t>(std::max<int64_t>(p.fit_bytes, 16)));
    void* out = Fftw<R>::malloc(static_cast<size_t>(std::max<int64_t>(out_bytes, 16)));
    if (in == nullptr || out == nullptr) {
        Fftw<R>::free(in);
        Fftw<R>::free(out);
        throw plugin::Error(FERRO_RESOURCE_EXHAUSTED, qualified(t.op) + ": out of memory for FFTW's planning arrays");
    }
    Fftw<R>::threads(first_loop > 0 ? 1 : fftw_threads_for(t, p.threads));
    const int rank = static_cast<int>(dims.size()), loop_rank = static_cast<int>(loops.size());
    typename Fftw<R>::plan plan = nullptr;
    if (kind == Kind::c2c) plan = Fftw<R>::dft(rank, dims.data(), loop_rank, loops.data(), in, out, t.sign, flags);
    else if (kind == Kind::r2c) plan = Fftw<R>::r2c(rank, dims.data(), loop_rank, loops.data(), in, out, flags);
    else plan = Fftw<R>::c2r(rank, dims.data(), loop_rank, loops.data(), in, out, flags);
    Fftw<R>::free(in);
    Fftw<R>::free(out);
    if (plan == nullptr) {
        throw plugin::Error(FERRO_INTERNAL, qualified(t.op) + ": FFTW could not plan this transform");
    }
    if (t.planner != Planner::estimate) export_wisdom();
    return plan;
}

// Runs one pass from `src` to `dst` (the same array for a pass in place): blocks of lines are
// spread over the engine's pool, each chunk of blocks using the buffer of its own slot.
template <class R> struct PassRun {
    using C = std::complex<R>;
    const Pass* pass;
    const C* src;
    C* dst;
    char* slots;  // 64-byte aligned, slot_bytes apart
    int64_t slot_bytes;
    int64_t grain;        // blocks per chunk: chunk `begin / grain` owns slot `begin / grain`
    int64_t line_blocks;  // blocks per [n, inner] slab

    void blocks(int64_t begin, int64_t end) const {
        const Pass& q = *pass;
        C* lines = reinterpret_cast<C*>(slots + (begin / grain) * slot_bytes);
        C* spectra = lines + q.block * q.dist;
        for (int64_t b = begin; b < end; ++b) {
            const int64_t base = (b / line_blocks) * q.n * q.inner + (b % line_blocks) * q.block;
            transpose(src + base, q.inner, lines, q.dist, q.n, q.block);
            Fftw<R>::run(static_cast<typename Fftw<R>::plan>(q.fftw), Kind::c2c, lines, spectra);
            transpose(spectra, q.dist, dst + base, q.inner, q.block, q.n);
        }
    }
};

template <class R>
void run_pass(const Plan& p, const Pass& pass, const void* src, void* dst, const ferro_exec_args& a,
              const ferro_cpu_context* ctx) {
    const int64_t line_blocks = pass.inner / pass.block;
    const int64_t blocks = pass.outer * line_blocks;
    const int64_t used = std::max<int64_t>(1, std::min<int64_t>(p.slots, ctx->num_threads));
    const uintptr_t base = reinterpret_cast<uintptr_t>(a.workspace.data) + static_cast<uintptr_t>(p.pass_offset);
    PassRun<R> job{&pass,
                   static_cast<const std::complex<R>*>(src),
                   static_cast<std::complex<R>*>(dst),
                   reinterpret_cast<char*>((base + 63) & ~uintptr_t{63}),
                   p.slot_bytes,
                   (blocks + used - 1) / used,
                   line_blocks};
    const auto body = [](void* user, int64_t begin, int64_t end) { static_cast<const PassRun<R>*>(user)->blocks(begin, end); };
    ctx->parallel_for(ctx, blocks, job.grain, body, &job);
}

// FFTW's plan from `in` to `out`: one call, or its parts on the engine's pool (Plan::main_parts).
template <class R> void run_main(const Plan& p, Kind kind, void* in, void* out, const ferro_cpu_context* ctx) {
    using FftwPlan = typename Fftw<R>::plan;
    if (p.main_parts == 0) return Fftw<R>::run(static_cast<FftwPlan>(p.fftw), kind, in, out);
    struct Parts {
        const Plan* p;
        Kind kind;
        char* in;
        char* out;
    } job{&p, kind, static_cast<char*>(in), static_cast<char*>(out)};
    const auto body = [](void* user, int64_t begin, int64_t end) {
        const Parts& j = *static_cast<const Parts*>(user);
        for (int64_t k = begin; k < end; ++k) {
            const bool tail = k + 1 == j.p->main_parts && j.p->fftw_tail != nullptr;
            Fftw<R>::run(static_cast<FftwPlan>(tail ? j.p->fftw_tail : j.p->fftw), j.kind, j.in + k * j.p->main_in_step,
                         j.out + k * j.p->main_out_step);
        }
    };
    ctx->parallel_for(ctx, p.main_parts, 1, body, &job);
}

// Gathers the input (any strides, dtype Src) into the fitted row-major array (dtype Dst):
// truncated or zero-padded per axis, promoted real -> complex, conjugated when asked.
template <class Src, class Dst> void gather(const Plan& p, const ferro_tensor_view& in, Dst* dst) {
    const Transform& t = p.t;
    const Src* src = static_cast<const Src*>(in.data);
    const int nd = static_cast<int>(t.fit_shape.size());
    if (nd == 0) {  // fftn of a 0-d tensor over no axes: the promoted value
        *dst = static_cast<Dst>(*src);
        return;
    }
    const int64_t inner = t.fit_shape[nd - 1];
    const int64_t copy = std::min(inner, t.in_shape[nd - 1]);
    const int64_t in_stride = in.strides[nd - 1];
    const int64_t rows = numel(t.fit_shape) / std::max<int64_t>(inner, 1);
    std::vector<int64_t> idx(static_cast<size_t>(nd), 0);
    for (int64_t r = 0; r < rows; ++r) {
        // idx[0..nd-2]: this row's position; outside the input (padding) it is all zeros.
        bool inside = true;
        int64_t off = 0;
        for (int d = 0; d < nd - 1; ++d) {
            if (idx[d] >= t.in_shape[d]) inside = false;
            off += idx[d] * in.strides[d];
        }
        Dst* row = dst + r * inner;
        int64_t j = 0;
        if (inside) {
            for (; j < copy; ++j) {
                Dst v = static_cast<Dst>(src[off + j * in_stride]);
                if constexpr (!std::is_floating_point_v<Dst>) {
                    if (t.conj_in) v = std::conj(v);
                }
                row[j] = v;
            }
        }
        std::fill(row + j, row + inner, Dst(0));
        for (int d = nd - 2; d >= 0; --d) {  // next row
            if (++idx[d] < t.fit_shape[d]) break;
            idx[d] = 0;
        }
    }
}

// The full spectrum of a real input from its half (`half`, the last transformed axis n/2 + 1
// long): X[k] = half[k] where k is in the half, else conj(half[-k]) with -k taken modulo n on
// every transformed axis. Scaled, and conjugated for the inverse transform (ifft of real x is
// conj(fft(x)) / n). Rows of the output's last axis are spread over the engine's pool.
template <class R> struct Expand {
    using C = std::complex<R>;
    const Plan* p;
    const C* half;
    C* out;
    R scale;
    bool conj_all;
    std::vector<int64_t> n;  // transform length per axis, 0 on the others

    int64_t neg(size_t d, int64_t k) const { return n[d] == 0 ? k : (n[d] - k) % n[d]; }
    void put(C* dst, C v) const { *dst = (conj_all ? std::conj(v) : v) * scale; }

    void rows(int64_t begin, int64_t end) const {
        const Transform& t = p->t;
        const size_t nd = t.out_shape.size(), last = nd - 1, ha = static_cast<size_t>(t.axes.back());
        const int64_t inner = t.out_shape[last], hs = p->half_strides[last], m = t.half_len();
        for (int64_t r = begin; r < end; ++r) {
            int64_t pos = 0, mirrored = 0, rest = r, k_ha = 0;
            for (size_t d = last; d-- > 0;) {  // this row's index, from its number
                const int64_t k = rest % t.out_shape[d];
                rest /= t.out_shape[d];
                pos += k * p->half_strides[d];
                mirrored += neg(d, k) * p->half_strides[d];
                if (d == ha) k_ha = k;
            }
            C* row = out + r * inner;
            if (last == ha) {  // the halved axis is innermost: the first m from the row, the rest mirrored
                for (int64_t j = 0; j < std::min(m, inner); ++j) put(row + j, half[pos + j * hs]);
                for (int64_t j = m; j < inner; ++j) put(row + j, std::conj(half[mirrored + (n[last] - j) * hs]));
            } else if (k_ha < m) {
                for (int64_t j = 0; j < inner; ++j) put(row + j, half[pos + j * hs]);
            } else {
                for (int64_t j = 0; j < inner; ++j) put(row + j, std::conj(half[mirrored + neg(last, j) * hs]));
            }
        }
    }
};

template <class R>
void expand_half(const Plan& p, const std::complex<R>* half, std::complex<R>* out, R scale, bool conj_all,
                 const ferro_cpu_context* ctx) {
    const Transform& t = p.t;
    Expand<R> job{&p, half, out, scale, conj_all, std::vector<int64_t>(t.out_shape.size(), 0)};
    for (size_t i = 0; i < t.axes.size(); ++i) job.n[static_cast<size_t>(t.axes[i])] = t.lengths[i];
    const int64_t inner = std::max<int64_t>(t.out_shape.back(), 1);
    const int64_t rows = numel(t.out_shape) / inner;
    ctx->parallel_for(
        ctx, rows, std::max<int64_t>(1, (int64_t{1} << 15) / inner),
        [](void* user, int64_t begin, int64_t end) { static_cast<const Expand<R>*>(user)->rows(begin, end); }, &job);
}

template <class R> void run(const Plan& p, const ferro_exec_args& a, const ferro_cpu_context* ctx) {
    using C = std::complex<R>;
    const Transform& t = p.t;
    const ferro_tensor_view& in = a.inputs[0];
    const ferro_tensor_view& outv = a.outputs[0];
    void* out = outv.data;
    const int64_t out_count = numel(t.out_shape);
    if (out_count == 0) return;
    // The fitted array: the input itself, or gathered into the (64-byte aligned) workspace.
    void* fit = in.data;
    std::unique_ptr<void, void (*)(void*)> own(nullptr, Fftw<R>::free);
    if (!p.direct_ok || Fftw<R>::alignment_of(fit) != 0) {
        if (p.direct_ok) {  // no workspace was asked for: an input view at an odd offset
            own.reset(Fftw<R>::malloc(static_cast<size_t>(p.fit_bytes)));
            if (!own)
                throw plugin::Error(FERRO_RESOURCE_EXHAUSTED,
                                    qualified(t.op) + ": out of memory for an aligned copy of the input");
            fit = own.get();
        } else {
            const uintptr_t base = reinterpret_cast<uintptr_t>(a.workspace.data);
            fit = reinterpret_cast<void*>((base + 63) & ~uintptr_t{63});
        }
        const bool real_in = !plugin::is_complex(t.in_dtype);
        if (t.kind == Kind::r2c || p.real_input) gather<R, R>(p, in, static_cast<R*>(fit));
        else if (real_in) gather<R, C>(p, in, static_cast<C*>(fit));
        else gather<C, C>(p, in, static_cast<C*>(fit));
    }
    if (p.four_step) return run_four_step(*p.four_step, fit, out, a.workspace.data, ctx);
    if (p.real_input) {
        const uintptr_t base = reinterpret_cast<uintptr_t>(a.workspace.data) + (p.direct_ok ? 0 : p.fit_bytes + 64);
        auto* half = reinterpret_cast<C*>((base + 63) & ~uintptr_t{63});
        run_main<R>(p, Kind::r2c, fit, half, ctx);
        for (const Pass& pass : p.passes) run_pass<R>(p, pass, half, half, a, ctx);
        expand_half<R>(p, half, static_cast<C*>(out), static_cast<R>(t.scale), t.inverse, ctx);
        return;
    }
    if (t.kind == Kind::c2r) {  // the passes first, in place on the gathered half spectrum
        for (const Pass& pass : p.passes) run_pass<R>(p, pass, fit, fit, a, ctx);
    }
    if (p.fftw != nullptr) {
        if (Fftw<R>::alignment_of(out) != 0) {
            throw plugin::Error(FERRO_INTERNAL, qualified(t.op) + ": the output buffer is not aligned as FFTW planned");
        }
        run_main<R>(p, t.kind, fit, out, ctx);
    } else if (p.passes.empty()) {  // no axes: the promoted copy is the result
        std::memcpy(out, fit, static_cast<size_t>(p.fit_bytes));
    }
    if (t.kind != Kind::c2r) {  // after FFTW's plan, in place on the output; without one the first reads the input
        for (size_t i = 0; i < p.passes.size(); ++i) {
            run_pass<R>(p, p.passes[i], p.fftw == nullptr && i == 0 ? fit : out, out, a, ctx);
        }
    }
    if (t.scale == 1.0 && !t.conj_out) return;
    struct Scale {
        void* out;
        R scale;
        bool conj;
        bool complex;
    } job{out, static_cast<R>(t.scale), t.conj_out, t.kind != Kind::c2r};
    auto body = [](void* user, int64_t begin, int64_t end) {
        const Scale& s = *static_cast<const Scale*>(user);
        if (!s.complex) {
            R* o = static_cast<R*>(s.out);
            for (int64_t i = begin; i < end; ++i) o[i] *= s.scale;
            return;
        }
        C* o = static_cast<C*>(s.out);
        if (s.conj) {
            for (int64_t i = begin; i < end; ++i) o[i] = std::conj(o[i]) * s.scale;
        } else {
            for (int64_t i = begin; i < end; ++i) o[i] *= s.scale;
        }
    };
    ctx->parallel_for(ctx, out_count, 1 << 15, body, &job);
}

}  // namespace

// FFTW's threads and planner hooks are process-wide state whose only teardown
// (fftw_cleanup_threads) also destroys the plans and wisdom of anyone else in the process using
// FFTW, so it cannot run when this plugin unloads; unloaded without it, every load/unload cycle
// leaked that state again. Once FFTW is initialised, the plugin stays resident.
void init_fftw() {
    static std::once_flag once;
    std::call_once(once, [] {
        ferro::plugin::stay_resident(reinterpret_cast<const void*>(&init_fftw));
        std::lock_guard lock(planner_mutex());
        fftw_init_threads();
        fftwf_init_threads();
        // The application (or another plugin) may plan with FFTW too, outside our mutex:
        // FFTW's own planner lock makes those calls safe against ours.
        fftw_make_planner_thread_safe();
        fftwf_make_planner_thread_safe();
        if (const char* prefix = wisdom_prefix(); prefix != nullptr && *prefix != '\0') {
            fftw_import_wisdom_from_filename((std::string(prefix) + ".f64").c_str());  // a missing file is no error
            fftwf_import_wisdom_from_filename((std::string(prefix) + ".f32").c_str());
        }
    });
}

namespace {

// FFTW's plan over `main_axes`: into the half spectrum for a real input's c2c, else the output.
template <class R> void plan_main(Plan& p, const std::vector<int64_t>& main_axes) {
    const Transform& t = p.t;
    const Kind kind = p.real_input ? Kind::r2c : t.kind;
    const std::vector<int64_t>& out_strides = p.real_input ? p.half_strides : p.out_strides;
    const int64_t out_bytes = p.real_input ? p.half_bytes : numel(t.out_shape) * dtype_bytes(t.out_dtype);
    const auto plan = [&](int64_t first_loop) { return plan_fftw<R>(p, kind, out_strides, out_bytes, main_axes, first_loop); };
    const std::vector<size_t> loops = loop_axes(t, main_axes);
    if (!p.passes.empty() && p.slots > 1 && !loops.empty()) {
        const size_t outer = loops[0];
        const int64_t loop = t.out_shape[outer], chunk = (loop + p.slots - 1) / p.slots, parts = (loop + chunk - 1) / chunk;
        const int64_t in_elem = kind == Kind::r2c ? sizeof(R) : 2 * sizeof(R),
                      out_elem = kind == Kind::c2r ? sizeof(R) : 2 * sizeof(R);
        const int64_t in_step = chunk * p.fit_strides[outer] * in_elem, out_step = chunk * out_strides[outer] * out_elem;
        // Parts at 64-byte steps keep the alignment FFTW planned for.
        if (parts > 1 && in_step % 64 == 0 && out_step % 64 == 0) {
            p.fftw = plan(chunk);
            if (const int64_t last = loop - (parts - 1) * chunk; last != chunk) p.fftw_tail = plan(last);
            p.main_parts = parts;
            p.main_in_step = in_step;
            p.main_out_step = out_step;
            return;
        }
    }
    p.fftw = plan(0);
}

void destroy_fftw_plans(Plan& plan) {
    std::lock_guard lock(planner_mutex());
    const auto destroy = [&](void*& p) {
        if (p == nullptr) return;
        if (plan.single) Fftw<float>::destroy(static_cast<fftwf_plan>(p));
        else Fftw<double>::destroy(static_cast<fftw_plan>(p));
        p = nullptr;
    };
    destroy(plan.fftw);
    destroy(plan.fftw_tail);
    for (Pass& pass : plan.passes) destroy(pass.fftw);
}

// Estimate plans: which transformed axes run as passes, planned, with their buffers added to
// the workspace; the others stay in `main_axes`. An axis is a pass when its lines' elements
// lie a multiple of 4 KiB apart, so that a line sits in one set of the L1 cache, and the line
// spans kPassSpan or more, beyond what the sets of L2 that such a stride reaches can hold: the
// 1024 x 1024 c2c transform above, 256 x 256 (1.5 -> 0.27 ms). A 513-wide half spectrum or a
// 128 x 512 c64 array (0.16 ms either way) has no such axis and FFTW keeps the whole transform.
// The halved axis of a real transform stays with FFTW's r2c or c2r, so it must not be a pass.
constexpr int64_t kPassSpan = int64_t{1} << 20, kPassBufferBytes = int64_t{256} << 10;

void split_passes(Plan& plan, std::vector<int64_t>& main_axes, int64_t& workspace) {
    const Transform& t = plan.t;
    if (t.planner != Planner::estimate) return;
    // The complex array the passes run on.
    const std::vector<int64_t>& shape = t.kind == Kind::c2r ? t.fit_shape : plan.real_input ? plan.half_shape : t.out_shape;
    const int64_t elem = plan.single ? 8 : 16;
    const bool real = t.kind != Kind::c2c || plan.real_input;
    std::vector<Pass> passes;
    std::vector<int64_t> rest;
    for (int64_t a : t.axes) {
        Pass q;
        for (int64_t d = 0; d < a; ++d) q.outer *= shape[static_cast<size_t>(d)];
        for (size_t d = static_cast<size_t>(a) + 1; d < shape.size(); ++d) q.inner *= shape[d];
        q.n = shape[static_cast<size_t>(a)];
        q.block = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(kPassBufferBytes / (q.n * elem))));
        const int64_t stride_bytes = q.inner * elem;
        const bool strided = stride_bytes % 4096 == 0 && q.n * stride_bytes >= kPassSpan && q.block >= 4;
        if (!strided) {
            rest.push_back(a);
            continue;
        }
        if (real && a == t.axes.back()) return;  // the halved axis: FFTW's plan must do it
        // A power of two up to 64 divides `inner`, a multiple of 256 elements here: no partial blocks.
        q.block = std::min(q.block, int64_t{64});
        // Rows a cache line apart beyond their length: 4 KiB-aliased rows would share cache sets.
        q.dist = ((q.n * elem + 63) / 64 * 64 + 64) / elem;
        passes.push_back(q);
    }
    if (passes.empty()) return;
    const int sign = t.kind == Kind::c2r ? FFTW_BACKWARD : real ? FFTW_FORWARD : t.sign;
    for (Pass& q : passes) {
        plan.slot_bytes = std::max(plan.slot_bytes, (2 * q.block * q.dist * elem + 63) / 64 * 64);  // lines and spectra
        plan.passes.push_back(q);
        plan.passes.back().fftw = plan.single ? plan_lines<float>(t, q.n, q.block, q.dist, q.dist, sign, FFTW_ESTIMATE)
                                              : plan_lines<double>(t, q.n, q.block, q.dist, q.dist, sign, FFTW_ESTIMATE);
    }
    plan.slots = fftw_threads_for(t, plan.threads);
    plan.pass_offset = workspace;
    workspace += plan.slots * plan.slot_bytes + 64;
    main_axes = rest;
}

}  // namespace

Plan* make_plan(const Transform& t, const ferro_signature& input, int threads, uint64_t* workspace_bytes) {
    auto plan = std::make_unique<Plan>();
    plan->t = t;
    plan->threads = std::max(1, threads);
    plan->single = t.out_dtype == FERRO_DTYPE_F32 || t.out_dtype == FERRO_DTYPE_C64;
    plan->fit_strides = row_major_strides(t.fit_shape);
    plan->out_strides = row_major_strides(t.out_shape);
    plan->real_input = t.kind == Kind::c2c && !plugin::is_complex(t.in_dtype) && !t.axes.empty();
    const ferro_dtype fit_dtype = plan->real_input ? t.in_dtype : t.work_dtype;
    plan->fit_bytes = numel(t.fit_shape) * dtype_bytes(fit_dtype);
    bool contiguous = true;
    for (int d = 0; d < input.ndim; ++d) {
        if (input.shape[d] != 1 && input.strides[d] != plan->fit_strides[static_cast<size_t>(d)]) contiguous = false;
    }
    plan->direct_ok = contiguous && t.fit_shape == t.in_shape && fit_dtype == t.in_dtype && !t.conj_in && t.kind != Kind::c2r &&
                      !t.axes.empty();
    // The gathered input lives in the workspace; an input FFTW reads in place needs none (and
    // the rare misaligned view of one gets a copy of its own). The half spectrum of a real
    // input's transform follows it.
    int64_t workspace = plan->direct_ok ? 0 : plan->fit_bytes + 64;
    if (plan->real_input) {
        plan->half_shape = t.out_shape;
        plan->half_shape[static_cast<size_t>(t.axes.back())] = t.half_len();
        plan->half_strides = row_major_strides(plan->half_shape);
        plan->half_bytes = numel(plan->half_shape) * dtype_bytes(t.out_dtype);
        workspace += plan->half_bytes + 64;
    }
    std::vector<int64_t> main_axes = t.axes;
    if (numel(t.out_shape) > 0 && !t.axes.empty()) {
        // Destroys what was planned so far if a later plan fails.
        std::unique_ptr<Plan, void (*)(Plan*)> guard(plan.get(), [](Plan* q) { destroy_fftw_plans(*q); });
        if (!plan->real_input) plan->four_step = plan_four_step(t, plan->single, fftw_threads_for(t, plan->threads), workspace);
        if (plan->four_step && t.planner != Planner::estimate) {
            std::lock_guard lock(planner_mutex());
            export_wisdom();
        }
        if (!plan->four_step) split_passes(*plan, main_axes, workspace);
        // A c2c transform whose every axis is a pass, or that takes the four-step path, has no
        // FFTW plan of its own.
        if (!main_axes.empty() && !plan->four_step) {
            if (plan->single) plan_main<float>(*plan, main_axes);
            else plan_main<double>(*plan, main_axes);
        }
        (void)guard.release();
    }
    *workspace_bytes = static_cast<uint64_t>(workspace);
    return plan.release();
}

void destroy_plan(Plan* plan) {
    destroy_fftw_plans(*plan);
    delete plan;
}

void execute(const Plan& plan, const ferro_exec_args& args, const void* cpu_context) {
    const auto* ctx = static_cast<const ferro_cpu_context*>(cpu_context);
    if (plan.single) run<float>(plan, args, ctx);
    else run<double>(plan, args, ctx);
}

}  // namespace ferro::fft
