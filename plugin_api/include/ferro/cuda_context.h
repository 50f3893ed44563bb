/* ferro plugin ABI — the native context of the cuda engine ("ferro.cuda.ctx.v1").
 *
 * A context executor prepared for a cuda engine receives a `const ferro_cuda_context*` as its
 * native context, borrowed for the executor call; a session executor gets the same context
 * from host->session_native_context (ABI 1.5) between the primitives it enqueues.
 *
 * Everything the engine does for a session is enqueued on one stream, in order, and nothing
 * synchronises it until the host observes a result (a copy to host memory, an explicit sync).
 * An executor enqueues its work on `stream` too, after making `device` current: it then runs
 * after the kernels recorded before it and before those recorded after it, with no further
 * synchronisation. It must not synchronise the stream or the device itself unless it needs a
 * value on the host (cuSOLVER's info, for instance), and must not destroy or re-bind the
 * handles.
 *
 * CUDA types are given as plain pointers (cudaStream_t, cublasHandle_t, cusolverDnHandle_t)
 * so this header does not need the CUDA headers. Cast them to the CUDA types.
 *
 * Lifetimes: device, stream, the handles and the three functions stay valid while the engine
 * exists (the handles belong to the session state, which the engine keeps and reuses); a plan
 * may keep the device ordinal and stream but should take the handles from each call's context.
 *
 * Since: 1.6. */
#ifndef FERRO_CUDA_CONTEXT_H
#define FERRO_CUDA_CONTEXT_H

#include "ferro/abi.h"
#include "ferro/status.h"

FERRO_EXTERN_C_BEGIN

#define FERRO_CUDA_CONTEXT_ABI "ferro.cuda.ctx.v1"

typedef struct ferro_cuda_context {
    uint32_t struct_size;
    int32_t device; /* the CUDA device ordinal: cudaSetDevice(device) before any CUDA call */
    void* stream;   /* cudaStream_t: the engine's stream; enqueue work here */
    void* cublas;   /* cublasHandle_t bound to `stream` (pointer mode host, default math) */
    void* cusolver; /* cusolverDnHandle_t bound to `stream` */
    /* Device memory for temporaries, stream-ordered: usable by work enqueued on `stream` after
     * this call, and returned with free_async, after which later work on the stream may reuse
     * it. Out of memory is FERRO_RESOURCE_EXHAUSTED. Thread-safe. */
    ferro_status (*alloc_async)(const struct ferro_cuda_context* ctx, uint64_t bytes, void** out);
    void (*free_async)(const struct ferro_cuda_context* ctx, void* ptr);
    /* Waits until everything enqueued on `stream` so far has run, and turns a failure of that
     * work into a status naming the CUDA error. For executors that need a value on the host. */
    ferro_status (*synchronize)(const struct ferro_cuda_context* ctx);
    void* engine; /* engine-private; do not touch */
} ferro_cuda_context;
FERRO_STRUCT_TRAITS(ferro_cuda_context, engine);

FERRO_EXTERN_C_END

#endif /* FERRO_CUDA_CONTEXT_H */
