// unary: out = op(in) with the cpu engine's semantics (ferro_unary_op; OP is its value).
// Variants:
//   unary_<dt>       O = A = dt
//   unary_real_<dt>  complex dt -> its real type: abs, real, imag, angle
//   unary_bool_<dt>  -> bool: logical_not, isnan, isinf, isfinite
// The engine declines the (op, dtype) pairs a variant lacks before dispatching (kernels.cpp).
#version 460
#include "common.glsl"
#include "slots.glsl"
#include "scalar_math.glsl"
#include "unary_ops.glsl"
layout(local_size_x = 256) in;

void setup(Args a) {}

void element(Args a, uint64_t i) {
    int64_t off[4];
    offsets_of(a, i, 2, off);
    store_o(element_address(a, 0, off[0], O_SIZE), unary_apply(OP, load_a(element_address(a, 1, off[1], A_SIZE))));
}

ELEMENTWISE_MAIN
