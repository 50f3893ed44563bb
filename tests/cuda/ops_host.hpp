// The cuda engine's element functions (engines/cuda/kernels/*_ops.cuh) run on the host, over
// dense arrays: what the kernels compute per element, checkable without a device. Each returns
// false for an (op, dtype) the engine does not define.
#pragma once

#include <ferro/types.h>

#include <cstdint>
#include <vector>

namespace ferro::cuda::host {

bool unary(uint32_t op, ferro_dtype in_dtype, ferro_dtype out_dtype, const void* in, void* out, int64_t n);
bool binary(uint32_t op, ferro_dtype dtype, ferro_dtype out_dtype, const void* a, const void* b, void* out, int64_t n);
bool cast(ferro_dtype from, ferro_dtype to, const void* in, void* out, int64_t n);
// All n elements of `in` reduced into out[0] (a step per element, as a thread per output does).
bool reduce(uint32_t op, ferro_dtype dtype, ferro_dtype out_dtype, const void* in, void* out, int64_t n);

// The element offsets the elementwise kernels visit for two operands of one shape (make_strided,
// then offsets_of for every linear index), as (out, in) pairs in row-major index order; and the
// merged rank the kernels iterate.
struct Offsets {
    int merged_ndim = 0;
    std::vector<int64_t> out, in;
};
Offsets strided_offsets(int ndim, const int64_t* shape, const int64_t* out_strides, const int64_t* in_strides);

}  // namespace ferro::cuda::host

namespace ferro::linalg::cuda::host {

// The cuSOLVER module's per-matrix arithmetic (plugins/linalg_cuda/src/lu_math.cuh) on the
// host: one matrix's determinant (logabs NULL) or sign and log|det| from getrf's n x n factors
// and 1-based pivots, and P (m x m, column-major) with A = P L U from k pivots.
bool determinant(ferro_dtype dtype, const void* lu, const int64_t* pivots, int64_t n, void* sign_or_det, void* logabs);
bool permutation(ferro_dtype dtype, const int64_t* pivots, int64_t m, int64_t k, void* p);

}  // namespace ferro::linalg::cuda::host
