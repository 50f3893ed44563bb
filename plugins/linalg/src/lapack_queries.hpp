// Workspace queries (lwork = -1, once per plan) and per-matrix scratch of the decompositions
// more than one op runs: heevd (eigh, eigvalsh; pinv and matrix_rank with hermitian) and gesdd
// (svd, svdvals; pinv and matrix_rank).
#pragma once

#include "cpu_exec.hpp"

namespace ferro::linalg {

// heevd on the plan's n x n matrix, `job` 'V' (vectors) or 'N'.
template <class T> void query_heevd(Plan& p, char job) {
    const auto n = static_cast<lapack_int>(p.n);
    T w{};
    Real<T> rw{};
    lapack_int iw = 0;
    lapack::heevd(job, 'U', n, nullptr, std::max(n, 1), nullptr, &w, -1, &rw, -1, &iw, -1);
    p.lwork = std::max<int64_t>(lapack::query_size(w), 1);
    p.lrwork = lapack::is_complex_v<T> ? std::max<int64_t>(static_cast<int64_t>(rw), 1) : 0;
    p.liwork = std::max<int64_t>(iw, 1);
}
// The matrix, the eigenvalues and the work arrays.
inline int64_t heevd_scratch(const Plan& p) {
    const int64_t t = itemsize(p.dtype), r = itemsize(real_dtype(p.dtype)), n = p.n;
    return scratch_array(n * n, t) + scratch_array(n, r) + scratch_array(p.lwork, t) + scratch_array(p.lrwork, r) +
           scratch_array(p.liwork, sizeof(lapack_int));
}

// gesdd on M = A^T (n x m), `job` 'A' (full), 'S' (thin) or 'N' (values only).
template <class T> void query_gesdd(Plan& p, char job) {
    const auto m = static_cast<lapack_int>(p.m), n = static_cast<lapack_int>(p.n), k = static_cast<lapack_int>(p.k);
    T w{};
    lapack_int iw = 0;
    const lapack_int vrows = job == 'A' ? m : k;
    lapack::gesdd(job, n, m, nullptr, std::max(n, 1), nullptr, nullptr, std::max(n, 1), nullptr, std::max(vrows, 1), &w, -1,
                  nullptr, &iw);
    p.lwork = std::max<int64_t>(lapack::query_size(w), 1);
    // LAPACK 3.7+ documents these rwork sizes for ?gesdd (no query for rwork).
    const int64_t mx = std::max(p.m, p.n), mn = p.k;
    p.lrwork = !lapack::is_complex_v<T> ? 0
               : job == 'N'             ? std::max<int64_t>(7 * mn, 1)
                                        : std::max<int64_t>({5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn, 1});
    p.liwork = std::max<int64_t>(8 * mn, 1);
}
// The matrix, the singular values, U' and Vt' (ucols and vrows of them: k thin, all with
// full_matrices) and the work arrays.
inline int64_t gesdd_scratch(const Plan& p, bool full) {
    const int64_t t = itemsize(p.dtype), r = itemsize(real_dtype(p.dtype)), m = p.m, n = p.n, k = p.k;
    const int64_t ucols = full ? n : k, vrows = full ? m : k;
    return scratch_array(m * n, t) + scratch_array(k, r) + scratch_array(n * ucols, t) + scratch_array(vrows * m, t) +
           scratch_array(p.lwork, t) + scratch_array(p.lrwork, r) + scratch_array(p.liwork, sizeof(lapack_int));
}

}  // namespace ferro::linalg
