// Moving matrices between strided tensor views and the packed column-major buffers LAPACK
// works on, and walking a (broadcast) batch of matrices.
#pragma once

#include <ferro/types.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

namespace ferro::linalg {

template <class T> inline T conj_if(T x, bool conj) {
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
        return conj ? std::conj(x) : x;
    } else {
        (void)conj;
        return x;
    }
}

// Visits (i, j) of a rows x cols matrix in 32 x 32 tiles, the inner loop along the
// destination's unit stride: strided stores cost 5x strided loads here (measured at n = 256,
// where power-of-two strides make every store of a column hit one cache set). `skip_tile(i0,
// i1, j0, j1)` may pass over a whole tile.
template <class Each, class Skip>
void for_each_tiled(int64_t rows, int64_t cols, int64_t src_cs, int64_t dst_rs, int64_t dst_cs, Each&& each, Skip&& skip_tile) {
    constexpr int64_t tile = 32;
    const bool along_rows = dst_cs == 1 || (dst_rs != 1 && src_cs == 1);
    for (int64_t i0 = 0; i0 < rows; i0 += tile) {
        const int64_t i1 = std::min(rows, i0 + tile);
        for (int64_t j0 = 0; j0 < cols; j0 += tile) {
            const int64_t j1 = std::min(cols, j0 + tile);
            if (skip_tile(i0, i1, j0, j1)) continue;
            if (along_rows) {
                for (int64_t i = i0; i < i1; ++i)
                    for (int64_t j = j0; j < j1; ++j) each(i, j);
            } else {
                for (int64_t j = j0; j < j1; ++j)
                    for (int64_t i = i0; i < i1; ++i) each(i, j);
            }
        }
    }
}

// dst(i, j) = src(i, j) (conjugated when asked) for a rows x cols matrix; strides in elements.
template <class T>
void copy2d(const T* src, int64_t src_rs, int64_t src_cs, T* dst, int64_t dst_rs, int64_t dst_cs, int64_t rows,
            int64_t cols, bool conj = false) {
    if (src_cs == 1 && dst_cs == 1 && !conj) {  // rows are contiguous on both sides
        for (int64_t i = 0; i < rows; ++i) std::copy(src + i * src_rs, src + i * src_rs + cols, dst + i * dst_rs);
        return;
    }
    if (src_rs == 1 && dst_rs == 1 && !conj) {  // columns are
        for (int64_t j = 0; j < cols; ++j) std::copy(src + j * src_cs, src + j * src_cs + rows, dst + j * dst_cs);
        return;
    }
    for_each_tiled(rows, cols, src_cs, dst_rs, dst_cs,
                   [&](int64_t i, int64_t j) { dst[i * dst_rs + j * dst_cs] = conj_if(src[i * src_rs + j * src_cs], conj); },
                   [](int64_t, int64_t, int64_t, int64_t) { return false; });
}

// The lower triangle (j <= i) of an n x n matrix, dst(i, j) = src(i, j); with zero_upper the
// rest of dst becomes 0, else it is left alone. Half the traffic of copy2d when only a
// triangle matters (Cholesky).
template <class T>
void copy_lower(const T* src, int64_t src_rs, int64_t src_cs, T* dst, int64_t dst_rs, int64_t dst_cs, int64_t n,
                bool zero_upper) {
    for_each_tiled(n, n, src_cs, dst_rs, dst_cs,
                   [&](int64_t i, int64_t j) { dst[i * dst_rs + j * dst_cs] = j <= i ? src[i * src_rs + j * src_cs] : T(0); },
                   [zero_upper](int64_t, int64_t i1, int64_t j0, int64_t) { return !zero_upper && j0 > i1 - 1; });
}

// The element offset of linear index `index` (row-major over `sizes`) with `strides`.
inline int64_t offset_of(int64_t index, std::span<const int64_t> sizes, std::span<const int64_t> strides) {
    int64_t offset = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
        offset += (index % sizes[d]) * strides[d];
        index /= sizes[d];
    }
    return offset;
}

// One operand's element offset of each matrix of a batch: its batch dims (the leading
// ndim - matrix_dims) right-aligned against the batch shape, stride 0 where it broadcasts.
class BatchOffsets {
public:
    BatchOffsets(std::span<const int64_t> batch, const ferro_tensor_view& v, int matrix_dims) : batch_(batch) {
        const int own = v.ndim - matrix_dims;
        strides_.assign(batch.size(), 0);
        for (int i = 0; i < own; ++i) {
            const size_t at = batch.size() - static_cast<size_t>(own - i);
            strides_[at] = v.shape[i] == 1 ? 0 : v.strides[i];
        }
    }
    int64_t operator()(int64_t index) const { return offset_of(index, batch_, strides_); }

private:
    std::span<const int64_t> batch_;
    std::vector<int64_t> strides_;
};

// The multi-index of matrix `index` of a batch, for messages.
inline std::vector<int64_t> batch_index(std::span<const int64_t> batch, int64_t index) {
    std::vector<int64_t> at(batch.size());
    for (size_t d = batch.size(); d-- > 0;) {
        at[d] = index % batch[d];
        index /= batch[d];
    }
    return at;
}

}  // namespace ferro::linalg
