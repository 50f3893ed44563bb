/* ferro plugin ABI — op families: schemas, modules, plans, executors and AD rules.
 *
 * A family (linalg, einsum, fft) is a named set of op schemas. For each engine the host asks
 * the family's module factory for a module; the module prepares plans for concrete call
 * signatures; plans execute. Several plugins may contribute modules to one family (fft on cpu
 * from one file, fft on cuda from another) through ferro_module_provider_desc.
 *
 * Since: 1.0. */
#ifndef FERRO_FAMILY_H
#define FERRO_FAMILY_H

#include "ferro/core_ops.h"
#include "ferro/engine.h"
#include "ferro/status.h"
#include "ferro/types.h"

FERRO_EXTERN_C_BEGIN

struct ferro_host_api;

/* ---- attributes -------------------------------------------------------------------------- */

#define FERRO_ATTR_FLAG_REQUIRED (1u << 0) /* no default: a call must give it */
#define FERRO_ATTR_FLAG_OPTIONAL (1u << 1) /* None is an accepted value */

/* One attribute of an op. Borrowed for the lifetime of the plugin library. */
typedef struct ferro_attr_spec {
    uint32_t struct_size;
    uint32_t type;  /* enum ferro_attr_type (never NONE) */
    uint32_t flags; /* FERRO_ATTR_FLAG_* */
    uint32_t reserved;
    const char* name;
    ferro_attr_value default_value; /* used when a call omits it (type NONE = None) */
    const char* doc;
} ferro_attr_spec;
FERRO_STRUCT_TRAITS(ferro_attr_spec, doc);

/* ---- inference --------------------------------------------------------------------------- *
 * The host calls infer with attrs already normalised: one ferro_attr_value per schema attr, in
 * schema order, defaults filled in and types checked. infer validates dtypes and shapes (bad
 * input -> FERRO_INVALID_ARGUMENT naming the op, the input, expected vs got) and writes the
 * output signatures: dtype, ndim, shape. Strides of outputs are chosen by the host (row-major). */
typedef struct ferro_infer_args {
    uint32_t struct_size;
    uint32_t n_inputs;
    const ferro_attr_value* attrs; /* borrowed for the call */
    const ferro_signature* inputs; /* borrowed for the call */
    ferro_signature* outputs;      /* host storage of outputs_capacity entries */
    uint32_t outputs_capacity;
    uint32_t n_outputs; /* out: how many outputs were written */
    /* Since 1.9 (check FERRO_HAS_FIELD): the schema being inferred, an element of the family's
     * `ops` array, so one function can serve many ops (its index is schema - ops). Borrowed for
     * the call. */
    const struct ferro_op_schema* schema;
} ferro_infer_args;
FERRO_STRUCT_TRAITS(ferro_infer_args, schema);

/* ---- autodiff rules ----------------------------------------------------------------------- *
 * Rules compute with tensors through host->op_call, so they run on whatever engine the tensors
 * live on, and when the host records during backward (create_graph) they are differentiated
 * themselves. Tensors in these structs are borrowed for the call; tensors a rule writes to an
 * out array are owned references that pass to the host. */

