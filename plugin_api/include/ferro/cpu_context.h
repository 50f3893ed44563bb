/* ferro plugin ABI — the native context of the built-in cpu engine ("ferro.cpu.ctx.v1").
 *
 * A context executor prepared for the cpu engine receives a `const ferro_cpu_context*` as its
 * native context. It is borrowed for the duration of the executor call.
 *
 * Since: 1.0; blas_one_thread since 1.2; blas_name and blas_version since 1.18. */
#ifndef FERRO_CPU_CONTEXT_H
#define FERRO_CPU_CONTEXT_H

#include "ferro/abi.h"

FERRO_EXTERN_C_BEGIN

#define FERRO_CPU_CONTEXT_ABI "ferro.cpu.ctx.v1"

/* Body of a parallel loop: process items [begin, end). Must not throw; a parallel_for it calls
 * runs serially on its thread. */
typedef void (*ferro_parallel_body)(void* user, int64_t begin, int64_t end);

typedef struct ferro_cpu_context {
    uint32_t struct_size;
    /* Worker threads the engine's pool may use (>= 1), including the calling thread. */
    uint32_t num_threads;
    /* Run body over [0, n) in chunks of at least `grain` items on the engine's pool; returns
     * when all chunks are done. Small n runs on the calling thread. This is the only fan-out
     * level: a parallel_for called from inside a body runs serially on that body's thread, and
     * plugins should call their vendor library (LAPACK, FFTW) single-threaded inside it.
     * Thread-safe. */
    void (*parallel_for)(const struct ferro_cpu_context* ctx, int64_t n, int64_t grain, ferro_parallel_body body, void* user);
    void* pool; /* engine-private; do not touch */
    /* Since 1.2 (check FERRO_HAS_FIELD): hold (hold != 0) or release a hold on BLAS running on
     * one thread. The cpu engine owns the process's BLAS thread count: while any hold is in
     * place, BLAS and LAPACK run on one thread, and the count comes back when the last hold is
     * released. For vendor routines that run slower threaded at the sizes at hand (OpenBLAS
     * 0.3.21's LAPACK reductions below n ~ 400) and for BLAS calls fanned out with
     * parallel_for. Every hold must be released, on any thread. Thread-safe. */
    void (*blas_one_thread)(const struct ferro_cpu_context* ctx, int32_t hold);
    /* Since 1.18 (check FERRO_HAS_FIELD): the BLAS and LAPACK implementation the process runs,
     * chosen when it started (the system's libblas.so.3, or one first in LD_LIBRARY_PATH):
     * "OpenBLAS", "MKL", "BLIS", "reference BLAS" or "unknown BLAS", and its version as the
     * library reports it ("" when it does not). For plugins whose vendor routines thread well
     * at different sizes under different implementations. Borrowed for the engine's lifetime. */
    const char* blas_name;
    const char* blas_version;
} ferro_cpu_context;
FERRO_STRUCT_TRAITS(ferro_cpu_context, blas_version);

FERRO_EXTERN_C_END

#endif /* FERRO_CPU_CONTEXT_H */
