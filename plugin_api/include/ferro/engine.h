/* ferro plugin ABI — engines: one device of one backend (cpu, vulkan:0, cuda:0).
 *
 * An engine plugin exports ferro_engine_desc entries (through its ferro_plugin_desc). The host
 * calls probe() once per load to learn how many devices exist (0 is not an error: a CUDA plugin
 * on a machine without a GPU loads cleanly and says why), then create() per device ordinal.
 * The created engine is the only code that touches its device memory: it provides allocation,
 * transfers, sessions, the fixed primitive kernel set (DESIGN §6) and its native context.
 *
 * Since: 1.0. */
#ifndef FERRO_ENGINE_H
#define FERRO_ENGINE_H

#include "ferro/status.h"
#include "ferro/types.h"

FERRO_EXTERN_C_BEGIN

struct ferro_host_api;

/* ---- primitive kernels ------------------------------------------------------------------
 * Every kernel takes strided operands (ferro_tensor_view; `tensor` is NULL and ignored there).
 * Unless a kernel says otherwise, all operands have the output's ndim and shape, input strides
 * may be 0 (broadcast), and the output does not overlap an input except exactly (same buffer,
 * offset and strides: in-place elementwise is allowed). Shapes may contain 0 (no work). */

enum ferro_unary_op {
    FERRO_UNARY_NEG = 0,
    FERRO_UNARY_CONJ = 1,
    FERRO_UNARY_ABS = 2, /* complex -> real of the same precision */
    FERRO_UNARY_EXP = 3,
    FERRO_UNARY_LOG = 4,
    FERRO_UNARY_SIN = 5,
    FERRO_UNARY_COS = 6,
    FERRO_UNARY_TAN = 7,
    FERRO_UNARY_TANH = 8,
    FERRO_UNARY_SQRT = 9,
    FERRO_UNARY_RSQRT = 10,
    FERRO_UNARY_SIGN = 11, /* complex: z/|z| (0 at 0), as torch.sgn */
    FERRO_UNARY_REAL = 12, /* complex -> real */
    FERRO_UNARY_IMAG = 13, /* complex -> real */
    FERRO_UNARY_RECIPROCAL = 14,
    FERRO_UNARY_SQUARE = 15,
    FERRO_UNARY_EXPM1 = 16,
    FERRO_UNARY_LOG1P = 17,
    FERRO_UNARY_SINH = 18,
    FERRO_UNARY_COSH = 19,
    FERRO_UNARY_ASIN = 20,
    FERRO_UNARY_ACOS = 21,
    FERRO_UNARY_ATAN = 22,
    FERRO_UNARY_SIGMOID = 23,
    FERRO_UNARY_ERF = 24,
    FERRO_UNARY_FLOOR = 25,
    FERRO_UNARY_CEIL = 26,
    FERRO_UNARY_ROUND = 27,       /* half to even, as numpy */
    FERRO_UNARY_ANGLE = 28,       /* complex -> real */
    FERRO_UNARY_LOGICAL_NOT = 29, /* any -> bool */
    FERRO_UNARY_ISNAN = 30,       /* any -> bool */
    FERRO_UNARY_ISINF = 31,       /* any -> bool */
    FERRO_UNARY_ISFINITE = 32,    /* any -> bool */
    FERRO_UNARY_COUNT_ = 33
};

enum ferro_binary_op {
    FERRO_BINARY_ADD = 0,
    FERRO_BINARY_SUB = 1,
    FERRO_BINARY_MUL = 2,
    FERRO_BINARY_DIV = 3, /* integer operands: floor division, as numpy // */
    FERRO_BINARY_POW = 4,
    FERRO_BINARY_MAXIMUM = 5, /* NaN-propagating, as numpy.maximum */
    FERRO_BINARY_MINIMUM = 6,
    FERRO_BINARY_ATAN2 = 7,
    FERRO_BINARY_EQ = 8, /* comparisons: output bool */
    FERRO_BINARY_NE = 9,
    FERRO_BINARY_LT = 10,
    FERRO_BINARY_LE = 11,
    FERRO_BINARY_GT = 12,
    FERRO_BINARY_GE = 13,
    FERRO_BINARY_LOGICAL_AND = 14, /* output bool */
    FERRO_BINARY_LOGICAL_OR = 15,
    FERRO_BINARY_COMPLEX = 16, /* (real, imag) -> complex of the same precision */
    FERRO_BINARY_COUNT_ = 17
};

