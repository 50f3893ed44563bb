// The cpu module's plans: geometry and LAPACK workspace sizes worked out once in prepare, and
// the executor that runs them over a batch of matrices.
//
// Layout: a row-major matrix A, read by column-major LAPACK, is A^T. Most executors gather
// their input row-major into scratch (one packed copy, which LAPACK needs anyway because it
// overwrites its input) and factor M = A^T, choosing the routine's options so that the
// results come out row-major without transposing copies: solve is an LU solve with trans = 'T', the
// SVD of M holds Vh and U of A in its U and Vt. Where that costs more than two transposing
// copies (LU and eig, whose pivoting and order must act on A itself; QR, where gelqf is 1.6x
// slower than geqrf; lower Cholesky, where potrf 'U' is 1.6-2.3x slower than 'L'; eigh, whose
// heevd 'U' is 1-2% slower than 'L') the executor factors a column-major copy of A instead.
#include "blas.hpp"
#include "expm.hpp"
#include "inverse_gaps.hpp"
#include "lapack.hpp"
#include "linalg.hpp"
#include "lstsq.hpp"
#include "matrix_io.hpp"
#include "matrix_norm.hpp"
#include "triangular.hpp"
#include "vector_norm.hpp"

#include <ferro/cpu_context.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <tuple>

namespace ferro::linalg {
namespace {

using lapack::Real;

int64_t itemsize(ferro_dtype d) { return FERRO_DTYPE_BITS(d) / 8; }
int64_t align64(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// Carves typed arrays out of one per-matrix scratch block, in a fixed order.
class Carver {
public:
    explicit Carver(void* base) : at_(static_cast<char*>(base)) {}
    template <class U> U* take(int64_t count) {
        U* p = reinterpret_cast<U*>(at_);
        at_ += align64(count * static_cast<int64_t>(sizeof(U)));
        return p;
    }

private:
    char* at_;
};

// Scratch bytes of the arrays an op carves, given the plan's sizes (the same order as run()).
int64_t scratch_bytes(const Plan& p) {
    const int64_t t = itemsize(p.dtype), r = itemsize(real_dtype(p.dtype)), i = sizeof(lapack_int);
    const int64_t m = p.m, n = p.n, k = p.k;
    if (p.op == Op::pinv) {  // the decomposition's, then the scaled factor and the product
        Plan d = p;
        d.op = p.lapack_op();
        return scratch_bytes(d) + align64(std::max(m, n) * std::max(m, n) * t) + align64(n * m * t);
    }
    switch (p.lapack_op()) {
        case Op::solve: case Op::solve_with_lu: return align64(n * n * t) + align64(n * k * t) + align64(n * i);
        case Op::inv: return align64(n * n * t) + align64(n * i) + align64(p.lwork * t);
        case Op::det: case Op::slogdet: return align64(n * n * t) + align64(n * i);
        case Op::cholesky: return align64(n * n * t);
        case Op::qr: return align64(m * n * t) + align64(k * t) + align64(p.lwork * t) + align64(m * m * t);  // + full Q
        case Op::eigh: case Op::eigvalsh:
            return align64(n * n * t) + align64(n * r) + align64(p.lwork * t) + align64(p.lrwork * r) +
                   align64(p.liwork * i);
        case Op::svd: case Op::svdvals: {
            const int64_t ucols = p.full ? n : k, vrows = p.full ? m : k;
            return align64(m * n * t) + align64(k * r) + align64(n * ucols * t) + align64(vrows * m * t) +
                   align64(p.lwork * t) + align64(p.lrwork * r) + align64(p.liwork * i);
        }
        case Op::triangular_solve: return align64(n * n * t) + align64(n * k * t);
        case Op::lu_factor: case Op::lu: return align64(m * n * t) + align64(std::max(m, k) * i) + align64(m * i);
        case Op::lu_unpack: return align64(std::max(m, k) * i) + align64(m * i);  // pivots, permutation
        case Op::lu_solve: return align64(n * n * t) + align64(n * k * t) + align64(n * i);
        case Op::matrix_exp: return align64(n * n * t) + align64(6 * n * n * t) + align64(n * i);
        case Op::eig: case Op::eigvals:  // A, eigenvalues (2n reals or n complex), vectors, work, rwork
            return align64(n * n * t) + align64(2 * n * r) + align64(n * n * t) + align64(p.lwork * t) + align64(2 * n * r);
        default: break;
    }
    return 0;
}

// Workspace queries (lwork = -1) on the plan's geometry.
template <class T>
void query_workspace(Plan& p) {
    const lapack_int m = static_cast<lapack_int>(p.m), n = static_cast<lapack_int>(p.n), k = static_cast<lapack_int>(p.k);
    T w{};
    Real<T> rw{};
    lapack_int iw = 0;
    const Op op = p.lapack_op();
    switch (op) {
        case Op::inv:
            lapack::getri(n, nullptr, std::max(n, 1), nullptr, &w, -1);
            p.lwork = lapack::query_size(w);
            break;
        case Op::qr: {
            // geqrf on A (m x n), then the first k (reduced) or m (complete) columns of Q.
            lapack::geqrf(m, n, nullptr, std::max(m, 1), nullptr, &w, -1);
            int64_t need = lapack::query_size(w);
            const lapack_int q_cols = p.qr_mode == QrMode::complete ? m : k;
            if (p.qr_mode != QrMode::r && q_cols > 0) {
                lapack::ungqr(m, q_cols, k, nullptr, std::max(m, 1), nullptr, &w, -1);
                need = std::max(need, lapack::query_size(w));
            }
            p.lwork = std::max<int64_t>(need, 1);
            break;
        }
        case Op::eigh: case Op::eigvalsh:
            lapack::heevd(op == Op::eigh ? 'V' : 'N', 'U', n, nullptr, std::max(n, 1), nullptr, &w, -1, &rw, -1,
                          &iw, -1);
            p.lwork = std::max<int64_t>(lapack::query_size(w), 1);
            p.lrwork = lapack::is_complex_v<T> ? std::max<int64_t>(static_cast<int64_t>(rw), 1) : 0;
            p.liwork = std::max<int64_t>(iw, 1);
            break;
        case Op::eig: case Op::eigvals: {
            const char job = op == Op::eig ? 'V' : 'N';
            if constexpr (lapack::is_complex_v<T>) {
                std::vector<Real<T>> rwork(static_cast<size_t>(2 * n + 1));  // ?trevc3's query writes rwork(1)
                lapack::geev(job, n, nullptr, std::max(n, 1), nullptr, nullptr, std::max(n, 1), &w, -1, rwork.data());
            } else {
                lapack::geev(job, n, nullptr, std::max(n, 1), nullptr, nullptr, nullptr, std::max(n, 1), &w, -1);
            }
            p.lwork = std::max<int64_t>(lapack::query_size(w), 1);
            break;
        }
        case Op::svd: case Op::svdvals: {
            const char job = op == Op::svdvals ? 'N' : (p.full ? 'A' : 'S');
            const lapack_int vrows = p.full ? m : k;
            lapack::gesdd(job, n, m, nullptr, std::max(n, 1), nullptr, nullptr, std::max(n, 1), nullptr,
                          std::max(vrows, 1), &w, -1, nullptr, &iw);
            p.lwork = std::max<int64_t>(lapack::query_size(w), 1);
            // LAPACK 3.7+ documents these rwork sizes for ?gesdd (no query for rwork).
            const int64_t mx = std::max(m, n), mn = k;
            p.lrwork = !lapack::is_complex_v<T> ? 0
                       : job == 'N'           ? std::max<int64_t>(7 * mn, 1)
                                              : std::max<int64_t>({5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn, 1});
            p.liwork = std::max<int64_t>(8 * mn, 1);
            break;
        }
        default: break;
    }
}

template <class F>
void visit_float(ferro_dtype d, F&& f) {
    switch (d) {
        case FERRO_DTYPE_F32: f(float{}); break;
        case FERRO_DTYPE_F64: f(double{}); break;
        case FERRO_DTYPE_C64: f(lapack::c64{}); break;
        case FERRO_DTYPE_C128: f(lapack::c128{}); break;
        default: throw plugin::Error(FERRO_INTERNAL, "linalg: unexpected dtype");
    }
}

// The first failure of a batch (the lowest matrix index wins, so the message is the same
// whatever the threads did).
struct Failure {
    std::mutex mutex;
    int64_t index = std::numeric_limits<int64_t>::max();
    uint32_t code = 0;
    std::string why;
    void record(int64_t at, uint32_t c, std::string w) {
        const std::lock_guard lock(mutex);
        if (at < index) {
            index = at;
            code = c;
            why = std::move(w);
        }
    }
};

template <class T> bool all_finite(const T* a, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
        if constexpr (lapack::is_complex_v<T>) {
            if (!std::isfinite(a[i].real()) || !std::isfinite(a[i].imag())) return false;
        } else if (!std::isfinite(a[i])) {
            return false;
        }
    }
    return true;
}

// Runs one plan on one dtype.
template <class T>
class Runner {
public:
    using R = Real<T>;
    Runner(const Plan& p, const ferro_exec_args& a) : p_(p), a_(a) {
        for (uint32_t i = 0; i < a.n_inputs; ++i) in_.emplace_back(p.batch, a.inputs[i], p.matrix_dims[i]);
        for (uint32_t i = 0; i < a.n_outputs; ++i) {
            const auto& v = a.outputs[i];
            out_.emplace_back(p.batch, v, v.ndim - static_cast<int>(p.batch.size()));
        }
    }

