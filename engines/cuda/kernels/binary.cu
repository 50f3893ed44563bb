// The binary and where kernels, with the cpu engine's semantics: integer division floors (and
// is 0 for a zero divisor), integer powers wrap, maximum/minimum propagate NaN, complex has
// no order.
#include "binary_ops.cuh"

#include <utility>

namespace ferro::cuda {
namespace {

template <uint32_t Op, class T>
ferro_status run(Session& s, const ferro_binary_args& a) {
    using B = Binary<Op, T>;
    if constexpr (B::supported) {
        if (a.out.dtype != dtype_of<typename B::Out>()) return unsupported(s, "binary", "this output dtype for op " + std::to_string(Op));
        return map2<typename B::Out, T>(s, a.out, a.a, a.b, B{}, "binary");
    } else {
        return unsupported(s, "binary", "op " + std::to_string(Op) + " on this dtype");
    }
}

template <class T, uint32_t... Ops>
ferro_status dispatch(Session& s, const ferro_binary_args& a, std::integer_sequence<uint32_t, Ops...>) {
    ferro_status st = nullptr;
    const bool known = ((a.op == Ops ? (st = run<Ops, T>(s, a), true) : false) || ...);
    return known ? st : unsupported(s, "binary", "op " + std::to_string(a.op));
}

template <class T>
__global__ void where_kernel(T* out, const boolean* cond, const T* a, const T* b, Strided<4> s) {
    FERRO_GRID_STRIDE(i, s.numel) {
        int64_t off[4];
        offsets_of(s, i, off);
        out[off[0]] = cond[off[1]] != 0 ? a[off[2]] : b[off[3]];
    }
}

template <class T>
ferro_status where_as(Session& s, const ferro_where_args& a) {
    const ferro_tensor_view* const views[4] = {&a.out, &a.cond, &a.a, &a.b};
    const Strided<4> layout = make_strided(views);
    if (layout.numel == 0) return nullptr;
    const Engine& e = *s.engine;
    where_kernel<<<grid_for(e, layout.numel), kBlock, 0, e.stream>>>(element0<T>(a.out), element0<const boolean>(a.cond),
                                                                      element0<const T>(a.a), element0<const T>(a.b), layout);
    return launch_status(e, "where");
}

}  // namespace

ferro_status binary(Session& s, const ferro_binary_args& a) {
    if (a.a.dtype != a.b.dtype) return unsupported(s, "binary", "operands of different dtypes");
    ferro_status st = nullptr;
    const bool ok = visit_dtype(a.a.dtype, [&](auto tag) {
        st = dispatch<decltype(tag)>(s, a, std::make_integer_sequence<uint32_t, FERRO_BINARY_COUNT_>{});
    });
    return ok ? st : unsupported(s, "binary", "this dtype");
}

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
