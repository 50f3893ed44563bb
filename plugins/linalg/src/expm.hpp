// The matrix exponential by scaling and squaring with Pade approximants: Higham, "The scaling
// and squaring method for the matrix exponential revisited" (SIAM J. Matrix Anal. Appl. 26,
// 2005), Algorithm 2.3, with its degrees m and thresholds theta_m (double precision: m up to
// 13; single precision: up to 7, the thresholds of its Table 2.1 / 2.2).
#pragma once

#include "blas.hpp"
#include "lapack.hpp"
#include "triangular.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ferro::linalg {

// exp(A) in place for one n x n row-major matrix. `work` holds 6 n^2 elements, `ipiv` n.
template <class T> void expm(T* a, int64_t n, T* work, lapack_int* ipiv) {
    using R = lapack::Real<T>;
    const int64_t nn = n * n;
    T *A2 = work, *A4 = work + nn, *A6 = work + 2 * nn, *U = work + 3 * nn, *V = work + 4 * nn, *W = work + 5 * nn;
    auto mul = [n](const T* x, const T* y, T* z) { blas::gemm('N', 'N', n, n, n, T(1), x, n, y, n, T(0), z, n); };
    double norm = 0;  // 1-norm: the largest column sum
    for (int64_t j = 0; j < n; ++j) {
        double col = 0;
        for (int64_t i = 0; i < n; ++i) col += std::abs(a[i * n + j]);
        norm = std::max(norm, col);
    }
    static constexpr double b3[] = {120, 60, 12, 1};
    static constexpr double b5[] = {30240, 15120, 3360, 420, 30, 1};
    static constexpr double b7[] = {17297280, 8648640, 1995840, 277200, 25200, 1512, 56, 1};
    static constexpr double b9[] = {17643225600., 8821612800., 2075673600., 302702400., 30270240.,
                                    2162160.,     110880.,     3960.,       90.,        1.};
    static constexpr double b13[] = {64764752532480000.,
                                     32382376266240000.,
                                     7771770303897600.,
                                     1187353796428800.,
                                     129060195264000.,
                                     10559470521600.,
                                     670442572800.,
                                     33522128640.,
                                     1323241920.,
                                     40840800.,
                                     960960.,
                                     16380.,
                                     182.,
                                     1.};
    constexpr bool single = std::is_same_v<R, float>;
    const double theta[] = {single ? 4.258730016922831e-1 : 1.495585217958292e-2,
                            single ? 1.880152677804762e0 : 2.539398330063230e-1,
                            single ? 3.925724783138660e0 : 9.504178996162932e-1, 2.097847961257068e0, 5.371920351148152e0};
    const int degrees[] = {3, 5, 7, 9, 13};
    const int max_index = single ? 2 : 4;
    int index = 0;
    while (index < max_index && norm > theta[index]) ++index;
    int squarings = 0;
    if (norm > theta[index]) {  // scale A by 2^-s into the top degree's range
        squarings = std::max(0, static_cast<int>(std::ceil(std::log2(norm / theta[index]))));
        const R scale = std::ldexp(R(1), -squarings);
        for (int64_t i = 0; i < nn; ++i) a[i] *= scale;
    }
    const int m = degrees[index];
    const double* b = m == 3 ? b3 : m == 5 ? b5 : m == 7 ? b7 : m == 9 ? b9 : b13;
    auto eye_plus = [n, nn](T* out, double diag) {
        std::fill(out, out + nn, T(0));
        for (int64_t i = 0; i < n; ++i) out[i * n + i] = T(static_cast<R>(diag));
    };
    // out += c * x
    auto axpy = [nn](T* out, double c, const T* x) {
        const R s = static_cast<R>(c);
        for (int64_t i = 0; i < nn; ++i) out[i] += s * x[i];
    };
    mul(a, a, A2);
    if (m == 13) {
        mul(A2, A2, A4);
        mul(A4, A2, A6);
        // U = A [A6 (b13 A6 + b11 A4 + b9 A2) + b7 A6 + b5 A4 + b3 A2 + b1 I]
        std::fill(W, W + nn, T(0));
        axpy(W, b[13], A6), axpy(W, b[11], A4), axpy(W, b[9], A2);
        mul(A6, W, V);  // V as scratch
        eye_plus(W, b[1]);
        axpy(W, 1, V), axpy(W, b[7], A6), axpy(W, b[5], A4), axpy(W, b[3], A2);
        mul(a, W, U);
        // V = A6 (b12 A6 + b10 A4 + b8 A2) + b6 A6 + b4 A4 + b2 A2 + b0 I
        std::fill(W, W + nn, T(0));
        axpy(W, b[12], A6), axpy(W, b[10], A4), axpy(W, b[8], A2);
        mul(A6, W, V);
        for (int64_t i = 0; i < n; ++i) V[i * n + i] += T(static_cast<R>(b[0]));
        axpy(V, b[6], A6), axpy(V, b[4], A4), axpy(V, b[2], A2);
    } else {
        // Even powers A^0, A^2, ..., A^(m-1): U = A sum b[2j+1] A^2j, V = sum b[2j] A^2j.
        eye_plus(W, b[1]);
        eye_plus(V, b[0]);
        const T* power = A2;
        T* next = A4;
        for (int64_t j = 1; 2 * j < m; ++j) {
            axpy(W, b[2 * j + 1], power);
            axpy(V, b[2 * j], power);
            if (2 * (j + 1) < m) {
                mul(power, A2, next);
                power = next;
                next = next == A4 ? A6 : A4;
            }
        }
        mul(a, W, U);
    }
    // (V - U) X = (V + U): in column-major terms both are transposed, and as polynomials in A
    // they commute, so an LU solve on the row-major buffers gives X row-major.
    for (int64_t i = 0; i < nn; ++i) {
        const T u = U[i];
        U[i] = V[i] - u;  // P
        V[i] = V[i] + u;  // Q
    }
    const lapack_int ln = static_cast<lapack_int>(n), ld = std::max<lapack_int>(ln, 1);
    lapack::getrf(ln, ln, U, ld, ipiv);
    tri::lu_solve('N', n, n, U, ld, ipiv, V, ld);
    T* from = V;
    T* to = W;
    for (int s = 0; s < squarings; ++s) {
        mul(from, from, to);
        std::swap(from, to);
    }
    std::copy(from, from + nn, a);
}

}  // namespace ferro::linalg
