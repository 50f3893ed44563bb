// Long 1-D c2c transforms as two passes over a matrix view of the signal (Bailey's four-step
// FFT), each through FFTW plans of a few hundred to a few thousand points on the engine's pool.
//
// Why: FFTW plans a 2^20-point transform as one recursion whose outer steps stride across the
// whole array; on two threads here the passes take 0.42-0.50 of the time of FFTW_ESTIMATE's
// plan and 0.7-1.0 of FFTW_MEASURE's (bench/run fft, docs/fft.md).
//
// With N = n1 n2, x[j1 n2 + j2] and X[k1 + n1 k2]:
//   1. per column j2, the n1-point DFT over j1, times the twiddle w_N^(j2 k1): A[k1][j2];
//   2. per row k1 of A, the n2-point DFT over j2, written transposed: X[k1 + n1 k2].
// Step 1 copies blocks of columns into a buffer and back (transposing copies), step 2
// transforms blocks of A's rows into a buffer and writes them out as columns. The norm's
// scale rides on the twiddles.
#pragma once

#include "fft.hpp"

#include <ferro/cpu_context.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

namespace ferro::fft {

struct FourStep {
    int64_t n1 = 0, n2 = 0;  // N = n1 n2
    int64_t batch = 1;       // transforms, N elements apart (the leading axes)
    int64_t col_block = 0;   // columns per step-1 block
    int64_t row_block = 0;   // rows per step-2 block
    int64_t dist = 0;        // a step-1 buffer's rows, elements apart
    int64_t a_ld = 0;        // A's rows, elements apart
    bool single = false;
    // FFTW plans (fftw_plan or fftwf_plan), out of place into a thread's buffer: col_block
    // transforms of n1 points (rows `dist` apart), row_block transforms of n2 points of A (rows
    // a_ld apart), and the same for the last, shorter block of each (null when they divide).
    void* col_plan = nullptr;
    void* col_tail_plan = nullptr;
    void* row_plan = nullptr;
    void* row_tail_plan = nullptr;
    // w_N^m = hi[m >> lo_bits] lo[m & (2^lo_bits - 1)], exact to a rounding or two for every
    // m < N from 2 sqrt(N) values (w_N = exp(sign 2 pi i / N)); the scale is in `scale`.
    std::vector<std::complex<double>> hi, lo;
    int lo_bits = 0;
    double scale = 1;
    // Its part of the workspace, from region_offset: A (a_bytes), then `slots` per-thread
    // buffers of slot_bytes, from a 64-byte aligned start.
    int64_t region_offset = 0, a_bytes = 0, slot_bytes = 0;
    int slots = 1;
};

struct FourStepDeleter {
    void operator()(FourStep* f) const;  // destroys its FFTW plans under the planner's lock
};
using FourStepPtr = std::unique_ptr<FourStep, FourStepDeleter>;

// The four-step plan of `t` when it is a long 1-D c2c transform of the innermost axis with a
// split into two factors of 32 or more, else null. Its workspace goes after `workspace` bytes,
// which it grows by A and by buffers for `threads` threads.
FourStepPtr plan_four_step(const Transform& t, bool single, int threads, int64_t& workspace);

// From the fitted array (batch x N, row-major) to the output (the same), scaled.
void run_four_step(const FourStep& f, const void* fit, void* out, void* workspace, const ferro_cpu_context* ctx);

}  // namespace ferro::fft
