// The fill kernel: every element of a strided view set to one value.
#include "device.cuh"

namespace ferro::cuda {
namespace {

template <class T> struct Constant {
    T value;
    __device__ T operator()() const { return value; }
};

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

}  // namespace ferro::cuda
