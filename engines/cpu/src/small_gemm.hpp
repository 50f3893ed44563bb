// The engine's own kernel for products too small for BLAS (its per-call dispatch and packing
// cost more than the arithmetic below about 16^3 multiply-adds): any strides, any batch range.
#pragma once

#include "dtype_dispatch.hpp"

#include <ferro/engine.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ferro::cpu {

// Products of at most this many multiply-adds take small_gemm.
constexpr int64_t kSmallGemm = int64_t{16} * 16 * 16;

// Real products with a side (m, n or k) of at most this many take small_gemm too, unless the
// copies it would make first outweigh it: OpenBLAS 0.3.21 runs such skinny products at 40-60%
// of its square-product rate and gains little from a second thread; the register-tiled kernel
// ran them 1.0-1.4x faster on one thread (21 x 505 x 462, 24 x 434 x 405, 371 x 424 x 24,
// 1100 x 1584 x 11 f64, AVX-512) and the engine splits one product over its pool.
constexpr int64_t kSkinnySide = 32;

// Real products of mid size take it as well: more multiply-adds than kMidGemmWork (64^3 ran
// 1.05-1.2x slower here than on OpenBLAS's single thread), and either no side above
// kMidGemmSide with a B (as the kernel reads it, after orientation) of at most half a core's
// L2, or k at most kMidGemmDepth and C of at most kMidGemmOutput elements (the kernel then
// takes B's columns in chunks that fit half of L2; a deeper k re-reads A once per chunk).
// Time on the kernel over OpenBLAS 0.3.21's (SkylakeX kernels, two cores of an Intel Xeon with
// 2 MiB of L2 each): f64 96^3-384^3 0.4-0.8, 32 x 128^3 0.7, 1100 x 1728 x 144 0.8-0.9,
// 1400^2 x 128 0.88, 4096 x 256 x 128 0.7; f32 up to 640^3 0.4-0.9. Left to BLAS: f64 512^3
// 1.12-1.17, 1024^3 2.0, 1024^2 x 384 1.03, f32 1024^2 x 768 1.5, 2048^2 x 64 f64 1.4.
constexpr int64_t kMidGemmWork = int64_t{64} * 64 * 64;
constexpr int64_t kMidGemmSide = 1024;
constexpr int64_t kMidGemmDepth = 256;
constexpr int64_t kMidGemmOutput = int64_t{1} << 21;

// Splitting one product over threads: whole blocks of rows, or of columns (a multiple of every
// tile width).
constexpr int64_t kSmallGemmRows = 64, kSmallGemmColumns = 48;

// Whether the engine's kernel takes this product (else BLAS).
bool takes_small_gemm(const ferro_gemm_args& g, bool complex);

// The instruction sets the real kernels are compiled for. The build's baseline is plain x86-64
// (128-bit registers, no fused multiply-add), so wider copies are compiled alongside and the
// widest this CPU has is chosen once.
enum class SmallGemmIsa { baseline, avx2, avx512 };

const char* name_of(SmallGemmIsa isa);
// The ones this CPU can run, baseline first; the kernel uses the last.
const std::vector<SmallGemmIsa>& small_gemm_isas();

// C = alpha A B + beta C (conjugations as g says) for the products p0 <= p < p1 of g's batch,
// on any strides. C is not read when beta is 0.
template <class T> void small_gemm(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1);

// The same with the given instruction set (one of small_gemm_isas()), for tests; complex
// dtypes have one kernel for all.
template <class T> void small_gemm_on(SmallGemmIsa isa, const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1);

}  // namespace ferro::cpu
