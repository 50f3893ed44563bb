// Per-matrix arithmetic on getrf's results, for host and device (the kernels in kernels.cu run
// it one thread per matrix; tests run it on the host against the LAPACK module).
#pragma once

#include <cuda/std/cmath>
#include <cuda/std/complex>
#include <cuda/std/type_traits>

#include <cstdint>

namespace ferro::linalg::cuda {

template <class T> struct is_complex { static constexpr bool value = false; };
template <class R> struct is_complex<::cuda::std::complex<R>> { static constexpr bool value = true; };

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<::cuda::std::complex<R>> { using type = R; };

// From the n x n factors (diagonal at a[i + i n]) and 1-based pivots of one matrix: its
// determinant (logabs NULL: the product itself, as exp(sum log) would lose digits), or its
// sign (a unit complex number for complex dtypes) and log|det|. A zero pivot gives 0 and -inf.
template <class T>
__host__ __device__ void determinant_of(const T* a, const int64_t* piv, int64_t n, T* sign_or_det,
                                        typename real_of<T>::type* logabs) {
    using R = typename real_of<T>::type;
    if (logabs == nullptr) {
        T det(1);
        for (int64_t i = 0; i < n; ++i) det *= piv[i] != i + 1 ? -a[i + i * n] : a[i + i * n];
        *sign_or_det = det;
        return;
    }
    T sign(1);
    R log_sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        const T u = a[i + i * n];
        const R mag = ::cuda::std::abs(u);
        if (piv[i] != i + 1) sign = -sign;
        if (mag == 0) {
            sign = T(0);
            log_sum = -INFINITY;
            break;
        }
        if constexpr (is_complex<T>::value) sign *= u / mag;
        else if (u < 0) sign = -sign;
        log_sum += ::cuda::std::log(mag);
    }
    *sign_or_det = sign;
    *logabs = log_sum;
}

// P (m x m, column-major) with A = P L U from k 1-based pivots: the rows' permutation (perm,
// m entries of scratch), then P[perm[i], i] = 1.
template <class T> __host__ __device__ void permutation_of(const int64_t* piv, int64_t m, int64_t k, int64_t* perm, T* p) {
    for (int64_t i = 0; i < m; ++i) perm[i] = i;
    for (int64_t i = 0; i < k; ++i) {
        const int64_t j = piv[i] - 1;
        const int64_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (int64_t e = 0; e < m * m; ++e) p[e] = T(0);
    for (int64_t i = 0; i < m; ++i) p[perm[i] + i * m] = T(1);
}

}  // namespace ferro::linalg::cuda
