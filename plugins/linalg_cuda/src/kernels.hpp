// The few device kernels the cuSOLVER module needs beyond the engine's primitives: triangles
// of factored matrices, determinants from LU factors and permutation matrices from pivots.
// Matrices are the module's column-major workspace copies, `count` of them back to back.
#pragma once

#include <cuda_runtime_api.h>
#include <ferro/types.h>

#include <cstdint>

namespace ferro::linalg::cuda {

// In each rows x cols matrix (leading dimension rows): zero the strictly upper (upper=true)
// or strictly lower triangle, and set the diagonal to 1 when unit_diagonal.
cudaError_t zero_triangle(cudaStream_t stream, ferro_dtype dtype, void* a, int64_t count, int64_t rows, int64_t cols, bool upper,
                          bool unit_diagonal);

// From getrf's n x n factors and 1-based pivots: det (when logabs is NULL) or the sign and
// log|det| of each matrix, written to sign_or_det[count] (dtype) and logabs[count] (its real dtype).
cudaError_t lu_determinant(cudaStream_t stream, ferro_dtype dtype, const void* lu, const int64_t* pivots, int64_t count,
                           int64_t n, void* sign_or_det, void* logabs);

// P (m x m, column-major) with A = P L U from getrf's k 1-based pivots per matrix; scratch
// holds count * m int64 (the permutations).
cudaError_t permutation_from_pivots(cudaStream_t stream, ferro_dtype dtype, const int64_t* pivots, int64_t count, int64_t m,
                                    int64_t k, void* p, int64_t* scratch);

}  // namespace ferro::linalg::cuda
