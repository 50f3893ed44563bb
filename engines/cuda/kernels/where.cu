// The where kernel: out = cond ? a : b, elementwise; a selection moves bits, so only the element
// size matters.
#include "device.cuh"

namespace ferro::cuda {
namespace {

template <class T> __global__ void where_kernel(T* out, const boolean* cond, const T* a, const T* b, Strided<4> s) {
    FERRO_GRID_STRIDE(i, s.numel) {
        int64_t off[4];
        offsets_of(s, i, off);
        out[off[0]] = cond[off[1]] != 0 ? a[off[2]] : b[off[3]];
    }
}

template <class T> ferro_status where_as(Session& s, const ferro_where_args& a) {
    const ferro_tensor_view* const views[4] = {&a.out, &a.cond, &a.a, &a.b};
    const Strided<4> layout = make_strided(views);
    if (layout.numel == 0) return nullptr;
    const Engine& e = *s.engine;
    where_kernel<<<grid_for(e, layout.numel), kBlock, 0, e.stream>>>(element0<T>(a.out), element0<const boolean>(a.cond),
                                                                     element0<const T>(a.a), element0<const T>(a.b), layout);
    return launch_status(e, "where");
}

}  // namespace

ferro_status where(Session& s, const ferro_where_args& a) {
    if (a.cond.dtype != FERRO_DTYPE_BOOL || a.a.dtype != a.out.dtype || a.b.dtype != a.out.dtype) {
        return unsupported(s, "where", "these dtypes (cond must be bool, a and b the output's)");
    }
    // The selection moves bits: only the element size matters.
    switch (FERRO_DTYPE_BITS(a.out.dtype)) {
        case 8: return where_as<uint8_t>(s, a);
        case 32: return where_as<uint32_t>(s, a);
        case 64: return where_as<uint64_t>(s, a);
        case 128: return where_as<c128>(s, a);
        default: return unsupported(s, "where", "this dtype");
    }
}

}  // namespace ferro::cuda
