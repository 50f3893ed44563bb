// inverse_gaps on the cpu: F[..., i, j] = f(y_j - y_i) with y = x (or x^2), f(d) = 1/d, or
// d / (d^2 + eps) when eps > 0, and 0 on the diagonal. One op instead of the eight calls
// (squares, two unsqueezes, a difference, an identity, a shift, a reciprocal and its undoing)
// that eigh and svd derivatives would otherwise spend on it.
#pragma once

#include "matrix_io.hpp"

#include <ferro/types.h>

#include <cstdint>
#include <span>
#include <vector>

namespace ferro::linalg {

template <class T>
void inverse_gaps(const ferro_tensor_view& x, bool squares, double eps, const ferro_tensor_view& out) {
    const int batch_dims = x.ndim - 1;
    const int64_t n = x.shape[batch_dims], stride = x.strides[batch_dims];
    const std::span<const int64_t> batch(x.shape, static_cast<size_t>(batch_dims));
    const int64_t row_stride = out.strides[batch_dims], col_stride = out.strides[batch_dims + 1];
    int64_t count = 1;
    for (int64_t d : batch) count *= d;
    std::vector<T> y(static_cast<size_t>(n));
    const T e = static_cast<T>(eps);
    for (int64_t b = 0; b < count; ++b) {
        const T* v = static_cast<const T*>(x.data) + offset_of(b, batch, {x.strides, static_cast<size_t>(batch_dims)});
        T* f = static_cast<T*>(out.data) + offset_of(b, batch, {out.strides, static_cast<size_t>(batch_dims)});
        for (int64_t i = 0; i < n; ++i) y[i] = squares ? v[i * stride] * v[i * stride] : v[i * stride];
        for (int64_t i = 0; i < n; ++i) {
            for (int64_t j = 0; j < n; ++j) {
                const T d = y[j] - y[i];
                f[i * row_stride + j * col_stride] = i == j ? T(0) : eps == 0 ? T(1) / d : d / (d * d + e);
            }
        }
    }
}

}  // namespace ferro::linalg
