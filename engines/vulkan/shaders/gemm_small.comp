// gemm_batched for skinny products (m or n below 32): one invocation per element of C, looping
// over k, no shared memory. The tiled shader (gemm.comp) gives every batch entry a 64 x 64
// tile of 256 invocations, so a batch of 4 x 4 products left more than 99% of them idle (and
// llvmpipe runs their barriers as coroutines: 30400 products of 4 x 4 x 4 took 3.6 s).
// Arguments as gemm.comp: numel = batch; address = C, A, B; dims = m, n, k, then batch/row/
// column strides of A, B, C, then conj_a, conj_b; alpha (re, im), beta (re, im).
#version 460
#include "common.glsl"
#include "slots.glsl"
#include "scalar_math.glsl"
#include "gemm_common.glsl"
layout(local_size_x = 64) in;

void main() {
    Args a = push.args;
    // m n < 2^22 and every side below 2^31 (the engine checks): 32-bit counters.
    const int m = int(a.dims[0]), n = int(a.dims[1]), k = int(a.dims[2]);
    const uint e = gl_GlobalInvocationID.x;
    if (e >= uint(m) * uint(n)) return;
    const int i = int(e / uint(n)), j = int(e % uint(n));
    const int64_t a_bs = a.dims[3], a_rs = a.dims[4], a_cs = a.dims[5];
    const int64_t b_bs = a.dims[6], b_rs = a.dims[7], b_cs = a.dims[8];
    const int64_t c_bs = a.dims[9], c_rs = a.dims[10], c_cs = a.dims[11];
    const bool conj_a = a.dims[12] != 0, conj_b = a.dims[13] != 0;
    const A_T alpha = scalar_arg(a, 0), beta = scalar_arg(a, 1);
    const bool read_c = beta != A_T(0);
    const uint batches = uint(a.numel);
    for (uint p = gl_WorkGroupID.y; p < batches; p += gl_NumWorkGroups.y) {
        const int64_t batch = int64_t(p);
        const int64_t row = batch * a_bs + i * a_rs, col = batch * b_bs + j * b_cs;
        A_T acc = A_T(0);
        for (int q = 0; q < k; ++q) {
            const A_T x = conjugate(load_a(element_address(a, 1, row + q * a_cs, A_SIZE)), conj_a);
            const A_T y = conjugate(load_b(element_address(a, 2, col + q * b_rs, B_SIZE)), conj_b);
            acc += mul(x, y);
        }
        const uint64_t at = element_address(a, 0, batch * c_bs + i * c_rs + j * c_cs, O_SIZE);
        O_T v = mul(alpha, acc);
        if (read_c) v += mul(beta, load_o(at));
        store_o(at, v);
    }
}
