/* ferro plugin ABI — the services the host lends to plugins.
 *
 * The host hands every plugin entry point a `const ferro_host_api*`. It is borrowed for the
 * lifetime of the runtime that loaded the plugin: one table per runtime, so a plugin must pass
 * back the table it was given and never cache one across calls from different runtimes. A
 * plugin calls the host only through this table (never through libferro symbols), so tools
 * can load it with a stub host.
 *
 * Since: 1.0. Thread-safety: every entry may be called from any thread, except the session_*
 * entries, which belong to the thread running the executor that received the session. */
#ifndef FERRO_HOST_H
#define FERRO_HOST_H

#include "ferro/communicator.h"
#include "ferro/engine.h"
#include "ferro/family.h"
#include "ferro/status.h"
#include "ferro/types.h"

FERRO_EXTERN_C_BEGIN

/* Arguments of an op call made by a plugin (typically a VJP/JVP rule). */
typedef struct ferro_op_call_args {
    uint32_t struct_size;
    uint32_t n_attrs;
    const ferro_named_attr* attrs; /* borrowed for the call; omitted attrs take defaults */
    uint32_t n_inputs;
    uint32_t outputs_capacity;
    const ferro_tensor* inputs; /* borrowed for the call */
    ferro_tensor* outputs;      /* out: new references, released by the caller */
    uint32_t n_outputs;         /* out: how many were written */
    uint32_t reserved;
    /* Since 1.7, optional (NULL: none). One tensor per output to write the results into, as
     * numpy's and torch's out=: borrowed for the call; `outputs` is then left alone and
     * n_outputs set to n_into. Each must be on the call's engine, with its output's dtype and
     * shape, holding each element once (any strides; it may alias an input). Such a call
     * records no gradient: it refuses an input that requires grad while grad mode is on, an
     * input carrying a tangent, and a destination that requires grad, was computed by a
     * recorded op or carries a tangent. */
    const ferro_tensor* into;
    uint32_t n_into;
    uint32_t reserved2;
} ferro_op_call_args;
FERRO_STRUCT_TRAITS(ferro_op_call_args, reserved2);