typedef struct ferro_vjp_args {
    uint32_t struct_size;
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t reserved;
    const ferro_attr_value* attrs;      /* normalised, schema order */
    const ferro_signature* input_sigs;  /* always present: shapes of every input */
    const ferro_tensor* inputs;         /* saved inputs (save_inputs mask), NULL elsewhere */
    const ferro_tensor* outputs;        /* saved outputs (save_outputs mask), NULL elsewhere */
    const ferro_tensor* cotangents;     /* per output; NULL = zero (prune that work) */
    const ferro_bool* needs_input_grad; /* per input: compute its cotangent only when set */
    ferro_tensor* input_cotangents;     /* out, per input: a new reference, or NULL = zero */
    /* Since 1.8 (check FERRO_HAS_FIELD): the residuals the forward's plan wrote for this rule
     * (ferro_plan_instance.residuals), in its order; 0 and NULL when it wrote none. Borrowed for
     * the call. They carry no derivative: a rule that records (create_graph) must not build its
     * cotangents from them. */
    uint32_t n_residuals;
    uint32_t reserved2;
    const ferro_tensor* residuals;
    /* Since 1.9 (check FERRO_HAS_FIELD): the schema of the op differentiated. */
    const struct ferro_op_schema* schema;
    /* Since 1.12 (check FERRO_HAS_FIELD): handles of the ops rules call, resolved by the host
     * once per runtime. core_ops[FERRO_CORE_OP_*] (ferro/core_ops.h; n_core_ops of them, which
     * may exceed FERRO_CORE_OP_COUNT), and family_ops, the ops the family declared in its
     * FERRO_EXT_RULE_CALLS extension, in its order (n_family_ops; 0 and NULL when it declared
     * none). A call through the handle of an op no loaded plugin provides fails with
     * FERRO_NOT_FOUND. Borrowed for the lifetime of the runtime. */
    uint32_t n_core_ops;
    uint32_t n_family_ops;
    const ferro_op* core_ops;
    const ferro_op* family_ops;
} ferro_vjp_args;
FERRO_STRUCT_TRAITS(ferro_vjp_args, family_ops);

typedef struct ferro_jvp_args {
    uint32_t struct_size;
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t reserved;
    const ferro_attr_value* attrs;
    const ferro_tensor* inputs;         /* every primal input */
    const ferro_tensor* outputs;        /* every primal output */
    const ferro_tensor* input_tangents; /* per input; NULL = zero */
    ferro_tensor* output_tangents;      /* out, per output: a new reference, or NULL = zero */
    /* Since 1.9 (check FERRO_HAS_FIELD): the schema of the op differentiated. */
    const struct ferro_op_schema* schema;
    /* Since 1.12 (check FERRO_HAS_FIELD): as in ferro_vjp_args. */
    uint32_t n_core_ops;
    uint32_t n_family_ops;
    const ferro_op* core_ops;
    const ferro_op* family_ops;
} ferro_jvp_args;
FERRO_STRUCT_TRAITS(ferro_jvp_args, family_ops);

/* ---- schemas ----------------------------------------------------------------------------- */

#define FERRO_VARIADIC (-1)

/* Differentiability and save masks: bit i is input (or output) i; inputs at index >= 63 use
 * bit 63, so a variadic op marks all its operands with FERRO_MASK_ALL. */
#define FERRO_MASK_ALL (~(uint64_t)0)
#define FERRO_MASK_BIT(i) ((uint64_t)1 << ((i) < 63 ? (i) : 63))

typedef struct ferro_op_schema {
    uint32_t struct_size;
    uint32_t reserved;
    const char* name; /* "svd"; the qualified name is "<family>.<name>" */
    const char* doc;  /* one line: "thin SVD: A = U diag(S) Vh" */
    int32_t n_inputs; /* fixed count, or FERRO_VARIADIC (then at least min_inputs) */
    int32_t min_inputs;
    int32_t n_outputs; /* fixed count, or FERRO_VARIADIC (infer decides) */
    uint32_t n_attrs;
    const ferro_attr_spec* attrs;
    uint32_t n_dtypes; /* dtypes the op accepts for its main inputs (informational) */
    uint32_t reserved2;
    const ferro_dtype* dtypes;
    ferro_status (*infer)(const struct ferro_host_api* host, ferro_infer_args* args);
    uint64_t diff_inputs;  /* inputs that can receive a gradient */
    uint64_t diff_outputs; /* outputs a gradient may flow from (others: NOT_DIFFERENTIABLE) */
    uint64_t save_inputs;  /* inputs the VJP needs (the host keeps them alive) */
    uint64_t save_outputs; /* outputs the VJP needs */
    /* Optional (NULL = the op is not differentiable, diff masks must then be 0). */
    ferro_status (*vjp)(const struct ferro_host_api* host, const ferro_vjp_args* args);
    /* Optional (NULL = forward mode unavailable for this op). */
    ferro_status (*jvp)(const struct ferro_host_api* host, const ferro_jvp_args* args);
} ferro_op_schema;
FERRO_STRUCT_TRAITS(ferro_op_schema, jvp);

