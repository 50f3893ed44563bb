/* ferro — the embedding C API (libferro.so).
 *
 * Applications create a runtime, load plugins (explicitly or from the search path), and look at
 * what is installed through an inventory: a consistent view of one snapshot. Statuses are the
 * plugin ABI's (status.h): NULL on success, otherwise owned by the caller and released with
 * ferro_status_free.
 *
 * Conventions: every function that can fail returns a ferro_status and writes results to out_*
 * parameters only on success. Strings returned by an inventory are borrowed for the lifetime of
 * that inventory. Unless stated otherwise, functions are thread-safe.
 *
 * Since: 1.0 (this file grows by appending; see plugin_api/CHANGELOG.md for the ABI). */
#ifndef FERRO_FERRO_H
#define FERRO_FERRO_H

#include <ferro/abi.h>
#include <ferro/communicator.h> /* ferro_communicator */
#include <ferro/engine.h>       /* FERRO_ENGINE_* flags, FERRO_DLPACK_DEVICE_* */
#include <ferro/extension.h>    /* ferro_op_view */
#include <ferro/host.h>         /* ferro_op, ferro_op_call_args */
#include <ferro/status.h>
#include <ferro/types.h>

#if defined(FERRO_BUILDING_LIBRARY)
#define FERRO_API FERRO_EXTERN_C FERRO_EXPORT_SYMBOL
#else
#define FERRO_API FERRO_EXTERN_C
#endif

FERRO_EXTERN_C_BEGIN

/* ---- version and statuses ---------------------------------------------------------------- */

/* "0.1.0": the library's semantic version. Static string. */
FERRO_API const char* ferro_version(void);
/* The plugin ABI this host speaks. */
FERRO_API void ferro_abi_version(uint32_t* out_major, uint32_t* out_minor);

/* Accessors of a status; NULL reads as OK / "". The message is borrowed for the status's life. */
FERRO_API uint32_t ferro_status_code(ferro_status status);
FERRO_API const char* ferro_status_message(ferro_status status);
/* Where the failure happened (a ferro_phase, status.h): loading a plugin, preparing or executing
 * an op call, or backward; FERRO_PHASE_NONE for failures before those (argument checks). */
FERRO_API uint32_t ferro_status_phase(ferro_status status);
/* "INVALID_ARGUMENT" etc.; static string. */
FERRO_API const char* ferro_status_code_name(uint32_t code);
/* Releases a status (NULL is fine). */
FERRO_API void ferro_status_free(ferro_status status);

/* ---- runtime ----------------------------------------------------------------------------- */

typedef struct ferro_runtime_impl ferro_runtime;

/* Called for every log line at or above the runtime's level, from any thread. */
typedef void (*ferro_log_callback)(void* user, uint32_t level, const char* source, const char* message);

typedef struct ferro_runtime_options {
    uint32_t struct_size;
    uint32_t n_plugin_paths;
    const char* const* plugin_paths; /* searched first; borrowed for the create call */
    ferro_bool use_environment_path; /* FERRO_PLUGIN_PATH (default 1) */
    ferro_bool use_default_dir;      /* lib/ferro/plugins next to libferro (default 1) */
    ferro_bool autoload;             /* load every plugin on the search path (default 1) */
    ferro_bool log_level_set;        /* 0: FERRO_LOG_LEVEL from the environment, else warn */
    uint32_t log_level;              /* enum ferro_log_level, when log_level_set */
    uint32_t reserved;
    ferro_log_callback log_callback; /* NULL: spdlog to stderr */
    void* log_user;
    uint64_t plan_cache_max_entries;
    uint64_t plan_cache_max_bytes;
    /* Since 1.16: a communicator the application created, for the comm family to run its
     * collectives on (ferro/communicator.h); kind NULL (the default): none, and a process that
     * mpirun launched uses MPI_COMM_WORLD. */
    ferro_communicator communicator;
} ferro_runtime_options;
FERRO_STRUCT_TRAITS(ferro_runtime_options, communicator);

/* Fills `options` with the defaults (and struct_size). */
FERRO_API void ferro_runtime_options_init(ferro_runtime_options* options);

/* Creates a runtime; `options` may be NULL for the defaults. A plugin that fails to load does
 * not fail creation: it becomes a diagnostic in the inventory. Owned by the caller, released
 * with ferro_runtime_destroy. */
