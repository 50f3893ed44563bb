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
template <class T>
void small_gemm(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1);

// The same with the given instruction set (one of small_gemm_isas()), for tests; complex
// dtypes have one kernel for all.
template <class T>
void small_gemm_on(SmallGemmIsa isa, const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1);

}  // namespace ferro::cpu