/* ---- execution ---------------------------------------------------------------------------- */

/* A host session: the engine session an op call runs in, seen from a plugin. Session executors
 * enqueue primitives through host->session_* with it. Opaque; borrowed for the call. */
typedef struct ferro_session_impl* ferro_session;

typedef struct ferro_exec_args {
    uint32_t struct_size;
    uint32_t n_inputs;
    uint32_t n_outputs;
    uint32_t reserved;
    const ferro_attr_value* attrs;    /* normalised, schema order */
    const ferro_tensor_view* inputs;  /* borrowed for the call */
    const ferro_tensor_view* outputs; /* allocated by the host with the inferred signatures; for a
                                       * module of a plugin built for 1.8 or 1.9, the plan's
                                       * residuals follow them (n_outputs counts both) */
    ferro_buffer_view workspace;      /* plan's workspace_bytes (bytes 0 = none) */
    ferro_session session;            /* the call's session */
    /* Since 1.10: the plan's residuals (ferro_plan_instance.n_residuals; 0 on a call the tape
     * does not record), allocated by the host, for the executors to write after the outputs.
     * A module of a plugin built for 1.8 or 1.9 gets them in `outputs` instead, as those
     * minors said, and n_residuals 0 here. */
    uint32_t n_residuals;
    uint32_t reserved2;
    const ferro_tensor_view* residuals;
} ferro_exec_args;
FERRO_STRUCT_TRAITS(ferro_exec_args, residuals);

/* Plan interface. A plan is cached by the host and may execute concurrently on several threads:
 * executors must not mutate plan state without their own synchronisation.
 * At least one executor is required; the host prefers the session executor. */
typedef struct ferro_plan_iface {
    uint32_t struct_size;
    uint32_t reserved;
    /* Runs inside the host-managed session; enqueues engine primitives through the host. */
    ferro_status (*execute_in_session)(void* self, const struct ferro_host_api* host, const ferro_exec_args* args);
    /* Runs in its own region after the host has flushed the session, with the engine's native
     * context (layout named by the engine's context_abi). A session executor reaches the same
     * context through host->session_native_context (1.5), which the in-tree modules use; this
     * entry stays for plugins that have it. */
    ferro_status (*execute_in_context)(void* self, const struct ferro_host_api* host, const ferro_exec_args* args,
                                       const void* native_context);
    void (*destroy)(void* self);
} ferro_plan_iface;
FERRO_STRUCT_TRAITS(ferro_plan_iface, destroy);

/* A prepared plan. Owned by the host (plan cache) once returned; destroyed with
 * iface->destroy(self) when evicted, cleared, or when the runtime is destroyed. */
typedef struct ferro_plan_instance {
    uint32_t struct_size;
    uint32_t reserved;
    void* self;
    const ferro_plan_iface* iface;
    uint64_t workspace_bytes; /* scratch the host allocates per execution */
    uint64_t retained_bytes;  /* memory the plan itself holds (counted by the cache budget) */
    /* Since 1.8 (fill only within struct_size): residuals, tensors the plan writes besides the
     * outputs for the op's VJP rule (the intermediates a rule would otherwise recompute), as
     * JAX's custom_vjp forward returns them. Only for a call prepared with recorded_inputs
     * (ferro_prepare_args). The host allocates them row-major with these signatures (strides
     * ignored), passes them to the executors after the outputs (ferro_exec_args.outputs,
     * n_outputs counting both), keeps them on the call's grad node and hands them to the VJP
     * rule (ferro_vjp_args.residuals). `residuals` is borrowed for the lifetime of the plan. */
    uint32_t n_residuals;
    uint32_t reserved2;
    const ferro_signature* residuals;
} ferro_plan_instance;
FERRO_STRUCT_TRAITS(ferro_plan_instance, residuals);

