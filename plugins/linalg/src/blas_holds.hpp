// When the cpu module holds the engine's BLAS at one thread (ferro_cpu_context.blas_one_thread)
// while a call runs. A batch that fans out over the pool holds it: each pool thread calls
// LAPACK, and BLAS threads on top of them would oversubscribe the cores. Otherwise a call holds
// it while its dominant routine runs faster on one thread than on all of them, up to a size
// that depends on the implementation the process runs (ferro_cpu_context.blas_name, ABI 1.18).
// Debian's OpenBLAS 0.3.21 threads the level-2 kernels inside LAPACK's reductions to condensed
// form (sytrd, gebrd, gehrd, geqr2) and splits potrf from n = 33 on, which on two cores is
// slower up to n ~ 400 for all of them and for getrf; MKL's threads pay from n ~ 128 in syevd
// and getrf, but slow gesdd and geqrf down up to ~ 200 and potrf up to ~ 320. inv is not held:
// getri gains from two threads from n = 128 on. bench/results/linalg.md has the figures
// (bench_linalg --sizes prints both thread counts of each routine called directly).
#pragma once

#include <cstdint>
#include <string_view>

namespace ferro::linalg {

// The LAPACK routine that dominates a plan's time (getrf stands for getrs too).
enum class ThreadedRoutine { none, gesdd, syevd, geev, geqrf, potrf, getrf };

// The largest n at which `r` runs faster on one thread, per implementation.
struct OneThreadMax {
    int64_t openblas, mkl;
};
constexpr OneThreadMax one_thread_max(ThreadedRoutine r) {
    switch (r) {
        case ThreadedRoutine::gesdd: return {384, 192};
        case ThreadedRoutine::syevd: return {384, 0};
        case ThreadedRoutine::geev: return {256, 256};
        case ThreadedRoutine::geqrf: return {384, 192};
        case ThreadedRoutine::potrf: return {384, 320};
        case ThreadedRoutine::getrf: return {384, 0};
        case ThreadedRoutine::none: break;
    }
    return {0, 0};
}

// `blas`: the context's blas_name; hosts before ABI 1.18 do not name it, and ran OpenBLAS.
// BLIS and the reference BLAS have no thread count to hold.
constexpr bool holds_one_blas_thread(ThreadedRoutine r, int64_t n, bool fans_out, std::string_view blas) {
    if (fans_out) return true;
    if (blas == "OpenBLAS") return n <= one_thread_max(r).openblas;
    if (blas == "MKL") return n <= one_thread_max(r).mkl;
    return false;
}

}  // namespace ferro::linalg
