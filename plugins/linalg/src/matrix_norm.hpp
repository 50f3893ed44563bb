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

template <class T>
void matrix_norm(const Plan& p, const ferro_tensor_view& in, lapack::Real<T>* out) {
    using R = lapack::Real<T>;
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < in.ndim; ++d) {
        if (d != p.row_axis && d != p.col_axis) kept.push_back(d);
    }
    const AxesWalk outer(in, kept);
    const int64_t rows = in.shape[p.row_axis], cols = in.shape[p.col_axis], k = std::min(rows, cols);
    const int64_t rs = in.strides[p.row_axis], cs = in.strides[p.col_axis];
    const MatrixOrd ord = p.matrix_ord;
    const bool spectral = ord == MatrixOrd::two || ord == MatrixOrd::minus_two || ord == MatrixOrd::nuc;
    // Singular values: workspace queried once per call.
    std::vector<T> a, work;
    std::vector<R> s, rwork;
    std::vector<lapack_int> iwork;
    const lapack_int lr = static_cast<lapack_int>(rows), lc = static_cast<lapack_int>(cols), ld = std::max<lapack_int>(lr, 1);
    if (spectral && k > 0) {
        a.resize(static_cast<size_t>(rows * cols));
        s.resize(static_cast<size_t>(k));
        iwork.resize(static_cast<size_t>(8 * k));
        rwork.resize(static_cast<size_t>(7 * k + 1));
        T w{};
        lapack::gesdd('N', lr, lc, nullptr, ld, nullptr, nullptr, 1, nullptr, 1, &w, -1, rwork.data(), iwork.data());
        work.resize(static_cast<size_t>(std::max<int64_t>(lapack::query_size(w), 1)));
    }
    const T* x = static_cast<const T*>(in.data);
    for (int64_t o = 0; o < outer.count(); ++o) {
        const T* m = x + outer(o);
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
                if (nan) { result = std::numeric_limits<R>::quiet_NaN(); break; }
                if (largest == 0 || std::isinf(largest)) { result = largest; break; }
                R sum = 0;
                for (int64_t i = 0; i < rows; ++i)
                    for (int64_t j = 0; j < cols; ++j) sum += (mag(i, j) / largest) * (mag(i, j) / largest);
                result = largest * std::sqrt(sum);
                break;
            }
            case MatrixOrd::one: case MatrixOrd::minus_one: case MatrixOrd::inf: case MatrixOrd::minus_inf: {
                // Column sums (1, -1) or row sums (inf, -inf), then the max or the min.
                const bool by_column = ord == MatrixOrd::one || ord == MatrixOrd::minus_one;
                const bool largest = ord == MatrixOrd::one || ord == MatrixOrd::inf;
                const int64_t groups = by_column ? cols : rows, length = by_column ? rows : cols;
                result = largest ? -std::numeric_limits<R>::infinity() : std::numeric_limits<R>::infinity();
                if (groups == 0) result = 0;  // never reached: infer refuses an empty max
                for (int64_t g = 0; g < groups; ++g) {
                    R sum = 0;
                    for (int64_t e = 0; e < length; ++e) sum += by_column ? mag(e, g) : mag(g, e);
                    result = std::isnan(sum) || std::isnan(result) ? std::numeric_limits<R>::quiet_NaN()
                             : largest                              ? std::max(result, sum)
                                                                    : std::min(result, sum);
                }
                break;
            }
            case MatrixOrd::two: case MatrixOrd::minus_two: case MatrixOrd::nuc: {
                if (k == 0) break;  // nuc of an empty matrix: 0 (2 and -2 were refused by infer)
                copy2d(m, rs, cs, a.data(), 1, rows, rows, cols);
                for (const T& v : a) {
                    if (!std::isfinite(std::abs(v))) {
                        throw plugin::Error(FERRO_INVALID_ARGUMENT, "linalg.matrix_norm: matrix " + std::to_string(o) +
                                                                        " contains NaN or Inf (its singular values are undefined)");
                    }
                }
                const lapack_int info = lapack::gesdd('N', lr, lc, a.data(), ld, s.data(), nullptr, 1, nullptr, 1, work.data(),
                                                      static_cast<lapack_int>(work.size()), rwork.data(), iwork.data());
                if (info > 0) throw plugin::Error(FERRO_FAILED_PRECONDITION, "linalg.matrix_norm: the SVD did not converge");
                if (ord == MatrixOrd::two) result = s[0];
                else if (ord == MatrixOrd::minus_two) result = s[static_cast<size_t>(k - 1)];
                else for (R v : s) result += v;
                break;
            }
        }
        out[o] = result;
    }
}

}  // namespace ferro::linalg
