// C++ types for ferro dtypes and a switch that calls a generic lambda with the right one.
#pragma once

#include <ferro/types.h>
#include <ferro/dtype.hpp>

#include <climits>
#include <complex>
#include <cstdint>
#include <type_traits>

namespace ferro::cpu {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using plugin::boolean;  // FERRO_DTYPE_BOOL: one byte, 0 or 1

template <class T> struct is_complex : std::false_type {};
template <class T> struct is_complex<std::complex<T>> : std::true_type {};
template <class T> inline constexpr bool is_complex_v = is_complex<T>::value;
template <class T> inline constexpr bool is_float_v = std::is_floating_point_v<T>;
template <class T> inline constexpr bool is_bool_v = std::is_same_v<T, boolean>;
template <class T> inline constexpr bool is_int_v = std::is_same_v<T, int64_t>;

// The real type of a complex type (itself otherwise).
template <class T> struct real_of { using type = T; };
template <class T> struct real_of<std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_of<T>::type;

template <class T> constexpr ferro_dtype dtype_of();
template <> constexpr ferro_dtype dtype_of<float>() { return FERRO_DTYPE_F32; }
template <> constexpr ferro_dtype dtype_of<double>() { return FERRO_DTYPE_F64; }
template <> constexpr ferro_dtype dtype_of<c64>() { return FERRO_DTYPE_C64; }
template <> constexpr ferro_dtype dtype_of<c128>() { return FERRO_DTYPE_C128; }
template <> constexpr ferro_dtype dtype_of<int64_t>() { return FERRO_DTYPE_I64; }
template <> constexpr ferro_dtype dtype_of<boolean>() { return FERRO_DTYPE_BOOL; }

// Calls f(T{}) for the C++ type of `dtype`; returns false for a dtype the engine lacks.
using plugin::visit_dtype;

// Integer arithmetic wraps modulo 2^64, as numpy's does (signed overflow would be undefined).
inline int64_t wrap_add(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
inline int64_t wrap_sub(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
inline int64_t wrap_mul(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}
inline int64_t wrap_neg(int64_t x) { return static_cast<int64_t>(0ull - static_cast<uint64_t>(x)); }

// A float to int64 as numpy does on x86: truncated, and INT64_MIN for NaN, infinities and what
// lies outside the range (a plain conversion of those is undefined behaviour).
template <class F> inline int64_t float_to_int64(F x) {
    constexpr F limit = F(9223372036854775808.0);  // 2^63
    return x >= -limit && x < limit ? static_cast<int64_t>(x) : INT64_MIN;
}

// Converts between any two engine dtypes with numpy's rules: complex -> real keeps the real
// part, anything -> bool is "!= 0", bool -> number is 0 or 1.
template <class To, class From> inline To convert(From x) {
    if constexpr (is_bool_v<To>) {
        return x != From{} ? 1 : 0;
    } else if constexpr (is_int_v<To> && is_complex_v<From>) {
        return float_to_int64(x.real());
    } else if constexpr (is_int_v<To> && is_float_v<From>) {
        return float_to_int64(x);
    } else if constexpr (is_complex_v<From> && !is_complex_v<To>) {
        return static_cast<To>(x.real());
    } else if constexpr (is_complex_v<To> && !is_complex_v<From>) {
        return To(static_cast<real_t<To>>(x), 0);
    } else if constexpr (is_complex_v<To> && is_complex_v<From>) {
        return To(static_cast<real_t<To>>(x.real()), static_cast<real_t<To>>(x.imag()));
    } else {
        return static_cast<To>(x);
    }
}

}  // namespace ferro::cpu