FERRO_API ferro_status ferro_runtime_create(const ferro_runtime_options* options, ferro_runtime** out_runtime);
/* Destroys a runtime (NULL is fine). Every object obtained from it must be released first. */
FERRO_API void ferro_runtime_destroy(ferro_runtime* runtime);

/* This process's rank in the runtime's communicator and the communicator's size, from the comm
 * family (op comm.info): 0 and 1 for a single process, the MPI rank and size when mpirun
 * launched the process or the runtime adopted a communicator. NOT_FOUND when no comm plugin is
 * loaded. Since 1.16. */
FERRO_API ferro_status ferro_runtime_rank_size(ferro_runtime* runtime, int64_t* out_rank, int64_t* out_size);

/* Loads one plugin file. On failure the status says "<file>: stage <s>: <message>" with the
 * stage's code, and the same diagnostic is kept in the runtime. A file already loaded (the same
 * file by canonical path: symbolic links and "." or ".." resolved) is OK and changes nothing. */
FERRO_API ferro_status ferro_runtime_load_plugin(ferro_runtime* runtime, const char* path);
/* Loads every libferro_*.so on the search path; counts what loaded and what failed. Files
 * already loaded count in neither, so a second scan of an unchanged path reports 0 and 0. */
FERRO_API ferro_status ferro_runtime_scan(ferro_runtime* runtime, uint32_t* out_loaded, uint32_t* out_failed);
/* Unloads a plugin by name: FAILED_PRECONDITION while objects it created are alive. */
FERRO_API ferro_status ferro_runtime_unload_plugin(ferro_runtime* runtime, const char* name);
/* The current snapshot epoch (increments with every reconfiguration). */
FERRO_API uint64_t ferro_runtime_epoch(const ferro_runtime* runtime);
/* A number unique to this runtime within the process (never reused), for caches keyed by
 * runtime. */
FERRO_API uint64_t ferro_runtime_id(const ferro_runtime* runtime);

/* ---- inventory: what one snapshot holds --------------------------------------------------- */

typedef struct ferro_inventory_impl ferro_inventory;

/* Pins the current snapshot. Owned by the caller, released with ferro_inventory_destroy. */
FERRO_API ferro_status ferro_runtime_inventory(const ferro_runtime* runtime, ferro_inventory** out_inventory);
FERRO_API void ferro_inventory_destroy(ferro_inventory* inventory);
FERRO_API uint64_t ferro_inventory_epoch(const ferro_inventory* inventory);

typedef struct ferro_plugin_info {
    uint32_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;
    ferro_bool builtin;
    const char* name;
    const char* version;
    const char* description;
    const char* path;    /* "" for built-ins */
    uint32_t n_families; /* families it defines */
    uint32_t n_engines;  /* engines it created */
    /* Appended: the families it contributes modules to without defining them, comma-separated
     * ("fft"); "" when none. */
    const char* module_families;
} ferro_plugin_info;
FERRO_STRUCT_TRAITS(ferro_plugin_info, module_families);

typedef struct ferro_diagnostic_info {
    uint32_t struct_size;
    uint32_t code;
    const char* file;
    const char* stage; /* "open", "entry", "query", "abi", "validate", "probe", "create", "register" */
    const char* message;
} ferro_diagnostic_info;
FERRO_STRUCT_TRAITS(ferro_diagnostic_info, message);

typedef struct ferro_engine_info {
    uint32_t struct_size;
    uint32_t ordinal;
    const char* name; /* "cpu", "vulkan:0" */
    const char* kind;
    const char* plugin;
    const char* device; /* device name */
    uint64_t memory_bytes;
    int32_t score;
    uint32_t flags; /* FERRO_ENGINE_* */
} ferro_engine_info;
FERRO_STRUCT_TRAITS(ferro_engine_info, flags);

/* One engine kind a plugin provides, with how many devices it found and why not more. */
typedef struct ferro_engine_kind_info {
    uint32_t struct_size;
    uint32_t device_count;
    const char* plugin;
    const char* kind;
    const char* reason;
} ferro_engine_kind_info;
FERRO_STRUCT_TRAITS(ferro_engine_kind_info, reason);