    // Matrix b: returns false after recording why it failed.
    void one(int64_t b, void* scratch, Failure& failure) {
        Carver c(scratch);
        const int64_t m = p_.m, n = p_.n, k = p_.k;
        const lapack_int ln = static_cast<lapack_int>(n), lm = static_cast<lapack_int>(m);
        const lapack_int ldn = std::max<lapack_int>(ln, 1);
        auto fail = [&](uint32_t code, std::string why) { failure.record(b, code, std::move(why)); };
        if (p_.op == Op::lu_unpack) return unpack_input(b, c, fail);
        T* a = c.take<T>(m * n);
        const ferro_tensor_view& A = a_.inputs[0];
        const int nd = A.ndim;
        // LU pivots on A's rows, eig keeps LAPACK's eigenvalue order on A itself (as numpy and
        // PyTorch), and QR is faster as geqrf than as gelqf: these factor A, from a column-major copy.
        const bool column_major = p_.op == Op::lu_factor || p_.op == Op::lu || p_.op == Op::lu_solve ||
                                  p_.op == Op::solve_with_lu || p_.op == Op::eig || p_.op == Op::eigvals || p_.op == Op::qr;
        const bool eigh = p_.op == Op::eigh || p_.op == Op::eigvalsh;
        if (column_major) {
            copy2d(input<T>(0, b), A.strides[nd - 2], A.strides[nd - 1], a, 1, m, m, n);
        } else if (eigh) {  // the triangle heevd reads, column-major: A itself
            copy_part(input<T>(0, b), A.strides[nd - 2], A.strides[nd - 1], a, 1, n, n, n, false, triangle());
        } else if (p_.op != Op::cholesky || p_.upper) {  // lower Cholesky gathers its triangle itself
            // A row-major into scratch: column-major, that is M = A^T (n x m, leading dimension n).
            copy2d(input<T>(0, b), A.strides[nd - 2], A.strides[nd - 1], a, n, 1, m, n);
        }
        if (n == 0 && m == 0 && p_.op != Op::qr && p_.op != Op::svd && p_.op != Op::svdvals) {
            // A 0 x 0 matrix: empty results, and the empty product for the determinant.
            if (p_.op == Op::det || p_.op == Op::slogdet) *output<T>(0, b) = T(1);
            if (p_.op == Op::slogdet) *output<R>(1, b) = 0;
            return;
        }
        switch (p_.op) {
            case Op::solve: case Op::solve_with_lu: {
                T* x = c.take<T>(n * k);
                lapack_int* piv = c.take<lapack_int>(n);
                const ferro_tensor_view& B = a_.inputs[1];
                const int64_t brs = p_.vector_rhs ? B.strides[B.ndim - 1] : B.strides[B.ndim - 2];
                const int64_t bcs = p_.vector_rhs ? 0 : B.strides[B.ndim - 1];
                copy2d(input<T>(1, b), brs, bcs, x, 1, n, n, k);  // B column-major
                if (const lapack_int info = lapack::getrf(ln, ln, a, ldn, piv); info > 0) {
                    return fail(FERRO_INVALID_ARGUMENT, singular(info));
                }
                if (p_.op == Op::solve_with_lu) {  // `a` holds A column-major: lu_factor's LU
                    tri::lu_solve('N', n, k, a, ldn, piv, x, ldn);
                    store_matrix(1, b, a, 1, n, n, n);
                    int64_t* pivots = output<int64_t>(2, b);
                    for (int64_t i = 0; i < n; ++i) pivots[i * out_stride(2, 1)] = piv[i];
                } else {
                    tri::lu_solve('T', n, k, a, ldn, piv, x, ldn);  // M^T X = A X = B
                }
                const ferro_tensor_view& X = a_.outputs[0];
                const int64_t xrs = p_.vector_rhs ? X.strides[X.ndim - 1] : X.strides[X.ndim - 2];
                const int64_t xcs = p_.vector_rhs ? 0 : X.strides[X.ndim - 1];
                copy2d(x, 1, n, output<T>(0, b), xrs, xcs, n, k);
                return;
            }
            case Op::inv: {
                lapack_int* piv = c.take<lapack_int>(n);
                T* work = c.take<T>(p_.lwork);
                if (const lapack_int info = lapack::getrf(ln, ln, a, ldn, piv); info > 0) {
                    return fail(FERRO_INVALID_ARGUMENT, singular(info));
                }
                lapack::getri(ln, a, ldn, piv, work, static_cast<lapack_int>(p_.lwork));
                // M^-1 = (A^-1)^T column-major: A^-1 row-major.
                return store_matrix(0, b, a, n, 1, n, n);
            }
            case Op::det: case Op::slogdet: {
                lapack_int* piv = c.take<lapack_int>(n);
                lapack::getrf(ln, ln, a, ldn, piv);  // a zero pivot is a zero determinant, not an error
                T sign = T(1);
                R logabs = 0;
                for (int64_t i = 0; i < n; ++i) {
                    const T u = a[i + i * n];
                    const R mag = std::abs(u);
                    if (piv[i] != i + 1) sign = -sign;
                    if (mag == 0) {
                        sign = T(0);
                        logabs = -std::numeric_limits<R>::infinity();
                        break;
                    }
                    sign *= u / mag;
                    logabs += std::log(mag);
                }
                if (p_.op == Op::det) {  // the product itself: exp(sum log) would lose digits
                    T det = T(1);
                    for (int64_t i = 0; i < n; ++i) det *= piv[i] != i + 1 ? -a[i + i * n] : a[i + i * n];
                    *output<T>(0, b) = det;
                } else {
                    *output<T>(0, b) = sign;
                    *output<R>(1, b) = logabs;
                }
                return;
            }
            case Op::cholesky: {
                // potrf 'L' only: 'U' runs 1.6-2.3x slower in OpenBLAS (n = 64..256, one thread).
                // upper: M = A^T holds A's upper triangle in its lower one, and its factor M = L L^H
                // gives U = L^T, which is M's memory read row-major. lower: A's lower triangle,
                // transposed into column-major order, factored where the column-major L goes.
                T* out = output<T>(0, b);
                const int64_t ors = out_stride(0, 2), ocs = out_stride(0, 1);
                // Lower into a packed column-major output (the plan asks for one): factor in place.
                const bool in_place = !p_.upper && ors == 1 && ocs == n;
                T* work = in_place ? out : a;
                if (!p_.upper) copy_lower(input<T>(0, b), A.strides[nd - 2], A.strides[nd - 1], work, 1, n, n, false);
                if (const lapack_int info = lapack::potrf('L', ln, work, ldn); info > 0) {
                    return fail(FERRO_INVALID_ARGUMENT, "is not positive definite: its leading minor of order " +
                                                            std::to_string(info) + " is not positive definite");
                }
                if (in_place) {  // potrf leaves the strictly upper triangle as it found it: unwritten
                    for (int64_t j = 1; j < n; ++j) std::fill(out + j * n, out + j * n + j, T(0));
                    return;
                }
                if (!p_.upper) return copy_lower(a, 1, n, out, ors, ocs, n, true);
                // U row-major is M's lower triangle read as rows: U(i, j) = a[i n + j] for j >= i.
                return copy_lower(a, 1, n, out, ocs, ors, n, true);
            }
            case Op::qr: return qr(b, c, a, fail);
            case Op::eigh: case Op::eigvalsh: {
                R* w = c.take<R>(n);
                T* work = c.take<T>(p_.lwork);
                R* rwork = c.take<R>(p_.lrwork);
                lapack_int* iwork = c.take<lapack_int>(p_.liwork);
                if (!triangle_finite(a, n)) return fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
                // heevd 'L' on a triangle transposed into column-major order, not 'U' on the
                // row-major copy: 'U' ran 1-2% slower (dsyevd, n = 64..1024).
                const char uplo = p_.upper ? 'U' : 'L';
                const lapack_int info =
                    lapack::heevd(p_.op == Op::eigh ? 'V' : 'N', uplo, ln, a, ldn, w, work, static_cast<lapack_int>(p_.lwork),
                                  rwork, static_cast<lapack_int>(p_.lrwork), iwork, static_cast<lapack_int>(p_.liwork));
                if (info > 0) return fail(FERRO_FAILED_PRECONDITION, "did not converge (LAPACK ?heevd info " + std::to_string(info) + ")");
                copy2d(w, 0, 1, output<R>(0, b), 0, out_stride(0, 1), 1, n);
                if (p_.op == Op::eigh) store_matrix(1, b, a, 1, n, n, n);  // into a column-major output: straight
                return;
            }
            case Op::svd: case Op::svdvals: {
                const bool vectors = p_.op == Op::svd;
                const int64_t ucols = p_.full ? n : k, vrows = p_.full ? m : k;
                R* s = c.take<R>(k);
                T* u = c.take<T>(n * ucols);
                T* vt = c.take<T>(vrows * m);
                T* work = c.take<T>(p_.lwork);
                R* rwork = c.take<R>(p_.lrwork);
                lapack_int* iwork = c.take<lapack_int>(p_.liwork);
                if (!all_finite(a, m * n)) return fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
                const char job = vectors ? (p_.full ? 'A' : 'S') : 'N';
                const lapack_int ldvt = std::max<lapack_int>(static_cast<lapack_int>(vrows), 1);
                const lapack_int info = lapack::gesdd(job, ln, lm, a, ldn, s, u, ldn, vt, ldvt, work,
                                                      static_cast<lapack_int>(p_.lwork), rwork, iwork);
                if (info > 0) return fail(FERRO_FAILED_PRECONDITION, "did not converge (LAPACK ?gesdd info " + std::to_string(info) + ")");
                const int s_out = vectors ? 1 : 0;
                copy2d(s, 0, 1, output<R>(s_out, b), 0, out_stride(s_out, 1), 1, k);
                if (vectors) {
                    if (k == 0) {  // LAPACK returns at once; the full bases of an empty matrix are identities
                        std::fill(u, u + n * ucols, T(0));
                        std::fill(vt, vt + vrows * m, T(0));
                        for (int64_t i = 0; i < n && i < ucols; ++i) u[i + i * n] = T(1);
                        for (int64_t i = 0; i < m && i < vrows; ++i) vt[i + i * vrows] = T(1);
                    }
                    // M = U' S Vt'  =>  A = Vt'^T S U'^T: U = Vt'^T (m x vrows), Vh = U'^T (ucols x n).
                    store_matrix(0, b, vt, ldvt, 1, m, vrows);
                    store_matrix(2, b, u, ldn, 1, ucols, n);
                }
                return;
            }
            case Op::triangular_solve: {
                T* x = c.take<T>(n * k);
                const ferro_tensor_view& B = a_.inputs[1];
                const int64_t brs = B.strides[B.ndim - 2], bcs = B.strides[B.ndim - 1];
                // A X = B is M^T X = B; X A = B is M X^T = B^T. A upper is M lower.
                const char uplo = p_.upper ? 'L' : 'U', diag = p_.unit ? 'U' : 'N';
                if (p_.left) copy2d(input<T>(1, b), brs, bcs, x, 1, n, n, k);
                else copy2d(input<T>(1, b), bcs, brs, x, 1, n, n, k);
                for (int64_t i = 0; i < n && !p_.unit; ++i) {  // trtrs's check: an exactly zero diagonal entry
                    if (a[i + i * n] == T(0)) {
                        return fail(FERRO_INVALID_ARGUMENT, "is singular: its diagonal entry [" + std::to_string(i) + ", " +
                                                                std::to_string(i) + "] is exactly zero");
                    }
                }
                tri::solve(uplo, p_.left ? 'T' : 'N', diag, n, k, a, ldn, x, ldn);
                if (p_.left) return store_matrix(0, b, x, 1, n, n, k);
                return store_matrix(0, b, x, n, 1, k, n);
            }
            case Op::lu_factor: case Op::lu: {
                lapack_int* piv = c.take<lapack_int>(std::max(m, k));
                lapack::getrf(lm, ln, a, std::max<lapack_int>(lm, 1), piv);  // a zero pivot is a valid (singular) factorisation
                if (p_.op == Op::lu) return unpack(b, a, 1, m, piv, c);
                store_matrix(0, b, a, 1, m, m, n);
                int64_t* out = output<int64_t>(1, b);
                const int64_t stride = out_stride(1, 1);
                for (int64_t i = 0; i < k; ++i) out[i * stride] = piv[i];
                return;
            }
            case Op::lu_solve: {
                T* x = c.take<T>(n * k);
                lapack_int* piv = c.take<lapack_int>(n);
                if (!read_pivots(b, 1, n, n, piv, fail)) return;
                for (int64_t i = 0; i < n; ++i) {
                    if (a[i + i * n] == T(0)) {
                        return fail(FERRO_INVALID_ARGUMENT, "is singular: U[" + std::to_string(i) + ", " + std::to_string(i) +
                                                                "] of its LU factorisation is exactly zero");
                    }
                }
                const ferro_tensor_view& B = a_.inputs[2];
                const int64_t brs = B.strides[B.ndim - 2], bcs = B.strides[B.ndim - 1];
                if (p_.left) {  // op(A) X = B
                    copy2d(input<T>(2, b), brs, bcs, x, 1, n, n, k);
                    tri::lu_solve(p_.adjoint ? 'C' : 'N', n, k, a, ldn, piv, x, ldn);
                    return store_matrix(0, b, x, 1, n, n, k);
                }
                // X A = B is A^T X^T = B^T; X A^H = B is A conj(X^T) = conj(B^T).
                copy2d(input<T>(2, b), bcs, brs, x, 1, n, n, k, p_.adjoint);
                tri::lu_solve(p_.adjoint ? 'N' : 'T', n, k, a, ldn, piv, x, ldn);
                return store_matrix(0, b, x, n, 1, k, n, p_.adjoint);
            }
            case Op::eig: case Op::eigvals: return eig(b, c, a, fail);
            case Op::pinv: case Op::matrix_rank: return pseudo_inverse(b, c, a, fail);
            case Op::matrix_exp: {
                T* work = c.take<T>(6 * n * n);
                lapack_int* piv = c.take<lapack_int>(n);
                if (!all_finite(a, n * n)) return fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
                expm(a, n, work, piv);  // `a` holds A row-major
                return store_matrix(0, b, a, n, 1, n, n);
            }
            case Op::lu_unpack: case Op::vector_norm: case Op::matrix_norm: case Op::cond: case Op::lstsq: case Op::inverse_gaps: case Op::count: break;  // handled before the switch, or elsewhere
        }
    }

