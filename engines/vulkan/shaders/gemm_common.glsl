// What both gemm shaders share: complex-aware products, conjugation, and alpha/beta from the
// arguments (value_f, or value_bits when the shader has doubles).
#if A_KIND == KIND_COMPLEX
A_T mul(A_T x, A_T y) { return complex_mul(x, y); }
A_T conjugate(A_T x, bool c) { return c ? A_T(x.x, -x.y) : x; }
#else
A_T mul(A_T x, A_T y) { return x * y; }
A_T conjugate(A_T x, bool c) { return x; }
#endif

A_T scalar_arg(Args a, int i) {
#if defined(HAS_FLOAT64)
#if A_KIND == KIND_COMPLEX
    return A_T(value_double(a, 2 * i), value_double(a, 2 * i + 1));
#else
    return A_T(value_double(a, 2 * i));
#endif
#else
#if A_KIND == KIND_COMPLEX
    return A_T(a.value_f[2 * i], a.value_f[2 * i + 1]);
#else
    return A_T(a.value_f[2 * i]);
#endif
#endif
}
