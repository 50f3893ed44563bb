// What every kernel file shares: the device types of ferro's dtypes, numpy's conversions
// between them, strided addressing, and the elementwise map kernels with their launch.
#pragma once

#include "engine.hpp"
#include "strided.hpp"

#include <ferro/dtype.hpp>

#include <cuda_runtime.h>
#include <cuda/std/complex>
#include <cuda/std/type_traits>

#include <cstdint>
#include <type_traits>
#include <utility>

// Element functions are compiled for the host too, so the host tests can check their semantics
// against the cpu engine without a device (tests/cuda/ops_host.cu).
#define FERRO_HD __host__ __device__

namespace ferro::cuda {

using c64 = ::cuda::std::complex<float>;
using c128 = ::cuda::std::complex<double>;
using plugin::boolean;  // FERRO_DTYPE_BOOL: one byte, 0 or 1

template <class T> struct is_complex { static constexpr bool value = false; };
template <class T> struct is_complex<::cuda::std::complex<T>> { static constexpr bool value = true; };
template <class T> inline constexpr bool is_complex_v = is_complex<T>::value;
template <class T> inline constexpr bool is_float_v = ::cuda::std::is_same_v<T, float> || ::cuda::std::is_same_v<T, double>;
template <class T> inline constexpr bool is_bool_v = ::cuda::std::is_same_v<T, boolean>;
template <class T> inline constexpr bool is_int_v = ::cuda::std::is_same_v<T, int64_t>;

// Which dtypes an op is defined on.
template <class T> constexpr bool fp = is_float_v<T> || is_complex_v<T>;  // float or complex
template <class T> constexpr bool real_fp = is_float_v<T>;
template <class T> constexpr bool number = !is_bool_v<T>;
template <class T> constexpr bool ordered = !is_complex_v<T>;  // complex has no order (as in torch)

template <class T> struct real_of { using type = T; };
template <class T> struct real_of<::cuda::std::complex<T>> { using type = T; };
template <class T> using real_t = typename real_of<T>::type;

template <class T> constexpr ferro_dtype dtype_of();
template <> constexpr ferro_dtype dtype_of<float>() { return FERRO_DTYPE_F32; }
template <> constexpr ferro_dtype dtype_of<double>() { return FERRO_DTYPE_F64; }
template <> constexpr ferro_dtype dtype_of<c64>() { return FERRO_DTYPE_C64; }
template <> constexpr ferro_dtype dtype_of<c128>() { return FERRO_DTYPE_C128; }
template <> constexpr ferro_dtype dtype_of<int64_t>() { return FERRO_DTYPE_I64; }
template <> constexpr ferro_dtype dtype_of<boolean>() { return FERRO_DTYPE_BOOL; }

// Calls f(T{}) for the device type of `dtype`; false for a dtype the engine lacks.
template <class F> bool visit_dtype(ferro_dtype dtype, F&& f) {
    return ::ferro::plugin::visit_dtype<::cuda::std::complex>(dtype, std::forward<F>(f));
}

// Integer arithmetic wraps modulo 2^64, as numpy's does (signed overflow would be undefined).
FERRO_HD __forceinline__ int64_t wrap_add(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
}
FERRO_HD __forceinline__ int64_t wrap_sub(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
}
FERRO_HD __forceinline__ int64_t wrap_mul(int64_t x, int64_t y) {
    return static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
}
FERRO_HD __forceinline__ int64_t wrap_neg(int64_t x) { return static_cast<int64_t>(0ull - static_cast<uint64_t>(x)); }

// Calls f(std::integral_constant<uint32_t, Op>{}) for the Op in [0, Count) that equals `op`
// (the kernels are templates on the op, chosen at run time); false when none does.
template <class F, uint32_t... Ops> bool with_op_in(uint32_t op, F& f, std::integer_sequence<uint32_t, Ops...>) {
    return ((op == Ops ? (f(std::integral_constant<uint32_t, Ops>{}), true) : false) || ...);
}
template <uint32_t Count, class F> bool with_op(uint32_t op, F&& f) {
    return with_op_in(op, f, std::make_integer_sequence<uint32_t, Count>{});
}

// numpy's conversions, as the cpu engine's: complex -> real keeps the real part, anything ->
// bool is "!= 0", bool -> number is 0 or 1.
// A float to int64 as numpy does on x86 (and the cpu engine): truncated, INT64_MIN for NaN,
// infinities and what lies outside the range (the device would saturate instead).
template <class F> FERRO_HD __forceinline__ int64_t float_to_int64(F x) {
    constexpr F limit = F(9223372036854775808.0);  // 2^63
    return x >= -limit && x < limit ? static_cast<int64_t>(x) : INT64_MIN;
}

template <class To, class From> FERRO_HD __forceinline__ To convert(From x) {
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

// Element offsets of linear index i (row-major over s.shape) in each operand. One axis (every
// dense operand) needs no division; 32-bit division where the index fits.
template <int N> FERRO_HD __forceinline__ void offsets_of(const Strided<N>& s, int64_t i, int64_t (&off)[N]) {
    for (int k = 0; k < N; ++k) off[k] = s.ndim == 1 ? i * s.stride[k][0] : 0;
    if (s.ndim <= 1) return;
    if (s.numel <= INT32_MAX) {
        uint32_t rest = static_cast<uint32_t>(i);
        for (int d = s.ndim - 1; d >= 0; --d) {
            const uint32_t n = static_cast<uint32_t>(s.shape[d]);
            const uint32_t q = rest / n, r = rest - q * n;
            rest = q;
            for (int k = 0; k < N; ++k) off[k] += static_cast<int64_t>(r) * s.stride[k][d];
        }
    } else {
        int64_t rest = i;
        for (int d = s.ndim - 1; d >= 0; --d) {
            const int64_t q = rest / s.shape[d], r = rest - q * s.shape[d];
            rest = q;
            for (int k = 0; k < N; ++k) off[k] += r * s.stride[k][d];
        }
    }
}

constexpr int kBlock = 256;

// Blocks for `n` elements with a grid-stride loop: enough to fill the device several times
// over, no more.
inline unsigned grid_for(const Engine& e, int64_t n) {
    const int64_t wanted = (n + kBlock - 1) / kBlock;
    const int64_t cap = int64_t{e.props.multiProcessorCount} * 32;
    return static_cast<unsigned>(wanted < cap ? (wanted < 1 ? 1 : wanted) : cap);
}

#define FERRO_GRID_STRIDE(i, n) \
    for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < (n); i += int64_t{gridDim.x} * blockDim.x)

template <class Out, class F> __global__ void map0_kernel(Out* out, Strided<1> s, F f) {
    FERRO_GRID_STRIDE(i, s.numel) {
        int64_t off[1];
        offsets_of(s, i, off);
        out[off[0]] = f();
    }
}

template <class Out, class In, class F> __global__ void map1_kernel(Out* out, const In* in, Strided<2> s, F f) {
    FERRO_GRID_STRIDE(i, s.numel) {
        int64_t off[2];
        offsets_of(s, i, off);
        out[off[0]] = f(in[off[1]]);
    }
}

template <class Out, class In, class F> __global__ void map2_kernel(Out* out, const In* a, const In* b, Strided<3> s, F f) {
    FERRO_GRID_STRIDE(i, s.numel) {
        int64_t off[3];
        offsets_of(s, i, off);
        out[off[0]] = f(a[off[1]], b[off[2]]);
    }
}

// out = f() / f(in) / f(a, b) over out's shape, enqueued on the engine's stream.
template <class Out, class F> ferro_status map0(Session& s, const ferro_tensor_view& out, F f, const char* kernel) {
    const ferro_tensor_view* const views[1] = {&out};
    const Strided<1> layout = make_strided(views);
    if (layout.numel == 0) return nullptr;
    const Engine& e = *s.engine;
    map0_kernel<<<grid_for(e, layout.numel), kBlock, 0, e.stream>>>(element0<Out>(out), layout, f);
    return launch_status(e, kernel);
}

template <class Out, class In, class F>
ferro_status map1(Session& s, const ferro_tensor_view& out, const ferro_tensor_view& in, F f, const char* kernel) {
    const ferro_tensor_view* const views[2] = {&out, &in};
    const Strided<2> layout = make_strided(views);
    if (layout.numel == 0) return nullptr;
    const Engine& e = *s.engine;
    map1_kernel<<<grid_for(e, layout.numel), kBlock, 0, e.stream>>>(element0<Out>(out), element0<const In>(in), layout, f);
    return launch_status(e, kernel);
}

template <class Out, class In, class F>
ferro_status map2(Session& s, const ferro_tensor_view& out, const ferro_tensor_view& a, const ferro_tensor_view& b, F f,
                  const char* kernel) {
    const ferro_tensor_view* const views[3] = {&out, &a, &b};
    const Strided<3> layout = make_strided(views);
    if (layout.numel == 0) return nullptr;
    const Engine& e = *s.engine;
    map2_kernel<<<grid_for(e, layout.numel), kBlock, 0, e.stream>>>(element0<Out>(out), element0<const In>(a),
                                                                    element0<const In>(b), layout, f);
    return launch_status(e, kernel);
}

// "<kernel> does not support <what>" as UNIMPLEMENTED.
inline ferro_status unsupported(const Session& s, const char* kernel, const std::string& what) {
    return make_status(*s.engine, FERRO_UNIMPLEMENTED, std::string(kernel) + " does not support " + what);
}

}  // namespace ferro::cuda
