// The unary kernel: every ferro_unary_op for every dtype where numpy defines it.
#include "elementwise.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#if FERRO_HAVE_LIBMVEC
#include <emmintrin.h>
// glibc's vector math library (libmvec): tanh four floats or two doubles at a time, in the
// baseline SSE calling convention; glibc picks the SSE4, AVX2 or AVX-512 body at load time.
extern "C" __m128 _ZGVbN4v_tanhf(__m128);
extern "C" __m128d _ZGVbN2v_tanh(__m128d);
#endif

namespace ferro::cpu {
namespace {

#if FERRO_HAVE_LIBMVEC
// tanh of a dense f32 or f64 tensor through libmvec, the tail too (padded to a whole vector),
// so that an element's value does not depend on where it sits: a fused program (kernels_fused)
// cuts the same elements into other blocks.
template <class T> bool vector_tanh(Engine& e, const ferro_unary_args& a) {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        if (!is_dense(a.in) || !is_dense(a.out)) return false;
        const T* x = static_cast<const T*>(a.in.data);
        T* o = static_cast<T*>(a.out.data);
        run_flat(e, numel_of(a.out), [&](int64_t begin, int64_t end) {
            constexpr int64_t lanes = std::is_same_v<T, float> ? 4 : 2;
            int64_t i = begin;
            for (; i + lanes <= end; i += lanes) {
                if constexpr (std::is_same_v<T, float>) _mm_storeu_ps(o + i, _ZGVbN4v_tanhf(_mm_loadu_ps(x + i)));
                else _mm_storeu_pd(o + i, _ZGVbN2v_tanh(_mm_loadu_pd(x + i)));
            }
            if (i < end) {
                T in[lanes] = {}, out[lanes];
                std::copy(x + i, x + end, in);
                if constexpr (std::is_same_v<T, float>) _mm_storeu_ps(out, _ZGVbN4v_tanhf(_mm_loadu_ps(in)));
                else _mm_storeu_pd(out, _ZGVbN2v_tanh(_mm_loadu_pd(in)));
                std::copy(out, out + (end - i), o + i);
            }
        });
        return true;
    }
    return false;
}
#endif

template <class T> T sign_of(T x) {
    if constexpr (is_complex_v<T>) {
        const auto r = std::abs(x);
        return r == 0 ? T(0) : x / r;
    } else {
        return x > 0 ? T(1) : x < 0 ? T(-1) : x;  // keeps 0 and NaN
    }
}

template <class T> bool isnan_of(T x) {
    if constexpr (is_complex_v<T>) return std::isnan(x.real()) || std::isnan(x.imag());
    else if constexpr (is_float_v<T>) return std::isnan(x);
    else return false;
}

template <class T> bool isinf_of(T x) {
    if constexpr (is_complex_v<T>) return std::isinf(x.real()) || std::isinf(x.imag());
    else if constexpr (is_float_v<T>) return std::isinf(x);
    else return false;
}

// Each case runs the map and returns when the dtype supports the op; otherwise it falls out
// of the switch to the "unsupported" answer.
#define SAME_TYPE(op, supported, expr)                                            \
    case op:                                                                      \
        if constexpr (supported) {                                                \
            map1<T, T>(e, a.in, a.out, [](T x) { return static_cast<T>(expr); }); \
            return nullptr;                                                       \
        }                                                                         \
        break;
#define TO_TYPE(op, Out, supported, expr)                                             \
    case op:                                                                          \
        if constexpr (supported) {                                                    \
            map1<T, Out>(e, a.in, a.out, [](T x) { return static_cast<Out>(expr); }); \
            return nullptr;                                                           \
        }                                                                             \
        break;

template <class T> ferro_status unary_typed(Engine& e, const ferro_unary_args& a) {
#if FERRO_HAVE_LIBMVEC
    if (a.op == FERRO_UNARY_TANH && vector_tanh<T>(e, a)) return nullptr;
#endif
    using R = real_t<T>;
    constexpr bool fp = is_float_v<T> || is_complex_v<T>;  // float or complex
    constexpr bool real_fp = is_float_v<T>;
    constexpr bool number = !is_bool_v<T>;
    switch (a.op) {
        SAME_TYPE(FERRO_UNARY_NEG, number, [&] {
            if constexpr (is_int_v<T>) return wrap_neg(x);
            else return -x;
        }())
        SAME_TYPE(FERRO_UNARY_CONJ, number, [&] {
            if constexpr (is_complex_v<T>) return std::conj(x);
            else return x;
        }())
        SAME_TYPE(FERRO_UNARY_EXP, fp, std::exp(x))
        SAME_TYPE(FERRO_UNARY_LOG, fp, std::log(x))
        SAME_TYPE(FERRO_UNARY_SIN, fp, std::sin(x))
        SAME_TYPE(FERRO_UNARY_COS, fp, std::cos(x))
        SAME_TYPE(FERRO_UNARY_TAN, fp, std::tan(x))
        SAME_TYPE(FERRO_UNARY_TANH, fp, std::tanh(x))
        SAME_TYPE(FERRO_UNARY_SQRT, fp, std::sqrt(x))
        SAME_TYPE(FERRO_UNARY_RSQRT, fp, T(1) / std::sqrt(x))
        SAME_TYPE(FERRO_UNARY_SIGN, number, sign_of(x))
        SAME_TYPE(FERRO_UNARY_RECIPROCAL, fp, T(1) / x)
        SAME_TYPE(FERRO_UNARY_SQUARE, number, [&] {
            if constexpr (is_int_v<T>) return wrap_mul(x, x);
            else return x * x;
        }())
        // std has no complex expm1/log1p; exp(x) - 1 loses digits for tiny |x| there only.
        SAME_TYPE(FERRO_UNARY_EXPM1, fp, [&] {
            if constexpr (real_fp) return std::expm1(x);
            else return std::exp(x) - T(1);
        }())
        SAME_TYPE(FERRO_UNARY_LOG1P, fp, [&] {
            if constexpr (real_fp) return std::log1p(x);
            else return std::log(T(1) + x);
        }())
        SAME_TYPE(FERRO_UNARY_SINH, fp, std::sinh(x))
        SAME_TYPE(FERRO_UNARY_COSH, fp, std::cosh(x))
        SAME_TYPE(FERRO_UNARY_ASIN, fp, std::asin(x))
        SAME_TYPE(FERRO_UNARY_ACOS, fp, std::acos(x))
        SAME_TYPE(FERRO_UNARY_ATAN, fp, std::atan(x))
        SAME_TYPE(FERRO_UNARY_SIGMOID, fp, T(1) / (T(1) + std::exp(-x)))
        SAME_TYPE(FERRO_UNARY_ERF, real_fp, std::erf(x))
        SAME_TYPE(FERRO_UNARY_FLOOR, real_fp, std::floor(x))
        SAME_TYPE(FERRO_UNARY_CEIL, real_fp, std::ceil(x))
        SAME_TYPE(FERRO_UNARY_ROUND, real_fp, std::nearbyint(x))  // half to even
        TO_TYPE(FERRO_UNARY_ABS, R, number, [&] {
            if constexpr (is_int_v<T>) return x < 0 ? wrap_neg(x) : x;
            else return std::abs(x);
        }())
        TO_TYPE(FERRO_UNARY_REAL, R, is_complex_v<T>, x.real())
        TO_TYPE(FERRO_UNARY_IMAG, R, is_complex_v<T>, x.imag())
        // numpy's angle is arctan2(imag, real): NaN for NaN (std::arg of a real NaN gives 0).
        TO_TYPE(FERRO_UNARY_ANGLE, R, fp, [&] {
            if constexpr (is_complex_v<T>) return std::arg(x);
            else return std::isnan(x) ? x : std::arg(x);
        }())
        TO_TYPE(FERRO_UNARY_LOGICAL_NOT, boolean, true, x == T{} ? 1 : 0)
        TO_TYPE(FERRO_UNARY_ISNAN, boolean, true, isnan_of(x) ? 1 : 0)
        TO_TYPE(FERRO_UNARY_ISINF, boolean, true, isinf_of(x) ? 1 : 0)
        TO_TYPE(FERRO_UNARY_ISFINITE, boolean, true, isnan_of(x) || isinf_of(x) ? 0 : 1)
        default: break;
    }
    return unsupported(e, "unary", "op " + std::to_string(a.op) + " on this dtype");
}

#undef SAME_TYPE
#undef TO_TYPE

}  // namespace

ferro_status unary(Engine& e, const ferro_unary_args& a) {
    ferro_status result = nullptr;
    const bool ok = visit_dtype(a.in.dtype, [&](auto tag) { result = unary_typed<decltype(tag)>(e, a); });
    return ok ? result : unsupported(e, "unary", "this input dtype");
}

}  // namespace ferro::cpu
