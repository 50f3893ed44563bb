// fill, cast and copy_strided: elementwise maps that compute nothing.
#include "device.cuh"

namespace ferro::cuda {
namespace {

template <class T>
struct Constant {
    T value;
    __device__ T operator()() const { return value; }
};

template <class Out, class In>
struct Convert {
    __device__ Out operator()(In x) const { return convert<Out>(x); }
};

// Raw element bits: copies need only the element size.
struct alignas(16) Bits16 {
    uint64_t lo, hi;
};

template <class T>
struct Identity {
    __device__ T operator()(T x) const { return x; }
};

template <class T>
ferro_status copy_as(Session& s, const ferro_copy_args& a) {
    return map1<T, T>(s, a.out, a.in, Identity<T>{}, "copy_strided");
}

}  // namespace

ferro_status fill(Session& s, const ferro_fill_args& a) {
    const ferro_scalar v = a.value;
    ferro_status st = nullptr;
    const bool ok = visit_dtype(a.out.dtype, [&](auto tag) {
        using T = decltype(tag);
        T value;
        if constexpr (is_complex_v<T>) value = T(static_cast<real_t<T>>(v.real), static_cast<real_t<T>>(v.imag));
        else if constexpr (is_float_v<T>) value = static_cast<T>(v.real);
        else if constexpr (is_bool_v<T>) value = v.integer != 0 ? 1 : 0;
        else value = v.integer;
        st = map0<T>(s, a.out, Constant<T>{value}, "fill");
    });
    return ok ? st : unsupported(s, "fill", "this dtype");
}

ferro_status cast(Session& s, const ferro_cast_args& a) {
    ferro_status st = nullptr;
    bool inner_ok = false;
    const bool ok = visit_dtype(a.in.dtype, [&](auto in_tag) {
        using In = decltype(in_tag);
        inner_ok = visit_dtype(a.out.dtype, [&](auto out_tag) {
            using Out = decltype(out_tag);
            st = map1<Out, In>(s, a.out, a.in, Convert<Out, In>{}, "cast");
        });
    });
    return ok && inner_ok ? st : unsupported(s, "cast", "this dtype pair");
}

ferro_status copy_strided(Session& s, const ferro_copy_args& a) {
    if (a.in.dtype != a.out.dtype) return unsupported(s, "copy_strided", "operands of different dtypes");
    switch (FERRO_DTYPE_BITS(a.out.dtype)) {
        case 8: return copy_as<uint8_t>(s, a);
        case 32: return copy_as<uint32_t>(s, a);
        case 64: return copy_as<uint64_t>(s, a);
        case 128: return copy_as<Bits16>(s, a);
        default: return unsupported(s, "copy_strided", "this dtype");
    }
}

}  // namespace ferro::cuda
