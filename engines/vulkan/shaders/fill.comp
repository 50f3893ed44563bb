// fill: out[...] = the scalar of the arguments (value_f / value_bits: re, im; value_i).
#version 460
#include "common.glsl"
#include "slots.glsl"
layout(local_size_x = 256) in;

O_T fill_value(Args a) {
#if O_KIND == KIND_BOOL
    return a.value_i != 0;
#elif O_KIND == KIND_INT
    return a.value_i;
#elif defined(HAS_FLOAT64)
#if O_KIND == KIND_COMPLEX
    return O_T(value_double(a, 0), value_double(a, 1));
#else
    return O_T(value_double(a, 0));
#endif
#else
#if O_KIND == KIND_COMPLEX
    return O_T(a.value_f[0], a.value_f[1]);
#else
    return O_T(a.value_f[0]);
#endif
#endif
}

O_T g_value;

void setup(Args a) { g_value = fill_value(a); }

void element(Args a, uint64_t i) {
    int64_t off[4];
    offsets_of(a, i, 1, off);
    store_o(element_address(a, 0, off[0], O_SIZE), g_value);
}

ELEMENTWISE_MAIN
