// OpenBLAS on one thread while a plan that runs faster so is executing.
//
// Debian's OpenBLAS 0.3.21 threads the level-2 kernels inside LAPACK's reductions to condensed
// form (sytrd, gebrd, gehrd, geqr2) and splits potrf from n = 33 on. On two cores, with two
// threads instead of one, syevd takes 2.2x as long at n = 64 and 1.2x at n = 256, gesdd 1.6x
// and 1.3x, geqrf + orgqr 1.3x and 1.2x, potrf 2.5x and 1.35x; two threads pay from
// n ~ 450. The LU-based solvers (getrs's triangular solves) gain from threads at every size, so
// they keep them.
//
// OpenBLAS has only a process-wide thread count (openblas_set_num_threads_local came in
// 0.3.27), so the guard is counted: the first plan in sets one thread, the last one out
// restores the count it found. Meanwhile other BLAS calls of the process run on one thread
// too, and a count set by someone else in that window is overwritten when the last one leaves.
#pragma once

#include <cstdint>

namespace ferro::linalg {

class SingleThreadedBlas {
public:
    explicit SingleThreadedBlas(bool wanted);
    ~SingleThreadedBlas();
    SingleThreadedBlas(const SingleThreadedBlas&) = delete;
    SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

private:
    bool active_ = false;
};

// The largest matrix dimension up to which one thread wins (measured above).
constexpr int64_t kSingleThreadedLapackMax = 384;

}  // namespace ferro::linalg
