// The unary ops as element functions (host and device): Unary<Op, T> says whether op is
// defined on T, its output type and its value, with the cpu engine's semantics.
#pragma once

#include "device.cuh"

#include <cuda/std/cmath>

namespace ferro::cuda {

namespace cs = ::cuda::std;

// 1/sqrt(x): the device's instruction, the plain quotient on the host.
template <class T> FERRO_HD __forceinline__ T rsqrt_of(T x) {
#ifdef __CUDA_ARCH__
    return rsqrt(x);
#else
    return T(1) / cs::sqrt(x);
#endif
}

template <class T> FERRO_HD __forceinline__ bool nan_in(T x) {
    if constexpr (is_complex_v<T>) return cs::isnan(x.real()) || cs::isnan(x.imag());
    else if constexpr (is_float_v<T>) return cs::isnan(x);
    else return false;
}

template <class T> FERRO_HD __forceinline__ bool inf_in(T x) {
    if constexpr (is_complex_v<T>) return cs::isinf(x.real()) || cs::isinf(x.imag());
    else if constexpr (is_float_v<T>) return cs::isinf(x);
    else return false;
}

template <class T> FERRO_HD __forceinline__ T sign_of(T x) {
    if constexpr (is_complex_v<T>) {
        const real_t<T> r = cs::abs(x);
        return r == 0 ? T(0) : x / r;
    } else {
        return x > 0 ? T(1) : x < 0 ? T(-1) : x;  // keeps 0 and NaN
    }
}

// Unary<Op, T>: whether the op is defined on T, its output type and its value.
template <uint32_t Op, class T> struct Unary {
    static constexpr bool supported = false;
    using Out = T;
    FERRO_HD Out operator()(T) const { return Out{}; }
};

#define FERRO_UNARY(op, is_supported, OutType, expr)                   \
    template <class T> struct Unary<op, T> {                           \
        static constexpr bool supported = (is_supported);              \
        using R = real_t<T>;                                           \
        using Out = OutType;                                           \
        FERRO_HD Out operator()(T x) const {                           \
            if constexpr (is_supported) return static_cast<Out>(expr); \
            else return Out{};                                         \
        }                                                              \
    };

FERRO_UNARY(FERRO_UNARY_NEG, number<T>, T, [&] {
    if constexpr (is_int_v<T>) return wrap_neg(x);
    else return -x;
}())
FERRO_UNARY(FERRO_UNARY_CONJ, number<T>, T, [&] {
    if constexpr (is_complex_v<T>) return cs::conj(x);
    else return x;
}())
FERRO_UNARY(FERRO_UNARY_EXP, fp<T>, T, cs::exp(x))
FERRO_UNARY(FERRO_UNARY_LOG, fp<T>, T, cs::log(x))
FERRO_UNARY(FERRO_UNARY_SIN, fp<T>, T, cs::sin(x))
FERRO_UNARY(FERRO_UNARY_COS, fp<T>, T, cs::cos(x))
FERRO_UNARY(FERRO_UNARY_TAN, fp<T>, T, cs::tan(x))
FERRO_UNARY(FERRO_UNARY_TANH, fp<T>, T, cs::tanh(x))
FERRO_UNARY(FERRO_UNARY_SQRT, fp<T>, T, cs::sqrt(x))
FERRO_UNARY(FERRO_UNARY_RSQRT, fp<T>, T, [&] {
    if constexpr (real_fp<T>) return rsqrt_of(x);
    else return T(1) / cs::sqrt(x);
}())
FERRO_UNARY(FERRO_UNARY_SIGN, number<T>, T, sign_of(x))
FERRO_UNARY(FERRO_UNARY_RECIPROCAL, fp<T>, T, T(1) / x)
FERRO_UNARY(FERRO_UNARY_SQUARE, number<T>, T, [&] {
    if constexpr (is_int_v<T>) return wrap_mul(x, x);
    else return x * x;
}())
// No complex expm1/log1p anywhere (nor in the cpu engine): exp(x) - 1 there.
FERRO_UNARY(FERRO_UNARY_EXPM1, fp<T>, T, [&] {
    if constexpr (real_fp<T>) return cs::expm1(x);
    else return cs::exp(x) - T(1);
}())
FERRO_UNARY(FERRO_UNARY_LOG1P, fp<T>, T, [&] {
    if constexpr (real_fp<T>) return cs::log1p(x);
    else return cs::log(T(1) + x);
}())
FERRO_UNARY(FERRO_UNARY_SINH, fp<T>, T, cs::sinh(x))
FERRO_UNARY(FERRO_UNARY_COSH, fp<T>, T, cs::cosh(x))
FERRO_UNARY(FERRO_UNARY_ASIN, fp<T>, T, cs::asin(x))
FERRO_UNARY(FERRO_UNARY_ACOS, fp<T>, T, cs::acos(x))
FERRO_UNARY(FERRO_UNARY_ATAN, fp<T>, T, cs::atan(x))
FERRO_UNARY(FERRO_UNARY_SIGMOID, fp<T>, T, T(1) / (T(1) + cs::exp(-x)))
FERRO_UNARY(FERRO_UNARY_ERF, real_fp<T>, T, cs::erf(x))
FERRO_UNARY(FERRO_UNARY_FLOOR, real_fp<T>, T, cs::floor(x))
FERRO_UNARY(FERRO_UNARY_CEIL, real_fp<T>, T, cs::ceil(x))
FERRO_UNARY(FERRO_UNARY_ROUND, real_fp<T>, T, cs::rint(x))  // half to even
FERRO_UNARY(FERRO_UNARY_ABS, number<T>, R, [&] {
    if constexpr (is_int_v<T>) return x < 0 ? wrap_neg(x) : x;
    else return cs::abs(x);
}())
FERRO_UNARY(FERRO_UNARY_REAL, is_complex_v<T>, R, [&] {
    if constexpr (is_complex_v<T>) return x.real();
    else return x;
}())
FERRO_UNARY(FERRO_UNARY_IMAG, is_complex_v<T>, R, [&] {
    if constexpr (is_complex_v<T>) return x.imag();
    else return x;
}())
FERRO_UNARY(FERRO_UNARY_ANGLE, fp<T>, R, [&] {
    if constexpr (is_complex_v<T>) return cs::arg(x);
    else return cs::atan2(R(0), x);
}())
FERRO_UNARY(FERRO_UNARY_LOGICAL_NOT, true, boolean, x == T{} ? 1 : 0)
FERRO_UNARY(FERRO_UNARY_ISNAN, true, boolean, nan_in(x) ? 1 : 0)
FERRO_UNARY(FERRO_UNARY_ISINF, true, boolean, inf_in(x) ? 1 : 0)
FERRO_UNARY(FERRO_UNARY_ISFINITE, true, boolean, nan_in(x) || inf_in(x) ? 0 : 1)

#undef FERRO_UNARY

}  // namespace ferro::cuda