typedef struct ferro_host_api {
    uint32_t struct_size;
    uint32_t abi_major; /* the host's FERRO_ABI_MAJOR */
    uint32_t abi_minor; /* the host's FERRO_ABI_MINOR */
    uint32_t reserved;
    void* host_data; /* host-private; identifies the runtime */

    /* ---- statuses ---- */
    /* New status with `code` and a copy of `message`. Owned by the caller (usually returned
     * straight to the host). Never fails: on allocation failure it returns a static
     * RESOURCE_EXHAUSTED status that status_free ignores. */
    ferro_status (*status_make)(uint32_t code, const char* message);
    void (*status_free)(ferro_status status);
    uint32_t (*status_code)(ferro_status status);
    /* Borrowed for the lifetime of `status`. */
    const char* (*status_message)(ferro_status status);

    /* ---- logging ---- */
    /* Log through the host's logger (spdlog, or the application's callback). `source` names the
     * plugin or component ("linalg"). Cheap to call below the active level, but check
     * log_enabled before formatting expensive messages. */
    void (*log)(const struct ferro_host_api* host, uint32_t level, const char* source, const char* message);
    ferro_bool (*log_enabled)(const struct ferro_host_api* host, uint32_t level);

    /* ---- tensors ---- */
    void (*tensor_retain)(ferro_tensor tensor);
    void (*tensor_release)(ferro_tensor tensor);
    /* The tensor's metadata and memory; pointers borrowed while the caller holds `tensor`. */
    ferro_status (*tensor_view)(ferro_tensor tensor, ferro_tensor_view* out);
    ferro_status (*tensor_signature)(ferro_tensor tensor, ferro_signature* out);
    /* The engine name ("cpu", "vulkan:0"); borrowed while the caller holds `tensor`. */
    const char* (*tensor_engine)(ferro_tensor tensor);
    /* New uninitialised row-major tensor on `engine` ("cpu", "cuda:0"). Owned by the caller. */
    ferro_status (*tensor_empty)(const struct ferro_host_api* host, const char* engine, ferro_dtype dtype, int32_t ndim,
                                 const int64_t* shape, ferro_tensor* out);
    /* New row-major tensor on `engine` holding a copy of `data` (row-major, packed). */
    ferro_status (*tensor_from_host)(const struct ferro_host_api* host, const char* engine, ferro_dtype dtype, int32_t ndim,
                                     const int64_t* shape, const void* data, ferro_tensor* out);
    /* Copy the tensor's elements, row-major packed, into `dst` (`bytes` must match). */
    ferro_status (*tensor_to_host)(ferro_tensor tensor, void* dst, uint64_t bytes);

    /* ---- ops (how AD rules compute) ---- */
    ferro_status (*op_find)(const struct ferro_host_api* host, const char* qualified_name, ferro_op* out);
    /* Call an op eagerly. During backward with create_graph, calls are recorded on the tape. */
    ferro_status (*op_call)(const struct ferro_host_api* host, ferro_op op, ferro_op_call_args* args);
    /* Whether the calling thread records gradients now. */
    ferro_bool (*grad_enabled)(const struct ferro_host_api* host);

    /* ---- sessions (for session executors) ----
     * Enqueue one engine primitive into the call's session. The host checks every operand
     * against the bounds of its buffer before forwarding to the engine. */
    ferro_status (*session_fill)(ferro_session session, const ferro_fill_args* args);
    ferro_status (*session_cast)(ferro_session session, const ferro_cast_args* args);
    ferro_status (*session_unary)(ferro_session session, const ferro_unary_args* args);
    ferro_status (*session_binary)(ferro_session session, const ferro_binary_args* args);
    ferro_status (*session_where)(ferro_session session, const ferro_where_args* args);
    ferro_status (*session_reduce)(ferro_session session, const ferro_reduce_args* args);
    ferro_status (*session_copy_strided)(ferro_session session, const ferro_copy_args* args);
    ferro_status (*session_gemm_batched)(ferro_session session, const ferro_gemm_args* args);
    /* Scratch memory on the session's engine, freed when the session ends (after its work has
     * completed). Borrowed for the session. */
    ferro_status (*session_scratch)(ferro_session session, uint64_t bytes, ferro_buffer_view* out);

    /* Since 1.5 (check FERRO_HAS_FIELD). */
    /* The engine's native context for this session, as a context executor receives it, for a
     * session executor that enqueues primitives and also records a library's work (VkFFT,
     * cuFFT). Work recorded through it is ordered after everything enqueued before the call
     * and before everything enqueued after it. UNIMPLEMENTED when the engine has none. */
    ferro_status (*session_native_context)(ferro_session session, const void** out);
    /* Lets this session's primitives use `tensor`, a tensor the plugin owns on the session's
     * engine (a plan's persistent buffer, a lookup table), and keeps its memory alive until
     * the session's work has completed. A tensor on another engine is INVALID_ARGUMENT. */
    ferro_status (*session_use)(ferro_session session, ferro_tensor tensor);

    /* Since 1.16 (check FERRO_HAS_FIELD). */
    /* The communicator the application gave this runtime (ferro_runtime_options.communicator):
     * fills *out, with kind NULL when it gave none. The pointers are borrowed for the lifetime
     * of the runtime. */
    ferro_status (*runtime_communicator)(const struct ferro_host_api* host, ferro_communicator* out);

    /* Since 1.17 (check FERRO_HAS_FIELD). */
    /* Runs task(user, i, child) for every i in [0, n) and returns when all have run, with the
     * first failing task's status. On an engine with a thread pool in its native context (the
     * cpu engine) the tasks run on the pool's threads, each with a child session of `session`
     * that belongs to the thread running the task (its session_* entries are that thread's),
     * that may touch the buffers `session` may, and whose primitives have completed when the
     * task returns; primitives inside run on the task's thread alone, and BLAS on one thread.
     * Elsewhere the tasks run one after the other on the calling thread with `session` itself.
     * Tasks that write the same memory must not run concurrently: give each its own. */
    ferro_status (*session_parallel)(ferro_session session, uint32_t n,
                                     ferro_status (*task)(void* user, uint32_t i, ferro_session child), void* user);
} ferro_host_api;
FERRO_STRUCT_TRAITS(ferro_host_api, session_parallel);

FERRO_EXTERN_C_END

#endif /* FERRO_HOST_H */
