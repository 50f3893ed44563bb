// cast: out = in converted to out's dtype, numpy's rules: complex -> real keeps the real part,
// anything -> bool is "not zero", float -> integer truncates, and NaN, infinities and values
// outside int64's range become INT64_MIN (numpy on x86, the cpu engine; SPIR-V leaves the plain
// conversion of those undefined).
#version 460
#include "common.glsl"
#include "slots.glsl"
layout(local_size_x = 256) in;

#if O_KIND == KIND_INT && (A_KIND == KIND_REAL || A_KIND == KIND_COMPLEX)
O_T float_to_int64(A_R r) {
    const A_R limit = A_R(9223372036854775808.0);  // 2^63, exact in float and double
    return r >= -limit && r < limit ? O_T(r) : O_T(0x8000000000000000UL);
}
#endif

O_T convert(A_T x) {
#if O_KIND == KIND_BOOL
#if A_KIND == KIND_COMPLEX
    return x.x != 0 || x.y != 0;
#elif A_KIND == KIND_BOOL
    return x;
#else
    return x != A_T(0);
#endif
#elif A_KIND == KIND_BOOL
#if O_KIND == KIND_COMPLEX
    return O_T(x ? 1 : 0, 0);
#else
    return O_T(x ? 1 : 0);
#endif
#elif O_KIND == KIND_COMPLEX
#if A_KIND == KIND_COMPLEX
    return O_T(x);
#else
    return O_T(x, 0);
#endif
#elif O_KIND == KIND_INT && A_KIND == KIND_COMPLEX
    return float_to_int64(x.x);
#elif O_KIND == KIND_INT && A_KIND == KIND_REAL
    return float_to_int64(x);
#else
#if A_KIND == KIND_COMPLEX
    return O_T(x.x);
#else
    return O_T(x);
#endif
#endif
}

void setup(Args a) {}

void element(Args a, uint64_t i) {
    int64_t off[4];
    offsets_of(a, i, 2, off);
    store_o(element_address(a, 0, off[0], O_SIZE), convert(load_a(element_address(a, 1, off[1], A_SIZE))));
}

ELEMENTWISE_MAIN
