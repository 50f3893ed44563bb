// Triangular solves with several right-hand sides, op(A) X = B, column-major, and the LU solve
// built on them.
//
// Why not plain trsm/getrs: OpenBLAS 0.3.21's trsm kernels run at a fraction of its gemm speed
// (f64, one thread: n = 256 with 256 right-hand sides 16 GF/s against gemm's 67; a 64-row
// triangle 8.5 GF/s; one right-hand side 4 GF/s). Above kSplitRows rows
// we therefore split the triangle in halves, recursively, and apply the off-diagonal block as
// one gemm: the usual blocking of a level-3 triangular solve (same rounding-error bounds as the
// unblocked solve, Higham, Accuracy and Stability, §8.3), which leaves trsm only the diagonal
// blocks of at most kBaseRows rows. Measured against one trsm call on this machine (1 thread):
// n = 256: 0.70 with 256 right-hand sides, 0.49 with one; n = 512: 0.71; n = 1024: 0.82. Up to
// 128 rows the split does not pay (0.91-1.05), so those go to trsm directly. With one or two
// right-hand sides the level-2 trsv is faster still (kTrsvColumnsMax).
#pragma once

#include "lapack.hpp"

#include <cblas.h>

#include <cstdint>

namespace ferro::linalg::tri {

using lapack::c128;
using lapack::c64;

inline CBLAS_TRANSPOSE cblas_op(char t) { return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans; }

// Column-major C = alpha op(A) B + C and op(A) X = alpha B (A triangular, on the left).
inline void gemm_sub(char ta, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c, int ldc) {
    cblas_sgemm(CblasColMajor, cblas_op(ta), CblasNoTrans, m, n, k, -1.0f, a, lda, b, ldb, 1.0f, c, ldc);
}
inline void gemm_sub(char ta, int m, int n, int k, const double* a, int lda, const double* b, int ldb, double* c, int ldc) {
    cblas_dgemm(CblasColMajor, cblas_op(ta), CblasNoTrans, m, n, k, -1.0, a, lda, b, ldb, 1.0, c, ldc);
}
inline void gemm_sub(char ta, int m, int n, int k, const c64* a, int lda, const c64* b, int ldb, c64* c, int ldc) {
    const c64 minus(-1), one(1);
    cblas_cgemm(CblasColMajor, cblas_op(ta), CblasNoTrans, m, n, k, &minus, a, lda, b, ldb, &one, c, ldc);
}
inline void gemm_sub(char ta, int m, int n, int k, const c128* a, int lda, const c128* b, int ldb, c128* c, int ldc) {
    const c128 minus(-1), one(1);
    cblas_zgemm(CblasColMajor, cblas_op(ta), CblasNoTrans, m, n, k, &minus, a, lda, b, ldb, &one, c, ldc);
}

inline CBLAS_UPLO cblas_uplo(char u) { return u == 'L' ? CblasLower : CblasUpper; }
inline CBLAS_DIAG cblas_diag(char d) { return d == 'U' ? CblasUnit : CblasNonUnit; }

inline void trsm(char uplo, char t, char diag, int n, int k, const float* a, int lda, float* b, int ldb) {
    cblas_strsm(CblasColMajor, CblasLeft, cblas_uplo(uplo), cblas_op(t), cblas_diag(diag), n, k, 1.0f, a, lda, b, ldb);
}
inline void trsm(char uplo, char t, char diag, int n, int k, const double* a, int lda, double* b, int ldb) {
    cblas_dtrsm(CblasColMajor, CblasLeft, cblas_uplo(uplo), cblas_op(t), cblas_diag(diag), n, k, 1.0, a, lda, b, ldb);
}
inline void trsm(char uplo, char t, char diag, int n, int k, const c64* a, int lda, c64* b, int ldb) {
    const c64 one(1);
    cblas_ctrsm(CblasColMajor, CblasLeft, cblas_uplo(uplo), cblas_op(t), cblas_diag(diag), n, k, &one, a, lda, b, ldb);
}
inline void trsm(char uplo, char t, char diag, int n, int k, const c128* a, int lda, c128* b, int ldb) {
    const c128 one(1);
    cblas_ztrsm(CblasColMajor, CblasLeft, cblas_uplo(uplo), cblas_op(t), cblas_diag(diag), n, k, &one, a, lda, b, ldb);
}

inline void trsv(char uplo, char t, char diag, int n, const float* a, int lda, float* x) {
    cblas_strsv(CblasColMajor, cblas_uplo(uplo), cblas_op(t), cblas_diag(diag), n, a, lda, x, 1);
}
inline void trsv(char uplo, char t, char diag, int n, const double* a, int lda, double* x) {
    cblas_dtrsv(CblasColMajor, cblas_uplo(uplo), cblas_op(t), cblas_diag(diag), n, a, lda, x, 1);
}
inline void trsv(char uplo, char t, char diag, int n, const c64* a, int lda, c64* x) {
    cblas_ctrsv(CblasColMajor, cblas_uplo(uplo), cblas_op(t), cblas_diag(diag), n, a, lda, x, 1);
}
inline void trsv(char uplo, char t, char diag, int n, const c128* a, int lda, c128* x) {
    cblas_ztrsv(CblasColMajor, cblas_uplo(uplo), cblas_op(t), cblas_diag(diag), n, a, lda, x, 1);
}

// Up to this many right-hand sides, one trsv per column beats trsm (f64, one thread, 'T'):
// with one, 0.54x trsm's time at n = 64, 0.34x at 256, 0.18x at 1024; with two 0.34-0.83x;
// with four only from n = 256 on, and with eight never.
inline constexpr int kTrsvColumnsMax = 2;
inline constexpr int kSplitRows = 128;  // larger triangles are split
inline constexpr int kBaseRows = 64;    // ... down to diagonal blocks of at most this many rows

// op(A) X = B for the n x n triangle `uplo` of a (lda), op = 'N', 'T' or 'C', diag 'U' = unit.
// B (n x k, ldb) is overwritten by X. Recurses on halves; see the file comment.
template <class T> void split_solve(char uplo, char t, char diag, int n, int k, const T* a, int lda, T* b, int ldb) {
    if (n <= kBaseRows) return trsm(uplo, t, diag, n, k, a, lda, b, ldb);
    const int h = n / 2;
    const T* a11 = a;
    const T* a22 = a + h + static_cast<int64_t>(h) * lda;
    // The off-diagonal block of op(A): A's own lower block below the diagonal (a + h) or its
    // upper block right of it (a + h lda), transposed by op where op swaps the triangles.
    const T* off = uplo == 'L' ? a + h : a + static_cast<int64_t>(h) * lda;
    T* b1 = b;
    T* b2 = b + h;
    if ((uplo == 'L') == (t == 'N')) {  // op(A) lower: forward substitution
        split_solve(uplo, t, diag, h, k, a11, lda, b1, ldb);
        gemm_sub(t, n - h, k, h, off, lda, b1, ldb, b2, ldb);  // B2 -= op(A)21 X1
        split_solve(uplo, t, diag, n - h, k, a22, lda, b2, ldb);
    } else {  // op(A) upper: back substitution
        split_solve(uplo, t, diag, n - h, k, a22, lda, b2, ldb);
        gemm_sub(t, h, k, n - h, off, lda, b2, ldb, b1, ldb);  // B1 -= op(A)12 X2
        split_solve(uplo, t, diag, h, k, a11, lda, b1, ldb);
    }
}

template <class T> void solve(char uplo, char t, char diag, int64_t n, int64_t k, const T* a, int64_t lda, T* b, int64_t ldb) {
    if (n == 0 || k == 0) return;
    const int in = static_cast<int>(n), ik = static_cast<int>(k), ia = static_cast<int>(lda), ib = static_cast<int>(ldb);
    if (k <= kTrsvColumnsMax) {
        for (int64_t j = 0; j < k; ++j) trsv(uplo, t, diag, in, a, ia, b + j * ldb);
        return;
    }
    if (n <= kSplitRows) return trsm(uplo, t, diag, in, ik, a, ia, b, ib);
    split_solve(uplo, t, diag, in, ik, a, ia, b, ib);
}

inline void laswp(int k, float* b, int ldb, int n, const lapack_int* p, int inc) {
    LAPACKE_slaswp_work(lapack::col, k, b, ldb, 1, n, p, inc);
}
inline void laswp(int k, double* b, int ldb, int n, const lapack_int* p, int inc) {
    LAPACKE_dlaswp_work(lapack::col, k, b, ldb, 1, n, p, inc);
}
inline void laswp(int k, c64* b, int ldb, int n, const lapack_int* p, int inc) {
    LAPACKE_claswp_work(lapack::col, k, b, ldb, 1, n, p, inc);
}
inline void laswp(int k, c128* b, int ldb, int n, const lapack_int* p, int inc) {
    LAPACKE_zlaswp_work(lapack::col, k, b, ldb, 1, n, p, inc);
}

// getrs with the triangular solves above: op(A) X = B from getrf's A = P L U (a, lda, piv).
template <class T>
void lu_solve(char t, int64_t n, int64_t k, const T* a, int64_t lda, const lapack_int* piv, T* b, int64_t ldb) {
    if (n == 0 || k == 0) return;
    const int in = static_cast<int>(n), ik = static_cast<int>(k), ib = static_cast<int>(ldb);
    if (t == 'N') {  // L U X = P^T B
        laswp(ik, b, ib, in, piv, 1);
        solve('L', 'N', 'U', n, k, a, lda, b, ldb);
        solve('U', 'N', 'N', n, k, a, lda, b, ldb);
        return;
    }
    // U^T L^T P^T X = B (or ^H): X = P L^-T U^-T B.
    solve('U', t, 'N', n, k, a, lda, b, ldb);
    solve('L', t, 'U', n, k, a, lda, b, ldb);
    laswp(ik, b, ib, in, piv, -1);
}

}  // namespace ferro::linalg::tri
