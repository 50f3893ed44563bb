// The comm family: collectives over the processes of a communicator (torch.distributed's and
// MPI's semantics), differentiable. One Communicator per runtime, shared by the family's
// modules on every engine: "self" (one process; any engine) or "mpi" (Open MPI; host memory).
#pragma once

#include <ferro/host.h>
#include <ferro/rules.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace ferro::comm {

enum class Op : uint32_t { allreduce, allgather, reduce_scatter, broadcast, reduce, barrier, info, count };
enum class Reduction : int64_t { sum, max, min };

const char* op_name(Op op);                 // "allreduce"
std::string qualified(Op op);               // "comm.allreduce"
const ferro_op_schema* schemas();           // Op::count entries
std::span<const char* const> rule_calls();  // the collectives, in Op order up to reduce

// What one call asks, from its normalised attributes (schema order; see comm_schemas.cpp).
struct Call {
    Op op = Op::count;
    Reduction reduction = Reduction::sum;
    int64_t root = 0;
    double timeout_s = 0;  // resolved: the attribute, else FERRO_COMM_TIMEOUT, else 600
};
Call describe(Op op, const ferro_attr_value* attrs);

// Contiguous memory a collective works on in place: host memory for the mpi communicator (the
// self communicator does not touch it, wherever it is).
struct HostBuffer {
    void* data;
    int64_t count;  // elements
    ferro_dtype dtype;
};

// The processes ops run across. Thread-safe.
class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int64_t rank() const = 0;
    virtual int64_t size() const = 0;
    virtual const char* kind() const = 0;  // "self" | "mpi"
    // The collective on `buffer`, in place, on host memory (the mpi communicator: each first
    // checks that every rank called it with the same signature: op, dtype, shape digest,
    // attributes). The self communicator does nothing: its buffer holds the answer already.
    virtual void run(const Call& call, std::span<const int64_t> signature, HostBuffer buffer) = 0;
};

// The runtime's communicator: made at the first module request of a runtime (from the
// communicator the application gave it, else MPI_COMM_WORLD when an MPI launcher started the
// process, else self) and kept while a module holds it.
std::shared_ptr<Communicator> communicator_for(const ferro_host_api* host);
// The one a module of this runtime holds, or null; and why making one failed, if it did.
std::shared_ptr<Communicator> existing_communicator(const ferro_host_api* host);
std::string communicator_failure(const ferro_host_api* host);

std::shared_ptr<Communicator> make_self_communicator();
// Ranks an MPI launcher (mpirun, srun) says this process has, 0 when none started it.
int64_t launcher_size();
#ifdef FERRO_COMM_MPI
// `adopted`: an MPI_Comm's bytes the application handed over, or null for MPI_COMM_WORLD
// (initialising MPI when nobody has).
std::shared_ptr<Communicator> make_mpi_communicator(const ferro_communicator* adopted);
#endif

// ---- autodiff rules (comm_rules.cpp) ----
ferro_status vjp(Op op, const ferro_host_api* host, const ferro_vjp_args* args);
ferro_status jvp(Op op, const ferro_host_api* host, const ferro_jvp_args* args);

}  // namespace ferro::comm
