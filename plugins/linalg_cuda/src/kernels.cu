// Device kernels of the cuSOLVER module (kernels.hpp).
#include "kernels.hpp"

#include <cuda/std/cmath>
#include <cuda/std/complex>

namespace ferro::linalg::cuda {
namespace {

namespace cs = ::cuda::std;

constexpr int kBlock = 256;

unsigned blocks_for(int64_t n) {
    const int64_t b = (n + kBlock - 1) / kBlock;
    return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 16 ? 65535 * 16 : b));
}

template <class T>
__global__ void zero_triangle_kernel(T* a, int64_t count, int64_t rows, int64_t cols, bool upper, bool unit) {
    const int64_t total = count * rows * cols;
    for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < total; e += int64_t{gridDim.x} * blockDim.x) {
        const int64_t within = e % (rows * cols), i = within % rows, j = within / rows;
        if (i == j && unit) a[e] = T(1);
        else if (upper ? j > i : i > j) a[e] = T(0);
    }
}

// One thread per matrix: the diagonal product with the pivots' signs.
template <class T>
__global__ void determinant_kernel(const T* lu, const int64_t* piv, int64_t count, int64_t n, T* sign_or_det,
                                   typename T::value_type* logabs) {
    using R = typename T::value_type;
    const int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
    if (b >= count) return;
    const T* a = lu + b * n * n;
    const int64_t* p = piv + b * n;
    if (logabs == nullptr) {  // the product itself: exp(sum log) would lose digits
        T det(1);
        for (int64_t i = 0; i < n; ++i) det *= p[i] != i + 1 ? -a[i + i * n] : a[i + i * n];
        sign_or_det[b] = det;
        return;
    }
    T sign(1);
    R log_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        const T u = a[i + i * n];
        const R mag = cs::abs(u);
        if (p[i] != i + 1) sign = -sign;
        if (mag == 0) {
            sign = T(0);
            log_sum = -INFINITY;
            break;
        }
        sign *= u / mag;
        log_sum += cs::log(mag);
    }
    sign_or_det[b] = sign;
    logabs[b] = log_sum;
}

// Real dtypes through the same kernel: complex with a zero imaginary part, the real part kept.
template <class R>
__global__ void real_determinant_kernel(const R* lu, const int64_t* piv, int64_t count, int64_t n, R* sign_or_det, R* logabs) {
    const int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
    if (b >= count) return;
    const R* a = lu + b * n * n;
    const int64_t* p = piv + b * n;
    R value = 1, log_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        const R u = a[i + i * n];
        if (p[i] != i + 1) value = -value;
        if (logabs == nullptr) {
            value *= u;
            continue;
        }
        if (u == 0) {
            value = 0;
            log_sum = -INFINITY;
            break;
        }
        if (u < 0) value = -value;
        log_sum += cs::log(cs::abs(u));
    }
    sign_or_det[b] = value;
    if (logabs != nullptr) logabs[b] = log_sum;
}

// One thread per matrix: the row permutation the pivots make, then P with P[perm[i], i] = 1.
template <class T>
__global__ void permutation_kernel(const int64_t* piv, int64_t count, int64_t m, int64_t k, T* p, int64_t* perm_scratch) {
    const int64_t b = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
    if (b >= count) return;
    int64_t* perm = perm_scratch + b * m;
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) {
        const int64_t j = piv[b * k + i] - 1;
        const int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    T* out = p + b * m * m;
    for (int64_t e = 0; e < m * m; ++e) out[e] = T(0);
    for (int64_t i = 0; i < m; ++i) out[perm[i] + i * m] = T(1);  // column-major: row perm[i], column i
}

template <class F>
bool visit(ferro_dtype dtype, F&& f) {
    switch (dtype) {
        case FERRO_DTYPE_F32: f(float{}); return true;
        case FERRO_DTYPE_F64: f(double{}); return true;
        case FERRO_DTYPE_C64: f(cs::complex<float>{}); return true;
        case FERRO_DTYPE_C128: f(cs::complex<double>{}); return true;
        default: return false;
    }
}

template <class T> struct is_complex { static constexpr bool value = false; };
template <class R> struct is_complex<cs::complex<R>> { static constexpr bool value = true; };

}  // namespace

cudaError_t zero_triangle(cudaStream_t stream, ferro_dtype dtype, void* a, int64_t count, int64_t rows, int64_t cols,
                          bool upper, bool unit_diagonal) {
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
            if constexpr (is_complex<T>::value) {
                determinant_kernel<<<blocks_for(count), kBlock, 0, stream>>>(
                    static_cast<const T*>(lu), pivots, count, n, static_cast<T*>(sign_or_det),
                    static_cast<typename T::value_type*>(logabs));
            } else {
                real_determinant_kernel<<<blocks_for(count), kBlock, 0, stream>>>(
                    static_cast<const T*>(lu), pivots, count, n, static_cast<T*>(sign_or_det), static_cast<T*>(logabs));
            }
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
