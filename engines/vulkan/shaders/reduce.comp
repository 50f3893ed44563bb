// reduce: each output element combines the input elements of its reduced index space.
// Arguments: ndim kept axes (shape, out strides, in strides: dims[0, 3 ndim)), then at
// dims[3 ndim] the number of reduced axes r, their shape and their input strides, then the
// range [begin, end) of reduced elements this dispatch combines and whether it combines them
// with the output's value (a later part of a reduction the host split: see kernels.cpp);
// value_i is the count of reduced elements. OP = ferro_reduce_op | 256 * mode: mode 0, one
// workgroup per output element (a tree in shared memory); mode 1, one invocation per output
// element (few reduced elements, many outputs).
// Variants: reduce_<dt> (sum, prod, max, min; O = A = dt), reduce_bool_<dt> (any, all). Floating
// sums are compensated (add_compensated).
#version 460
#include "common.glsl"
#include "slots.glsl"
#include "scalar_math.glsl"
layout(local_size_x = 256) in;

const uint REDUCE_OP = OP & 255u;
const uint MODE = OP >> 8;

#if defined(TO_BOOL)
#define ACC_T bool
bool nonzero(A_T x) {
#if A_KIND == KIND_COMPLEX
    return x.x != 0 || x.y != 0;
#elif A_KIND == KIND_BOOL
    return x;
#else
    return x != A_T(0);
#endif
}
ACC_T identity() { return REDUCE_OP == 5u; }  // all: true, any: false
ACC_T lift(A_T x) { return nonzero(x); }
ACC_T combine(ACC_T x, ACC_T y) { return REDUCE_OP == 5u ? (x && y) : (x || y); }
#else
#define ACC_T A_T
#if A_KIND == KIND_COMPLEX
ACC_T identity() { return REDUCE_OP == 1u ? A_T(1, 0) : A_T(0); }
ACC_T combine(ACC_T x, ACC_T y) { return REDUCE_OP == 1u ? complex_mul(x, y) : x + y; }
#elif A_KIND == KIND_INT
ACC_T identity() {
    switch (REDUCE_OP) {
        case 1u: return 1;
        case 2u: return int64_t(0x8000000000000000ul);
        case 3u: return int64_t(0x7ffffffffffffffful);
        default: return 0;
    }
}
ACC_T combine(ACC_T x, ACC_T y) {
    switch (REDUCE_OP) {
        case 1u: return x * y;
        case 2u: return max(x, y);
        case 3u: return min(x, y);
        default: return x + y;
    }
}
#else
#ifdef HAS_FLOAT64
A_T infinity() { return packDouble2x32(uvec2(0u, 0x7ff00000u)); }
#else
A_T infinity() { return uintBitsToFloat(0x7f800000u); }
#endif
ACC_T identity() {
    switch (REDUCE_OP) {
        case 1u: return A_T(1);
        case 2u: return -infinity();
        case 3u: return infinity();
        default: return A_T(0);
    }
}
ACC_T combine(ACC_T x, ACC_T y) {  // max and min propagate NaN
    switch (REDUCE_OP) {
        case 1u: return x * y;
        case 2u: return isnan(x) ? x : isnan(y) ? y : max(x, y);
        case 3u: return isnan(x) ? x : isnan(y) ? y : min(x, y);
        default: return x + y;
    }
}
#endif
ACC_T lift(A_T x) { return x; }
#endif

// Floating sums are compensated (Neumaier's variant of Kahan's summation): each invocation's run
// carries the rounding error of its running sum in `comp`, so a run of any length is accurate to
// a few ulps, as numpy's pairwise sums are; the runs are then combined as a tree. `precise`
// keeps the compiler from simplifying the error terms away. Other reductions just combine.
#if !defined(TO_BOOL) && A_KIND != KIND_INT
const bool COMPENSATED = REDUCE_OP == 0u;
void accumulate(inout ACC_T acc, inout ACC_T comp, ACC_T x) {
    if (!COMPENSATED) {
        acc = combine(acc, x);
        return;
    }
    precise ACC_T t = acc + x;
    precise ACC_T lost_of_x = (acc - t) + x;    // |acc| >= |x|: what t lost of x
    precise ACC_T lost_of_acc = (x - t) + acc;  // otherwise: what t lost of acc
#if A_KIND == KIND_COMPLEX
    precise ACC_T c = comp + mix(lost_of_acc, lost_of_x, greaterThanEqual(abs(acc), abs(x)));
#else
    precise ACC_T c = comp + (abs(acc) >= abs(x) ? lost_of_x : lost_of_acc);
#endif
    comp = c;
    acc = t;
}
ACC_T total(ACC_T acc, ACC_T comp) { return COMPENSATED ? acc + comp : acc; }
#else
void accumulate(inout ACC_T acc, inout ACC_T comp, ACC_T x) { acc = combine(acc, x); }
ACC_T total(ACC_T acc, ACC_T comp) { return acc; }
#endif