enum ferro_reduce_op {
    FERRO_REDUCE_SUM = 0,
    FERRO_REDUCE_PROD = 1,
    FERRO_REDUCE_MAX = 2, /* NaN-propagating; real dtypes only */
    FERRO_REDUCE_MIN = 3,
    FERRO_REDUCE_ANY = 4, /* output bool */
    FERRO_REDUCE_ALL = 5,
    FERRO_REDUCE_COUNT_ = 6
};

/* out[...] = value, converted to out's dtype. */
typedef struct ferro_fill_args {
    uint32_t struct_size;
    uint32_t reserved;
    ferro_tensor_view out;
    ferro_scalar value;
} ferro_fill_args;
FERRO_STRUCT_TRAITS(ferro_fill_args, value);

/* out = in converted to out's dtype (complex -> real keeps the real part, as numpy). */
typedef struct ferro_cast_args {
    uint32_t struct_size;
    uint32_t reserved;
    ferro_tensor_view in;
    ferro_tensor_view out;
} ferro_cast_args;
FERRO_STRUCT_TRAITS(ferro_cast_args, out);

/* out = op(in). in and out share a dtype unless the op says otherwise. */
typedef struct ferro_unary_args {
    uint32_t struct_size;
    uint32_t op; /* enum ferro_unary_op */
    ferro_tensor_view in;
    ferro_tensor_view out;
} ferro_unary_args;
FERRO_STRUCT_TRAITS(ferro_unary_args, out);

/* out = op(a, b); a and b share a dtype (the host has promoted them), broadcast by strides. */
typedef struct ferro_binary_args {
    uint32_t struct_size;
    uint32_t op; /* enum ferro_binary_op */
    ferro_tensor_view a;
    ferro_tensor_view b;
    ferro_tensor_view out;
} ferro_binary_args;
FERRO_STRUCT_TRAITS(ferro_binary_args, out);

/* out = cond ? a : b, elementwise; cond is bool, a and b share out's dtype. */
typedef struct ferro_where_args {
    uint32_t struct_size;
    uint32_t reserved;
    ferro_tensor_view cond;
    ferro_tensor_view a;
    ferro_tensor_view b;
    ferro_tensor_view out;
} ferro_where_args;
FERRO_STRUCT_TRAITS(ferro_where_args, out);

/* Reduce `in` over every axis where out.shape[k] == 1 and in.shape[k] != 1; out has in's ndim
 * (keepdim layout). An empty reduction yields the identity (0, 1, -inf, +inf, false, true). */
typedef struct ferro_reduce_args {
    uint32_t struct_size;
    uint32_t op; /* enum ferro_reduce_op */
    ferro_tensor_view in;
    ferro_tensor_view out;
} ferro_reduce_args;
FERRO_STRUCT_TRAITS(ferro_reduce_args, out);

/* out = in for any two layouts of the same shape and dtype: contiguous, permute, broadcast
 * materialise. */
typedef struct ferro_copy_args {
    uint32_t struct_size;
    uint32_t reserved;
    ferro_tensor_view in;
    ferro_tensor_view out;
} ferro_copy_args;
FERRO_STRUCT_TRAITS(ferro_copy_args, out);

/* For each batch index p < batch: C[p] = alpha * opA(A[p]) @ opB(B[p]) + beta * C[p], with
 * A[p] an m x k matrix, B[p] k x n, C[p] m x n, each described by buffer + byte offset and
 * element strides (batch, row, column). Transposition is expressed by swapping the row and
 * column strides; opX conjugates when conj_x is set (complex only). beta == 0 means C is not
 * read (NaN in C does not propagate). A batch stride of 0 reuses one matrix for every batch.
 * C must not alias A or B. An engine may copy operands whose strides its BLAS cannot take. */
typedef struct ferro_gemm_operand {
    ferro_buffer buffer;
    uint64_t byte_offset;
    void* data; /* address of element 0 when addressable, else NULL */
    int64_t batch_stride;
    int64_t row_stride;
    int64_t col_stride;
} ferro_gemm_operand;