typedef struct ferro_op_info {
    uint32_t struct_size;
    int32_t n_inputs; /* FERRO_VARIADIC = -1 */
    int32_t n_outputs;
    uint32_t n_attrs;
    const char* name; /* qualified: "linalg.svd" */
    const char* family;
    const char* doc;
    ferro_bool has_vjp;
    ferro_bool has_jvp;
} ferro_op_info;
FERRO_STRUCT_TRAITS(ferro_op_info, has_jvp);

typedef struct ferro_search_dir_info {
    uint32_t struct_size;
    ferro_bool exists;
    const char* path;
    const char* origin; /* "runtime option", "FERRO_PLUGIN_PATH", "next to libferro" */
} ferro_search_dir_info;
FERRO_STRUCT_TRAITS(ferro_search_dir_info, origin);

/* Counts and entries; `index` must be below the count (else OUT_OF_RANGE). `out` is caller
 * storage: set its struct_size. */
FERRO_API uint32_t ferro_inventory_plugin_count(const ferro_inventory* inventory);
FERRO_API ferro_status ferro_inventory_plugin(const ferro_inventory* inventory, uint32_t index, ferro_plugin_info* out);
FERRO_API uint32_t ferro_inventory_diagnostic_count(const ferro_inventory* inventory);
FERRO_API ferro_status ferro_inventory_diagnostic(const ferro_inventory* inventory, uint32_t index, ferro_diagnostic_info* out);
FERRO_API uint32_t ferro_inventory_engine_count(const ferro_inventory* inventory);
FERRO_API ferro_status ferro_inventory_engine(const ferro_inventory* inventory, uint32_t index, ferro_engine_info* out);
FERRO_API uint32_t ferro_inventory_engine_kind_count(const ferro_inventory* inventory);
FERRO_API ferro_status ferro_inventory_engine_kind(const ferro_inventory* inventory, uint32_t index, ferro_engine_kind_info* out);
FERRO_API uint32_t ferro_inventory_op_count(const ferro_inventory* inventory);
FERRO_API ferro_status ferro_inventory_op(const ferro_inventory* inventory, uint32_t index, ferro_op_info* out);
FERRO_API uint32_t ferro_inventory_search_dir_count(const ferro_inventory* inventory);
FERRO_API ferro_status ferro_inventory_search_dir(const ferro_inventory* inventory, uint32_t index, ferro_search_dir_info* out);

/* ---- inventory details, for inspectors (ferro-inspect show / ops) ------------------------ */

/* Attribute `attr_index` (below ferro_op_info.n_attrs) of op `op_index`. */
typedef struct ferro_op_attr_info {
    uint32_t struct_size;
    uint32_t type;  /* FERRO_ATTR_* */
    uint32_t flags; /* FERRO_ATTR_FLAG_REQUIRED (no default), FERRO_ATTR_FLAG_OPTIONAL (None accepted) */
    uint32_t reserved;
    const char* name;
    const char* doc;
    ferro_attr_value default_value; /* type FERRO_ATTR_NONE: None, or no default when required */
} ferro_op_attr_info;
FERRO_STRUCT_TRAITS(ferro_op_attr_info, default_value);
FERRO_API ferro_status ferro_inventory_op_attr(const ferro_inventory* inventory, uint32_t op_index, uint32_t attr_index,
                                               ferro_op_attr_info* out);

/* What op `op_index` accepts and differentiates. */
typedef struct ferro_op_detail_info {
    uint32_t struct_size;
    int32_t min_inputs;    /* variadic ops: at least this many */
    uint64_t diff_inputs;  /* bit i (63: i >= 63): input i can receive a gradient */
    uint64_t diff_outputs; /* bit k: a gradient may flow from output k */
    uint32_t n_dtypes;
    uint32_t reserved;
    const ferro_dtype* dtypes; /* the dtypes its main inputs accept */
    /* Since 1.11: outputs that share an input's storage (ferro/extension.h), borrowed for the
     * inventory's lifetime. */
    uint32_t n_views;
    uint32_t reserved2;
    const ferro_op_view* views;
} ferro_op_detail_info;
FERRO_STRUCT_TRAITS(ferro_op_detail_info, views);
FERRO_API ferro_status ferro_inventory_op_detail(const ferro_inventory* inventory, uint32_t op_index, ferro_op_detail_info* out);