// The input offset of reduced element j.
int64_t reduced_offset(Args a, uint64_t j) {
    const int nd = int(a.ndim);
    const int r = int(a.dims[3 * nd]);
    int64_t off = 0;
    if (a.wide == 0) {  // 32-bit index arithmetic (see ELEMENTWISE_MAIN)
        uint k = uint(j);
        for (int d = r - 1; d >= 0; --d) {
            const uint size = uint(a.dims[3 * nd + 1 + d]);
            off += int64_t(k % size) * a.dims[3 * nd + 1 + r + d];
            k /= size;
        }
        return off;
    }
    for (int d = r - 1; d >= 0; --d) {
        const uint64_t size = uint64_t(a.dims[3 * nd + 1 + d]);
        off += int64_t(j % size) * a.dims[3 * nd + 1 + r + d];
        j /= size;
    }
    return off;
}

// This dispatch's part of the reduced elements, and whether it adds to the output's value.
int range_at(Args a) { return 3 * int(a.ndim) + 1 + 2 * int(a.dims[3 * int(a.ndim)]); }
uint64_t range_begin(Args a) { return uint64_t(a.dims[range_at(a)]); }
uint64_t range_end(Args a) { return uint64_t(a.dims[range_at(a) + 1]); }
bool accumulates(Args a) { return a.dims[range_at(a) + 2] != 0; }

// Output o reduced by one invocation (mode 1).
void reduce_alone(Args a, uint64_t o) {
    int64_t off[4];
    offsets_of(a, o, 2, off);
    const uint64_t at = element_address(a, 0, off[0], O_SIZE);
    ACC_T acc = accumulates(a) ? ACC_T(load_o(at)) : identity();
    ACC_T comp = identity();  // 0 for sums, the only op that uses it
    if (a.wide == 0) {
        const uint end = uint(range_end(a));
        for (uint j = uint(range_begin(a)); j < end; ++j) {
            accumulate(acc, comp, lift(load_a(element_address(a, 1, off[1] + reduced_offset(a, j), A_SIZE))));
        }
    } else {
        for (uint64_t j = range_begin(a); j < range_end(a); ++j) {
            accumulate(acc, comp, lift(load_a(element_address(a, 1, off[1] + reduced_offset(a, j), A_SIZE))));
        }
    }
    store_o(at, O_T(total(acc, comp)));
}

shared ACC_T partial[256];

// Output o reduced by the whole workgroup (mode 0): strided partial results, then a tree.
void reduce_together(Args a, uint64_t o) {
    const uint t = gl_LocalInvocationID.x;
    int64_t off[4];
    offsets_of(a, o, 2, off);
    ACC_T acc = identity();
    ACC_T comp = identity();  // 0 for sums, the only op that uses it
    if (a.wide == 0) {
        const uint end = uint(range_end(a));
        for (uint j = uint(range_begin(a)) + t; j < end; j += 256u) {
            accumulate(acc, comp, lift(load_a(element_address(a, 1, off[1] + reduced_offset(a, j), A_SIZE))));
        }
    } else {
        for (uint64_t j = range_begin(a) + t; j < range_end(a); j += 256u) {
            accumulate(acc, comp, lift(load_a(element_address(a, 1, off[1] + reduced_offset(a, j), A_SIZE))));
        }
    }
    partial[t] = total(acc, comp);
    barrier();
    for (uint width = 128; width > 0; width >>= 1) {
        if (t < width) partial[t] = combine(partial[t], partial[t + width]);
        barrier();
    }
    if (t == 0) {
        const uint64_t at = element_address(a, 0, off[0], O_SIZE);
        store_o(at, O_T(accumulates(a) ? combine(ACC_T(load_o(at)), partial[0]) : partial[0]));
    }
    barrier();
}

void main() {
    Args a = push.args;
    if (MODE == 1u) {
        if (a.wide == 0) {
            const uint n = uint(a.numel), step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
            for (uint o = gl_GlobalInvocationID.x; o < n; o += step) reduce_alone(a, o);
        } else {
            const uint64_t step = uint64_t(gl_NumWorkGroups.x) * uint64_t(gl_WorkGroupSize.x);
            for (uint64_t o = gl_GlobalInvocationID.x; o < a.numel; o += step) reduce_alone(a, o);
        }
        return;
    }
    const uint n = uint(min(a.numel, uint64_t(0xffffffffu)));  // outputs: at most 2^32 per dispatch
    for (uint o = gl_WorkGroupID.x; o < n; o += gl_NumWorkGroups.x) reduce_together(a, o);
}
