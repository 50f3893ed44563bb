// The layout an elementwise kernel iterates: one shape and each operand's element strides,
// passed to the kernel by value. Built on the host with size-1 axes dropped and adjacent axes
// merged wherever every operand is contiguous across them, so a dense tensor is one axis.
#pragma once

#include <ferro/types.h>

#include <cstdint>

namespace ferro::cuda {

constexpr int kMaxDims = FERRO_MAX_NDIM;

template <int N> struct Strided {
    int32_t ndim = 0;
    int64_t numel = 0;
    int64_t shape[kMaxDims];
    int64_t stride[N][kMaxDims];
};

// Appends an axis of `n` elements with each operand's stride, merged into the last axis when
// every operand is contiguous across the two; size-1 axes are dropped.
template <int N> void push_axis(Strided<N>& s, int64_t n, const int64_t (&strides)[N]) {
    s.numel *= n;
    if (n == 1) return;
    bool merge = s.ndim > 0;
    for (int k = 0; k < N && merge; ++k) merge = s.stride[k][s.ndim - 1] == strides[k] * n;
    if (merge) {
        s.shape[s.ndim - 1] *= n;
        for (int k = 0; k < N; ++k) s.stride[k][s.ndim - 1] = strides[k];
    } else {
        s.shape[s.ndim] = n;
        for (int k = 0; k < N; ++k) s.stride[k][s.ndim] = strides[k];
        ++s.ndim;
    }
}

// The layout of `views` (all of views[0]'s shape) over views[0]'s shape.
template <int N> Strided<N> make_strided(const ferro_tensor_view* const (&views)[N]) {
    Strided<N> s;
    s.numel = 1;
    for (int d = 0; d < views[0]->ndim; ++d) {
        int64_t strides[N];
        for (int k = 0; k < N; ++k) strides[k] = views[k]->strides[d];
        push_axis(s, views[0]->shape[d], strides);
    }
    return s;
}

// Element 0 of a view: buffers of this engine are device pointers.
template <class T> T* element0(const ferro_tensor_view& v) {
    return reinterpret_cast<T*>(reinterpret_cast<char*>(v.buffer) + v.byte_offset);
}

}  // namespace ferro::cuda
