/* ferro plugin ABI — statuses.
 *
 * A ferro_status is an opaque pointer-sized token: NULL means success; anything else is a
 * host-allocated error object carrying a code, a message and optionally the phase and the op it
 * happened in. Plugins create statuses with host->status_make() and never free a status they
 * return (ownership moves to the caller). Whoever handles an error frees it exactly once:
 * applications with ferro_status_free(), plugins with host->status_free().
 *
 * Since: 1.0. Thread-safety: a status is an immutable value; distinct statuses may be used from
 * distinct threads, one status from one thread at a time. */
#ifndef FERRO_STATUS_H
#define FERRO_STATUS_H

#include "ferro/abi.h"

FERRO_EXTERN_C_BEGIN

typedef struct ferro_status_impl* ferro_status;

/* Canonical codes (same numbering as absl/gRPC), plus two of ferro's own. Stored in uint32_t. */
enum ferro_status_code {
    FERRO_OK = 0,
    FERRO_CANCELLED = 1,
    FERRO_UNKNOWN = 2,
    FERRO_INVALID_ARGUMENT = 3,
    FERRO_DEADLINE_EXCEEDED = 4,
    FERRO_NOT_FOUND = 5,
    FERRO_ALREADY_EXISTS = 6,
    FERRO_PERMISSION_DENIED = 7,
    FERRO_RESOURCE_EXHAUSTED = 8,
    FERRO_FAILED_PRECONDITION = 9,
    FERRO_ABORTED = 10,
    FERRO_OUT_OF_RANGE = 11,
    FERRO_UNIMPLEMENTED = 12,
    FERRO_INTERNAL = 13,
    FERRO_UNAVAILABLE = 14,
    FERRO_DATA_LOSS = 15,
    FERRO_UNAUTHENTICATED = 16,
    /* The plugin was built for an ABI major this host does not speak. */
    FERRO_INCOMPATIBLE = 100,
    /* A gradient was requested through an output or input the op declares non-differentiable. */
    FERRO_NOT_DIFFERENTIABLE = 101
};

/* Where an error happened; the host annotates the statuses it returns to applications as they
 * cross its layers (ferro_status_phase, ferro.h; since 1.10). */
enum ferro_phase {
    FERRO_PHASE_NONE = 0,
    FERRO_PHASE_LOAD = 1,
    FERRO_PHASE_PREPARE = 2,
    FERRO_PHASE_EXECUTE = 3,
    FERRO_PHASE_BACKWARD = 4
};

FERRO_EXTERN_C_END

#endif /* FERRO_STATUS_H */
