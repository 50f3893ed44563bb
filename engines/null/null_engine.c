/* The null engine: a complete engine plugin that has no devices.
 *
 * It loads, reports 0 devices with a reason, and answers FERRO_UNIMPLEMENTED from every entry
 * of the engine table. Copy this directory to start a new engine: fill in probe() and create(),
 * then each table entry. It is written in plain C11 to show that the ABI needs nothing else. */
#include <ferro/plugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Engine state: the host table, which every entry needs to make statuses. A real engine keeps
 * its device handles here. */
typedef struct null_engine {
    const ferro_host_api* host;
} null_engine;

static ferro_status unimplemented(const null_engine* e, const char* entry) {
    char message[160];
    snprintf(message, sizeof message, "null engine: %s is not implemented (no device)", entry);
    return e->host->status_make(FERRO_UNIMPLEMENTED, message);
}

static ferro_status null_properties(void* self, ferro_device_props* out) {
    (void)out;
    return unimplemented(self, "properties");
}
static ferro_status null_alloc(void* self, uint64_t bytes, uint64_t alignment, ferro_buffer* out_buffer, void** out_address) {
    (void)bytes, (void)alignment, (void)out_buffer, (void)out_address;
    return unimplemented(self, "alloc");
}
static void null_free(void* self, ferro_buffer buffer) { (void)self, (void)buffer; }
static ferro_status null_copy_h2d(void* self, const void* src, ferro_buffer dst, uint64_t dst_offset, uint64_t bytes) {
    (void)src, (void)dst, (void)dst_offset, (void)bytes;
    return unimplemented(self, "copy_h2d");
}
static ferro_status null_copy_d2h(void* self, ferro_buffer src, uint64_t src_offset, void* dst, uint64_t bytes) {
    (void)src, (void)src_offset, (void)dst, (void)bytes;
    return unimplemented(self, "copy_d2h");
}
static ferro_status null_session_begin(void* self, ferro_engine_session* out) {
    (void)out;
    return unimplemented(self, "session_begin");
}
static ferro_status null_session_end(void* self, ferro_engine_session s, ferro_bool wait) {
    (void)s, (void)wait;
    return unimplemented(self, "session_end");
}

/* One function per primitive kernel, all alike. */
#define NULL_KERNEL(kernel, args_type)                                                          \
    static ferro_status null_##kernel(void* self, ferro_engine_session s, const args_type* a) { \
        (void)s, (void)a;                                                                       \
        return unimplemented(self, #kernel);                                                    \
    }
NULL_KERNEL(fill, ferro_fill_args)
NULL_KERNEL(cast, ferro_cast_args)
NULL_KERNEL(unary, ferro_unary_args)
NULL_KERNEL(binary, ferro_binary_args)
NULL_KERNEL(where, ferro_where_args)
NULL_KERNEL(reduce, ferro_reduce_args)
NULL_KERNEL(copy_strided, ferro_copy_args)
NULL_KERNEL(gemm_batched, ferro_gemm_args)
#undef NULL_KERNEL

static ferro_status null_native_context(void* self, ferro_engine_session s, const void** out) {
    (void)s, (void)out;
    return unimplemented(self, "native_context");
}
static void null_destroy(void* self) { free(self); }
static ferro_status null_import_memory(void* self, void* address, uint64_t bytes, ferro_buffer* out) {
    (void)address, (void)bytes, (void)out;
    return unimplemented(self, "import_memory");
}
static void null_release_import(void* self, ferro_buffer buffer) { (void)self, (void)buffer; }

static const ferro_engine_iface null_iface = {
    .struct_size = sizeof(ferro_engine_iface),
    .properties = null_properties,
    .alloc = null_alloc,
    .free = null_free,
    .copy_h2d = null_copy_h2d,
    .copy_d2h = null_copy_d2h,
    .session_begin = null_session_begin,
    .session_end = null_session_end,
    .fill = null_fill,
    .cast = null_cast,
    .unary = null_unary,
    .binary = null_binary,
    .where = null_where,
    .reduce = null_reduce,
    .copy_strided = null_copy_strided,
    .gemm_batched = null_gemm_batched,
    .native_context = null_native_context,
    .destroy = null_destroy,
    .import_memory = null_import_memory,
    .release_import = null_release_import,
};

static ferro_status null_probe(const ferro_host_api* host, ferro_probe_result* out) {
    (void)host;
    out->device_count = 0;
    snprintf(out->reason, sizeof out->reason, "the null engine has no devices: it is a skeleton to copy when writing an engine");
    return NULL;
}

/* probe() reports no device, so the host never calls this; it still returns a working instance
 * (every entry UNIMPLEMENTED) so tools and tests can exercise the whole table. */
static ferro_status null_create(const ferro_host_api* host, uint32_t ordinal, ferro_engine_instance* out) {
    null_engine* e = malloc(sizeof *e);
    (void)ordinal;
    if (e == NULL) return host->status_make(FERRO_RESOURCE_EXHAUSTED, "null engine: out of memory");
    e->host = host;
    out->self = e;
    out->iface = &null_iface;
    return NULL;
}

static const ferro_engine_desc null_engines[] = {{
    .struct_size = sizeof(ferro_engine_desc),
    .kind = "null",
    .context_abi = "ferro.null.ctx.v1",
    .description = "skeleton engine: no devices, every entry unimplemented",
    .probe = null_probe,
    .create = null_create,
}};

static const ferro_plugin_desc null_plugin = {
    .struct_size = sizeof(ferro_plugin_desc),
    .abi_major = FERRO_ABI_MAJOR,
    .abi_minor = FERRO_ABI_MINOR,
    .name = "engine_null",
    .version = "1.0.0",
    .description = "the null engine: a template for engine authors",
    .n_engines = 1,
    .engines = null_engines,
};

static ferro_status null_query(const ferro_host_api* host, const ferro_plugin_desc** out_desc) {
    (void)host;
    *out_desc = &null_plugin;
    return NULL;
}

FERRO_PLUGIN_EXPORT(null_query)
