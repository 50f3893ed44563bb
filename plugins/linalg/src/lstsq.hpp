// lstsq on the cpu: ?gelsd (SVD, divide and conquer) per matrix of a broadcast batch, from
// column-major copies of A and B. Residuals are the squared column norms of A X - B: read off
// LAPACK's output when A has full column rank, computed from A and B otherwise.
#pragma once

#include "lapack.hpp"
#include "linalg.hpp"
#include "matrix_io.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ferro::linalg {

template <class T>
void lstsq(const Plan& p, const ferro_exec_args& args) {
    using R = lapack::Real<T>;
    const int64_t m = p.m, n = p.n, k = p.k, mn = std::min(m, n), ldb = std::max<int64_t>({m, n, 1});
    const lapack_int lm = static_cast<lapack_int>(m), ln = static_cast<lapack_int>(n), lk = static_cast<lapack_int>(k);
    const ferro_tensor_view &A = args.inputs[0], &B = args.inputs[1];
    const BatchOffsets a_at(p.batch, A, 2), b_at(p.batch, B, 2);
    const bool residuals = p.residuals;  // else output 1 is empty, [0]
    std::vector<BatchOffsets> out_at;
    for (uint32_t i = 0; i < args.n_outputs; ++i) {
        const ferro_tensor_view& v = args.outputs[i == 1 && !residuals ? 0 : i];
        out_at.emplace_back(p.batch, v, v.ndim - static_cast<int>(p.batch.size()));
    }
    std::vector<T> a(static_cast<size_t>(std::max<int64_t>(m * n, 1)) + lapack::kOverreadPad<T>);
    std::vector<T> b(static_cast<size_t>(ldb * std::max<int64_t>(k, 1)) + lapack::kOverreadPad<T>);
    std::vector<R> s(static_cast<size_t>(std::max<int64_t>(mn, 1)));
    T wq{};
    R rq{};
    lapack_int iq = 0, rank = 0;
    lapack::gelsd(lm, ln, lk, a.data(), std::max<lapack_int>(lm, 1), b.data(), static_cast<lapack_int>(ldb), s.data(),
                  static_cast<R>(p.rtol), &rank, &wq, -1, &rq, &iq);
    std::vector<T> work(static_cast<size_t>(std::max<int64_t>(lapack::query_size(wq), 1)));
    std::vector<R> rwork(static_cast<size_t>(std::max<int64_t>(static_cast<int64_t>(rq), 1)));
    std::vector<lapack_int> iwork(static_cast<size_t>(std::max<lapack_int>(iq, 1)));
    const T* a_data = static_cast<const T*>(A.data);
    const T* b_data = static_cast<const T*>(B.data);
    auto stride = [](const ferro_tensor_view& v, int from_end) { return v.strides[v.ndim - from_end]; };
    for (int64_t bi = 0; bi < p.batch_count; ++bi) {
        const T* Ab = a_data + a_at(bi);
        const T* Bb = b_data + b_at(bi);
        copy2d(Ab, stride(A, 2), stride(A, 1), a.data(), 1, m, m, n);
        std::fill(b.begin(), b.end(), T(0));
        copy2d(Bb, stride(B, 2), stride(B, 1), b.data(), 1, ldb, m, k);
        bool finite = true;
        for (const T& v : a) finite = finite && std::isfinite(std::abs(v));
        if (!finite) {
            throw plugin::Error(FERRO_INVALID_ARGUMENT, "linalg.lstsq: matrix " + std::to_string(bi) + " of input 0 contains NaN or Inf");
        }
        const lapack_int info = lapack::gelsd(lm, ln, lk, a.data(), std::max<lapack_int>(lm, 1), b.data(), static_cast<lapack_int>(ldb),
                                              s.data(), static_cast<R>(p.rtol), &rank, work.data(),
                                              static_cast<lapack_int>(work.size()), rwork.data(), iwork.data());
        if (info > 0) throw plugin::Error(FERRO_FAILED_PRECONDITION, "linalg.lstsq: the SVD of matrix " + std::to_string(bi) + " did not converge");
        // Outputs: X (n x k), residuals (k), rank, singular values (min(m, n)).
        const ferro_tensor_view& X = args.outputs[0];
        copy2d(b.data(), 1, ldb, static_cast<T*>(X.data) + out_at[0](bi), stride(X, 2), stride(X, 1), n, k);
        if (residuals) {
            R* res = static_cast<R*>(args.outputs[1].data) + out_at[1](bi);
            const int64_t rs = stride(args.outputs[1], 1);
            for (int64_t j = 0; j < k; ++j) {
                R sum = 0;
                if (rank == ln) {  // LAPACK leaves A's orthogonal complement part of B in rows n..m-1
                    for (int64_t i = n; i < m; ++i) sum += std::norm(b[static_cast<size_t>(i + j * ldb)]);
                } else {
                    for (int64_t i = 0; i < m; ++i) {
                        T r = -Bb[i * stride(B, 2) + j * stride(B, 1)];
                        for (int64_t l = 0; l < n; ++l) r += Ab[i * stride(A, 2) + l * stride(A, 1)] * b[static_cast<size_t>(l + j * ldb)];
                        sum += std::norm(r);
                    }
                }
                res[j * rs] = sum;
            }
        }
        *(static_cast<int64_t*>(args.outputs[2].data) + out_at[2](bi)) = rank;
        R* sv = static_cast<R*>(args.outputs[3].data) + out_at[3](bi);
        for (int64_t i = 0; i < mn; ++i) sv[i * stride(args.outputs[3], 1)] = s[static_cast<size_t>(i)];
    }
}

}  // namespace ferro::linalg
