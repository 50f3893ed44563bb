// Typed row-major matrix products over cblas (OpenBLAS), for the executors that compose
// results from products (matrix_exp, pinv): C = alpha op(A) op(B) + beta C.
#pragma once

#include <cblas.h>

#include <complex>
#include <cstdint>

namespace ferro::linalg::blas {

inline CBLAS_TRANSPOSE op(char t) { return t == 'N' ? CblasNoTrans : t == 'T' ? CblasTrans : CblasConjTrans; }

inline void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float beta, float* c, int64_t ldc) {
    cblas_sgemm(CblasRowMajor, op(ta), op(tb), static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}
inline void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda, const double* b,
                 int64_t ldb, double beta, double* c, int64_t ldc) {
    cblas_dgemm(CblasRowMajor, op(ta), op(tb), static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}
inline void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, std::complex<float> alpha, const std::complex<float>* a,
                 int64_t lda, const std::complex<float>* b, int64_t ldb, std::complex<float> beta, std::complex<float>* c,
                 int64_t ldc) {
    cblas_cgemm(CblasRowMajor, op(ta), op(tb), static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), &beta, c, static_cast<int>(ldc));
}
inline void gemm(char ta, char tb, int64_t m, int64_t n, int64_t k, std::complex<double> alpha, const std::complex<double>* a,
                 int64_t lda, const std::complex<double>* b, int64_t ldb, std::complex<double> beta, std::complex<double>* c,
                 int64_t ldc) {
    cblas_zgemm(CblasRowMajor, op(ta), op(tb), static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &alpha, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), &beta, c, static_cast<int>(ldc));
}

}  // namespace ferro::linalg::blas
