// Device kernels of the cuSOLVER module (kernels.hpp).
#include "kernels.hpp"
#include "lu_math.cuh"

#include <ferro/dtype.hpp>

#include <cuda/std/cmath>
#include <cuda/std/complex>

#include <utility>

namespace ferro::linalg::cuda {
namespace {

namespace cs = ::cuda::std;

constexpr int kBlock = 256;

unsigned blocks_for(int64_t n) {
    const int64_t b = (n + kBlock - 1) / kBlock;
    return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 16 ? 65535 * 16 : b));
}

template <class T> __global__ void zero_triangle_kernel(T* a, int64_t count, int64_t rows, int64_t cols, bool upper, bool unit) {
    const int64_t total = count * rows * cols;
    for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total; e += int64_t{gridDim.x} * blockDim.x) {
        const int64_t within = e % (rows * cols), i = within % rows, j = within / rows;
        if (i == j && unit) a[e] = T(1);
        else if (upper ? j > i : i > j) a[e] = T(0);
    }
}

// One thread per matrix (lu_math.cuh).
template <class T>
__global__ void determinant_kernel(const T* lu, const int64_t* piv, int64_t count, int64_t n, T* sign_or_det,
                                   typename real_of<T>::type* logabs) {
    const int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
    if (b < count) determinant_of(lu + b * n * n, piv + b * n, n, sign_or_det + b, logabs == nullptr ? nullptr : logabs + b);
}

template <class T>
__global__ void permutation_kernel(const int64_t* piv, int64_t count, int64_t m, int64_t k, T* p, int64_t* perm_scratch) {
    const int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
    if (b < count) permutation_of(piv + b * k, m, k, perm_scratch + b * m, p + b * m * m);
}

template <class F> bool visit(ferro_dtype dtype, F&& f) {
    return ::ferro::plugin::visit_dtype<cs::complex, ::ferro::plugin::Dtypes::inexact>(dtype, std::forward<F>(f));
}

}  // namespace

cudaError_t zero_triangle(cudaStream_t stream, ferro_dtype dtype, void* a, int64_t count, int64_t rows, int64_t cols, bool upper,
                          bool unit_diagonal) {
    const int64_t total = count * rows * cols;
    if (total == 0) return cudaSuccess;
    if (!visit(dtype, [&](auto tag) {
            using T = decltype(tag);
            zero_triangle_kernel<<<blocks_for(total), kBlock, 0, stream>>>(static_cast<T*>(a), count, rows, cols, upper,
                                                                           unit_diagonal);
        })) {
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t lu_determinant(cudaStream_t stream, ferro_dtype dtype, const void* lu, const int64_t* pivots, int64_t count,
                           int64_t n, void* sign_or_det, void* logabs) {
    if (count == 0) return cudaSuccess;
    if (!visit(dtype, [&](auto tag) {
            using T = decltype(tag);
            determinant_kernel<<<blocks_for(count), kBlock, 0, stream>>>(static_cast<const T*>(lu), pivots, count, n,
                                                                         static_cast<T*>(sign_or_det),
                                                                         static_cast<typename real_of<T>::type*>(logabs));
        })) {
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

cudaError_t permutation_from_pivots(cudaStream_t stream, ferro_dtype dtype, const int64_t* pivots, int64_t count, int64_t m,
                                    int64_t k, void* p, int64_t* scratch) {
    if (count == 0 || m == 0) return cudaSuccess;
    if (!visit(dtype, [&](auto tag) {
            using T = decltype(tag);
            permutation_kernel<<<blocks_for(count), kBlock, 0, stream>>>(pivots, count, m, k, static_cast<T*>(p), scratch);
        })) {
        return cudaErrorInvalidValue;
    }
    return cudaGetLastError();
}

}  // namespace ferro::linalg::cuda