typedef struct ferro_gemm_args {
    uint32_t struct_size;
    ferro_dtype dtype; /* f32, f64, c64 or c128 */
    int64_t batch;
    int64_t m;
    int64_t n;
    int64_t k;
    ferro_gemm_operand a;
    ferro_gemm_operand b;
    ferro_gemm_operand c;
    ferro_scalar alpha;
    ferro_scalar beta;
    ferro_bool conj_a;
    ferro_bool conj_b;
    uint8_t reserved[6];
} ferro_gemm_args;
FERRO_STRUCT_TRAITS(ferro_gemm_args, reserved);

/* Since 1.13: a fused elementwise program, a straight line of unary and binary primitives over
 * values of one dtype and one shape, run in one pass over the elements (the host fuses
 * consecutive elementwise steps of a prepared program into one: docs/capture.md). Values are
 * numbered: [0, n_inputs) the inputs (read only), [n_inputs, n_inputs + n_outputs) the outputs,
 * then n_temps temporaries. Instructions run in order; each reads `a` (and `b`: binary) and
 * writes `dst`, an output or a temporary, which may be a value it reads (elementwise in place).
 * `op` means what it means in ferro_unary_args / ferro_binary_args, with every operand and
 * result in `dtype` (the host fuses no op that changes the dtype). Inputs have the outputs'
 * ndim and shape (strides may be 0: broadcast); outputs share one shape and overlap neither
 * the inputs nor each other. An op the engine's unary or binary kernel would refuse fails the
 * program with that kernel's status, as the step would fail on its own. */
enum ferro_fused_kind { FERRO_FUSED_UNARY = 0, FERRO_FUSED_BINARY = 1 };

/* Inputs plus outputs of one program, at most. */
#define FERRO_FUSED_MAX_OPERANDS 16
/* Since 1.14: inputs, outputs and temporaries of one program, at most (an engine may keep them
 * all in registers). */
#define FERRO_FUSED_MAX_VALUES 64

typedef struct ferro_fused_instr { /* travels in arrays: never grows within a major */
    uint16_t kind;                 /* enum ferro_fused_kind */
    uint16_t op;                   /* ferro_unary_op or ferro_binary_op */
    uint16_t dst;
    uint16_t a;
    uint16_t b; /* binary only */
    uint16_t reserved;
} ferro_fused_instr;

typedef struct ferro_fused_args {
    uint32_t struct_size;
    ferro_dtype dtype;
    uint32_t n_inputs;
    uint32_t n_outputs; /* >= 1 */
    uint32_t n_temps;
    uint32_t n_instrs;
    const ferro_tensor_view* inputs;
    const ferro_tensor_view* outputs;
    const ferro_fused_instr* instrs;
} ferro_fused_args;
FERRO_STRUCT_TRAITS(ferro_fused_args, instrs);

/* ---- devices ------------------------------------------------------------------------------ */

/* DLPack device types, for DLPack import/export. */
#define FERRO_DLPACK_DEVICE_CPU 1
#define FERRO_DLPACK_DEVICE_CUDA 2
#define FERRO_DLPACK_DEVICE_VULKAN 7

/* Engine memory can be read and written by host code through ferro_tensor_view.data. */
#define FERRO_ENGINE_HOST_ADDRESSABLE (1u << 0)
/* Since 1.10: a buffer handle is the address of its memory, and the engine's kernels and
 * transfers accept any host address as a buffer (with HOST_ADDRESSABLE). The host may then
 * place small tensors in memory of its own, next to their bookkeeping, and never asks the
 * engine to free such a buffer. */
#define FERRO_ENGINE_BUFFER_IS_ADDRESS (1u << 1)

typedef struct ferro_device_props {
    uint32_t struct_size;
    uint32_t flags;             /* FERRO_ENGINE_* bits */
    char name[128];             /* e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" */
    uint64_t memory_bytes;      /* 0 = unknown */
    uint8_t uuid[16];           /* all zero = none */
    int32_t dlpack_device_type; /* FERRO_DLPACK_DEVICE_* */
    int32_t score;              /* higher = preferred when the user does not choose */
    uint32_t n_dtypes;          /* dtypes the kernels support, in `dtypes` */
    ferro_dtype dtypes[16];
    char details[256]; /* free text: driver, compute capability, ... */
    uint32_t reserved; /* 1.0-1.9's trailing padding: an engine of those minors may copy it */
    /* Since 1.10 (check FERRO_HAS_FIELD): the threads the engine's kernels run on (the cpu
     * engine's pool); 0 = not said. Modules see it as ferro_engine_target.threads. */
    uint32_t threads;
} ferro_device_props;
FERRO_STRUCT_TRAITS(ferro_device_props, threads);

