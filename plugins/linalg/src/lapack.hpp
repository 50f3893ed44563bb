// Typed entry points to the LAPACK routines the linalg module uses: one overload set per
// routine over float, double, complex<float> and complex<double>, so the executors are written
// once as templates. Everything is column-major (LAPACKE's *_work functions with
// LAPACK_COL_MAJOR pass straight through to LAPACK, with no layout copies of their own).
// Workspace sizes come from the routines' own queries (lwork = -1), done once per plan.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

#define lapack_complex_float std::complex<float>
#define lapack_complex_double std::complex<double>
#include <lapacke.h>

namespace ferro::linalg::lapack {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

template <class T> struct RealOf { using type = T; };
template <class T> struct RealOf<std::complex<T>> { using type = T; };
template <class T> using Real = typename RealOf<T>::type;
template <class T> inline constexpr bool is_complex_v = !std::is_same_v<T, Real<T>>;

constexpr int col = LAPACK_COL_MAJOR;

// Elements to allocate beyond a matrix that LAPACK's BLAS calls read. OpenBLAS 0.3.21's AVX
// zgemv_n kernels (the Sandybridge, Haswell and newer ones: OpenBLAS picks them wherever it
// recognises the CPU, Prescott's where it does not) read 16 bytes past the matrix they are
// given: valgrind, "0 bytes after a block of size 192" in zgemv_n_HASWELL from zlarf inside the
// zgesdd of a 3 x 4 matrix; under ASan the process faults. One cache line covers it. (The
// per-matrix scratch carves 64-byte aligned pieces and ends with a cache line of slack.)
template <class T> inline constexpr size_t kOverreadPad = 64 / sizeof(T);

// LU with partial pivoting: A = P L U.
// Overload sets, one type per line (kept as laid out).
// clang-format off
inline lapack_int getrf(lapack_int m, lapack_int n, float* a, lapack_int lda, lapack_int* p) { return LAPACKE_sgetrf_work(col, m, n, a, lda, p); }
inline lapack_int getrf(lapack_int m, lapack_int n, double* a, lapack_int lda, lapack_int* p) { return LAPACKE_dgetrf_work(col, m, n, a, lda, p); }
inline lapack_int getrf(lapack_int m, lapack_int n, c64* a, lapack_int lda, lapack_int* p) { return LAPACKE_cgetrf_work(col, m, n, a, lda, p); }
inline lapack_int getrf(lapack_int m, lapack_int n, c128* a, lapack_int lda, lapack_int* p) { return LAPACKE_zgetrf_work(col, m, n, a, lda, p); }

// Inverse from the factors of getrf.
inline lapack_int getri(lapack_int n, float* a, lapack_int lda, const lapack_int* p, float* w, lapack_int lw) { return LAPACKE_sgetri_work(col, n, a, lda, p, w, lw); }
inline lapack_int getri(lapack_int n, double* a, lapack_int lda, const lapack_int* p, double* w, lapack_int lw) { return LAPACKE_dgetri_work(col, n, a, lda, p, w, lw); }
inline lapack_int getri(lapack_int n, c64* a, lapack_int lda, const lapack_int* p, c64* w, lapack_int lw) { return LAPACKE_cgetri_work(col, n, a, lda, p, w, lw); }
inline lapack_int getri(lapack_int n, c128* a, lapack_int lda, const lapack_int* p, c128* w, lapack_int lw) { return LAPACKE_zgetri_work(col, n, a, lda, p, w, lw); }

// Cholesky: A = L L^H (uplo 'L') or U^H U ('U').
inline lapack_int potrf(char uplo, lapack_int n, float* a, lapack_int lda) { return LAPACKE_spotrf_work(col, uplo, n, a, lda); }
inline lapack_int potrf(char uplo, lapack_int n, double* a, lapack_int lda) { return LAPACKE_dpotrf_work(col, uplo, n, a, lda); }
inline lapack_int potrf(char uplo, lapack_int n, c64* a, lapack_int lda) { return LAPACKE_cpotrf_work(col, uplo, n, a, lda); }
inline lapack_int potrf(char uplo, lapack_int n, c128* a, lapack_int lda) { return LAPACKE_zpotrf_work(col, uplo, n, a, lda); }

// Householder QR: R in the upper triangle, reflectors below it and in tau.
inline lapack_int geqrf(lapack_int m, lapack_int n, float* a, lapack_int lda, float* tau, float* w, lapack_int lw) { return LAPACKE_sgeqrf_work(col, m, n, a, lda, tau, w, lw); }
inline lapack_int geqrf(lapack_int m, lapack_int n, double* a, lapack_int lda, double* tau, double* w, lapack_int lw) { return LAPACKE_dgeqrf_work(col, m, n, a, lda, tau, w, lw); }
inline lapack_int geqrf(lapack_int m, lapack_int n, c64* a, lapack_int lda, c64* tau, c64* w, lapack_int lw) { return LAPACKE_cgeqrf_work(col, m, n, a, lda, tau, w, lw); }
inline lapack_int geqrf(lapack_int m, lapack_int n, c128* a, lapack_int lda, c128* tau, c128* w, lapack_int lw) { return LAPACKE_zgeqrf_work(col, m, n, a, lda, tau, w, lw); }

// The first n columns of Q from geqrf's reflectors (orgqr / ungqr).
inline lapack_int ungqr(lapack_int m, lapack_int n, lapack_int k, float* a, lapack_int lda, const float* tau, float* w, lapack_int lw) { return LAPACKE_sorgqr_work(col, m, n, k, a, lda, tau, w, lw); }
inline lapack_int ungqr(lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda, const double* tau, double* w, lapack_int lw) { return LAPACKE_dorgqr_work(col, m, n, k, a, lda, tau, w, lw); }
inline lapack_int ungqr(lapack_int m, lapack_int n, lapack_int k, c64* a, lapack_int lda, const c64* tau, c64* w, lapack_int lw) { return LAPACKE_cungqr_work(col, m, n, k, a, lda, tau, w, lw); }
inline lapack_int ungqr(lapack_int m, lapack_int n, lapack_int k, c128* a, lapack_int lda, const c128* tau, c128* w, lapack_int lw) { return LAPACKE_zungqr_work(col, m, n, k, a, lda, tau, w, lw); }

// Hermitian eigendecomposition, divide and conquer (syevd / heevd). rwork is unused for real.
inline lapack_int heevd(char jobz, char uplo, lapack_int n, float* a, lapack_int lda, float* w, float* wk, lapack_int lwk, float*, lapack_int, lapack_int* iw, lapack_int liw) { return LAPACKE_ssyevd_work(col, jobz, uplo, n, a, lda, w, wk, lwk, iw, liw); }
inline lapack_int heevd(char jobz, char uplo, lapack_int n, double* a, lapack_int lda, double* w, double* wk, lapack_int lwk, double*, lapack_int, lapack_int* iw, lapack_int liw) { return LAPACKE_dsyevd_work(col, jobz, uplo, n, a, lda, w, wk, lwk, iw, liw); }
inline lapack_int heevd(char jobz, char uplo, lapack_int n, c64* a, lapack_int lda, float* w, c64* wk, lapack_int lwk, float* rw, lapack_int lrw, lapack_int* iw, lapack_int liw) { return LAPACKE_cheevd_work(col, jobz, uplo, n, a, lda, w, wk, lwk, rw, lrw, iw, liw); }
inline lapack_int heevd(char jobz, char uplo, lapack_int n, c128* a, lapack_int lda, double* w, c128* wk, lapack_int lwk, double* rw, lapack_int lrw, lapack_int* iw, lapack_int liw) { return LAPACKE_zheevd_work(col, jobz, uplo, n, a, lda, w, wk, lwk, rw, lrw, iw, liw); }

// General eigendecomposition (right eigenvectors only). Real matrices return eigenvalues as
// (wr, wi) and complex-conjugate eigenvector pairs packed as two real columns.
inline lapack_int geev(char jobvr, lapack_int n, float* a, lapack_int lda, float* wr, float* wi, float* vr, lapack_int ldvr, float* w, lapack_int lw) { return LAPACKE_sgeev_work(col, 'N', jobvr, n, a, lda, wr, wi, nullptr, 1, vr, ldvr, w, lw); }
inline lapack_int geev(char jobvr, lapack_int n, double* a, lapack_int lda, double* wr, double* wi, double* vr, lapack_int ldvr, double* w, lapack_int lw) { return LAPACKE_dgeev_work(col, 'N', jobvr, n, a, lda, wr, wi, nullptr, 1, vr, ldvr, w, lw); }
inline lapack_int geev(char jobvr, lapack_int n, c64* a, lapack_int lda, c64* ev, c64* vr, lapack_int ldvr, c64* w, lapack_int lw, float* rw) { return LAPACKE_cgeev_work(col, 'N', jobvr, n, a, lda, ev, nullptr, 1, vr, ldvr, w, lw, rw); }
inline lapack_int geev(char jobvr, lapack_int n, c128* a, lapack_int lda, c128* ev, c128* vr, lapack_int ldvr, c128* w, lapack_int lw, double* rw) { return LAPACKE_zgeev_work(col, 'N', jobvr, n, a, lda, ev, nullptr, 1, vr, ldvr, w, lw, rw); }

// SVD, divide and conquer. rwork is unused for real.
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, float* a, lapack_int lda, float* s, float* u, lapack_int ldu, float* vt, lapack_int ldvt, float* wk, lapack_int lwk, float*, lapack_int* iw) { return LAPACKE_sgesdd_work(col, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, wk, lwk, iw); }
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, double* a, lapack_int lda, double* s, double* u, lapack_int ldu, double* vt, lapack_int ldvt, double* wk, lapack_int lwk, double*, lapack_int* iw) { return LAPACKE_dgesdd_work(col, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, wk, lwk, iw); }
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, c64* a, lapack_int lda, float* s, c64* u, lapack_int ldu, c64* vt, lapack_int ldvt, c64* wk, lapack_int lwk, float* rw, lapack_int* iw) { return LAPACKE_cgesdd_work(col, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, wk, lwk, rw, iw); }
inline lapack_int gesdd(char jobz, lapack_int m, lapack_int n, c128* a, lapack_int lda, double* s, c128* u, lapack_int ldu, c128* vt, lapack_int ldvt, c128* wk, lapack_int lwk, double* rw, lapack_int* iw) { return LAPACKE_zgesdd_work(col, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, wk, lwk, rw, iw); }

