// The binary and where kernels.
#include "elementwise.hpp"

#include <cmath>
#include <string>

namespace ferro::cpu {
namespace {

// numpy's floor division for integers, defined (as 0) for a zero divisor, and without the
// INT64_MIN / -1 trap.
int64_t floor_div(int64_t x, int64_t y) {
    if (y == 0) return 0;
    if (y == -1) return static_cast<int64_t>(0ull - static_cast<uint64_t>(x));
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return q;
}

// Integer power by squaring; a negative exponent gives 0 except for bases 1 and -1.
int64_t int_pow(int64_t base, int64_t exponent) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
    uint64_t result = 1, b = static_cast<uint64_t>(base);
    for (uint64_t n = static_cast<uint64_t>(exponent); n != 0; n >>= 1) {
        if (n & 1) result *= b;  // unsigned: wraps like numpy instead of overflowing
        b *= b;
    }
    return static_cast<int64_t>(result);
}

template <class T> T maximum(T x, T y) {
    if constexpr (is_float_v<T>) {
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
    }
    return x < y ? y : x;
}
template <class T> T minimum(T x, T y) {
    if constexpr (is_float_v<T>) {
        if (std::isnan(x) || std::isnan(y)) return std::isnan(x) ? x : y;
    }
    return y < x ? y : x;
}

// A case whose dtype check fails is a discarded `if constexpr` branch, so its expression need
// only compile for the dtypes that support the op.
#define SAME_TYPE(op, supported, expr)                                                     \
    case op:                                                                               \
        if constexpr (supported) {                                                         \
            map2<T, T>(e, a.a, a.b, a.out, [](T x, T y) { return static_cast<T>(expr); }); \
            return nullptr;                                                                \
        }                                                                                  \
        break;
#define TO_BOOL(op, supported, expr)                                                                  \
    case op:                                                                                          \
        if constexpr (supported) {                                                                    \
            map2<T, boolean>(e, a.a, a.b, a.out, [](T x, T y) -> boolean { return (expr) ? 1 : 0; }); \
            return nullptr;                                                                           \
        }                                                                                             \
        break;

template <class T> ferro_status binary_typed(Engine& e, const ferro_binary_args& a) {
    constexpr bool number = !is_bool_v<T>;
    constexpr bool ordered = !is_complex_v<T>;  // complex has no order (as in torch)
    constexpr bool real_fp = is_float_v<T>;
    switch (a.op) {
        SAME_TYPE(FERRO_BINARY_ADD, number, [&] {
            if constexpr (is_int_v<T>) return wrap_add(x, y);
            else return x + y;
        }())
        SAME_TYPE(FERRO_BINARY_SUB, number, [&] {
            if constexpr (is_int_v<T>) return wrap_sub(x, y);
            else return x - y;
        }())
        SAME_TYPE(FERRO_BINARY_MUL, number, [&] {
            if constexpr (is_int_v<T>) return wrap_mul(x, y);
            else return x * y;
        }())
        SAME_TYPE(FERRO_BINARY_DIV, number, [&] {
            if constexpr (is_int_v<T>) return floor_div(x, y);
            else return x / y;
        }())
        SAME_TYPE(FERRO_BINARY_POW, number, [&] {
            if constexpr (is_int_v<T>) return int_pow(x, y);
            else return std::pow(x, y);
        }())
        SAME_TYPE(FERRO_BINARY_MAXIMUM, number && ordered, maximum(x, y))
        SAME_TYPE(FERRO_BINARY_MINIMUM, number && ordered, minimum(x, y))
        SAME_TYPE(FERRO_BINARY_ATAN2, real_fp, std::atan2(x, y))
        TO_BOOL(FERRO_BINARY_EQ, true, x == y)
        TO_BOOL(FERRO_BINARY_NE, true, x != y)
        TO_BOOL(FERRO_BINARY_LT, ordered, x < y)
        TO_BOOL(FERRO_BINARY_LE, ordered, x <= y)
        TO_BOOL(FERRO_BINARY_GT, ordered, x > y)
        TO_BOOL(FERRO_BINARY_GE, ordered, x >= y)
        TO_BOOL(FERRO_BINARY_LOGICAL_AND, true, x != T{} && y != T{})
        TO_BOOL(FERRO_BINARY_LOGICAL_OR, true, x != T{} || y != T{})
        case FERRO_BINARY_COMPLEX:
            if constexpr (real_fp) {
                using C = std::complex<T>;
                map2<T, C>(e, a.a, a.b, a.out, [](T x, T y) { return C(x, y); });
                return nullptr;
            }
            break;
        default: break;
    }
    return unsupported(e, "binary", "op " + std::to_string(a.op) + " on this dtype");
}

#undef SAME_TYPE
#undef TO_BOOL

}  // namespace

ferro_status binary(Engine& e, const ferro_binary_args& a) {
    if (a.a.dtype != a.b.dtype) return unsupported(e, "binary", "operands of different dtypes");
    ferro_status result = nullptr;
    const bool ok = visit_dtype(a.a.dtype, [&](auto tag) { result = binary_typed<decltype(tag)>(e, a); });
    return ok ? result : unsupported(e, "binary", "this dtype");
}

ferro_status where(Engine& e, const ferro_where_args& a) {
    if (a.cond.dtype != FERRO_DTYPE_BOOL || a.a.dtype != a.out.dtype || a.b.dtype != a.out.dtype) {
        return unsupported(e, "where", "these dtypes (cond must be bool, a and b the output's)");
    }
    const bool ok = visit_dtype(a.out.dtype, [&](auto tag) {
        using T = decltype(tag);
        StridedLoop<4> loop(a.out.ndim, a.out.shape, {a.out.strides, a.cond.strides, a.a.strides, a.b.strides},
                            {static_cast<char*>(a.out.data), static_cast<char*>(a.cond.data), static_cast<char*>(a.a.data),
                             static_cast<char*>(a.b.data)},
                            {sizeof(T), 1, sizeof(T), sizeof(T)});
        run_loop(e, loop, [](const std::array<char*, 4>& p, int64_t n, const std::array<int64_t, 4>& s) {
            for (int64_t i = 0; i < n; ++i) {
                const bool c = *reinterpret_cast<const boolean*>(p[1] + i * s[1]) != 0;
                *reinterpret_cast<T*>(p[0] + i * s[0]) = *reinterpret_cast<const T*>(c ? p[2] + i * s[2] : p[3] + i * s[3]);
            }
        });
    });
    return ok ? nullptr : unsupported(e, "where", "this dtype");
}

}  // namespace ferro::cpu