/* What probe() found. device_count 0 with a reason is the normal answer without a device. */
typedef struct ferro_probe_result {
    uint32_t struct_size;
    uint32_t device_count;
    char reason[256]; /* why there are no (or fewer) devices; empty otherwise */
} ferro_probe_result;
FERRO_STRUCT_TRAITS(ferro_probe_result, reason);

/* An engine session: a batch of kernels the engine may record and submit together. Opaque. */
typedef struct ferro_engine_session_impl* ferro_engine_session;

/* Since 1.14: a session's kernels kept to be submitted again (session_end_recording). Opaque. */
typedef struct ferro_engine_recording_impl* ferro_engine_recording;

/* The engine interface. Every function receives the `self` of its ferro_engine_instance.
 * Thread-safety: alloc, free, copy_h2d, copy_d2h, properties and session_begin may be called concurrently; one
 * session is used by one thread at a time; distinct sessions may run concurrently.
 * All required unless marked optional; the host refuses an engine with a NULL required entry. */
typedef struct ferro_engine_iface {
    uint32_t struct_size;
    uint32_t reserved;

    /* Fill `out` (host storage; set its struct_size first) with the device description. */
    ferro_status (*properties)(void* self, ferro_device_props* out);

    /* Allocate `bytes` (> 0) aligned to at least `alignment` (a power of two). *out_buffer is
     * owned by the caller and released with free(); *out_address receives the host or device
     * address of the first byte when the memory is addressable, else NULL. free() may be
     * called while submitted session work still uses the buffer: the engine must not reuse
     * the memory before that work completes (stream-ordered release). */
    ferro_status (*alloc)(void* self, uint64_t bytes, uint64_t alignment, ferro_buffer* out_buffer, void** out_address);
    void (*free)(void* self, ferro_buffer buffer);

    /* Synchronous transfers between host memory and engine memory; they wait for any session
     * work that writes (h2d) or reads (d2h) the range. */
    ferro_status (*copy_h2d)(void* self, const void* src, ferro_buffer dst, uint64_t dst_offset, uint64_t bytes);
    ferro_status (*copy_d2h)(void* self, ferro_buffer src, uint64_t src_offset, void* dst, uint64_t bytes);

    /* Sessions. end() submits what was recorded; with `wait` set it returns only after the work
     * has finished (and reports its errors). A session is released by end() in every case. */
    ferro_status (*session_begin)(void* self, ferro_engine_session* out_session);
    ferro_status (*session_end)(void* self, ferro_engine_session session, ferro_bool wait);

    /* The primitive kernel set (DESIGN §6), recorded into `session`. A dtype or op the engine
     * does not support returns FERRO_UNIMPLEMENTED naming both. */
    ferro_status (*fill)(void* self, ferro_engine_session session, const ferro_fill_args* args);
    ferro_status (*cast)(void* self, ferro_engine_session session, const ferro_cast_args* args);
    ferro_status (*unary)(void* self, ferro_engine_session session, const ferro_unary_args* args);
    ferro_status (*binary)(void* self, ferro_engine_session session, const ferro_binary_args* args);
    ferro_status (*where)(void* self, ferro_engine_session session, const ferro_where_args* args);
    ferro_status (*reduce)(void* self, ferro_engine_session session, const ferro_reduce_args* args);
    ferro_status (*copy_strided)(void* self, ferro_engine_session session, const ferro_copy_args* args);
    ferro_status (*gemm_batched)(void* self, ferro_engine_session session, const ferro_gemm_args* args);

    /* The engine's native context for context executors, valid until session_end: a struct
     * whose layout the engine's context_abi string names (e.g. "ferro.cpu.ctx.v1", see
     * cpu_context.h). Borrowed for the session. Optional: NULL = no context executors. */
    ferro_status (*native_context)(void* self, ferro_engine_session session, const void** out);

    /* Release everything the engine owns. Called once, after every buffer it allocated has
     * been freed. */
    void (*destroy)(void* self);

    /* Optional: adopt memory the engine did not allocate (a host pointer on cpu, a device
     * pointer on cuda) as a buffer, for borrowing application memory and DLPack import. The
     * memory stays owned by its owner; the buffer is released with release_import, never
     * with free. NULL (or FERRO_UNIMPLEMENTED) = this engine cannot adopt memory. */
    ferro_status (*import_memory)(void* self, void* address, uint64_t bytes, ferro_buffer* out_buffer);
    void (*release_import)(void* self, ferro_buffer buffer);

    /* Since 1.13 (check FERRO_HAS_FIELD), optional: runs a fused elementwise program
     * (ferro_fused_args), recorded into `session` as the primitives are. NULL = the host runs
     * elementwise steps one by one. */
    ferro_status (*elementwise_fused)(void* self, ferro_engine_session session, const ferro_fused_args* args);

    /* Since 1.14 (check FERRO_HAS_FIELD), optional, all four or none: recorded sessions, which
     * the host submits again on other buffers instead of recording the same kernels again (a
     * prepared program's runs). The kernels' shapes, strides, dtypes and scalars stay as recorded;
     * only the buffers named as parameters change.
     * session_begin_recording: as session_begin, for a session whose kernels the engine keeps.
     * session_end_recording: submits the session as session_end does and sets *out_recording to
     *   the recording, owned by the caller (recording_destroy), or to NULL when the session
     *   recorded what cannot be submitted again (commands through the native context). `params`
     *   (borrowed for the call) are the n_params distinct buffers a later submission replaces;
     *   every other buffer the kernels used must stay allocated while the recording lives.
     * recording_submit: submits the kernels again, after the recording's previous submission,
     *   with params[i] replaced by buffers[i] and every address into it moved by
     *   offset_deltas[i] bytes (the same view at another offset). Same `wait` as session_end.
     *   One thread at a time per recording.
     * recording_destroy: releases the recording once its submitted work has finished. */
    ferro_status (*session_begin_recording)(void* self, ferro_engine_session* out_session);
    ferro_status (*session_end_recording)(void* self, ferro_engine_session session, const ferro_buffer* params, uint32_t n_params,
                                          ferro_bool wait, ferro_engine_recording* out_recording);
    ferro_status (*recording_submit)(void* self, ferro_engine_recording recording, const ferro_buffer* buffers,
                                     const int64_t* offset_deltas, uint32_t n_buffers, ferro_bool wait);
    void (*recording_destroy)(void* self, ferro_engine_recording recording);
} ferro_engine_iface;
FERRO_STRUCT_TRAITS(ferro_engine_iface, recording_destroy);