/* The device behind engine `engine_index`: the dtypes its kernels support and free text. */
typedef struct ferro_engine_detail_info {
    uint32_t struct_size;
    uint32_t n_dtypes;
    const ferro_dtype* dtypes;
    const char* details; /* driver, compute capability, threads, ... */
} ferro_engine_detail_info;
FERRO_STRUCT_TRAITS(ferro_engine_detail_info, details);
FERRO_API ferro_status ferro_inventory_engine_detail(const ferro_inventory* inventory, uint32_t engine_index,
                                                     ferro_engine_detail_info* out);

/* An op family and the plugin that defines it ("core" is built in). */
typedef struct ferro_family_info {
    uint32_t struct_size;
    uint32_t n_ops;
    const char* id;
    const char* version;
    const char* description;
    const char* plugin;
} ferro_family_info;
FERRO_STRUCT_TRAITS(ferro_family_info, plugin);
FERRO_API uint32_t ferro_inventory_family_count(const ferro_inventory* inventory);
FERRO_API ferro_status ferro_inventory_family(const ferro_inventory* inventory, uint32_t index, ferro_family_info* out);

/* A family's module on one engine: there, or declined (or failed) with the factory's reason. */
typedef struct ferro_module_info {
    uint32_t struct_size;
    ferro_bool available;
    const char* family;
    const char* engine;
    const char* plugin; /* the plugin whose factory was asked */
    const char* reason; /* why there is none; "" when available */
} ferro_module_info;
FERRO_STRUCT_TRAITS(ferro_module_info, reason);
FERRO_API uint32_t ferro_inventory_module_count(const ferro_inventory* inventory);
FERRO_API ferro_status ferro_inventory_module(const ferro_inventory* inventory, uint32_t index, ferro_module_info* out);

/* Sample calls of op `op` (qualified: "linalg.solve") whose main inputs have `dtype`, with the
 * inputs made on engine `engine`: the examples hook of the op family's module on the cpu engine
 * (or, without one, of the first module that has the hook). Writes up to `capacity` entries of
 * `out` and their count to *n_out (0 when no module of the family provides examples). Each
 * entry's inputs are owned by the caller (ferro_tensor_release); its attributes and `what` are
 * borrowed while the plugin stays loaded. On failure nothing is owed: inputs the hook made are
 * released. Since ABI 1.3 (ferro_module_iface.examples). */
FERRO_API ferro_status ferro_op_examples(ferro_runtime* runtime, const char* op, const char* engine, ferro_dtype dtype,
                                         ferro_example* out, uint32_t capacity, uint32_t* n_out);

/* ---- tensors -----------------------------------------------------------------------------
 * A ferro_tensor is a refcounted handle: every function that returns one hands the caller a
 * reference, released with ferro_tensor_release. Shapes and strides count elements; tensors
 * made from host data are row-major. Engines are named "cpu", "vulkan:0", ... */

/* A new row-major tensor holding a copy of `data` (row-major, packed; NULL only when empty). */
FERRO_API ferro_status ferro_tensor_from_host(ferro_runtime* runtime, const char* engine, ferro_dtype dtype, int32_t ndim,
                                              const int64_t* shape, const void* data, ferro_tensor* out_tensor);
/* A new uninitialised row-major tensor. */
FERRO_API ferro_status ferro_tensor_empty(ferro_runtime* runtime, const char* engine, ferro_dtype dtype, int32_t ndim,
                                          const int64_t* shape, ferro_tensor* out_tensor);
/* A cpu tensor over application memory, without copying. `strides` may be NULL (row-major).
 * `deleter(context)` (may be NULL) runs when no tensor uses the memory any more. The caller
 * keeps the memory valid and unmodified by others until then. The host cannot check that the
 * view stays inside the memory lent: prefer ferro_tensor_borrow, which is told its size. */
FERRO_API ferro_status ferro_tensor_borrow_host(ferro_runtime* runtime, ferro_dtype dtype, int32_t ndim, const int64_t* shape,
                                                const int64_t* strides, void* data, void (*deleter)(void* context), void* context,
                                                ferro_tensor* out_tensor);

/* Application memory lent to a cpu tensor, with its extent (since ABI 1.8's ferro.h). */
typedef struct ferro_borrow_args {
    uint32_t struct_size;
    ferro_dtype dtype;
    int32_t ndim;
    uint32_t reserved;
    const int64_t* shape;           /* borrowed for the call */
    const int64_t* strides;         /* in elements, borrowed for the call; NULL: row-major */
    void* data;                     /* element 0 (elements before it are reached by negative strides) */
    const void* lent;               /* the first byte lent */
    uint64_t lent_bytes;            /* bytes lent from `lent`: every element the view reaches lies inside */
    void (*deleter)(void* context); /* may be NULL: runs when no tensor uses the memory any more */
    void* context;
} ferro_borrow_args;
FERRO_STRUCT_TRAITS(ferro_borrow_args, context);

