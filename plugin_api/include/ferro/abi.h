/* ferro plugin ABI — versioning rules and the macros every other header uses.
 *
 * Rules (DESIGN.md §4; each one is binding on host and plugins alike):
 *
 *  1. FERRO_ABI_MAJOR changes when any layout changes (a field moved, removed or retyped, a
 *     function signature changed). The host refuses a plugin whose major differs from its own
 *     with status FERRO_INCOMPATIBLE, naming both versions, before reading anything in the
 *     descriptor beyond its first three fields.
 *  2. FERRO_ABI_MINOR changes when fields or functions are appended (and FERRO_STRUCT_TRAITS,
 *     below, moves to the new last field). Every struct that crosses the
 *     boundary starts with `uint32_t struct_size` (set by whoever fills the struct to
 *     sizeof() at its build time). Fields are only ever appended. A reader checks
 *     FERRO_HAS_FIELD before reading a field newer than 1.0. Each minor gets one line in
 *     plugin_api/CHANGELOG.md saying which fields appeared.
 *     Out-structs (a struct one side provides for the other to fill, e.g. ferro_probe_result,
 *     ferro_engine_instance) are zero-filled by the provider, which sets struct_size to its own
 *     sizeof; the filler writes only fields that lie within that struct_size.
 *     Structs that travel in arrays (ferro_op_schema, ferro_attr_spec, ferro_family_desc,
 *     ferro_engine_desc, ferro_module_provider_desc, ferro_signature, ferro_tensor_view) never
 *     grow within a major: a reader indexes an array with its own sizeof.
 *  3. No exception, abort, longjmp or C++ type crosses the boundary. Strings are UTF-8 and
 *     NUL-terminated. Integers are fixed width; enums travel in fixed-width fields.
 *     Shapes and strides are int64_t; strides count elements, offsets count bytes (as DLPack).
 *  4. Every function that can fail returns a ferro_status (NULL = success, see status.h);
 *     results go to `out` parameters, which are written only on success.
 *  5. Every pointer's ownership is written next to it: "borrowed for the call", "borrowed for
 *     the lifetime of X", or "owned by the caller, released with Y".
 *  6. Plugins call the host only through the ferro_host_api table they are handed; they never
 *     link against libferro.
 *
 * Since: 1.0. Thread-safety: macros only. */
#ifndef FERRO_ABI_H
#define FERRO_ABI_H

#include <stddef.h>
#include <stdint.h>

#define FERRO_ABI_MAJOR 1u
#define FERRO_ABI_MINOR 18u

/* True when `ptr` (a pointer to a struct whose first field is struct_size) was filled by a
 * party that knew about `field`. Use before reading any field appended after 1.0. */
#define FERRO_HAS_FIELD(ptr, type, field) ((ptr)->struct_size >= offsetof(type, field) + sizeof(((const type*)0)->field))

/* Size of a struct up to and including `field`: the minimum struct_size a reader accepts for a
 * struct whose last required field is `field`. */
#define FERRO_STRUCT_SIZE_UP_TO(type, field) (offsetof(type, field) + sizeof(((const type*)0)->field))

/* The size trait of a versioned struct, written after its definition with its last field:
 * `type_STRUCT_SIZE`, the struct's size up to that field in this version of the headers, and a
 * compile-time check that nothing follows the field but padding, so that a field appended
 * without moving the trait fails to compile. (As PJRT's PJRT_DEFINE_STRUCT_TRAITS.) */
#ifdef __cplusplus
#define FERRO_STATIC_ASSERT(cond, message) static_assert(cond, message)
#else
#define FERRO_STATIC_ASSERT(cond, message) _Static_assert(cond, message)
#endif
#define FERRO_STRUCT_TRAITS(type, last_field)                                         \
    enum { type##_STRUCT_SIZE = FERRO_STRUCT_SIZE_UP_TO(type, last_field) };          \
    FERRO_STATIC_ASSERT(sizeof(type) - FERRO_STRUCT_SIZE_UP_TO(type, last_field) < 8, \
                        #type ": a field follows " #last_field "; move its FERRO_STRUCT_TRAITS")

#if defined(_WIN32)
#define FERRO_EXPORT_SYMBOL __declspec(dllexport)
#else
#define FERRO_EXPORT_SYMBOL __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
#define FERRO_EXTERN_C extern "C"
#define FERRO_EXTERN_C_BEGIN extern "C" {
#define FERRO_EXTERN_C_END }
#else
#define FERRO_EXTERN_C
#define FERRO_EXTERN_C_BEGIN
#define FERRO_EXTERN_C_END
#endif

/* Booleans cross the boundary as uint8_t (0 = false, 1 = true): C11 _Bool and C++ bool agree
 * on every ABI we target, but a fixed-width field says so explicitly. */
typedef uint8_t ferro_bool;

#endif /* FERRO_ABI_H */
