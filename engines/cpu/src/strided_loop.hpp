// Iteration over a strided n-d index space shared by K operands. Dimensions are coalesced
// (size-1 dims dropped, adjacent dims merged when every operand is contiguous across them), so
// the common cases become one flat loop. run(begin, end, inner) visits linear indices
// [begin, end) in row-major order, calling inner(ptrs, n, byte_strides) for runs along the last
// dimension; parallel callers give each thread its own range.
#pragma once

#include <ferro/types.h>

#include <array>
#include <cstdint>

namespace ferro::cpu {

template <int K> class StridedLoop {
public:
    // `shape` is the iteration shape; operand k's element strides are strides[k], its first
    // element is at bases[k], its element size itemsize[k].
    StridedLoop(int ndim, const int64_t* shape, const std::array<const int64_t*, K>& strides, const std::array<char*, K>& bases,
                const std::array<int64_t, K>& itemsize)
        : base_(bases) {
        numel_ = 1;
        for (int d = 0; d < ndim; ++d) numel_ *= shape[d];
        for (int d = 0; d < ndim; ++d) {
            if (shape[d] == 1) continue;
            std::array<int64_t, K> s{};
            for (int k = 0; k < K; ++k) s[k] = strides[k][d] * itemsize[k];
            if (ndim_ > 0 && mergeable(s, shape[d])) {
                shape_[ndim_ - 1] *= shape[d];
                for (int k = 0; k < K; ++k) stride_[k][ndim_ - 1] = s[k];
            } else {
                shape_[ndim_] = shape[d];
                for (int k = 0; k < K; ++k) stride_[k][ndim_] = s[k];
                ++ndim_;
            }
        }
        if (ndim_ == 0) {  // a scalar, or all dims of size 1
            shape_[0] = 1;
            for (int k = 0; k < K; ++k) stride_[k][0] = 0;
            ndim_ = 1;
        }
    }

    int64_t numel() const noexcept { return numel_; }
    int ndim() const noexcept { return ndim_; }

    // inner(std::array<char*, K>& ptrs, int64_t n, const std::array<int64_t, K>& byte_strides)
    template <class Inner> void run(int64_t begin, int64_t end, Inner&& inner) const {
        if (begin >= end) return;
        const int last = ndim_ - 1;
        std::array<int64_t, FERRO_MAX_NDIM> index;  // entries [0, ndim_) set below
        int64_t rest = begin;
        for (int d = last; d >= 0; --d) {
            index[d] = rest % shape_[d];
            rest /= shape_[d];
        }
        std::array<char*, K> ptrs;
        std::array<int64_t, K> inner_strides;
        for (int k = 0; k < K; ++k) {
            ptrs[k] = base_[k];
            for (int d = 0; d <= last; ++d) ptrs[k] += index[d] * stride_[k][d];
            inner_strides[k] = stride_[k][last];
        }
        int64_t done = begin;
        while (done < end) {
            const int64_t n = std::min(shape_[last] - index[last], end - done);
            inner(ptrs, n, inner_strides);
            done += n;
            // Advance the odometer by n along the last dimension (carrying outwards).
            for (int k = 0; k < K; ++k) ptrs[k] += n * stride_[k][last];
            index[last] += n;
            for (int d = last; d > 0 && index[d] == shape_[d]; --d) {
                index[d] = 0;
                ++index[d - 1];
                for (int k = 0; k < K; ++k) {
                    ptrs[k] += stride_[k][d - 1] - shape_[d] * stride_[k][d];
                }
            }
        }
    }

private:
    bool mergeable(const std::array<int64_t, K>& inner_strides, int64_t inner_size) const {
        for (int k = 0; k < K; ++k) {
            if (stride_[k][ndim_ - 1] != inner_strides[k] * inner_size) return false;
        }
        return true;
    }

    // Only the first ndim_ entries are used; not zero-filled (2 KB per kernel call otherwise).
    int ndim_ = 0;
    int64_t numel_ = 1;
    std::array<int64_t, FERRO_MAX_NDIM> shape_;
    std::array<std::array<int64_t, FERRO_MAX_NDIM>, K> stride_;
    std::array<char*, K> base_;
};

}  // namespace ferro::cpu
