// binary: out = op(a, b), broadcast by strides; the ops and their semantics are those of the
// cpu engine (ferro_binary_op; OP is its value). Three families of variants:
//   binary_<dt>      O = A = B = dt: arithmetic, maximum/minimum, atan2
//   binary_cmp_<dt>  O = bool: comparisons and logical and/or
//   binary_complex_<precision>  O complex, A = B real: complex(re, im)
#version 460
#include "common.glsl"
#include "slots.glsl"
#include "scalar_math.glsl"
#include "binary_ops.glsl"
layout(local_size_x = 256) in;

void setup(Args a) {}

void element(Args a, uint64_t i) {
    int64_t off[4];
    offsets_of(a, i, 3, off);
    const A_T x = load_a(element_address(a, 1, off[1], A_SIZE));
    const B_T y = load_b(element_address(a, 2, off[2], B_SIZE));
    store_o(element_address(a, 0, off[0], O_SIZE), binary_apply(OP, x, y));
}

ELEMENTWISE_MAIN