// Least squares through the SVD, divide and conquer: B's first n rows become the minimum-norm
// solution; s the singular values; rank the effective rank under rcond. rwork unused for real.
inline lapack_int gelsd(lapack_int m, lapack_int n, lapack_int k, float* a, lapack_int lda, float* b, lapack_int ldb, float* s, float rcond, lapack_int* rank, float* w, lapack_int lw, float*, lapack_int* iw) { return LAPACKE_sgelsd_work(col, m, n, k, a, lda, b, ldb, s, rcond, rank, w, lw, iw); }
inline lapack_int gelsd(lapack_int m, lapack_int n, lapack_int k, double* a, lapack_int lda, double* b, lapack_int ldb, double* s, double rcond, lapack_int* rank, double* w, lapack_int lw, double*, lapack_int* iw) { return LAPACKE_dgelsd_work(col, m, n, k, a, lda, b, ldb, s, rcond, rank, w, lw, iw); }
inline lapack_int gelsd(lapack_int m, lapack_int n, lapack_int k, c64* a, lapack_int lda, c64* b, lapack_int ldb, float* s, float rcond, lapack_int* rank, c64* w, lapack_int lw, float* rw, lapack_int* iw) { return LAPACKE_cgelsd_work(col, m, n, k, a, lda, b, ldb, s, rcond, rank, w, lw, rw, iw); }
inline lapack_int gelsd(lapack_int m, lapack_int n, lapack_int k, c128* a, lapack_int lda, c128* b, lapack_int ldb, double* s, double rcond, lapack_int* rank, c128* w, lapack_int lw, double* rw, lapack_int* iw) { return LAPACKE_zgelsd_work(col, m, n, k, a, lda, b, ldb, s, rcond, rank, w, lw, rw, iw); }
// clang-format on

// A workspace size a query reported (in the first element of its work array).
template <class T> int64_t query_size(T v) {
    if constexpr (is_complex_v<T>) return static_cast<int64_t>(v.real());
    else return static_cast<int64_t>(v);
}

}  // namespace ferro::linalg::lapack