/* ferro_tensor_borrow_host with the memory's extent: a view reaching outside [lent, lent +
 * lent_bytes) is INVALID_ARGUMENT, and nothing is borrowed (the deleter does not run). */
FERRO_API ferro_status ferro_tensor_borrow(ferro_runtime* runtime, const ferro_borrow_args* args, ferro_tensor* out_tensor);
/* Copies the elements, row-major packed, into `dst` (`bytes` must equal numel * itemsize). */
FERRO_API ferro_status ferro_tensor_copy_to_host(ferro_tensor tensor, void* dst, uint64_t bytes);
/* A copy of `tensor` on another engine (explicit transfer; ops never move data implicitly). */
FERRO_API ferro_status ferro_tensor_to(ferro_runtime* runtime, ferro_tensor tensor, const char* engine, ferro_tensor* out_tensor);
FERRO_API void ferro_tensor_retain(ferro_tensor tensor);
FERRO_API void ferro_tensor_release(ferro_tensor tensor); /* NULL is fine */

/* Accessors: borrowed for the lifetime of the tensor. NULL tensors read as empty. */
FERRO_API ferro_dtype ferro_tensor_dtype(ferro_tensor tensor);
FERRO_API int32_t ferro_tensor_ndim(ferro_tensor tensor);
FERRO_API const int64_t* ferro_tensor_shape(ferro_tensor tensor);
FERRO_API const int64_t* ferro_tensor_strides(ferro_tensor tensor);
FERRO_API int64_t ferro_tensor_numel(ferro_tensor tensor);
FERRO_API const char* ferro_tensor_engine(ferro_tensor tensor);
/* Host address of element 0 when the engine's memory is host addressable (cpu), else NULL. */
FERRO_API void* ferro_tensor_data(ferro_tensor tensor);

/* ---- DLPack ------------------------------------------------------------------------------
 * Zero-copy exchange with numpy, PyTorch, JAX, CuPy through DLPack (0.6 or later). Include
 * <dlpack/dlpack.h> to use these; ferro.h only names the type. */
struct DLManagedTensor;

/* Exports `tensor` sharing its memory (no copy). The result holds a reference on the tensor:
 * the consumer calls its deleter when done. UNIMPLEMENTED for engines whose memory has no
 * address (e.g. Vulkan buffers). */
FERRO_API ferro_status ferro_tensor_to_dlpack(ferro_tensor tensor, struct DLManagedTensor** out_managed);
/* Imports a DLPack tensor without copying when an engine owns its device (kDLCPU -> "cpu",
 * kDLCUDA n -> "cuda:n"). On success ferro owns `managed` and calls its deleter when the last
 * tensor using the memory is released; on failure the caller still owns it. */
FERRO_API ferro_status ferro_tensor_from_dlpack(ferro_runtime* runtime, struct DLManagedTensor* managed,
                                                ferro_tensor* out_tensor);

/* ---- ops ---------------------------------------------------------------------------------- */

/* Resolves a qualified op name ("core.add", "linalg.svd") once; NOT_FOUND if no loaded plugin
 * provides it. The handle is valid for the runtime's lifetime. */
FERRO_API ferro_status ferro_op_find(ferro_runtime* runtime, const char* name, ferro_op* out_op);
/* Calls an op eagerly (see ferro_op_call_args in host.h: outputs are new references). */
FERRO_API ferro_status ferro_op_call(ferro_runtime* runtime, ferro_op op, ferro_op_call_args* args);
/* An op with its attributes fixed, for code that repeats one call (a time step's transform, a
 * solver's product): ferro_op_bind copies and checks the attributes once (INVALID_ARGUMENT as
 * a call would give), and a run on inputs with the previous run's dtypes, shapes, strides and
 * engine executes that run's plan without encoding attributes or searching the op's recent
 * calls. Other inputs go the usual way, each signature planned once. Runs take the same
 * arguments as ferro_op_call, with n_attrs 0, and may write into args->into (1.7); a bound
 * call may run on several threads at once. Destroy it before its runtime. Since 1.7. */
