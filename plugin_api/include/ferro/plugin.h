/* ferro plugin ABI — the plugin descriptor and the single exported entry point.
 *
 * A plugin shared library exports exactly one symbol, FERRO_PLUGIN_ENTRY_NAME:
 *
 *     ferro_status ferro_plugin_query(const ferro_host_api* host,
 *                                     const ferro_plugin_desc** out_desc);
 *
 * It returns NULL and sets *out_desc to static const data (borrowed for the lifetime of the
 * library), or returns an error status. It must be cheap, must not create devices, and may be
 * called more than once. The host reads struct_size, abi_major and abi_minor first and refuses
 * a major other than its own before reading anything else.
 *
 * Include this header (it includes the others) to write a plugin in C; C++ authors include
 * ferro/plugin.hpp.
 *
 * Since: 1.0. */
#ifndef FERRO_PLUGIN_H
#define FERRO_PLUGIN_H

#include "ferro/abi.h"
#include "ferro/engine.h"
#include "ferro/extension.h"
#include "ferro/family.h"
#include "ferro/host.h"
#include "ferro/status.h"
#include "ferro/types.h"

FERRO_EXTERN_C_BEGIN

#define FERRO_PLUGIN_ENTRY_NAME "ferro_plugin_query"

typedef struct ferro_plugin_desc {
    uint32_t struct_size;
    uint32_t abi_major; /* FERRO_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor; /* FERRO_ABI_MINOR the plugin was built with */
    uint32_t reserved;
    const char* name;        /* unique plugin name: "linalg", "engine_vulkan" */
    const char* version;     /* semantic version of the plugin */
    const char* description; /* one line */
    uint32_t n_engines;
    uint32_t n_families;
    const ferro_engine_desc* engines;
    const ferro_family_desc* families;
    uint32_t n_module_providers;
    uint32_t reserved2;
    const ferro_module_provider_desc* module_providers;
    /* Since 1.11: optional features (ferro/extension.h), NULL for none. */
    const ferro_extension* extensions;
} ferro_plugin_desc;
FERRO_STRUCT_TRAITS(ferro_plugin_desc, extensions);

typedef ferro_status (*ferro_plugin_query_fn)(const ferro_host_api* host, const ferro_plugin_desc** out_desc);

/* FERRO_PLUGIN_EXPORT(fn) defines the exported entry, forwarding to `fn`, when the plugin is
 * built as a loadable module (FERRO_PLUGIN_MODULE defined, as ferro_add_plugin() does). In a
 * static build it expands to nothing, so tests can link several plugins into one binary and
 * call their query functions directly. */
#if defined(FERRO_PLUGIN_MODULE)
#define FERRO_PLUGIN_EXPORT(fn)                                                                              \
    FERRO_EXTERN_C FERRO_EXPORT_SYMBOL ferro_status ferro_plugin_query(const ferro_host_api* host,           \
                                                                       const ferro_plugin_desc** out_desc) { \
        return fn(host, out_desc);                                                                           \
    }
#else
#define FERRO_PLUGIN_EXPORT(fn)
#endif

FERRO_EXTERN_C_END

#endif /* FERRO_PLUGIN_H */
