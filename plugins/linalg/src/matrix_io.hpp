// Moving matrices between strided tensor views and the packed column-major buffers LAPACK
// works on, and walking a (broadcast) batch of matrices.
#pragma once

#include <ferro/types.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

namespace ferro::linalg {

template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

template <class T> inline T conj_if(T x, bool conj) {
    if constexpr (is_complex_v<T>) {
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

// Which elements of a matrix a copy covers.
enum class Part { all, lower, upper };  // lower: j <= i; upper: j >= i

// d[i + j * ldd] = s[i * lds + j] for the `part` of a rows x cols matrix (conjugated when
// asked): the transposing copy between row- and column-major layouts, in 8 x 8 blocks taken
// 8 source rows at a time, so that the source is read in order and each block writes 8 whole
// cache lines of 8 destination columns. The lower triangle of n = 1024 doubles takes 1.0 ms
// from cold caches (a memcpy of the whole matrix 1.1-1.3 ms) and 0.48 ms from hot ones;
// walking the destination's columns in order instead (reading the source 8 columns at a time)
// took 1.6 and 0.8 ms, element by element in 32 x 32 tiles 1.1 ms hot. Staging each block in
// a local array was 1.3-1.8x slower, 4 x 4 and 16 x 16 blocks 1.1-1.6x.
template <class T>
void copy_transposing(const T* s, int64_t lds, T* d, int64_t ldd, int64_t rows, int64_t cols, bool conj, Part part) {
    constexpr int64_t B = 8;
    for (int64_t i0 = 0; i0 < rows; i0 += B) {
        const int64_t i1 = std::min(rows, i0 + B);
        const int64_t first = part == Part::upper ? i0 : 0;  // blocks left of the diagonal hold no upper element
        const int64_t end = part == Part::lower ? std::min(cols, i1) : cols;
        for (int64_t j0 = first; j0 < end; j0 += B) {
            const int64_t j1 = std::min(end, j0 + B);
            const bool diagonal = part != Part::all && i0 == j0;
            if (i1 - i0 == B && j1 - j0 == B && !diagonal) {  // a whole block: fixed trip counts the compiler unrolls
                for (int64_t j = j0; j < j0 + B; ++j)
                    for (int64_t i = i0; i < i0 + B; ++i) d[i + j * ldd] = conj_if(s[i * lds + j], conj);
                continue;
            }
            for (int64_t j = j0; j < j1; ++j) {
                const int64_t lo = part == Part::lower ? std::max(i0, j) : i0;
                const int64_t hi = part == Part::upper ? std::min(i1, j + 1) : i1;
                for (int64_t i = lo; i < hi; ++i) d[i + j * ldd] = conj_if(s[i * lds + j], conj);
            }
        }
    }
}

// dst(i, j) = src(i, j) (conjugated when asked) for the `part` of a rows x cols matrix;
// strides in elements. Elements outside the part are left alone.
template <class T>
void copy_part(const T* src, int64_t src_rs, int64_t src_cs, T* dst, int64_t dst_rs, int64_t dst_cs, int64_t rows, int64_t cols,
               bool conj, Part part) {
    auto in_part = [part](int64_t i, int64_t j) { return part == Part::all || (part == Part::lower ? j <= i : j >= i); };
    conj = conj && is_complex_v<T>;             // real data: the straight copies below serve
    if (!conj && src_cs == 1 && dst_cs == 1) {  // rows are contiguous on both sides
        for (int64_t i = 0; i < rows; ++i) {
            const int64_t lo = part == Part::upper ? std::min(i, cols) : 0;
            const int64_t hi = part == Part::lower ? std::min(i + 1, cols) : cols;
            std::copy(src + i * src_rs + lo, src + i * src_rs + hi, dst + i * dst_rs + lo);
        }
        return;
    }
    if (!conj && src_rs == 1 && dst_rs == 1) {  // columns are
        for (int64_t j = 0; j < cols; ++j) {
            const int64_t lo = part == Part::lower ? std::min(j, rows) : 0;
            const int64_t hi = part == Part::upper ? std::min(j + 1, rows) : rows;
            std::copy(src + j * src_cs + lo, src + j * src_cs + hi, dst + j * dst_cs + lo);
        }
        return;
    }
    if (src_cs == 1 && dst_rs == 1) return copy_transposing(src, src_rs, dst, dst_cs, rows, cols, conj, part);
    if (src_rs == 1 && dst_cs == 1) {  // the same with the roles of rows and columns swapped
        const Part swapped = part == Part::lower ? Part::upper : part == Part::upper ? Part::lower : Part::all;
        return copy_transposing(src, src_cs, dst, dst_rs, cols, rows, conj, swapped);
    }
    for_each_tiled(
        rows, cols, src_cs, dst_rs, dst_cs,
        [&](int64_t i, int64_t j) {
            if (in_part(i, j)) dst[i * dst_rs + j * dst_cs] = conj_if(src[i * src_rs + j * src_cs], conj);
        },
        [part](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
            return (part == Part::lower && j0 > i1 - 1) || (part == Part::upper && i0 > j1 - 1);
        });
}

// dst(i, j) = src(i, j) (conjugated when asked) for a rows x cols matrix; strides in elements.
template <class T>
void copy2d(const T* src, int64_t src_rs, int64_t src_cs, T* dst, int64_t dst_rs, int64_t dst_cs, int64_t rows, int64_t cols,
            bool conj = false) {
    copy_part(src, src_rs, src_cs, dst, dst_rs, dst_cs, rows, cols, conj, Part::all);
}

// The lower triangle (j <= i) of an n x n matrix, dst(i, j) = src(i, j); with zero_upper the
// rest of dst becomes 0, else it is left alone. Half the traffic of copy2d when only a
// triangle matters (Cholesky).
template <class T>
void copy_lower(const T* src, int64_t src_rs, int64_t src_cs, T* dst, int64_t dst_rs, int64_t dst_cs, int64_t n,
                bool zero_upper) {
    copy_part(src, src_rs, src_cs, dst, dst_rs, dst_cs, n, n, false, Part::lower);
    if (!zero_upper) return;
    for (int64_t k = 0; k < n; ++k) {  // the strictly upper triangle, along dst's unit stride where it has one
        if (dst_rs == 1) {
            std::fill(dst + k * dst_cs, dst + k * dst_cs + k, T(0));  // column k above the diagonal
        } else if (dst_cs == 1) {
            std::fill(dst + k * dst_rs + k + 1, dst + k * dst_rs + n, T(0));  // row k right of it
        } else {
            for (int64_t j = k + 1; j < n; ++j) dst[k * dst_rs + j * dst_cs] = T(0);
        }
    }
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