typedef struct ferro_bound_call_impl* ferro_bound_call;
FERRO_API ferro_status ferro_op_bind(ferro_runtime* runtime, ferro_op op, const ferro_named_attr* attrs, uint32_t n_attrs,
                                     ferro_bound_call* out_call);
FERRO_API ferro_status ferro_bound_call_run(ferro_bound_call call, ferro_op_call_args* args);
FERRO_API void ferro_bound_call_destroy(ferro_bound_call call); /* NULL is fine */
/* Convenience: find + call by name. */
FERRO_API ferro_status ferro_call(ferro_runtime* runtime, const char* name, const ferro_named_attr* attrs, uint32_t n_attrs,
                                  const ferro_tensor* inputs, uint32_t n_inputs, ferro_tensor* outputs, uint32_t outputs_capacity,
                                  uint32_t* out_n_outputs);

/* Typed helpers for the most used core ops (one output each). */
FERRO_API ferro_status ferro_add(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out);
FERRO_API ferro_status ferro_sub(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out);
FERRO_API ferro_status ferro_mul(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out);
FERRO_API ferro_status ferro_div(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out);
FERRO_API ferro_status ferro_matmul(ferro_runtime* rt, ferro_tensor a, ferro_tensor b, ferro_tensor* out);
/* Sum over `axes` (n_axes 0 and axes NULL: all axes). */
FERRO_API ferro_status ferro_sum(ferro_runtime* rt, ferro_tensor a, const int64_t* axes, uint32_t n_axes, ferro_bool keepdim,
                                 ferro_tensor* out);

/* ---- capture and replay (docs/capture.md) ------------------------------------------------- *
 * ferro_capture_begin starts recording the op calls this thread makes on `runtime`; they still
 * run as usual. `inputs` become the program's inputs, in this order; any other tensor from
 * outside the capture that a call reads becomes a constant of the program (kept by it). While
 * a thread captures, what a program could not replay is refused with FAILED_PRECONDITION naming
 * the call: writes into existing tensors (into), reading tensor data on the host (copy to host,
 * DLPack export), random ops without a seed, calls on another runtime, running a prepared
 * program. ferro_capture_end returns the program computing `outputs` (results of calls made
 * while capturing, or inputs) and rethrows the first refusal, if any; calls nothing needs are
 * dropped. Captures do not nest. Destroy programs and prepared programs before their runtime.
 * Since ABI 1.12. */
typedef struct ferro_program_impl* ferro_program;
typedef struct ferro_prepared_impl* ferro_prepared;
FERRO_API ferro_status ferro_capture_begin(ferro_runtime* runtime, const ferro_tensor* inputs, uint32_t n_inputs);
FERRO_API ferro_status ferro_capture_end(ferro_runtime* runtime, const ferro_tensor* outputs, uint32_t n_outputs,
                                         ferro_program* out_program);
/* Drops this thread's capture, if any (an error path that will not call capture_end). */
FERRO_API void ferro_capture_abort(void);
FERRO_API uint32_t ferro_program_input_count(ferro_program program);
FERRO_API uint32_t ferro_program_output_count(ferro_program program);
FERRO_API uint32_t ferro_program_step_count(ferro_program program); /* the calls it replays */
FERRO_API void ferro_program_destroy(ferro_program program);        /* NULL is fine */
/* A program prepared for inputs of these signatures (dtype, ndim, shape: the ones it was
 * captured with; INVALID_ARGUMENT naming the input otherwise). */
FERRO_API ferro_status ferro_program_prepare(ferro_program program, const ferro_signature* inputs, uint32_t n_inputs,
                                             ferro_prepared* out_prepared);
/* ferro_program_prepare with symbolic dimensions: `max_shapes` holds FERRO_MAX_NDIM sizes per
 * input (n_inputs * FERRO_MAX_NDIM in all); where one is > 0 that axis of that input is
 * symbolic, and a run may give it any size from 0 up to that bound (the signature's size there
 * is the one prepared now, within the bound). A run with other sizes prepares them once and
 * keeps that preparation for the next runs of those sizes (the 64 most recently run). A size
 * beyond its bound, or another size on an axis that is not symbolic, is INVALID_ARGUMENT
 * naming the input and the axis. */
