// fused: a straight line of unary and binary ops over values of one dtype (ferro_fused_args),
// run per element with the values in registers: inputs loaded once, outputs stored once,
// temporaries never in memory. Each instruction is the unary or binary shader's own function
// (unary_ops.glsl, binary_ops.glsl), so a fused step computes what its steps compute; `precise`
// keeps the driver from contracting one instruction's product into the next one's sum.
// Variants: fused_<dt>. Arguments (kernels.cpp, elementwise_fused): value_i the instruction
// count, value_bits[0] and [1] the input and output counts; dims: the shape, each operand's
// strides (inputs, then outputs), each operand's address, then one word per instruction (kind,
// op, dst, a, b from bit 0, 8, 24, 32, 40).
#version 460
#include "common.glsl"
#include "slots.glsl"
#include "scalar_math.glsl"
#include "unary_ops.glsl"
#include "binary_ops.glsl"
layout(local_size_x = 256) in;

#define MAX_OPERANDS 16
#define MAX_VALUES 64

void setup(Args a) {}

void element(Args a, uint64_t i) {
    const int nd = int(a.ndim);
    const int n_in = int(a.value_bits[0]), n_operands = n_in + int(a.value_bits[1]);
    const int at_addresses = nd * (1 + n_operands), at_program = at_addresses + n_operands;
    int64_t off[MAX_OPERANDS];
    for (int k = 0; k < n_operands; ++k) off[k] = 0;
    if (nd == 1) {
        for (int k = 0; k < n_operands; ++k) off[k] = int64_t(i) * a.dims[1 + k];
    } else if (a.wide != 0) {
        uint64_t rest = i;
        for (int d = nd - 1; d >= 0; --d) {
            const uint64_t size = uint64_t(a.dims[d]);
            const int64_t idx = int64_t(rest % size);
            rest /= size;
            for (int k = 0; k < n_operands; ++k) off[k] += idx * a.dims[nd * (k + 1) + d];
        }
    } else {
        uint rest = uint(i);
        for (int d = nd - 1; d >= 0; --d) {
            const uint size = uint(a.dims[d]);
            const int idx = int(rest % size);
            rest /= size;
            for (int k = 0; k < n_operands; ++k) off[k] += int64_t(idx) * a.dims[nd * (k + 1) + d];
        }
    }
    precise O_T r[MAX_VALUES];
    for (int k = 0; k < n_in; ++k) r[k] = load_a(uint64_t(a.dims[at_addresses + k]) + uint64_t(off[k] * int64_t(A_SIZE)));
    const int n_instrs = int(a.value_i);
    for (int j = 0; j < n_instrs; ++j) {
        const uint64_t w = uint64_t(a.dims[at_program + j]);
        const uint kind = uint(w & 0xffUL), op = uint((w >> 8) & 0xffffUL);
        const uint dst = uint((w >> 24) & 0xffUL), x = uint((w >> 32) & 0xffUL), y = uint((w >> 40) & 0xffUL);
        if (kind == 0u) r[dst] = unary_apply(op, r[x]);
        else r[dst] = binary_apply(op, r[x], r[y]);
    }
    for (int k = n_in; k < n_operands; ++k) {
        store_o(uint64_t(a.dims[at_addresses + k]) + uint64_t(off[k] * int64_t(O_SIZE)), r[k]);
    }
}

ELEMENTWISE_MAIN