    void run(const void* native, const ferro_buffer_view& workspace) {
        Failure failure;
        const int64_t count = p_.batch_count;
        const auto* ctx = static_cast<const ferro_cpu_context*>(native);
        const int64_t size = std::max(p_.m, p_.n);
        // Small matrices in a batch fan out over the engine's pool, one scratch block per
        // chunk; large ones run one after another and let OpenBLAS thread inside LAPACK.
        if (count > 1 && size <= 256 && ctx != nullptr && ctx->num_threads > 1) {
            struct Job {
                Runner* self;
                Failure* failure;
            } job{this, &failure};
            const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 18) / std::max<int64_t>(size * size * size, 1));
            ctx->parallel_for(ctx, count, grain, [](void* user, int64_t begin, int64_t end) {
                auto& j = *static_cast<Job*>(user);
                try {
                    std::vector<std::max_align_t> scratch(static_cast<size_t>(j.self->p_.scratch_bytes / sizeof(std::max_align_t) + 2));
                    for (int64_t b = begin; b < end; ++b) j.self->one(b, scratch.data(), *j.failure);
                } catch (...) {
                    j.failure->record(begin, FERRO_RESOURCE_EXHAUSTED, "could not allocate its LAPACK workspace");
                }
            }, &job);
        } else {
            for (int64_t b = 0; b < count; ++b) one(b, workspace.data, failure);
        }
        if (failure.index != std::numeric_limits<int64_t>::max()) {
            std::string where = "the matrix";
            if (!p_.batch.empty()) where = "matrix " + shape_str(batch_index(p_.batch, failure.index)) + " of the batch";
            throw plugin::Error(failure.code, qualified(p_.op) + ": " + where + " " + failure.why);
        }
    }

private:
    template <class U> const U* input(uint32_t i, int64_t b) const {
        return static_cast<const U*>(a_.inputs[i].data) + in_[i](b);
    }
    template <class U> U* output(uint32_t i, int64_t b) const { return static_cast<U*>(a_.outputs[i].data) + out_[i](b); }
    int64_t out_stride(uint32_t i, int from_end) const {
        const auto& v = a_.outputs[i];
        return v.strides[v.ndim - from_end];
    }
    // The triangle of a Hermitian input that eigh reads (its `UPLO`).
    Part triangle() const { return p_.upper ? Part::upper : Part::lower; }
    // Whether that triangle of the n x n column-major `a` is free of NaN and Inf.
    bool triangle_finite(const T* a, int64_t n) const {
        for (int64_t j = 0; j < n; ++j) {
            const int64_t lo = p_.upper ? 0 : j, hi = p_.upper ? j + 1 : n;
            if (!all_finite(a + j * n + lo, hi - lo)) return false;
        }
        return true;
    }
    // Output i's matrix b (rows x cols) from a buffer with the given strides.
    void store_matrix(uint32_t i, int64_t b, const T* src, int64_t rs, int64_t cs, int64_t rows, int64_t cols,
                      bool conj = false) const {
        copy2d(src, rs, cs, output<T>(i, b), out_stride(i, 2), out_stride(i, 1), rows, cols, conj);
    }
    static std::string singular(lapack_int info) {
        return "is singular: U[" + std::to_string(info - 1) + ", " + std::to_string(info - 1) +
               "] of its LU factorisation is exactly zero";
    }