/* A created engine: `self` is plugin state, `iface` its static function table (borrowed for
 * the lifetime of the plugin library). Owned by the host, released with iface->destroy(self). */
typedef struct ferro_engine_instance {
    uint32_t struct_size;
    uint32_t reserved;
    void* self;
    const ferro_engine_iface* iface;
} ferro_engine_instance;
FERRO_STRUCT_TRAITS(ferro_engine_instance, iface);

/* Static description of one engine backend a plugin provides. Borrowed for the lifetime of the
 * plugin library. */
typedef struct ferro_engine_desc {
    uint32_t struct_size;
    uint32_t reserved;
    const char* kind;        /* "cpu", "vulkan", "cuda": engines are named kind:ordinal */
    const char* context_abi; /* layout name of native_context(), e.g. "ferro.cuda.ctx.v1" */
    const char* description;

    /* Count devices. Must not crash or create device handles when the driver or device is
     * absent: report device_count 0 and say why in out->reason. A non-NULL status means the
     * probe itself failed (the host records it as a load diagnostic). */
    ferro_status (*probe)(const struct ferro_host_api* host, ferro_probe_result* out);

    /* Create the engine for device `ordinal` (< device_count). */
    ferro_status (*create)(const struct ferro_host_api* host, uint32_t ordinal, ferro_engine_instance* out);
} ferro_engine_desc;
FERRO_STRUCT_TRAITS(ferro_engine_desc, create);

FERRO_EXTERN_C_END

#endif /* FERRO_ENGINE_H */
