// The binary ops of one variant (binary.comp's defines: the slots' types, COMPARE,
// MAKE_COMPLEX) with the cpu engine's semantics: binary_apply(op, x, y), op a ferro_binary_op.
// binary.comp passes its specialization constant, fused.comp each instruction's op.
#if defined(COMPARE)
O_T binary_apply(uint op, A_T x, B_T y) {
#if A_KIND == KIND_COMPLEX
    switch (op) {
        case 8: return x == y;
        case 9: return x != y;
        case 14: return (x.x != 0 || x.y != 0) && (y.x != 0 || y.y != 0);
        default: return (x.x != 0 || x.y != 0) || (y.x != 0 || y.y != 0);
    }
#elif A_KIND == KIND_BOOL
    const uint u = x ? 1u : 0u, v = y ? 1u : 0u;
    switch (op) {
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
    switch (op) {
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
O_T binary_apply(uint op, A_T x, B_T y) { return O_T(x, y); }
#elif A_KIND == KIND_COMPLEX
O_T binary_apply(uint op, A_T x, B_T y) {
    switch (op) {
        case 0: return x + y;
        case 1: return x - y;
        case 2: return complex_mul(x, y);
        case 3: return complex_div(x, y);
        case 4: return complex_pow(x, y);
        default: return x;  // declined by the engine before dispatch
    }
}
#elif A_KIND == KIND_INT
O_T binary_apply(uint op, A_T x, B_T y) {
    switch (op) {
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
O_T binary_apply(uint op, A_T x, B_T y) {
    switch (op) {
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