FERRO_API ferro_status ferro_program_prepare_bounded(ferro_program program, const ferro_signature* inputs,
                                                     const int64_t* max_shapes, uint32_t n_inputs, ferro_prepared* out_prepared);
/* Runs it: inputs borrowed, outputs new references. An input of another count, dtype or shape
 * is INVALID_ARGUMENT naming it. Inputs laid out as at capture (strides, engine) run the plans
 * the capture ran without looking anything up; others take the usual path. A run whose inputs
 * require grad records one grad node for the program (its VJP a prepared program too), or its
 * calls one by one where it cannot (docs/capture.md); gradients of every order are those of the
 * calls it replays. Thread-safe: one prepared program may run on several threads at once. */
FERRO_API ferro_status ferro_prepared_run(ferro_prepared prepared, const ferro_tensor* inputs, uint32_t n_inputs,
                                          ferro_tensor* outputs, uint32_t outputs_capacity, uint32_t* out_n_outputs);
FERRO_API void ferro_prepared_destroy(ferro_prepared prepared); /* NULL is fine */
/* What a run keeps for the program's intermediates (the steps' outputs other than the
 * program's, their residuals and workspaces) when no call is recorded for the tape: each has a
 * fixed place, the memory of a dead value reused by a later one, made for the first run and
 * kept for the next (one set per run in flight). A run through the program's grad node follows
 * it for the forward part; one whose calls the tape records one by one allocates as they would. */
typedef struct ferro_prepared_memory {
    uint32_t struct_size;
    uint32_t reserved;
    uint64_t intermediate_bytes; /* their sizes summed: what the eager calls allocate */
    uint64_t run_bytes;          /* what a run keeps for them */
} ferro_prepared_memory;
FERRO_STRUCT_TRAITS(ferro_prepared_memory, run_bytes);
FERRO_API ferro_status ferro_prepared_memory_info(ferro_prepared prepared, ferro_prepared_memory* out);
/* The prepared program as one JSON document (UTF-8): its inputs, constants, steps (op, engine,
 * plan and module or host op, inputs, each output's place in the memory plan), outputs, memory,
 * and the gradient programs built so far; `ferro-inspect program FILE` reads it (schema:
 * docs/inspector.md). Writes at most `capacity` bytes, NUL included, and the size the whole
 * document needs (NUL included) to `out_size`; OUT_OF_RANGE when `capacity` is smaller (call
 * with a NULL buffer and 0 to learn the size). */
FERRO_API ferro_status ferro_prepared_describe(ferro_prepared prepared, char* buffer, uint64_t capacity, uint64_t* out_size);

/* ---- plan cache ---------------------------------------------------------------------------- */

typedef struct ferro_plan_cache_stats {
    uint32_t struct_size;
    uint32_t reserved;
    uint64_t hits, misses, evictions, entries, bytes, max_entries, max_bytes;
} ferro_plan_cache_stats;
FERRO_STRUCT_TRAITS(ferro_plan_cache_stats, max_bytes);

FERRO_API ferro_status ferro_runtime_plan_cache_stats(const ferro_runtime* runtime, ferro_plan_cache_stats* out);
FERRO_API void ferro_runtime_plan_cache_clear(ferro_runtime* runtime);

/* Buffers an engine allocated for tensors, plans' workspaces and scratch, as the host counts
 * them: live now, and allocations since the engine was created. Memory the application lends
 * (borrow, DLPack import) is not counted, nor the data of tensors of up to 256 bytes on the
 * built-in cpu engine, which the host keeps inside the tensor's own allocation. Each thread
 * counts its own allocations and frees: the figures are exact once other threads are done
 * allocating and freeing on the engine, and may lag by their last few while they are not. */
typedef struct ferro_engine_memory_stats {
    uint32_t struct_size;
    uint32_t reserved;
    uint64_t live_buffers, live_bytes, allocations;
    /* Since 1.15 (written when struct_size has it): the most live_bytes reached since the last
     * ferro_runtime_engine_memory_reset_peak on this engine; 0 before the first. Counted from
     * the reset on, across threads, so allocations racing with the reset itself may be missed. */
    uint64_t peak_bytes;
} ferro_engine_memory_stats;
FERRO_STRUCT_TRAITS(ferro_engine_memory_stats, peak_bytes);
FERRO_API ferro_status ferro_runtime_engine_memory(const ferro_runtime* runtime, const char* engine,
                                                   ferro_engine_memory_stats* out);