    // Pivots of input `i` (1-based, LAPACK's convention) into `piv`, checked: entry j must lie in
    // [j + 1, rows] (getrf only swaps a row with one below it).
    template <class Fail> bool read_pivots(int64_t b, uint32_t i, int64_t count, int64_t rows, lapack_int* piv, Fail&& fail) const {
        const int64_t* p = input<int64_t>(i, b);
        const int64_t stride = a_.inputs[i].strides[a_.inputs[i].ndim - 1];
        for (int64_t j = 0; j < count; ++j) {
            const int64_t v = p[j * stride];
            if (v < j + 1 || v > rows) {
                fail(FERRO_INVALID_ARGUMENT, "has pivot " + std::to_string(j) + " = " + std::to_string(v) + " (input " +
                                                 std::to_string(i) + "), expected a value in [" + std::to_string(j + 1) + ", " +
                                                 std::to_string(rows) + "]");
                return false;
            }
            piv[j] = static_cast<lapack_int>(v);
        }
        return true;
    }

    // P, L, U (outputs 0, 1, 2) from packed LU factors (strides lrs, lcs) and 1-based pivots.
    void unpack(int64_t b, const T* lu, int64_t lrs, int64_t lcs, const lapack_int* piv, Carver& c) const {
        const int64_t m = p_.m, n = p_.n, k = p_.k;
        lapack_int* perm = c.take<lapack_int>(m);
        for (int64_t i = 0; i < m; ++i) perm[i] = static_cast<lapack_int>(i);
        for (int64_t i = 0; i < k; ++i) std::swap(perm[i], perm[piv[i] - 1]);
        T* P = output<T>(0, b);
        const int64_t prs = out_stride(0, 2), pcs = out_stride(0, 1);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < m; ++j) P[i * prs + j * pcs] = T(0);
        for (int64_t i = 0; i < m; ++i) P[perm[i] * prs + i * pcs] = T(1);  // row i of L U is row perm[i] of A
        T* L = output<T>(1, b);
        const int64_t Lrs = out_stride(1, 2), Lcs = out_stride(1, 1);
        for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < k; ++j) L[i * Lrs + j * Lcs] = i > j ? lu[i * lrs + j * lcs] : T(i == j ? 1 : 0);
        T* U = output<T>(2, b);
        const int64_t Urs = out_stride(2, 2), Ucs = out_stride(2, 1);
        for (int64_t i = 0; i < k; ++i)
            for (int64_t j = 0; j < n; ++j) U[i * Urs + j * Ucs] = j >= i ? lu[i * lrs + j * lcs] : T(0);
    }

    // lu_unpack: straight from the input views.
    template <class Fail> void unpack_input(int64_t b, Carver& c, Fail&& fail) const {
        lapack_int* piv = c.take<lapack_int>(std::max(p_.m, p_.k));
        if (!read_pivots(b, 1, p_.k, p_.m, piv, fail)) return;
        const ferro_tensor_view& LU = a_.inputs[0];
        unpack(b, input<T>(0, b), LU.strides[LU.ndim - 2], LU.strides[LU.ndim - 1], piv, c);
    }

    // pinv and matrix_rank from the SVD of M = A^T (= conj(Vh_A)... as in svd) or, hermitian,
    // the eigendecomposition of M = conj(A). Singular values <= max(atol, rtol * largest) are
    // dropped (their reciprocals become 0).
    template <class Fail> void pseudo_inverse(int64_t b, Carver& c, T* a, Fail&& fail) {
        const int64_t m = p_.m, n = p_.n, k = p_.k;
        const lapack_int ln = static_cast<lapack_int>(n), lm = static_cast<lapack_int>(m), ldn = std::max<lapack_int>(ln, 1);
        const bool pinv = p_.op == Op::pinv;
        if (!all_finite(a, m * n)) return fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
        R* s = c.take<R>(p_.hermitian ? n : k);
        R largest = 0;
        int64_t count = p_.hermitian ? n : k;
        T *u = nullptr, *vt = nullptr;
        lapack_int info = 0;
        if (p_.hermitian) {  // eigenvalues of M = conj(A) (lower triangle of A = upper of M), vectors Z in a
            T* work = c.take<T>(p_.lwork);
            R* rwork = c.take<R>(p_.lrwork);
            lapack_int* iwork = c.take<lapack_int>(p_.liwork);
            info = lapack::heevd(pinv ? 'V' : 'N', 'U', ln, a, ldn, s, work, static_cast<lapack_int>(p_.lwork), rwork,
                                 static_cast<lapack_int>(p_.lrwork), iwork, static_cast<lapack_int>(p_.liwork));
            for (int64_t i = 0; i < n; ++i) largest = std::max(largest, std::abs(s[i]));
        } else {
            u = c.take<T>(n * k);
            vt = c.take<T>(k * m);
            T* work = c.take<T>(p_.lwork);
            R* rwork = c.take<R>(p_.lrwork);
            lapack_int* iwork = c.take<lapack_int>(p_.liwork);
            info = lapack::gesdd(pinv ? 'S' : 'N', ln, lm, a, ldn, s, u, ldn, vt, std::max<lapack_int>(static_cast<lapack_int>(k), 1),
                                 work, static_cast<lapack_int>(p_.lwork), rwork, iwork);
            largest = k > 0 ? s[0] : R(0);
        }
        if (info > 0) return fail(FERRO_FAILED_PRECONDITION, "did not converge (LAPACK info " + std::to_string(info) + ")");
        const double cutoff = std::max(p_.atol, p_.rtol * static_cast<double>(largest));
        if (!pinv) {
            int64_t rank = 0;
            for (int64_t i = 0; i < count; ++i) rank += static_cast<double>(std::abs(s[i])) > cutoff ? 1 : 0;
            *output<int64_t>(0, b) = rank;
            return;
        }
        auto inverse = [&](R v) { return static_cast<double>(std::abs(v)) > cutoff ? T(R(1) / v) : T(0); };
        T* w = c.take<T>(std::max(m, n) * std::max(m, n));
        T* x = c.take<T>(n * m);
        if (p_.hermitian) {
            // A = conj(Z) diag(s) Z^T: pinv(A) = conj(Z) diag(1/s) Z^T. The buffer a holds Z
            // column-major, that is Z^T row-major.
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < n; ++j) w[i * n + j] = inverse(s[i]) * a[i * n + j];
            blas::gemm('C', 'N', n, n, n, T(1), a, n, w, n, T(0), x, n);
        } else {
            // A = Vt'^T S U'^T: pinv(A) = conj(U') S^+ conj(Vt'). u is U' column-major, that is
            // U'^T row-major (k x n); w = S^+ conj(Vt') row-major (k x m).
            for (int64_t i = 0; i < k; ++i)
                for (int64_t j = 0; j < m; ++j) w[i * m + j] = inverse(s[i]) * conj_if(vt[i + j * k], true);
            if (k > 0) blas::gemm('C', 'N', n, m, k, T(1), u, n, w, m, T(0), x, m);
            else std::fill(x, x + n * m, T(0));
        }
        store_matrix(0, b, x, m, 1, n, m);
    }

    // General eigendecomposition of A (column-major in `a`): complex eigenvalues and right
    // eigenvectors, as LAPACK normalises them (norm 1, largest component real).
    template <class Fail> void eig(int64_t b, Carver& c, T* a, Fail&& fail) {
        using C = std::complex<R>;
        const int64_t n = p_.n;
        const lapack_int ln = static_cast<lapack_int>(n), ldn = std::max<lapack_int>(ln, 1);
        const bool vectors = p_.op == Op::eig;
        R* ev = c.take<R>(2 * n);
        T* vr = c.take<T>(n * n);
        T* work = c.take<T>(p_.lwork);
        R* rwork = c.take<R>(2 * n);
        if (!all_finite(a, n * n)) return fail(FERRO_INVALID_ARGUMENT, "contains NaN or Inf");
        const lapack_int lw = static_cast<lapack_int>(p_.lwork);
        lapack_int info = 0;
        if constexpr (lapack::is_complex_v<T>) {
            info = lapack::geev(vectors ? 'V' : 'N', ln, a, ldn, reinterpret_cast<T*>(ev), vr, ldn, work, lw, rwork);
        } else {
            info = lapack::geev(vectors ? 'V' : 'N', ln, a, ldn, ev, ev + n, vr, ldn, work, lw);
        }
        if (info > 0) return fail(FERRO_FAILED_PRECONDITION, "did not converge (LAPACK ?geev info " + std::to_string(info) + ")");
        C* w = output<C>(0, b);
        const int64_t ws = out_stride(0, 1);
        for (int64_t j = 0; j < n; ++j) {
            if constexpr (lapack::is_complex_v<T>) w[j * ws] = reinterpret_cast<const C*>(ev)[j];
            else w[j * ws] = C(ev[j], ev[n + j]);
        }
        if (!vectors) return;
        C* V = output<C>(1, b);
        const int64_t vrs = out_stride(1, 2), vcs = out_stride(1, 1);
        for (int64_t j = 0; j < n; ++j) {
            if constexpr (lapack::is_complex_v<T>) {
                for (int64_t i = 0; i < n; ++i) V[i * vrs + j * vcs] = vr[i + j * n];
            } else if (ev[n + j] == 0) {
                for (int64_t i = 0; i < n; ++i) V[i * vrs + j * vcs] = C(vr[i + j * n], 0);
            } else {  // a conjugate pair: columns j and j + 1 hold its real and imaginary parts
                for (int64_t i = 0; i < n; ++i) {
                    V[i * vrs + j * vcs] = C(vr[i + j * n], vr[i + (j + 1) * n]);
                    V[i * vrs + (j + 1) * vcs] = C(vr[i + j * n], -vr[i + (j + 1) * n]);
                }
                ++j;
            }
        }
    }

    // QR of A (m x n, column-major in `a`): geqrf, then Q from its reflectors (ungqr). A
    // row-major A is an LQ problem to LAPACK, but gelqf/unglq run 1.6x slower than
    // geqrf/ungqr here, far more than the two transposing copies cost.
    template <class Fail> void qr(int64_t b, Carver& c, T* a, Fail&&) {
        const int64_t m = p_.m, n = p_.n, k = p_.k;
        const lapack_int ln = static_cast<lapack_int>(n), lm = static_cast<lapack_int>(m), lk = static_cast<lapack_int>(k);
        const lapack_int ldm = std::max<lapack_int>(lm, 1);
        T* tau = c.take<T>(k);
        T* work = c.take<T>(p_.lwork);
        const lapack_int lw = static_cast<lapack_int>(p_.lwork);
        lapack::geqrf(lm, ln, a, ldm, tau, work, lw);
        // R (rows x n, rows = k or m): the upper triangle of a.
        const uint32_t r_out = p_.qr_mode == QrMode::r ? 0 : 1;
        const int64_t r_rows = p_.qr_mode == QrMode::complete ? m : k;
        T* r = output<T>(r_out, b);
        const int64_t rrs = out_stride(r_out, 2), rcs = out_stride(r_out, 1);
        if (rrs == 1) {  // column-major R (the plan's layout): column j is a[0..j] then zeros
            for (int64_t j = 0; j < n; ++j) {
                const int64_t top = std::min(j + 1, k);
                std::copy(a + j * m, a + j * m + top, r + j * rcs);
                std::fill(r + j * rcs + top, r + j * rcs + r_rows, T(0));
            }
        } else {
            for_each_tiled(r_rows, n, m, rrs, rcs,
                           [&](int64_t i, int64_t j) { r[i * rrs + j * rcs] = (i < k && j >= i) ? a[i + j * m] : T(0); },
                           [](int64_t, int64_t, int64_t, int64_t) { return false; });
        }
        if (p_.qr_mode == QrMode::r) return;
        if (p_.qr_mode == QrMode::complete && m > n) {
            // All m columns of Q: the n reflectors into an m x m buffer first.
            T* q = c.take<T>(m * m);
            std::copy(a, a + m * n, q);
            lapack::ungqr(lm, lm, lk, q, ldm, tau, work, lw);
            return store_matrix(0, b, q, 1, m, m, m);
        }
        if (k > 0) lapack::ungqr(lm, lk, lk, a, ldm, tau, work, lw);
        store_matrix(0, b, a, 1, m, m, k);
    }

    const Plan& p_;
    const ferro_exec_args& a_;
    std::vector<BatchOffsets> in_, out_;
};