typedef struct ferro_prepare_args {
    uint32_t struct_size;
    uint32_t op_index; /* index into the family's ops */
    const ferro_attr_value* attrs;
    uint32_t n_inputs;
    uint32_t n_outputs;
    const ferro_signature* inputs;
    const ferro_signature* outputs; /* as inferred */
    char* decline_reason;           /* host buffer: write why when declining */
    uint32_t decline_capacity;
    uint32_t reserved;
    /* Since 1.1 (check FERRO_HAS_FIELD): host storage of n_outputs x FERRO_MAX_NDIM strides, in
     * elements, filled with each output's row-major strides. A plan may rewrite an output's
     * strides with another dense layout of the same shape (its axes in another memory order,
     * e.g. the order a gemm writes) so its executor need not permute into row-major; the host
     * checks the layout and allocates the output so. Size-1 axes may take any stride. */
    int64_t* output_strides;
    /* Since 1.8 (check FERRO_HAS_FIELD): the inputs whose gradients the autodiff tape records
     * this call for (FERRO_MASK_BIT i: input i requires grad and the schema differentiates it);
     * 0 for a call that is not recorded. Nonzero only for modules that set
     * FERRO_MODULE_KEEPS_RESIDUALS: the host then prepares recorded calls apart from plain ones,
     * and the plan may keep residuals (ferro_plan_instance.residuals). */
    uint64_t recorded_inputs;
} ferro_prepare_args;
FERRO_STRUCT_TRAITS(ferro_prepare_args, recorded_inputs);

/* ---- examples (since 1.3) ------------------------------------------------------------------
 * Sample calls of an op, for conformance checks (ferro-inspect check): what a valid call looks
 * like is the op's business (an SPD matrix for cholesky, LU factors and pivots for lu_solve,
 * subscripts for einsum), so the module that knows provides them. */

#define FERRO_EXAMPLE_MAX_INPUTS 8
#define FERRO_EXAMPLE_MAX_ATTRS 8
/* input_flags: the op reads one triangle of this (batch of) square matrices and its derivative
 * rules take the derivative over Hermitian matrices (PyTorch's convention for cholesky, eigh):
 * checks perturb the input symmetrically. */
#define FERRO_EXAMPLE_HERMITIAN 1u

/* One sample call. Fixed layout (an array element: no struct_size; a later version that needs
 * more adds another struct). */
typedef struct ferro_example {
    uint32_t n_inputs;
    uint32_t n_attrs;
    ferro_tensor inputs[FERRO_EXAMPLE_MAX_INPUTS];   /* new references, passed to the host */
    uint32_t input_flags[FERRO_EXAMPLE_MAX_INPUTS];  /* FERRO_EXAMPLE_* per input */
    ferro_named_attr attrs[FERRO_EXAMPLE_MAX_ATTRS]; /* borrowed for the lifetime of the plugin library */
    const char* what;                                /* one line ("batched, B broadcast"); borrowed likewise */
} ferro_example;

typedef struct ferro_examples_args {
    uint32_t struct_size;
    uint32_t op_index;       /* into the family's ops */
    ferro_dtype dtype;       /* the main inputs' dtype: one of the op's dtypes */
    uint32_t capacity;       /* entries in `examples` */
    const char* engine;      /* make the inputs on this engine (host services: op calls, tensor_from_host) */
    ferro_example* examples; /* host storage */
    uint32_t n_examples;     /* out: how many were written (0: none for this dtype) */
    uint32_t reserved;
} ferro_examples_args;
FERRO_STRUCT_TRAITS(ferro_examples_args, reserved);

/* Module interface. prepare answers one of:
 *   PREPARED: returns NULL and fills *out (iface non-NULL; self is the plugin's business);
 *   DECLINED: returns NULL, leaves out->iface NULL and writes args->decline_reason (the host
 *             then tries the next module for the family on this engine);
 *   error:    returns a status (bad input that infer could not see, resource exhaustion).
 * prepare may be called concurrently. */
