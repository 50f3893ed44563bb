// Shared by the engine's compute shaders: the argument block of a dispatch (its device address
// is the one push constant; layout in ../src/kernel_args.hpp), typed element access through
// buffer device addresses, and strided indexing.
//
// Each shader is compiled once per dtype combination: CMake defines, for every operand slot X
// (O the output, A, B, C the inputs), X_S (the storage type), X_T (the type computed with),
// X_SIZE (bytes per element), X_KIND (one of the KIND_ values below).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : enable
#extension GL_EXT_shader_8bit_storage : enable

#define KIND_REAL 0
#define KIND_COMPLEX 1
#define KIND_INT 2
#define KIND_BOOL 3

layout(constant_id = 0) const uint OP = 0;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Args {
    uint64_t numel;       // the iteration space (output elements, or groups for reductions)
    uint64_t address[4];  // element 0 of each operand, output first
    int64_t ndim;
    int64_t wide;         // 1: an index or offset needs 64-bit arithmetic
    int64_t value_i;      // integer scalar (fill)
    float value_f[4];     // scalars in single precision (fill: re, im; gemm: alpha, beta)
    uint64_t value_bits[4];  // the same scalars as the bits of doubles
    int64_t dims[];       // shape [ndim], then the element strides of each operand [ndim]
};

layout(push_constant) uniform Push {
    Args args;
} push;

#define DECLARE_REF(NAME, S, ALIGN) \
    layout(buffer_reference, std430, buffer_reference_align = ALIGN) buffer NAME { S v; };

// The address of element `offset` (may be negative) of operand k.
uint64_t element_address(Args a, int k, int64_t offset, int size) {
    return a.address[k] + uint64_t(offset * int64_t(size));
}

// The element offsets, in each of the first `k_count` operands, of linear index i (row-major
// over the shape).
void offsets_of(Args a, uint64_t i, int k_count, out int64_t off[4]) {
    off[0] = 0;
    off[1] = 0;
    off[2] = 0;
    off[3] = 0;
    const int nd = int(a.ndim);
    if (nd == 1) {  // the common case once contiguous axes are merged: no division
        for (int k = 0; k < k_count; ++k) off[k] = int64_t(i) * a.dims[1 + k];
        return;
    }
    if (a.wide != 0) {
        for (int d = nd - 1; d >= 0; --d) {
            const uint64_t size = uint64_t(a.dims[d]);
            const int64_t idx = int64_t(i % size);
            i /= size;
            for (int k = 0; k < k_count; ++k) off[k] += idx * a.dims[nd * (k + 1) + d];
        }
    } else {
        uint j = uint(i);
        for (int d = nd - 1; d >= 0; --d) {
            const uint size = uint(a.dims[d]);
            const int idx = int(j % size);
            j /= size;
            for (int k = 0; k < k_count; ++k) off[k] += int64_t(idx) * a.dims[nd * (k + 1) + d];
        }
    }
}

// The main() of an elementwise shader: setup(a) once, then element(a, i) for every index i of
// the dispatch's space, grid-stride. The loop counts in 32 bits unless the space needs 64:
// lavapipe ran a loop with a 64-bit counter 50x slower (a fill of 1e5 elements: 209 ms
// against 3.6 ms).
#define ELEMENTWISE_MAIN                                                                     \
    void main() {                                                                            \
        Args a = push.args;                                                                  \
        setup(a);                                                                            \
        if (a.wide == 0) {                                                                   \
            const uint n = uint(a.numel), step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;    \
            for (uint i = gl_GlobalInvocationID.x; i < n; i += step) element(a, uint64_t(i)); \
        } else {                                                                             \
            const uint64_t step = uint64_t(gl_NumWorkGroups.x) * uint64_t(gl_WorkGroupSize.x); \
            for (uint64_t i = gl_GlobalInvocationID.x; i < a.numel; i += step) element(a, i); \
        }                                                                                    \
    }

#ifdef HAS_FLOAT64
double value_double(Args a, int i) { return packDouble2x32(unpackUint2x32(a.value_bits[i])); }
#endif
