/* ferro plugin ABI — typed extensions: optional features as a chain of structs, so that the
 * core tables stop growing for what few plugins use (as PJRT's PJRT_Extension_Base).
 *
 * A chain hangs off a struct's `extensions` field (ferro_plugin_desc, since 1.11). Each link
 * starts with a ferro_extension whose `type` says which struct it begins and whose `next` is
 * the following link (NULL ends the chain). A reader walks the chain, takes the types it knows
 * and skips the others: a plugin may carry extensions a host does not know, and the other way
 * round. A link of a known type whose struct_size is too small for it, or a chain longer than
 * FERRO_MAX_EXTENSIONS, makes the descriptor invalid. Links are borrowed for as long as the
 * struct they hang off.
 *
 * Since: 1.11. Thread-safety: read-only data. */
#ifndef FERRO_EXTENSION_H
#define FERRO_EXTENSION_H

#include "ferro/abi.h"

#include <stdint.h>

FERRO_EXTERN_C_BEGIN

typedef struct ferro_extension {
    uint32_t struct_size; /* of the whole link: the struct this base begins */
    uint32_t type;        /* FERRO_EXT_* */
    const struct ferro_extension* next;
} ferro_extension;
FERRO_STRUCT_TRAITS(ferro_extension, next);

#define FERRO_MAX_EXTENSIONS 64u

/* The first link of `type` in `chain`, or NULL. Stops after FERRO_MAX_EXTENSIONS links. */
static inline const ferro_extension* ferro_find_extension(const ferro_extension* chain, uint32_t type) {
    uint32_t seen = 0;
    for (const ferro_extension* e = chain; e != NULL && seen < FERRO_MAX_EXTENSIONS; e = e->next, ++seen) {
        if (e->type == type) return e;
    }
    return NULL;
}

/* ---- FERRO_EXT_OP_VIEWS: outputs that share an input's storage -------------------------- */

#define FERRO_EXT_OP_VIEWS 1u

/* ferro_op_view.flags */
#define FERRO_OP_VIEW_MAY_COPY 0x1u /* a view when the input's layout allows, else a copy */

/* Output `output` of op `op` (an index into the family's ops) is a view of input `input`: it
 * shares that input's storage, so a write to one is seen through the other (PyTorch's alias
 * annotation, `Tensor(a) self -> Tensor(a)`). */
typedef struct ferro_op_view {
    uint32_t op;
    uint32_t output;
    uint32_t input;
    uint32_t flags; /* FERRO_OP_VIEW_* */
} ferro_op_view;

/* The views among the ops of one family of the plugin. In 1.x a plugin's op outputs are
 * buffers the host allocates, so only the host's own ops return views: the host refuses a
 * plugin file whose descriptor carries this extension. It is part of the ABI so that what the
 * host declares of its ops reads the same way as everything else a family declares, and so
 * that a later major can open it to plugins. */
typedef struct ferro_op_views_ext {
    ferro_extension base; /* type FERRO_EXT_OP_VIEWS */
    const char* family_id;
    uint32_t n_views;
    uint32_t reserved;
    const ferro_op_view* views; /* n_views entries */
} ferro_op_views_ext;
FERRO_STRUCT_TRAITS(ferro_op_views_ext, views);

/* ---- FERRO_EXT_RULE_CALLS: the ops a family's rules call, resolved once ----------------- */

#define FERRO_EXT_RULE_CALLS 2u

/* The ops (qualified names, "linalg.solve") that the VJP and JVP rules of family `family_id`
 * of this plugin call besides the core ops, which every rule gets anyway (ferro/core_ops.h).
 * The host resolves them once per runtime, hands the handles to every rule of the family in
 * this order (ferro_vjp_args.family_ops, ferro_jvp_args.family_ops), and warns at load time
 * about a name no loaded plugin provides. Since 1.12. */
typedef struct ferro_rule_calls_ext {
    ferro_extension base; /* type FERRO_EXT_RULE_CALLS */
    const char* family_id;
    uint32_t n_ops; /* at most FERRO_MAX_RULE_CALLS */
    uint32_t reserved;
    const char* const* ops; /* n_ops qualified names */
} ferro_rule_calls_ext;
FERRO_STRUCT_TRAITS(ferro_rule_calls_ext, ops);

#define FERRO_MAX_RULE_CALLS 1024u

FERRO_EXTERN_C_END

#endif /* FERRO_EXTENSION_H */
