// How gemm_batched maps ferro's strided operands onto one cuBLAS strided batched call: pure
// layout logic, with no CUDA in it, so tests can run it on the host against a reference.
//
// cuBLAS reads column-major matrices through op N, T or C with a leading dimension. A
// row-major C is computed as C^T = B^T A^T (the operands exchanged, everything transposed);
// each operand is read through N or T/C where its strides allow; what no op can read (a
// conjugate without transpose, negative or too-small strides, a C that is neither row- nor
// column-major) is copied into a dense column-major temporary first (C: computed there and
// copied back).
#pragma once

#include <cstdint>

namespace ferro::cuda {

// A rows x cols operand: element (i, j) of batch p at p*bs + i*rs + j*cs (elements).
struct MatrixLayout {
    int64_t rows = 0, cols = 0, bs = 0, rs = 0, cs = 0;
    bool conj = false;
};

enum class BlasOp { N, T, C };

struct GemmOperand {
    int source = 0;           // ferro operand: 0 = A, 1 = B, 2 = C
    bool transposed = false;  // the plan reads the source's transpose (C^T = B^T A^T)
    bool copy = false;        // copied (conjugated if conj) into a dense column-major temporary first
    MatrixLayout layout;      // what cuBLAS reads: the source's (transposed) layout, or the temporary's
    BlasOp op = BlasOp::N;
    int64_t ld = 1;
};

struct GemmPlan {
    int64_t m = 0, n = 0, k = 0;  // cuBLAS's sizes
    GemmOperand a, b, c;          // cuBLAS's operands; c.op is N
};

// The plan for C[p] = alpha op(A[p]) op(B[p]) + beta C[p] (A m x k, B k x n, C m x n).
GemmPlan plan_gemm(const MatrixLayout& a, const MatrixLayout& b, const MatrixLayout& c, int64_t batch);

}  // namespace ferro::cuda
