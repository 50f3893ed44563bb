// The MPI communicator: a duplicate of the application's communicator or of MPI_COMM_WORLD
// (so ferro's collectives never match the application's own), every collective nonblocking
// and polled against a deadline. Open MPI 4.1 has no fault tolerance (ULFM) by default: a rank
// that fails or stops calling leaves the others waiting forever inside a blocking collective;
// polled, they get DEADLINE_EXCEEDED instead.
#include "comm.hpp"

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ferro::comm {
namespace {

using Clock = std::chrono::steady_clock;

std::string mpi_error(int code) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(code, text, &length);
    return std::string(text, static_cast<size_t>(length));
}

void mpi_check(int code, const std::string& what) {
    if (code != MPI_SUCCESS) throw plugin::Error(FERRO_INTERNAL, what + ": " + mpi_error(code));
}

void finalize_at_exit() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) MPI_Finalize();
}

// MPI_Init_thread once per process when nobody has called it, with MPI_Finalize at exit (the
// plugin stays loaded until then). Returns the thread level MPI provides.
int ensure_initialized() {
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized != 0) {
        throw plugin::Error(FERRO_FAILED_PRECONDITION, "comm: MPI was finalised in this process already; it cannot start again");
    }
    int initialized = 0, provided = MPI_THREAD_SINGLE;
    MPI_Initialized(&initialized);
    if (initialized == 0) {
        mpi_check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "comm: MPI_Init_thread");
        plugin::stay_resident(reinterpret_cast<const void*>(&finalize_at_exit));
        std::atexit(finalize_at_exit);
    } else {
        MPI_Query_thread(&provided);
    }
    return provided;
}

MPI_Datatype mpi_type(ferro_dtype dtype) {
    switch (dtype) {
        case FERRO_DTYPE_F32: return MPI_FLOAT;
        case FERRO_DTYPE_F64: return MPI_DOUBLE;
        case FERRO_DTYPE_C64: return MPI_C_FLOAT_COMPLEX;
        case FERRO_DTYPE_C128: return MPI_C_DOUBLE_COMPLEX;
        case FERRO_DTYPE_I64: return MPI_INT64_T;
        default: throw plugin::Error(FERRO_INTERNAL, "comm: no MPI datatype for dtype " + std::to_string(dtype));
    }
}

MPI_Op mpi_op(Reduction r) { return r == Reduction::max ? MPI_MAX : r == Reduction::min ? MPI_MIN : MPI_SUM; }

size_t element_bytes(ferro_dtype dtype) { return FERRO_DTYPE_BITS(dtype) / 8; }

// Buffers of a collective that timed out: MPI may still write or read them if a late rank
// joins, so they are never freed.
std::mutex abandoned_mutex;
std::vector<std::vector<std::byte>>* abandoned = new std::vector<std::vector<std::byte>>;  // NOLINT: process lifetime

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator(MPI_Comm parent, const char* origin) {
        const int provided = ensure_initialized();
        serialize_ = provided < MPI_THREAD_MULTIPLE;
        mpi_check(MPI_Comm_dup(parent, &comm_), std::string("comm: MPI_Comm_dup of ") + origin);
        MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
        int rank = 0, size = 0;
        MPI_Comm_rank(comm_, &rank);
        MPI_Comm_size(comm_, &size);
        rank_ = rank;
        size_ = size;
    }
    ~MpiCommunicator() override {
        int finalized = 0;
        MPI_Finalized(&finalized);
        if (finalized == 0 && broken_.empty()) MPI_Comm_free(&comm_);
    }
    MpiCommunicator(const MpiCommunicator&) = delete;
    MpiCommunicator& operator=(const MpiCommunicator&) = delete;

    int64_t rank() const override { return rank_; }
    int64_t size() const override { return size_; }
    const char* kind() const override { return "mpi"; }

    void run(const Call& call, std::span<const int64_t> signature, HostBuffer buffer) override {
        std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
        if (serialize_) lock.lock();
        const std::string op = qualified(call.op);
        {
            const std::lock_guard state(state_mutex_);
            if (!broken_.empty()) {
                throw plugin::Error(FERRO_FAILED_PRECONDITION, op + ": this communicator is unusable: " + broken_);
            }
        }
        const Clock::time_point deadline =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(call.timeout_s));
        check_signatures(call, op, signature, deadline);
        collective(call, op, buffer, deadline);
    }

