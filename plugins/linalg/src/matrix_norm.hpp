// matrix_norm on the cpu: the two matrix axes anywhere, any strides. Sum-type orders read the
// matrix in place; 2, -2 and nuc take singular values (?gesdd, no vectors) of a column-major
// copy.
#pragma once

#include "lapack.hpp"
#include "linalg.hpp"
#include "matrix_io.hpp"
#include "vector_norm.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace ferro::linalg {

// Scratch for the singular values of one rows x cols matrix (?gesdd without vectors).
template <class T> struct SingularValues {
    using R = lapack::Real<T>;
    int64_t rows, cols, k;
    std::vector<T> a, work;
    std::vector<R> s, rwork;
    std::vector<lapack_int> iwork;
    SingularValues(int64_t r, int64_t c) : rows(r), cols(c), k(std::min(r, c)) {
        if (k == 0) return;
        a.resize(static_cast<size_t>(rows * cols) + lapack::kOverreadPad<T>);
        s.resize(static_cast<size_t>(k));
        iwork.resize(static_cast<size_t>(8 * k));
        rwork.resize(static_cast<size_t>(7 * k + 1));
        T w{};
        lapack::gesdd('N', static_cast<lapack_int>(rows), static_cast<lapack_int>(cols), nullptr,
                      std::max<lapack_int>(static_cast<lapack_int>(rows), 1), nullptr, nullptr, 1, nullptr, 1, &w, -1,
                      rwork.data(), iwork.data());
        work.resize(static_cast<size_t>(std::max<int64_t>(lapack::query_size(w), 1)));
    }
    // Singular values (descending) of the matrix at m with strides rs, cs.
    const std::vector<R>& of(const T* m, int64_t rs, int64_t cs, const char* op) {
        if (k == 0) return s;
        copy2d(m, rs, cs, a.data(), 1, rows, rows, cols);
        for (int64_t i = 0; i < rows * cols; ++i) {
            if (!std::isfinite(std::abs(a[static_cast<size_t>(i)]))) {
                throw plugin::Error(FERRO_INVALID_ARGUMENT,
                                    std::string(op) + ": a matrix contains NaN or Inf (its singular values are undefined)");
            }
        }
        const lapack_int info =
            lapack::gesdd('N', static_cast<lapack_int>(rows), static_cast<lapack_int>(cols), a.data(),
                          std::max<lapack_int>(static_cast<lapack_int>(rows), 1), s.data(), nullptr, 1, nullptr, 1, work.data(),
                          static_cast<lapack_int>(work.size()), rwork.data(), iwork.data());
        if (info > 0) throw plugin::Error(FERRO_FAILED_PRECONDITION, std::string(op) + ": the SVD did not converge");
        return s;
    }
};

// The `ord` norm of one rows x cols matrix at m (strides rs, cs).
template <class T>
lapack::Real<T> one_matrix_norm(const T* m, int64_t rs, int64_t cs, int64_t rows, int64_t cols, MatrixOrd ord,
                                SingularValues<T>& sv, const char* op) {
    using R = lapack::Real<T>;
    auto mag = [&](int64_t i, int64_t j) { return static_cast<R>(std::abs(m[i * rs + j * cs])); };
    R result = 0;
    switch (ord) {
        case MatrixOrd::fro: {  // scaled by the largest entry, as vector_norm's 2-norm
            R largest = 0;
            bool nan = false;
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < cols; ++j) {
                    nan = nan || std::isnan(mag(i, j));
                    largest = std::max(largest, mag(i, j));
                }
            if (nan) return std::numeric_limits<R>::quiet_NaN();
            if (largest == 0 || std::isinf(largest)) return largest;
            R sum = 0;
            for (int64_t i = 0; i < rows; ++i)
                for (int64_t j = 0; j < cols; ++j) sum += (mag(i, j) / largest) * (mag(i, j) / largest);
            return largest * std::sqrt(sum);
        }
        case MatrixOrd::one:
        case MatrixOrd::minus_one:
        case MatrixOrd::inf:
        case MatrixOrd::minus_inf: {
            // Column sums (1, -1) or row sums (inf, -inf), then the max or the min.
            const bool by_column = ord == MatrixOrd::one || ord == MatrixOrd::minus_one;
            const bool largest = ord == MatrixOrd::one || ord == MatrixOrd::inf;
            const int64_t groups = by_column ? cols : rows, length = by_column ? rows : cols;
            result = largest ? -std::numeric_limits<R>::infinity() : std::numeric_limits<R>::infinity();
            if (groups == 0) return 0;  // never reached through infer, which refuses an empty max
            for (int64_t g = 0; g < groups; ++g) {
                R sum = 0;
                for (int64_t e = 0; e < length; ++e) sum += by_column ? mag(e, g) : mag(g, e);
                result = std::isnan(sum) || std::isnan(result) ? std::numeric_limits<R>::quiet_NaN()
                         : largest                             ? std::max(result, sum)
                                                               : std::min(result, sum);
            }
            return result;
        }
        case MatrixOrd::two:
        case MatrixOrd::minus_two:
        case MatrixOrd::nuc: {
            if (sv.k == 0) return 0;  // nuc of an empty matrix (2 and -2 were refused by infer)
            const auto& s = sv.of(m, rs, cs, op);
            if (ord == MatrixOrd::two) return s[0];
            if (ord == MatrixOrd::minus_two) return s[static_cast<size_t>(sv.k - 1)];
            for (R v : s) result += v;
            return result;
        }
    }
    return result;
}