/* Starts (or restarts) the engine's peak count at its live bytes now. Until the first call the
 * host keeps no peak, so allocation costs nothing more. Since 1.15. */
FERRO_API ferro_status ferro_runtime_engine_memory_reset_peak(const ferro_runtime* runtime, const char* engine);

/* ---- autodiff (DESIGN §8, docs/autodiff.md) -----------------------------------------------
 * Op calls record grad nodes while grad mode is on (the default) and an input requires grad.
 * A graph is back-propagated by one thread at a time; independent graphs run concurrently. */

/* Marks a leaf (a tensor no recorded op produced) as requiring grad: f32, f64, c64 or c128
 * only. INVALID_ARGUMENT for other dtypes and for recorded outputs (detach gives a leaf). */
FERRO_API ferro_status ferro_tensor_set_requires_grad(ferro_tensor tensor, ferro_bool requires_grad);
FERRO_API ferro_bool ferro_tensor_requires_grad(ferro_tensor tensor);
/* The qualified name of the op whose grad node made this tensor ("core.matmul"; "program" for
 * a prepared program's run), or NULL for a leaf or a tensor nothing recorded. Valid while the
 * tensor lives. Since ABI 1.12. */
FERRO_API const char* ferro_tensor_grad_fn(ferro_tensor tensor);
/* The accumulated gradient of a leaf (a new reference), or NULL when it has none. */
FERRO_API ferro_status ferro_tensor_grad(ferro_tensor tensor, ferro_tensor* out_grad);
/* Forgets a leaf's accumulated gradient (the next backward starts from zero). */
FERRO_API ferro_status ferro_tensor_clear_grad(ferro_tensor tensor);
/* A new handle on the same memory, without autograd state (a leaf). */
FERRO_API ferro_status ferro_tensor_detach(ferro_tensor tensor, ferro_tensor* out);
/* Reverse mode from `root`, accumulating into the .grad of the leaves it depends on. `seed`
 * NULL means 1 for a one-element root (INVALID_ARGUMENT otherwise). Without retain_graph the
 * saved tensors are freed as the pass goes (a second backward through them is
 * FAILED_PRECONDITION); create_graph records the pass, so gradients can be differentiated,
 * and implies retain_graph (the recorded pass refers to the saved tensors). */
FERRO_API ferro_status ferro_backward(ferro_runtime* runtime, ferro_tensor root, ferro_tensor seed, ferro_bool retain_graph,
                                      ferro_bool create_graph);
/* Functional reverse mode: the cotangents of `inputs` (any tensors that require grad, leaves
 * or not) for `outputs` weighted by `cotangents` (NULL array or entries: ones, for one-element
 * outputs). Writes a new reference per input, or NULL when no gradient reaches it. Leaves'
 * .grad are untouched and the graph is kept. */
FERRO_API ferro_status ferro_vjp(ferro_runtime* runtime, const ferro_tensor* outputs, const ferro_tensor* cotangents,
                                 uint32_t n_outputs, const ferro_tensor* inputs, uint32_t n_inputs, ferro_bool create_graph,
                                 ferro_tensor* out_input_cotangents);
/* Forward mode: a tensor equal to `primal` carrying `tangent` (same shape; cast to the primal's
 * dtype). Every op on it propagates the tangent through the op's JVP rule, so the outputs'
 * tangents are their directional derivatives (ferro_tensor_tangent reads them; NULL when a
 * tensor carries none). One level: tangents of tangents are not tracked. The dual is
 * differentiable with respect to `primal` when that requires grad, and reverse mode through
 * dual tensors propagates tangents too (forward-over-reverse Hessian-vector products). */
FERRO_API ferro_status ferro_tensor_make_dual(ferro_runtime* runtime, ferro_tensor primal, ferro_tensor tangent,
                                              ferro_tensor* out);
FERRO_API ferro_status ferro_tensor_tangent(ferro_tensor tensor, ferro_tensor* out_tangent);
/* Grad mode of the calling thread. push disables recording until the matching pop. */
FERRO_API ferro_bool ferro_grad_enabled(void);
FERRO_API void ferro_no_grad_push(void);
FERRO_API void ferro_no_grad_pop(void);

FERRO_EXTERN_C_END

#endif /* FERRO_FERRO_H */
