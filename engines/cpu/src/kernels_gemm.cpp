// gemm_batched through OpenBLAS's cblas. Strided operands map to row-major cblas calls with a
// transpose flag whenever one of their strides is 1; an operand BLAS cannot describe (no unit
// stride, or conjugation without transposition) is copied to a packed temporary first.
#include "blas_backend.hpp"
#include "blas_threads.hpp"
#include "elementwise.hpp"
#include "small_gemm.hpp"

#include <cblas.h>

#include <algorithm>
#include <vector>

namespace ferro::cpu {
namespace {

// One operand as cblas sees it: r x c matrix, row-major storage with leading dimension ld,
// possibly transposed and/or conjugated.
template <class T> struct BlasMatrix {
    const T* data;
    int64_t ld;
    CBLAS_TRANSPOSE trans;
};

// Describes X (rows x cols, element strides rs/cs) for cblas, packing into `scratch` when the
// layout or the conjugation cannot be expressed.
template <class T>
BlasMatrix<T> describe(const T* x, int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool conj, std::vector<T>& scratch) {
    const bool row_major = cs == 1 || cols == 1;
    const bool col_major = rs == 1 || rows == 1;
    if (row_major && !conj && (rows == 1 || rs >= std::max<int64_t>(cols, 1))) {
        return {x, rows == 1 ? std::max<int64_t>(cols, 1) : rs, CblasNoTrans};
    }
    if (col_major && (cols == 1 || cs >= std::max<int64_t>(rows, 1))) {
        return {x, cols == 1 ? std::max<int64_t>(rows, 1) : cs, conj ? CblasConjTrans : CblasTrans};
    }
    scratch.resize(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < cols; ++j) {
            T v = x[i * rs + j * cs];
            if constexpr (is_complex_v<T>)
                if (conj) v = std::conj(v);
            scratch[static_cast<size_t>(i * cols + j)] = v;
        }
    }
    return {scratch.data(), std::max<int64_t>(cols, 1), CblasNoTrans};
}

template <class T>
void call_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, T alpha, const BlasMatrix<T>& a,
               const BlasMatrix<T>& b, T beta, T* c, int64_t ldc) {
    const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
    const auto lda = static_cast<blasint>(a.ld), ldb = static_cast<blasint>(b.ld);
    const auto ldc_ = static_cast<blasint>(ldc);
    if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a.data, lda, b.data, ldb, beta, c, ldc_);
    } else if constexpr (std::is_same_v<T, double>) {
        cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, a.data, lda, b.data, ldb, beta, c, ldc_);
    } else if constexpr (std::is_same_v<T, c64>) {
        cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &alpha, a.data, lda, b.data, ldb, &beta, c, ldc_);
    } else {
        cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &alpha, a.data, lda, b.data, ldb, &beta, c, ldc_);
    }
}

template <class T> T scalar_of(const ferro_scalar& s) {
    if constexpr (is_complex_v<T>) return T(static_cast<real_t<T>>(s.real), static_cast<real_t<T>>(s.imag));
    else return static_cast<T>(s.real);
}

template <class T> void blas_gemm(const ferro_gemm_args& g, T alpha, T beta, int64_t p0, int64_t p1) {
    // A column-major C is computed as C^T = B^T A^T, which swaps the operands' roles.
    const bool swap = !(g.c.col_stride == 1 || g.n == 1) && (g.c.row_stride == 1 || g.m == 1);
    const ferro_gemm_operand& A = swap ? g.b : g.a;
    const ferro_gemm_operand& B = swap ? g.a : g.b;
    const bool conj_a = swap ? g.conj_b : g.conj_a, conj_b = swap ? g.conj_a : g.conj_b;
    const int64_t m = swap ? g.n : g.m, n = swap ? g.m : g.n, k = g.k;
    const int64_t a_rs = swap ? A.col_stride : A.row_stride, a_cs = swap ? A.row_stride : A.col_stride;
    const int64_t b_rs = swap ? B.col_stride : B.row_stride, b_cs = swap ? B.row_stride : B.col_stride;
    const int64_t c_rs = swap ? g.c.col_stride : g.c.row_stride;
    const int64_t c_cs = swap ? g.c.row_stride : g.c.col_stride;
    const bool c_direct = (c_cs == 1 || n == 1) && (m == 1 || c_rs >= std::max<int64_t>(n, 1));
    std::vector<T> sa, sb, sc;
    for (int64_t p = p0; p < p1; ++p) {
        const T* a = static_cast<const T*>(A.data) + p * A.batch_stride;
        const T* b = static_cast<const T*>(B.data) + p * B.batch_stride;
        T* c = static_cast<T*>(g.c.data) + p * g.c.batch_stride;
        auto c_at = [&](int64_t i, int64_t j) -> T& { return c[i * c_rs + j * c_cs]; };
        if (k == 0) {  // C = beta * C, never reading C when beta is 0
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) c_at(i, j) = beta == T(0) ? T(0) : beta * c_at(i, j);
            continue;
        }
        const auto ma = describe(a, m, k, a_rs, a_cs, conj_a, sa);
        const auto mb = describe(b, k, n, b_rs, b_cs, conj_b, sb);
        if (c_direct) {
            call_gemm<T>(ma.trans, mb.trans, m, n, k, alpha, ma, mb, beta, c, m == 1 ? std::max<int64_t>(n, 1) : c_rs);
            continue;
        }
        sc.assign(static_cast<size_t>(m * n), T(0));
        if (beta != T(0)) {
            for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) sc[static_cast<size_t>(i * n + j)] = c_at(i, j);
        }
        call_gemm<T>(ma.trans, mb.trans, m, n, k, alpha, ma, mb, beta, sc.data(), n);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) c_at(i, j) = sc[static_cast<size_t>(i * n + j)];
    }
}