typedef struct ferro_module_iface {
    uint32_t struct_size;
    uint32_t reserved;
    ferro_status (*prepare)(void* self, const struct ferro_host_api* host, const ferro_prepare_args* args,
                            ferro_plan_instance* out);
    void (*destroy)(void* self);
    /* Since 1.3 (check FERRO_HAS_FIELD; may be NULL): fills args->examples with sample calls
     * of op args->op_index. Deterministic (seeded), so two engines get the same values. */
    ferro_status (*examples)(void* self, const struct ferro_host_api* host, ferro_examples_args* args);
    /* Since 1.8 (check FERRO_HAS_FIELD): FERRO_MODULE_* bits. */
    uint32_t flags;
    uint32_t reserved2;
} ferro_module_iface;
FERRO_STRUCT_TRAITS(ferro_module_iface, reserved2);

/* The module's plans may keep residuals for a recorded call (ferro_prepare_args.recorded_inputs). */
#define FERRO_MODULE_KEEPS_RESIDUALS 1u

/* A module: owned by the host, destroyed with iface->destroy(self) after all its plans. */
typedef struct ferro_module_instance {
    uint32_t struct_size;
    uint32_t reserved;
    void* self;
    const ferro_module_iface* iface;
} ferro_module_instance;
FERRO_STRUCT_TRAITS(ferro_module_instance, iface);

/* The engine a module is requested for. Borrowed for the create_module call. */
typedef struct ferro_engine_target {
    uint32_t struct_size;
    uint32_t ordinal;
    const char* name;        /* "cuda:0" */
    const char* kind;        /* "cuda" */
    const char* context_abi; /* "ferro.cuda.ctx.v1" */
    const ferro_device_props* props;
    /* Since 1.10 (check FERRO_HAS_FIELD): the engine's thread budget, the threads a module's
     * own threading (FFTW's, say) should use on this engine; 0 = not said (use the hardware's). */
    uint32_t threads;
} ferro_engine_target;
FERRO_STRUCT_TRAITS(ferro_engine_target, threads);

typedef struct ferro_module_create_args {
    uint32_t struct_size;
    uint32_t decline_capacity;
    const ferro_engine_target* target;
    char* decline_reason; /* host buffer: write why when declining */
    /* Since 1.9 (check FERRO_HAS_FIELD): the family the module is for, as the plugin defining it
     * declares it, borrowed for the lifetime of the module. A module provider for another
     * plugin's family binds to it here: it checks the family's version and maps each op it
     * serves by name (prepare's op_index indexes family->ops), declining what it does not
     * know, instead of assuming the defining plugin's op order. */
    const struct ferro_family_desc* family;
} ferro_module_create_args;
FERRO_STRUCT_TRAITS(ferro_module_create_args, family);

/* Module factory: fills *out for the target engine, or declines (returns NULL, leaves
 * out->iface NULL, writes the reason). Same answer convention as prepare. */
typedef ferro_status (*ferro_create_module_fn)(const struct ferro_host_api* host, const ferro_module_create_args* args,
                                               ferro_module_instance* out);

/* A family this plugin defines. Borrowed for the lifetime of the plugin library. */
typedef struct ferro_family_desc {
    uint32_t struct_size;
    uint32_t n_ops;
    const char* id;      /* "linalg": [a-z][a-z0-9_]* */
    const char* version; /* semantic version of the op set */
    const char* description;
    const ferro_op_schema* ops;
    ferro_create_module_fn create_module; /* optional: a schema-only family has none */
} ferro_family_desc;
FERRO_STRUCT_TRAITS(ferro_family_desc, create_module);

/* Modules this plugin contributes to a family defined elsewhere (another plugin or core). */
typedef struct ferro_module_provider_desc {
    uint32_t struct_size;
    uint32_t reserved;
    const char* family_id;
    const char* description;
    ferro_create_module_fn create_module;
} ferro_module_provider_desc;
FERRO_STRUCT_TRAITS(ferro_module_provider_desc, create_module);

FERRO_EXTERN_C_END

#endif /* FERRO_FAMILY_H */
