// binary: out = op(a, b), broadcast by strides; the ops and their semantics are those of the
// cpu engine (ferro_binary_op; OP is its value). Three families of variants:
//   binary_<dt>      O = A = B = dt: arithmetic, maximum/minimum, atan2
//   binary_cmp_<dt>  O = bool: comparisons and logical and/or
//   binary_complex_<precision>  O complex, A = B real: complex(re, im)
#version 460
#include "common.glsl"
#include "slots.glsl"
#include "scalar_math.glsl"
layout(local_size_x = 256) in;

#if defined(COMPARE)
O_T apply(A_T x, B_T y) {
#if A_KIND == KIND_COMPLEX
    switch (OP) {
        case 8: return x == y;
        case 9: return x != y;
        case 14: return (x.x != 0 || x.y != 0) && (y.x != 0 || y.y != 0);
        default: return (x.x != 0 || x.y != 0) || (y.x != 0 || y.y != 0);
    }
#elif A_KIND == KIND_BOOL
    const uint u = x ? 1u : 0u, v = y ? 1u : 0u;
    switch (OP) {
        case 8: return u == v;
        case 9: return u != v;
        case 10: return u < v;
        case 11: return u <= v;
        case 12: return u > v;
        case 13: return u >= v;
        case 14: return x && y;
        default: return x || y;
    }
#else
    switch (OP) {
        case 8: return x == y;
        case 9: return x != y;
        case 10: return x < y;
        case 11: return x <= y;
        case 12: return x > y;
        case 13: return x >= y;
        case 14: return x != A_T(0) && y != A_T(0);
        default: return x != A_T(0) || y != A_T(0);
    }
#endif
}
#elif defined(MAKE_COMPLEX)
O_T apply(A_T x, B_T y) { return O_T(x, y); }
#elif A_KIND == KIND_COMPLEX
O_T apply(A_T x, B_T y) {
    switch (OP) {
        case 0: return x + y;
        case 1: return x - y;
        case 2: return complex_mul(x, y);
        case 3: return complex_div(x, y);
        case 4: return complex_pow(x, y);
        default: return x;  // declined by the engine before dispatch
    }
}
#elif A_KIND == KIND_INT
O_T apply(A_T x, B_T y) {
    switch (OP) {
        case 0: return x + y;
        case 1: return x - y;
        case 2: return x * y;
        case 3: return int_floor_div(x, y);
        case 4: return int_pow(x, y);
        case 5: return max(x, y);
        default: return min(x, y);
    }
}
#else
O_T apply(A_T x, B_T y) {
    switch (OP) {
        case 0: return x + y;
        case 1: return x - y;
        case 2: return x * y;
        case 3: return x / y;
        case 5: return isnan(x) ? x : isnan(y) ? y : max(x, y);
        case 6: return isnan(x) ? x : isnan(y) ? y : min(x, y);
#ifdef HAS_FLOAT64
        case 4: return d_pow(x, y);
        case 7: return d_atan2(x, y);
#else
        case 4: return real_pow(x, y);
        case 7: return atan(x, y);
#endif
        default: return x;  // declined by the engine before dispatch
    }
}
#endif

void setup(Args a) {}

void element(Args a, uint64_t i) {
    int64_t off[4];
    offsets_of(a, i, 3, off);
    const A_T x = load_a(element_address(a, 1, off[1], A_SIZE));
    const B_T y = load_b(element_address(a, 2, off[2], B_SIZE));
    store_o(element_address(a, 0, off[0], O_SIZE), apply(x, y));
}

ELEMENTWISE_MAIN
