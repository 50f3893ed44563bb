// FFTW behind one interface for both precisions, and the planner's lock: shared by the cpu
// module's plans (fft_exec.cpp) and the four-step transform (fft_four_step.cpp).
#pragma once

#include "fft.hpp"

#include <fftw3.h>

#include <mutex>
#include <string>

namespace ferro::fft {

// FFTW's planner is not thread-safe: planning, plan destruction and wisdom I/O hold this lock.
inline std::mutex& planner_mutex() {
    static std::mutex m;
    return m;
}

inline unsigned planner_flags(Planner p) {
    switch (p) {
        case Planner::estimate: return FFTW_ESTIMATE;
        case Planner::measure: return FFTW_MEASURE;
        case Planner::patient: return FFTW_PATIENT;
        case Planner::exhaustive: return FFTW_EXHAUSTIVE;
    }
    return FFTW_ESTIMATE;
}

// The two FFTW precisions behind one interface.
template <class R> struct Fftw;
template <> struct Fftw<double> {
    using plan = fftw_plan;
    using cpx = fftw_complex;
    static void* malloc(size_t b) { return fftw_malloc(b); }
    static void free(void* p) { fftw_free(p); }
    static plan dft(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, void* in, void* out, int sign, unsigned f) {
        return fftw_plan_guru64_dft(r, d, hr, hd, static_cast<cpx*>(in), static_cast<cpx*>(out), sign, f);
    }
    static plan r2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, void* in, void* out, unsigned f) {
        return fftw_plan_guru64_dft_r2c(r, d, hr, hd, static_cast<double*>(in), static_cast<cpx*>(out), f);
    }
    static plan c2r(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, void* in, void* out, unsigned f) {
        return fftw_plan_guru64_dft_c2r(r, d, hr, hd, static_cast<cpx*>(in), static_cast<double*>(out), f);
    }
    static void run(plan p, Kind k, void* in, void* out) {
        if (k == Kind::c2c) fftw_execute_dft(p, static_cast<cpx*>(in), static_cast<cpx*>(out));
        else if (k == Kind::r2c) fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<cpx*>(out));
        else fftw_execute_dft_c2r(p, static_cast<cpx*>(in), static_cast<double*>(out));
    }
    static void destroy(plan p) { fftw_destroy_plan(p); }
    static int alignment_of(const void* p) { return fftw_alignment_of(reinterpret_cast<double*>(const_cast<void*>(p))); }
    static void threads(int n) { fftw_plan_with_nthreads(n); }
};
template <> struct Fftw<float> {
    using plan = fftwf_plan;
    using cpx = fftwf_complex;
    static void* malloc(size_t b) { return fftwf_malloc(b); }
    static void free(void* p) { fftwf_free(p); }
    static plan dft(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, void* in, void* out, int sign, unsigned f) {
        return fftwf_plan_guru64_dft(r, d, hr, hd, static_cast<cpx*>(in), static_cast<cpx*>(out), sign, f);
    }
    static plan r2c(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, void* in, void* out, unsigned f) {
        return fftwf_plan_guru64_dft_r2c(r, d, hr, hd, static_cast<float*>(in), static_cast<cpx*>(out), f);
    }
    static plan c2r(int r, const fftw_iodim64* d, int hr, const fftw_iodim64* hd, void* in, void* out, unsigned f) {
        return fftwf_plan_guru64_dft_c2r(r, d, hr, hd, static_cast<cpx*>(in), static_cast<float*>(out), f);
    }
    static void run(plan p, Kind k, void* in, void* out) {
        if (k == Kind::c2c) fftwf_execute_dft(p, static_cast<cpx*>(in), static_cast<cpx*>(out));
        else if (k == Kind::r2c) fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<cpx*>(out));
        else fftwf_execute_dft_c2r(p, static_cast<cpx*>(in), static_cast<float*>(out));
    }
    static void destroy(plan p) { fftwf_destroy_plan(p); }
    static int alignment_of(const void* p) { return fftwf_alignment_of(reinterpret_cast<float*>(const_cast<void*>(p))); }
    static void threads(int n) { fftwf_plan_with_nthreads(n); }
};

// `count` transforms of n points on one thread, from rows `in_dist` apart to rows `out_dist`
// apart: the blocks of the buffered passes. Out of place: FFTW plans a batch in place through
// a buffer of its own (its directbuf solver, a copy in and out of every line), which was a
// sixth of a 2^20-point four-step transform.
template <class R>
void* plan_lines(const Transform& t, int64_t n, int64_t count, int64_t in_dist, int64_t out_dist, int sign, unsigned flags) {
    const fftw_iodim64 dim{n, 1, 1}, loop{count, in_dist, out_dist};
    std::lock_guard lock(planner_mutex());
    void* in = Fftw<R>::malloc(static_cast<size_t>(count * in_dist) * 2 * sizeof(R));
    void* out = Fftw<R>::malloc(static_cast<size_t>(count * out_dist) * 2 * sizeof(R));
    if (in == nullptr || out == nullptr) {
        Fftw<R>::free(in);
        Fftw<R>::free(out);
        throw plugin::Error(FERRO_RESOURCE_EXHAUSTED, qualified(t.op) + ": out of memory for FFTW's planning arrays");
    }
    Fftw<R>::threads(1);
    void* plan = Fftw<R>::dft(1, &dim, 1, &loop, in, out, sign, flags);
    Fftw<R>::free(in);
    Fftw<R>::free(out);
    if (plan == nullptr) throw plugin::Error(FERRO_INTERNAL, qualified(t.op) + ": FFTW could not plan this transform");
    return plan;
}

}  // namespace ferro::fft
