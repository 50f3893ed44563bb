// The binary and where kernels, with the cpu engine's semantics: integer division floors (and
// is 0 for a zero divisor), integer powers wrap, maximum/minimum propagate NaN, complex has
// no order.
#include "device.cuh"

#include <cuda/std/cmath>

#include <utility>

namespace ferro::cuda {
namespace {

namespace cs = ::cuda::std;

__device__ __forceinline__ int64_t floor_div(int64_t x, int64_t y) {
    if (y == 0) return 0;
    if (y == -1) return static_cast<int64_t>(0ull - static_cast<uint64_t>(x));
    int64_t q = x / y;
    if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
    return q;
}

__device__ __forceinline__ int64_t int_pow(int64_t base, int64_t exponent) {
    if (exponent < 0) return base == 1 ? 1 : base == -1 ? (exponent % 2 ? -1 : 1) : 0;
    uint64_t result = 1, b = static_cast<uint64_t>(base);
    for (uint64_t n = static_cast<uint64_t>(exponent); n != 0; n >>= 1) {
        if (n & 1) result *= b;
        b *= b;
    }
    return static_cast<int64_t>(result);
}

template <class T>
__device__ __forceinline__ T maximum(T x, T y) {
    if constexpr (is_float_v<T>) {
        if (isnan(x) || isnan(y)) return isnan(x) ? x : y;
    }
    return x < y ? y : x;
}

template <class T>
__device__ __forceinline__ T minimum(T x, T y) {
    if constexpr (is_float_v<T>) {
        if (isnan(x) || isnan(y)) return isnan(x) ? x : y;
    }
    return y < x ? y : x;
}

// Which dtypes an op is defined on.
template <class T> constexpr bool number = !is_bool_v<T>;
template <class T> constexpr bool ordered = !is_complex_v<T>;  // complex has no order (as in torch)
template <class T> constexpr bool real_fp = is_float_v<T>;

template <uint32_t Op, class T>
struct Binary {
    static constexpr bool supported = false;
    using Out = T;
    __device__ Out operator()(T, T) const { return Out{}; }
};

#define FERRO_BINARY(op, is_supported, OutType, expr)                                  \
    template <class T>                                                                 \
    struct Binary<op, T> {                                                             \
        static constexpr bool supported = (is_supported);                              \
        using Out = OutType;                                                           \
        __device__ Out operator()(T x, T y) const {                                    \
            if constexpr (is_supported) return static_cast<Out>(expr);                 \
            else return Out{};                                                         \
        }                                                                              \
    };

FERRO_BINARY(FERRO_BINARY_ADD, number<T>, T, x + y)
FERRO_BINARY(FERRO_BINARY_SUB, number<T>, T, x - y)
FERRO_BINARY(FERRO_BINARY_MUL, number<T>, T, x * y)
FERRO_BINARY(FERRO_BINARY_DIV, number<T>, T, [&] { if constexpr (is_int_v<T>) return floor_div(x, y); else return x / y; }())
FERRO_BINARY(FERRO_BINARY_POW, number<T>, T, [&] { if constexpr (is_int_v<T>) return int_pow(x, y); else return cs::pow(x, y); }())
FERRO_BINARY(FERRO_BINARY_MAXIMUM, number<T> && ordered<T>, T, maximum(x, y))
FERRO_BINARY(FERRO_BINARY_MINIMUM, number<T> && ordered<T>, T, minimum(x, y))
FERRO_BINARY(FERRO_BINARY_ATAN2, real_fp<T>, T, [&] { if constexpr (real_fp<T>) return atan2(x, y); else return x; }())
FERRO_BINARY(FERRO_BINARY_EQ, true, boolean, x == y ? 1 : 0)
FERRO_BINARY(FERRO_BINARY_NE, true, boolean, x != y ? 1 : 0)
FERRO_BINARY(FERRO_BINARY_LT, ordered<T>, boolean, [&] { if constexpr (ordered<T>) return x < y ? 1 : 0; else return 0; }())
FERRO_BINARY(FERRO_BINARY_LE, ordered<T>, boolean, [&] { if constexpr (ordered<T>) return x <= y ? 1 : 0; else return 0; }())
FERRO_BINARY(FERRO_BINARY_GT, ordered<T>, boolean, [&] { if constexpr (ordered<T>) return x > y ? 1 : 0; else return 0; }())
FERRO_BINARY(FERRO_BINARY_GE, ordered<T>, boolean, [&] { if constexpr (ordered<T>) return x >= y ? 1 : 0; else return 0; }())
FERRO_BINARY(FERRO_BINARY_LOGICAL_AND, true, boolean, x != T{} && y != T{} ? 1 : 0)
FERRO_BINARY(FERRO_BINARY_LOGICAL_OR, true, boolean, x != T{} || y != T{} ? 1 : 0)
FERRO_BINARY(FERRO_BINARY_COMPLEX, real_fp<T>, cs::complex<T>, [&] { if constexpr (real_fp<T>) return cs::complex<T>(x, y); else return cs::complex<T>(); }())

#undef FERRO_BINARY

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
