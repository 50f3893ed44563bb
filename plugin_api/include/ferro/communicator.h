/* ferro plugin ABI — the communicator a runtime was given by the application.
 *
 * An application that already runs on MPI (through its own MPI_Init or mpi4py) hands the
 * runtime the communicator to use, type-erased: ferro's headers and libferro do not depend on
 * MPI. The comm family reads it back through ferro_host_api.runtime_communicator and runs its
 * collectives on it.
 *
 * Since: 1.16. */
#ifndef FERRO_COMMUNICATOR_H
#define FERRO_COMMUNICATOR_H

#include "ferro/abi.h"

FERRO_EXTERN_C_BEGIN

/* The kind of an MPI communicator: `handle` points at an MPI_Comm of `bytes` bytes
 * (sizeof(MPI_Comm)). For mpi4py, MPI._addressof(comm) is that address. */
#define FERRO_COMMUNICATOR_MPI "mpi"

/* A type-erased communicator. The host copies the `bytes` bytes at `handle` when the runtime is
 * created; the communicator they name must stay valid (not freed, MPI not finalised) until the
 * runtime is destroyed. kind NULL: none. */
typedef struct ferro_communicator {
    uint32_t struct_size;
    uint32_t reserved;
    const char* kind;   /* FERRO_COMMUNICATOR_MPI, or NULL for none */
    const void* handle; /* the communicator handle's bytes */
    uint64_t bytes;     /* how many: the handle type's size, which the module checks */
} ferro_communicator;
FERRO_STRUCT_TRAITS(ferro_communicator, bytes);

FERRO_EXTERN_C_END

#endif /* FERRO_COMMUNICATOR_H */
