// where: out = cond ? a : b; the slots are A = cond (bool), B = a, C = b.
#version 460
#include "common.glsl"
#include "slots.glsl"
layout(local_size_x = 256) in;

void setup(Args a) {}

void element(Args a, uint64_t i) {
    int64_t off[4];
    offsets_of(a, i, 4, off);
    const bool cond = load_a(element_address(a, 1, off[1], A_SIZE));
    const O_T v = cond ? load_b(element_address(a, 2, off[2], B_SIZE)) : load_c(element_address(a, 3, off[3], C_SIZE));
    store_o(element_address(a, 0, off[0], O_SIZE), v);
}

ELEMENTWISE_MAIN
