// gemm_batched: C[p] = alpha op(A[p]) op(B[p]) + beta C[p] on strided operands (O = C, A, B
// all of one dtype). A workgroup of 16 x 16 invocations computes a 64 x 64 tile of C, each
// invocation a 4 x 4 block of it (rows ty + 16 i, columns tx + 16 j), with TK-deep slices of
// A and B staged in shared memory. Arguments: numel = batch; address = C, A, B; dims = m, n,
// k, then batch/row/column strides of A, B, C, then conj_a, conj_b; value_f / value_bits =
// alpha (re, im), beta (re, im). beta == 0 does not read C.
#version 460
#include "common.glsl"
#include "slots.glsl"
#include "scalar_math.glsl"
#include "gemm_common.glsl"
layout(local_size_x = 16, local_size_y = 16) in;

#ifndef TK
#define TK 16
#endif
#define TM 64
#define TN 64

shared A_T tile_a[TK][TM];
shared A_T tile_b[TK][TN];

void main() {
    Args a = push.args;
    // Sizes below 2^31 (the engine checks): 32-bit loop counters, which lavapipe runs far
    // faster than 64-bit ones; offsets stay 64-bit.
    const int m = int(a.dims[0]), n = int(a.dims[1]), k = int(a.dims[2]);
    const int64_t a_bs = a.dims[3], a_rs = a.dims[4], a_cs = a.dims[5];
    const int64_t b_bs = a.dims[6], b_rs = a.dims[7], b_cs = a.dims[8];
    const int64_t c_bs = a.dims[9], c_rs = a.dims[10], c_cs = a.dims[11];
    const bool conj_a = a.dims[12] != 0, conj_b = a.dims[13] != 0;
    const A_T alpha = scalar_arg(a, 0), beta = scalar_arg(a, 1);
    const bool read_c = beta != A_T(0);
    const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, tid = ty * 16 + tx;
    const int row0 = int(gl_WorkGroupID.y) * TM, col0 = int(gl_WorkGroupID.x) * TN;
    const uint batches = uint(a.numel);
    for (uint p = gl_WorkGroupID.z; p < batches; p += gl_NumWorkGroups.z) {
        const int64_t batch = int64_t(p);
        A_T acc[4][4];
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) acc[i][j] = A_T(0);
        for (int k0 = 0; k0 < k; k0 += TK) {
            for (uint e = tid; e < TM * TK; e += 256) {  // A[row0 + r, k0 + c], k fastest
                const uint r = e / TK, c = e % TK;
                const int gi = row0 + int(r), gk = k0 + int(c);
                A_T v = A_T(0);
                if (gi < m && gk < k) v = load_a(element_address(a, 1, batch * a_bs + gi * a_rs + gk * a_cs, A_SIZE));
                tile_a[c][r] = conjugate(v, conj_a);
            }
            for (uint e = tid; e < TK * TN; e += 256) {  // B[k0 + r, col0 + c], columns fastest
                const uint r = e / TN, c = e % TN;
                const int gk = k0 + int(r), gj = col0 + int(c);
                A_T v = A_T(0);
                if (gk < k && gj < n) v = load_b(element_address(a, 2, batch * b_bs + gk * b_rs + gj * b_cs, B_SIZE));
                tile_b[r][c] = conjugate(v, conj_b);
            }
            barrier();
            for (uint q = 0; q < TK; ++q) {
                A_T x[4], y[4];
                for (int i = 0; i < 4; ++i) x[i] = tile_a[q][ty + 16 * i];
                for (int j = 0; j < 4; ++j) y[j] = tile_b[q][tx + 16 * j];
                for (int i = 0; i < 4; ++i)
                    for (int j = 0; j < 4; ++j) acc[i][j] += mul(x[i], y[j]);
            }
            barrier();
        }
        for (int i = 0; i < 4; ++i) {
            for (int j = 0; j < 4; ++j) {
                const int gi = row0 + int(ty) + 16 * i, gj = col0 + int(tx) + 16 * j;
                if (gi >= m || gj >= n) continue;
                const uint64_t at = element_address(a, 0, batch * c_bs + gi * c_rs + gj * c_cs, O_SIZE);
                O_T v = mul(alpha, acc[i][j]);
                if (read_c) v += mul(beta, load_o(at));
                store_o(at, v);
            }
        }
    }
}
