// fill, cast and copy_strided.
#include "elementwise.hpp"

namespace ferro::cpu {

ferro_status fill(Engine& e, const ferro_fill_args& a) {
    const ferro_scalar v = a.value;
    const bool ok = visit_dtype(a.out.dtype, [&](auto tag) {
        using T = decltype(tag);
        T value;
        if constexpr (is_complex_v<T>) value = T(static_cast<real_t<T>>(v.real), static_cast<real_t<T>>(v.imag));
        else if constexpr (is_float_v<T>) value = static_cast<T>(v.real);
        else if constexpr (is_bool_v<T>) value = v.integer != 0 ? 1 : 0;
        else value = v.integer;
        // The input of map1 is the output itself with zero strides: only its type matters.
        ferro_tensor_view none = a.out;
        const int64_t zeros[FERRO_MAX_NDIM] = {};
        none.strides = zeros;
        map1<T, T>(e, none, a.out, [value](T) { return value; });
    });
    return ok ? nullptr : unsupported(e, "fill", "this dtype");
}

ferro_status cast(Engine& e, const ferro_cast_args& a) {
    bool inner_ok = false;
    const bool ok = visit_dtype(a.in.dtype, [&](auto in_tag) {
        using In = decltype(in_tag);
        inner_ok = visit_dtype(a.out.dtype, [&](auto out_tag) {
            using Out = decltype(out_tag);
            map1<In, Out>(e, a.in, a.out, [](In x) { return convert<Out>(x); });
        });
    });
    return ok && inner_ok ? nullptr : unsupported(e, "cast", "this dtype pair");
}

ferro_status copy_strided(Engine& e, const ferro_copy_args& a) {
    if (a.in.dtype != a.out.dtype) return unsupported(e, "copy_strided", "different dtypes");
    // Copy by element size only: all dtypes of one size move the same way.
    switch (itemsize(a.out.dtype)) {
        case 1: map1<uint8_t, uint8_t>(e, a.in, a.out, [](uint8_t x) { return x; }); return nullptr;
        case 4: map1<uint32_t, uint32_t>(e, a.in, a.out, [](uint32_t x) { return x; }); return nullptr;
        case 8: map1<uint64_t, uint64_t>(e, a.in, a.out, [](uint64_t x) { return x; }); return nullptr;
        case 16: map1<c128, c128>(e, a.in, a.out, [](c128 x) { return x; }); return nullptr;
        default: return unsupported(e, "copy_strided", "this element size");
    }
}

}  // namespace ferro::cpu