template <class T> void matrix_norm(const Plan& p, const ferro_tensor_view& in, lapack::Real<T>* out) {
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < in.ndim; ++d) {
        if (d != p.row_axis && d != p.col_axis) kept.push_back(d);
    }
    const AxesWalk outer(in, kept);
    const int64_t rows = in.shape[p.row_axis], cols = in.shape[p.col_axis];
    SingularValues<T> sv(rows, cols);
    const T* x = static_cast<const T*>(in.data);
    for (int64_t o = 0; o < outer.count(); ++o) {
        out[o] = one_matrix_norm(x + outer(o), in.strides[p.row_axis], in.strides[p.col_axis], rows, cols, p.matrix_ord, sv,
                                 "linalg.matrix_norm");
    }
}

// cond: ||A|| ||A^-1|| in the `ord` norm; for 2 and -2 the ratio of extreme singular values
// (any shape). A singular matrix has condition number inf.
template <class T> void cond(const Plan& p, const ferro_tensor_view& in, lapack::Real<T>* out) {
    using R = lapack::Real<T>;
    std::vector<int64_t> batch_axes;
    for (int64_t d = 0; d + 2 < in.ndim; ++d) batch_axes.push_back(d);
    const AxesWalk outer(in, batch_axes);
    const int64_t rows = in.shape[in.ndim - 2], cols = in.shape[in.ndim - 1], rs = in.strides[in.ndim - 2],
                  cs = in.strides[in.ndim - 1];
    const R inf = std::numeric_limits<R>::infinity();
    SingularValues<T> sv(rows, cols);
    const bool spectral = p.matrix_ord == MatrixOrd::two || p.matrix_ord == MatrixOrd::minus_two;
    std::vector<T> a(static_cast<size_t>(rows * cols) + lapack::kOverreadPad<T>), work;
    std::vector<lapack_int> piv(static_cast<size_t>(rows));
    const lapack_int n = static_cast<lapack_int>(rows), ld = std::max<lapack_int>(n, 1);
    if (!spectral) {
        T w{};
        lapack::getri(n, nullptr, ld, nullptr, &w, -1);
        work.resize(static_cast<size_t>(std::max<int64_t>(lapack::query_size(w), 1)));
    }
    const T* x = static_cast<const T*>(in.data);
    for (int64_t o = 0; o < outer.count(); ++o) {
        const T* m = x + outer(o);
        if (spectral) {
            const auto& s = sv.of(m, rs, cs, "linalg.cond");
            const R big = s.front(), small = s.back();
            out[o] = p.matrix_ord == MatrixOrd::two ? (small == 0 ? inf : big / small) : (big == 0 ? R(0) : small / big);
            continue;
        }
        const R norm = one_matrix_norm(m, rs, cs, rows, cols, p.matrix_ord, sv, "linalg.cond");
        copy2d(m, rs, cs, a.data(), 1, rows, rows, cols);
        if (lapack::getrf(n, n, a.data(), ld, piv.data()) > 0) {
            out[o] = inf;
            continue;
        }
        lapack::getri(n, a.data(), ld, piv.data(), work.data(), static_cast<lapack_int>(work.size()));
        out[o] = norm * one_matrix_norm(a.data(), 1, rows, rows, cols, p.matrix_ord, sv, "linalg.cond");
    }
}

}  // namespace ferro::linalg
