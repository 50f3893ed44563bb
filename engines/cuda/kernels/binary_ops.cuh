// The binary ops as element functions (host and device): Binary<Op, T> says whether op is
// defined on T, its output type and its value, with the cpu engine's semantics: integer
// division floors (and is 0 for a zero divisor), integer powers wrap, maximum/minimum
// propagate NaN, complex has no order.
#pragma once

#include "device.cuh"

#include <cuda/std/cmath>

namespace ferro::cuda {

namespace cs = ::cuda::std;

FERRO_HD __forceinline__ int64_t floor_div(int64_t x, int64_t y) {
    if (y == 0) return 0;
    if (y == -1) return static_cast<int64_t>(0ull - static_cast<uint64_t>(x));
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return q;
}

FERRO_HD __forceinline__ int64_t int_pow(int64_t base, int64_t exponent) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
    uint64_t result = 1, b = static_cast<uint64_t>(base);
    for (uint64_t n = static_cast<uint64_t>(exponent); n != 0; n >>= 1) {
        if (n & 1) result *= b;
        b *= b;
    }
    return static_cast<int64_t>(result);
}

template <class T> FERRO_HD __forceinline__ T maximum(T x, T y) {
    if constexpr (is_float_v<T>) {
        if (cs::isnan(x) || cs::isnan(y)) return cs::isnan(x) ? x : y;
    }
    return x < y ? y : x;
}

template <class T> FERRO_HD __forceinline__ T minimum(T x, T y) {
    if constexpr (is_float_v<T>) {
        if (cs::isnan(x) || cs::isnan(y)) return cs::isnan(x) ? x : y;
    }
    return y < x ? y : x;
}

template <uint32_t Op, class T> struct Binary {
    static constexpr bool supported = false;
    using Out = T;
    FERRO_HD Out operator()(T, T) const { return Out{}; }
};

#define FERRO_BINARY(op, is_supported, OutType, expr)                  \
    template <class T> struct Binary<op, T> {                          \
        static constexpr bool supported = (is_supported);              \
        using Out = OutType;                                           \
        FERRO_HD Out operator()(T x, T y) const {                      \
            if constexpr (is_supported) return static_cast<Out>(expr); \
            else return Out{};                                         \
        }                                                              \
    };

FERRO_BINARY(FERRO_BINARY_ADD, number<T>, T, [&] {
    if constexpr (is_int_v<T>) return wrap_add(x, y);
    else return x + y;
}())
FERRO_BINARY(FERRO_BINARY_SUB, number<T>, T, [&] {
    if constexpr (is_int_v<T>) return wrap_sub(x, y);
    else return x - y;
}())
FERRO_BINARY(FERRO_BINARY_MUL, number<T>, T, [&] {
    if constexpr (is_int_v<T>) return wrap_mul(x, y);
    else return x * y;
}())
FERRO_BINARY(FERRO_BINARY_DIV, number<T>, T, [&] {
    if constexpr (is_int_v<T>) return floor_div(x, y);
    else return x / y;
}())
FERRO_BINARY(FERRO_BINARY_POW, number<T>, T, [&] {
    if constexpr (is_int_v<T>) return int_pow(x, y);
    else return cs::pow(x, y);
}())
FERRO_BINARY(FERRO_BINARY_MAXIMUM, number<T>&& ordered<T>, T, maximum(x, y))
FERRO_BINARY(FERRO_BINARY_MINIMUM, number<T>&& ordered<T>, T, minimum(x, y))
FERRO_BINARY(FERRO_BINARY_ATAN2, real_fp<T>, T, [&] {
    if constexpr (real_fp<T>) return cs::atan2(x, y);
    else return x;
}())
FERRO_BINARY(FERRO_BINARY_EQ, true, boolean, x == y ? 1 : 0)
FERRO_BINARY(FERRO_BINARY_NE, true, boolean, x != y ? 1 : 0)
FERRO_BINARY(FERRO_BINARY_LT, ordered<T>, boolean, [&] {
    if constexpr (ordered<T>) return x < y ? 1 : 0;
    else return 0;
}())
FERRO_BINARY(FERRO_BINARY_LE, ordered<T>, boolean, [&] {
    if constexpr (ordered<T>) return x <= y ? 1 : 0;
    else return 0;
}())
FERRO_BINARY(FERRO_BINARY_GT, ordered<T>, boolean, [&] {
    if constexpr (ordered<T>) return x > y ? 1 : 0;
    else return 0;
}())
FERRO_BINARY(FERRO_BINARY_GE, ordered<T>, boolean, [&] {
    if constexpr (ordered<T>) return x >= y ? 1 : 0;
    else return 0;
}())
FERRO_BINARY(FERRO_BINARY_LOGICAL_AND, true, boolean, x != T{} && y != T{} ? 1 : 0)
FERRO_BINARY(FERRO_BINARY_LOGICAL_OR, true, boolean, x != T{} || y != T{} ? 1 : 0)
FERRO_BINARY(FERRO_BINARY_COMPLEX, real_fp<T>, cs::complex<T>, [&] {
    if constexpr (real_fp<T>) return cs::complex<T>(x, y);
    else return cs::complex<T>();
}())

#undef FERRO_BINARY

}  // namespace ferro::cuda