// Debian's OpenBLAS 0.3.21 threads the level-2 kernels inside LAPACK's reductions to condensed
// form (sytrd, gebrd, gehrd, geqr2) and splits potrf from n = 33 on; on two cores, with two
// threads instead of one, syevd takes 2.2x as long at n = 64 and 1.2x at n = 256, gesdd 1.6x
// and 1.3x, geqrf + orgqr 1.3x and 1.2x, potrf 2.5x and 1.35x; two threads pay from n ~ 450.
// getrf runs 1.1-1.2x as long on two threads at n = 128 and 256, with or without getrs (one
// right-hand side or n), and the same at 384. Plans of those ops and of the LU-based ones up to
// this size hold the cpu engine's BLAS at one thread while they run; inv does not: getri runs
// in 0.7-0.9 of the time on two threads from n = 128 on.
constexpr int64_t kOneBlasThreadMax = 384;

// A hold on the engine's BLAS at one thread (ABI 1.2; older hosts: no hold) for the scope.
class OneBlasThread {
public:
    OneBlasThread(const void* native, bool wanted) {
        const auto* ctx = static_cast<const ferro_cpu_context*>(native);
        if (wanted && ctx != nullptr && FERRO_HAS_FIELD(ctx, ferro_cpu_context, blas_one_thread) &&
            ctx->blas_one_thread != nullptr) {
            ctx_ = ctx;
            ctx_->blas_one_thread(ctx_, 1);
        }
    }
    ~OneBlasThread() {
        if (ctx_ != nullptr) ctx_->blas_one_thread(ctx_, 0);
    }
    OneBlasThread(const OneBlasThread&) = delete;
    OneBlasThread& operator=(const OneBlasThread&) = delete;

private:
    const ferro_cpu_context* ctx_ = nullptr;
};

