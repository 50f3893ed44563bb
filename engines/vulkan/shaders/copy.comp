// copy_strided: out = in for any two layouts of one shape. Compiled per element size (the
// bits move unchanged): O_S = A_S = uint8_t, uint, uint64_t or u64vec2.
#version 460
#include "common.glsl"
#include "slots.glsl"
layout(local_size_x = 256) in;

void setup(Args a) {}

void element(Args a, uint64_t i) {
    int64_t off[4];
    offsets_of(a, i, 2, off);
    RefO(element_address(a, 0, off[0], O_SIZE)).v = RefA(element_address(a, 1, off[1], A_SIZE)).v;
}

ELEMENTWISE_MAIN