private:
    // Every rank's signature equal: one MIN allreduce over (s, -s) gives each field's minimum
    // and maximum across ranks.
    void check_signatures(const Call& call, const std::string& op, std::span<const int64_t> signature,
                          Clock::time_point deadline) {
        std::vector<int64_t> both(signature.size() * 2);
        for (size_t i = 0; i < signature.size(); ++i) both[i] = signature[i], both[signature.size() + i] = -signature[i];
        std::vector<std::byte> staging(both.size() * sizeof(int64_t));
        std::memcpy(staging.data(), both.data(), staging.size());
        MPI_Request request = MPI_REQUEST_NULL;
        mpi_check(
            MPI_Iallreduce(MPI_IN_PLACE, staging.data(), static_cast<int>(both.size()), MPI_INT64_T, MPI_MIN, comm_, &request),
            op + ": MPI_Iallreduce");
        wait(call, op, request, staging, deadline);
        std::memcpy(both.data(), staging.data(), staging.size());
        for (size_t i = 0; i < signature.size(); ++i) {
            if (both[i] != -both[signature.size() + i]) {
                throw plugin::Error(FERRO_INVALID_ARGUMENT,
                                    op + " on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                                        ": the ranks called it with different arguments (dtype, shape or attributes); every "
                                        "rank must make the same collective calls in the same order");
            }
        }
    }

    void collective(const Call& call, const std::string& op, HostBuffer b, Clock::time_point deadline) {
        const MPI_Datatype type = call.op == Op::barrier ? MPI_DATATYPE_NULL : mpi_type(b.dtype);
        const size_t bytes = call.op == Op::barrier ? 0 : static_cast<size_t>(b.count) * element_bytes(b.dtype);
        // MPI works on a buffer of ours, so a timed-out call can leave it behind (see abandoned).
        std::vector<std::byte> staging(bytes);
        if (bytes > 0) std::memcpy(staging.data(), b.data, bytes);
        const int64_t per_rank = call.op == Op::allgather || call.op == Op::reduce_scatter ? b.count / size_ : b.count;
        if (per_rank > INT_MAX) {
            throw plugin::Error(FERRO_OUT_OF_RANGE, op + ": " + std::to_string(per_rank) +
                                                        " elements per rank; MPI counts stop at 2^31 - 1 (split the tensor)");
        }
        const int count = static_cast<int>(per_rank);
        MPI_Request request = MPI_REQUEST_NULL;
        int code = MPI_SUCCESS;
        switch (call.op) {
            case Op::allreduce:
                code = MPI_Iallreduce(MPI_IN_PLACE, staging.data(), count, type, mpi_op(call.reduction), comm_, &request);
                break;
            case Op::allgather:
                code = MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, staging.data(), count, type, comm_, &request);
                break;
            case Op::reduce_scatter:
                code = MPI_Ireduce_scatter_block(MPI_IN_PLACE, staging.data(), count, type, MPI_SUM, comm_, &request);
                break;
            case Op::broadcast:
                code = MPI_Ibcast(staging.data(), count, type, static_cast<int>(call.root), comm_, &request);
                break;
            case Op::reduce:
                code = MPI_Ireduce(rank_ == call.root ? MPI_IN_PLACE : staging.data(), staging.data(), count, type, MPI_SUM,
                                   static_cast<int>(call.root), comm_, &request);
                break;
            case Op::barrier: code = MPI_Ibarrier(comm_, &request); break;
            case Op::info:
            case Op::count: throw plugin::Error(FERRO_INTERNAL, op + ": not a collective");
        }
        mpi_check(code, op + ": starting the collective");
        wait(call, op, request, staging, deadline);
        if (bytes > 0) std::memcpy(b.data, staging.data(), bytes);
    }

    // Polls `request` until it completes or the deadline passes: spinning first (small
    // collectives finish in microseconds), then yielding, then sleeping briefly.
    void wait(const Call& call, const std::string& op, MPI_Request& request, std::vector<std::byte>& staging,
              Clock::time_point deadline) {
        const Clock::time_point start = Clock::now();
        for (uint64_t polls = 0;; ++polls) {
            int done = 0;
            mpi_check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), op + ": MPI_Test");
            if (done != 0) return;
            const Clock::time_point now = Clock::now();
            if (now >= deadline) break;
            if (now - start < std::chrono::microseconds(200)) continue;
            if (now - start < std::chrono::milliseconds(5)) {
                std::this_thread::yield();
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
        }
        {
            const std::lock_guard lock(abandoned_mutex);
            abandoned->push_back(std::move(staging));
        }
        const std::string reason = op + " timed out on rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                                   " after " + std::to_string(call.timeout_s) +
                                   " s: not every rank joined it (a rank failed, stopped or made other calls)";
        {
            const std::lock_guard state(state_mutex_);
            broken_ = reason;
        }
        throw plugin::Error(FERRO_DEADLINE_EXCEEDED, reason + "; this communicator refuses further collectives");
    }

    MPI_Comm comm_ = MPI_COMM_NULL;
    int64_t rank_ = 0, size_ = 1;
    bool serialize_ = false;
    std::mutex mutex_;        // held around each collective when MPI is not MPI_THREAD_MULTIPLE
    std::mutex state_mutex_;  // guards broken_
    std::string broken_;      // why the communicator is unusable (a collective timed out)
};

}  // namespace

std::shared_ptr<Communicator> make_mpi_communicator(const ferro_communicator* adopted) {
    if (adopted == nullptr) return std::make_shared<MpiCommunicator>(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    if (adopted->bytes != sizeof(MPI_Comm)) {
        throw plugin::Error(FERRO_INVALID_ARGUMENT, "comm: the runtime's MPI communicator handle is " +
                                                        std::to_string(adopted->bytes) + " bytes; an MPI_Comm of this MPI is " +
                                                        std::to_string(sizeof(MPI_Comm)) + " (built against another MPI?)");
    }
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized == 0) {
        throw plugin::Error(FERRO_FAILED_PRECONDITION,
                            "comm: the runtime was given an MPI communicator, but MPI is not initialised in this process");
    }
    MPI_Comm parent = MPI_COMM_NULL;
    std::memcpy(&parent, adopted->handle, sizeof parent);
    return std::make_shared<MpiCommunicator>(parent, "the application's communicator");
}

}  // namespace ferro::comm