// LAPACK leaves QR's Q and R, the lower Cholesky factor and the packed LU column-major: the
// plan asks the host for column-major outputs (PyTorch returns them so too), and they are
// stored by straight copies instead of transposing ones (ABI 1.1's output strides).
void ask_column_major(const ferro_prepare_args& args, uint32_t i) {
    if (!FERRO_HAS_FIELD(&args, ferro_prepare_args, output_strides) || args.output_strides == nullptr) return;
    const ferro_signature& s = args.outputs[i];
    int64_t* strides = args.output_strides + static_cast<size_t>(i) * FERRO_MAX_NDIM;
    const int nd = s.ndim;
    strides[nd - 2] = 1;
    strides[nd - 1] = std::max<int64_t>(s.shape[nd - 2], 1);
    int64_t step = strides[nd - 1] * std::max<int64_t>(s.shape[nd - 1], 1);
    for (int d = nd - 3; d >= 0; --d) {
        strides[d] = step;
        step *= std::max<int64_t>(s.shape[d], 1);
    }
}

}  // namespace

Plan make_plan(Op op, const ferro_prepare_args& args) {
    Plan p;
    p.op = op;
    const ferro_signature& a = args.inputs[0];
    p.dtype = a.dtype;
    if (op == Op::vector_norm) {  // not a matrix op: any rank
        p.ord = args.attrs[0].v.f64;
        p.reduced = norm_axes(op, args.attrs[1], a.ndim);
        p.scratch_bytes = 64;
        return p;
    }
    if (op == Op::inverse_gaps) {
        p.eps = args.attrs[0].v.f64;
        p.squares = args.attrs[1].v.boolean != 0;
        p.scratch_bytes = 64;
        return p;
    }
    if (op == Op::lstsq) {
        const ferro_signature& b = args.inputs[1];
        p.m = a.shape[a.ndim - 2];
        p.n = a.shape[a.ndim - 1];
        p.k = b.shape[b.ndim - 1];
        const ferro_signature& x = args.outputs[0];
        p.batch.assign(x.shape, x.shape + x.ndim - 2);
        for (int64_t d : p.batch) p.batch_count *= d;
        const double eps = p.dtype == FERRO_DTYPE_F32 || p.dtype == FERRO_DTYPE_C64 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
        p.rtol = args.attrs[0].type == FERRO_ATTR_F64 ? args.attrs[0].v.f64 : eps * static_cast<double>(std::max(p.m, p.n));
        p.residuals = p.m > p.n && std::string(args.attrs[1].v.str) != "gelsy";
        p.scratch_bytes = 64;
        return p;
    }
    if (op == Op::cond) {
        p.matrix_ord = matrix_ord(op, args.attrs[0].v.str);
        p.scratch_bytes = 64;
        return p;
    }
    if (op == Op::matrix_norm) {  // the matrix axes anywhere
        p.matrix_ord = matrix_ord(op, args.attrs[0].v.str);
        std::tie(p.row_axis, p.col_axis) = matrix_axes(op, args.attrs[1], a.ndim);
        p.scratch_bytes = 64;
        return p;
    }
    p.m = a.shape[a.ndim - 2];
    p.n = a.shape[a.ndim - 1];
    p.k = std::min(p.m, p.n);
    // The batch: output 0's leading dims (its matrix part is 2-d, 1-d or 0-d per op).
    const ferro_signature& out0 = args.outputs[0];
    int out_matrix_dims = 2;
    switch (op) {
        case Op::det: case Op::slogdet: out_matrix_dims = 0; break;
        case Op::eigvalsh: case Op::svdvals: out_matrix_dims = 1; break;
        case Op::eigh: case Op::eig: case Op::eigvals: out_matrix_dims = 1; break;
        case Op::matrix_rank: out_matrix_dims = 0; break;
        case Op::svd: out_matrix_dims = 2; break;
        default: break;
    }
    p.matrix_dims.assign(args.n_inputs, 2);
    const ferro_attr_value* attrs = args.attrs;
    if (op == Op::solve || op == Op::solve_with_lu) {
        const ferro_signature& b = args.inputs[1];
        p.vector_rhs = solve_vector_rhs(a, b);
        p.k = p.vector_rhs ? 1 : b.shape[b.ndim - 1];
        out_matrix_dims = p.vector_rhs ? 1 : 2;
        p.matrix_dims[1] = p.vector_rhs ? 1 : 2;
    }
    if (op == Op::triangular_solve || op == Op::lu_solve) {
        const bool tri = op == Op::triangular_solve;
        p.left = attrs[tri ? 1 : 0].v.boolean != 0;
        if (tri) {
            p.upper = attrs[0].v.boolean != 0;
            p.unit = attrs[2].v.boolean != 0;
        } else {
            p.adjoint = attrs[1].v.boolean != 0;
            p.matrix_dims[1] = 1;
        }
        const ferro_signature& b = args.inputs[tri ? 1 : 2];
        p.k = p.left ? b.shape[b.ndim - 1] : b.shape[b.ndim - 2];  // right-hand sides
    }
    if (op == Op::lu_unpack) p.matrix_dims[1] = 1;
    if (op == Op::pinv || op == Op::matrix_rank) {
        p.hermitian = attrs[2].v.boolean != 0;
        const bool has_atol = attrs[0].type == FERRO_ATTR_F64, has_rtol = attrs[1].type == FERRO_ATTR_F64;
        p.atol = has_atol ? attrs[0].v.f64 : 0.0;
        // PyTorch's default: eps * max(m, n) unless an absolute tolerance was given.
        const double eps = p.dtype == FERRO_DTYPE_F32 || p.dtype == FERRO_DTYPE_C64 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
        p.rtol = has_rtol ? attrs[1].v.f64 : (!has_atol || p.atol == 0 ? eps * static_cast<double>(std::max(p.m, p.n)) : 0.0);
    }
    p.batch.assign(out0.shape, out0.shape + out0.ndim - out_matrix_dims);
    for (int64_t d : p.batch) p.batch_count *= d;
    switch (op) {
        case Op::cholesky: p.upper = attrs[0].v.boolean != 0; break;
        case Op::eigh: case Op::eigvalsh: p.upper = std::string(attrs[0].v.str) == "U"; break;
        case Op::svd: p.full = attrs[0].v.boolean != 0; break;
        case Op::qr: {
            const std::string mode = attrs[0].v.str;
            p.qr_mode = mode == "complete" ? QrMode::complete : mode == "r" ? QrMode::r : QrMode::reduced;
            break;
        }
        default: break;
    }
    constexpr int64_t lapack_max = std::numeric_limits<lapack_int>::max();
    if (p.m > lapack_max || p.n > lapack_max || p.k > lapack_max || p.m * p.n > lapack_max) {
        invalid(op, "input 0 has shape " + shape_str(dims(a)) + ", larger than LAPACK's 32-bit indices allow");
    }
    visit_float(p.dtype, [&](auto t) { query_workspace<decltype(t)>(p); });
    if (op == Op::qr) {
        for (uint32_t i = 0; i < args.n_outputs; ++i) ask_column_major(args, i);
    }
    if ((op == Op::cholesky && !p.upper) || op == Op::lu_factor) ask_column_major(args, 0);
    if (op == Op::solve_with_lu) ask_column_major(args, 1);  // LU, as lu_factor returns it
    if (op == Op::eigh) ask_column_major(args, 1);  // the eigenvectors, as heevd leaves them
    switch (op) {  // the reductions to condensed form, Cholesky and LU
        case Op::cholesky: case Op::qr: case Op::eigh: case Op::eigvalsh: case Op::svd: case Op::svdvals:
        case Op::eig: case Op::eigvals: case Op::pinv: case Op::matrix_rank:
        case Op::solve: case Op::solve_with_lu: case Op::det: case Op::slogdet: case Op::lu_factor: case Op::lu:
        case Op::lu_solve:
            p.one_blas_thread = std::max(p.m, p.n) <= kOneBlasThreadMax;
            break;
        default: break;
    }
    // Never a NULL workspace; a cache line of slack after the last array for BLAS's overreads
    // (lapack::kOverreadPad).
    p.scratch_bytes = scratch_bytes(p) + 64;
    return p;
}

