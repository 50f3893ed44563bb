/* ferro plugin ABI — value types shared by every other header: dtypes, scalars, attributes,
 * signatures, engine buffers and tensor views.
 *
 * Since: 1.0. Thread-safety: plain data; see the owning call for lifetimes. */
#ifndef FERRO_TYPES_H
#define FERRO_TYPES_H

#include "ferro/abi.h"

FERRO_EXTERN_C_BEGIN

/* ---- dtypes ------------------------------------------------------------------------------
 * A ferro_dtype is a DLPack DLDataType {uint8 code, uint8 bits, uint16 lanes} packed
 * little-endian into a uint32_t: code | bits << 8 | lanes << 16. So the value converts to and
 * from DLPack without a table, and new DLPack types need no ABI change. */
typedef uint32_t ferro_dtype;

#define FERRO_DLPACK_INT 0u
#define FERRO_DLPACK_UINT 1u
#define FERRO_DLPACK_FLOAT 2u
#define FERRO_DLPACK_COMPLEX 5u
#define FERRO_DLPACK_BOOL 6u
#define FERRO_DTYPE_MAKE(code, bits) ((ferro_dtype)((code) | ((bits) << 8) | (1u << 16)))
#define FERRO_DTYPE_CODE(dt) ((uint32_t)(dt)&0xffu)
#define FERRO_DTYPE_BITS(dt) (((uint32_t)(dt) >> 8) & 0xffu)
#define FERRO_DTYPE_LANES(dt) (((uint32_t)(dt) >> 16) & 0xffffu)

#define FERRO_DTYPE_INVALID ((ferro_dtype)0u)
#define FERRO_DTYPE_F32 FERRO_DTYPE_MAKE(FERRO_DLPACK_FLOAT, 32u)
#define FERRO_DTYPE_F64 FERRO_DTYPE_MAKE(FERRO_DLPACK_FLOAT, 64u)
#define FERRO_DTYPE_C64 FERRO_DTYPE_MAKE(FERRO_DLPACK_COMPLEX, 64u)
#define FERRO_DTYPE_C128 FERRO_DTYPE_MAKE(FERRO_DLPACK_COMPLEX, 128u)
#define FERRO_DTYPE_I64 FERRO_DTYPE_MAKE(FERRO_DLPACK_INT, 64u)
#define FERRO_DTYPE_BOOL FERRO_DTYPE_MAKE(FERRO_DLPACK_BOOL, 8u)

/* Tensors have at most this many dimensions (numpy 2 has the same limit). */
#define FERRO_MAX_NDIM 64

/* ---- scalars -----------------------------------------------------------------------------
 * A scalar for fill/alpha/beta: a kernel reads `real` for real dtypes, `real` and `imag` for
 * complex ones, and `integer` for i64 and bool (non-zero = true). */
typedef struct ferro_scalar {
    double real;
    double imag;
    int64_t integer;
} ferro_scalar;

/* ---- attributes ----------------------------------------------------------------------- */
enum ferro_attr_type {
    FERRO_ATTR_NONE = 0, /* "None": the value of an optional attribute that was not given */
    FERRO_ATTR_I64 = 1,
    FERRO_ATTR_F64 = 2,
    FERRO_ATTR_BOOL = 3,
    FERRO_ATTR_STR = 4,
    FERRO_ATTR_I64_ARRAY = 5,
    FERRO_ATTR_F64_ARRAY = 6
};

/* One attribute value. `type` says which member of `v` is valid; `count` is the element count
 * of an array (0 otherwise). Pointers are borrowed: for a call's attributes, for the call; for
 * a schema default, for the lifetime of the plugin library. */
typedef struct ferro_attr_value {
    uint32_t type;
    uint32_t count;
    union {
        int64_t i64;
        double f64;
        ferro_bool boolean;
        const char* str;
        const int64_t* i64_array;
        const double* f64_array;
    } v;
} ferro_attr_value;

/* A named attribute, as an application or a VJP rule passes it to an op call. */
typedef struct ferro_named_attr {
    const char* name; /* borrowed for the call */
    ferro_attr_value value;
} ferro_named_attr;

/* ---- signatures ------------------------------------------------------------------------
 * The value-free description of one op input or output: what prepare and infer see. Strides
 * count elements and may be 0 (broadcast) or negative. Arrays are inline so a signature owns
 * nothing; only the first `ndim` entries are meaningful. */
typedef struct ferro_signature {
    uint32_t struct_size;
    ferro_dtype dtype;
    int32_t ndim;
    uint32_t reserved;
    int64_t shape[FERRO_MAX_NDIM];
    int64_t strides[FERRO_MAX_NDIM];
} ferro_signature;
FERRO_STRUCT_TRAITS(ferro_signature, strides);

/* ---- engine memory and tensors ---------------------------------------------------------- */

/* An engine's memory handle: what its alloc returned. Opaque to everyone but that engine
 * (a host pointer on cpu, a device pointer on cuda, a sub-allocation record on vulkan). */
typedef struct ferro_buffer_impl* ferro_buffer;

/* A host tensor handle: refcounted, owned by the host. Plugins retain/release it through
 * ferro_host_api; applications use the ferro_tensor_* functions of ferro.h. */
typedef struct ferro_tensor_impl* ferro_tensor;

/* A strided view of engine memory, as executors and engine kernels see their operands.
 * Element (i0, i1, ...) lives at byte `byte_offset + itemsize * sum(ik * strides[k])` of
 * `buffer`. `data` is that element 0 address when the engine's memory is addressable (cpu host
 * pointer, cuda device pointer), else NULL. All pointers are borrowed for the call. */
typedef struct ferro_tensor_view {
    uint32_t struct_size;
    ferro_dtype dtype;
    int32_t ndim;
    uint32_t reserved;
    const int64_t* shape;
    const int64_t* strides;
    ferro_buffer buffer;
    uint64_t byte_offset;
    void* data;
    /* The host tensor this view describes, usable with the host's tensor services for the
     * duration of the call; NULL for engine-internal operands (workspace slices). */
    ferro_tensor tensor;
} ferro_tensor_view;
FERRO_STRUCT_TRAITS(ferro_tensor_view, tensor);

/* A plain byte range of engine memory (workspace). Borrowed for the call. */
typedef struct ferro_buffer_view {
    uint32_t struct_size;
    uint32_t reserved;
    ferro_buffer buffer;
    uint64_t byte_offset;
    uint64_t bytes;
    void* data; /* address of the first byte when addressable, else NULL */
} ferro_buffer_view;
FERRO_STRUCT_TRAITS(ferro_buffer_view, data);

/* A resolved op name ("core.matmul", "linalg.solve"). Valid for the lifetime of the runtime
 * that returned it; each call resolves it against the runtime's current snapshot. (In
 * ferro/host.h before 1.12.) */
typedef struct ferro_op_impl* ferro_op;

/* ---- logging ----------------------------------------------------------------------------- */
enum ferro_log_level {
    FERRO_LOG_TRACE = 0,
    FERRO_LOG_DEBUG = 1,
    FERRO_LOG_INFO = 2,
    FERRO_LOG_WARN = 3,
    FERRO_LOG_ERROR = 4,
    FERRO_LOG_OFF = 6
};

FERRO_EXTERN_C_END

#endif /* FERRO_TYPES_H */