// OpenBLAS runs a product of at most this many multiply-adds on the calling thread
// (GEMM_MULTITHREAD_THRESHOLD x SMP_THRESHOLD_MIN), so a batch of them can be spread over the
// engine's pool without two thread pools fighting for the cores (other BLAS are held at one
// thread for it).
constexpr int64_t kSingleThreadedBlas = int64_t{4} * 65536;
// Multiply-adds below which a batch stays on the calling thread (waking the pool costs more).
constexpr int64_t kParallelBatchWork = int64_t{1} << 18;
// Multiply-adds above which one product on the engine's own kernel is split over the pool.
// With a sleeping pool (a wake-up costs tens of microseconds) 24 x 54 x 281 took 3x longer
// split; with the pool spinning between regions (thread_pool.cpp) products from ~2^19 gain
// (Intel Xeon, two cores: 21 x 300 x 300 in 88 us split against 122 on one thread in one run,
// a chain of 99 steps of 21 x ~400 x ~400, str_matrix_chain_multiplication_100, 15.5 -> 10.8 ms).
constexpr int64_t kSplitProductWork = int64_t{1} << 19;
// Multiply-adds per product above which BLAS threading one product at a time is as fast.
constexpr int64_t kParallelBatchMaxWork = int64_t{1} << 27;

// Rows [start, start + size) of C (by_rows) or its columns, as a product of its own.
template <class T> ferro_gemm_args slice(const ferro_gemm_args& g, bool by_rows, int64_t start, int64_t size) {
    ferro_gemm_args s = g;
    if (by_rows) {
        s.m = size;
        s.a.data = static_cast<T*>(g.a.data) + start * g.a.row_stride;
        s.c.data = static_cast<T*>(g.c.data) + start * g.c.row_stride;
    } else {
        s.n = size;
        s.b.data = static_cast<T*>(g.b.data) + start * g.b.col_stride;
        s.c.data = static_cast<T*>(g.c.data) + start * g.c.col_stride;
    }
    return s;
}

template <class T> void gemm_typed(Engine& e, const ferro_gemm_args& g) {
    const T alpha = scalar_of<T>(g.alpha), beta = scalar_of<T>(g.beta);
    const int64_t work = g.m * g.n * std::max<int64_t>(g.k, 1);
    const bool small = takes_small_gemm(g, is_complex_v<T>);
    const auto range = [&](int64_t p0, int64_t p1) {
        if (small) small_gemm<T>(g, alpha, beta, p0, p1);
        else blas_gemm<T>(g, alpha, beta, p0, p1);
    };
    // One large product (or fewer than the pool has threads) on the engine's kernel: split its
    // rows, or its columns, over the pool.
    if (small && g.batch < e.pool->size() && g.batch * work >= kSplitProductWork && e.pool->size() > 1) {
        const bool by_rows = g.m >= g.n;
        const int64_t extent = by_rows ? g.m : g.n, unit = by_rows ? kSmallGemmRows : kSmallGemmColumns;
        const int64_t pieces = std::min<int64_t>(e.pool->size(), (extent + unit - 1) / unit);
        if (pieces > 1) {
            const int64_t per = (extent + pieces - 1) / pieces;
            const int64_t chunk = (per + unit - 1) / unit * unit;
            e.pool->parallel_for(pieces, 1, [&](int64_t q0, int64_t q1) {
                for (int64_t q = q0; q < q1; ++q) {
                    const int64_t start = q * chunk, size = std::min(chunk, extent - start);
                    if (size <= 0) continue;
                    small_gemm<T>(slice<T>(g, by_rows, start, size), alpha, beta, 0, g.batch);
                }
            });
            return;
        }
    }
    if (g.batch > 1 && work <= kSingleThreadedBlas && g.batch * work >= kParallelBatchWork && e.pool->size() > 1) {
        // OpenBLAS keeps these products on their pool threads by itself; MKL threads smaller
        // ones, which the hold stops.
        const OneBlasThread one_thread(!small && blas_backend().name != "OpenBLAS");
        e.pool->parallel_for(g.batch, std::max<int64_t>(1, kParallelBatchWork / (4 * work)), range);
        return;
    }
    // Mid-sized products, at least one per pool thread: one product per thread with BLAS on
    // one thread beats BLAS threading each product in turn (its workers are woken per call):
    // 32 x 128^3 f64 on two cores in 1.3 ms against 2.2 ms. From ~512^3 BLAS threads as well;
    // the engine's kernel does not, so its products always spread over the pool.
    if (work > kSingleThreadedBlas && (small || work <= kParallelBatchMaxWork) && g.batch >= e.pool->size() &&
        e.pool->size() > 1) {
        const OneBlasThread one_thread;
        e.pool->parallel_for(g.batch, 1, range);
        return;
    }
    range(0, g.batch);
}

}  // namespace

ferro_status gemm_batched(Engine& e, const ferro_gemm_args& g) {
    if (g.batch < 0 || g.m < 0 || g.n < 0 || g.k < 0) {
        return unsupported(e, "gemm_batched", "negative sizes");
    }
    if (g.batch == 0 || g.m == 0 || g.n == 0) return nullptr;
    switch (g.dtype) {
        case FERRO_DTYPE_F32: gemm_typed<float>(e, g); return nullptr;
        case FERRO_DTYPE_F64: gemm_typed<double>(e, g); return nullptr;
        case FERRO_DTYPE_C64: gemm_typed<c64>(e, g); return nullptr;
        case FERRO_DTYPE_C128: gemm_typed<c128>(e, g); return nullptr;
        default: return unsupported(e, "gemm_batched", "this dtype (f32, f64, c64, c128 only)");
    }
}

}  // namespace ferro::cpu