void execute(const Plan& plan, const ferro_exec_args& args, const void* cpu_context) {
    if (plan.op == Op::vector_norm) {
        return visit_float(plan.dtype, [&](auto t) {
            using T = decltype(t);
            vector_norm<T>(args.inputs[0], plan.reduced, plan.ord, static_cast<lapack::Real<T>*>(args.outputs[0].data));
        });
    }
    if (plan.op == Op::inverse_gaps) {
        if (plan.dtype == FERRO_DTYPE_F32) return inverse_gaps<float>(args.inputs[0], plan.squares, plan.eps, args.outputs[0]);
        return inverse_gaps<double>(args.inputs[0], plan.squares, plan.eps, args.outputs[0]);
    }
    if (plan.op == Op::lstsq) return visit_float(plan.dtype, [&](auto t) { lstsq<decltype(t)>(plan, args); });
    if (plan.op == Op::cond) {
        return visit_float(plan.dtype, [&](auto t) {
            using T = decltype(t);
            cond<T>(plan, args.inputs[0], static_cast<lapack::Real<T>*>(args.outputs[0].data));
        });
    }
    if (plan.op == Op::matrix_norm) {
        return visit_float(plan.dtype, [&](auto t) {
            using T = decltype(t);
            matrix_norm<T>(plan, args.inputs[0], static_cast<lapack::Real<T>*>(args.outputs[0].data));
        });
    }
    if (plan.batch_count == 0) return;
    const OneBlasThread threads(cpu_context, plan.one_blas_thread);
    visit_float(plan.dtype, [&](auto t) { Runner<decltype(t)>(plan, args).run(cpu_context, args.workspace); });
}

}  // namespace ferro::linalg
