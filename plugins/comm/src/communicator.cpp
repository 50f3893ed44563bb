// One communicator per runtime, found by the host services table the runtime lends (one table
// per runtime), and the single-process communicator.
#include "comm.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <string>

namespace ferro::comm {
namespace {

class SelfCommunicator final : public Communicator {
public:
    int64_t rank() const override { return 0; }
    int64_t size() const override { return 1; }
    const char* kind() const override { return "self"; }
    // Every collective of one process leaves its buffer as it is (the copy into it was all).
    void run(const Call&, std::span<const int64_t>, HostBuffer) override {}
};

struct Registry {
    std::mutex mutex;
    std::map<const ferro_host_api*, std::weak_ptr<Communicator>> by_host;
    std::map<const ferro_host_api*, std::string> failures;  // why the last attempt made none
};

Registry& registry() {
    static Registry r;
    return r;
}

// The communicator the application gave the runtime (ABI 1.16), kind NULL when none.
ferro_communicator adopted_communicator(const ferro_host_api* host) {
    ferro_communicator c{sizeof c, 0, nullptr, nullptr, 0};
    if (host->abi_minor >= 16 && FERRO_HAS_FIELD(host, ferro_host_api, runtime_communicator)) {
        plugin::check(host, host->runtime_communicator(host, &c));
    }
    return c;
}

std::shared_ptr<Communicator> make_communicator(const ferro_host_api* host) {
    const ferro_communicator adopted = adopted_communicator(host);
    if (adopted.kind != nullptr) {
        if (std::strcmp(adopted.kind, FERRO_COMMUNICATOR_MPI) != 0) {
            throw plugin::Error(FERRO_INVALID_ARGUMENT, std::string("comm: the runtime was given a communicator of kind '") +
                                                            adopted.kind + "'; this plugin knows '" FERRO_COMMUNICATOR_MPI "'");
        }
#ifdef FERRO_COMM_MPI
        return make_mpi_communicator(&adopted);
#else
        throw plugin::Error(FERRO_UNIMPLEMENTED,
                            "comm: the runtime was given an MPI communicator, but libferro_comm.so was built without MPI "
                            "(install libopenmpi-dev and rebuild)");
#endif
    }
    if (const int64_t launched = launcher_size(); launched > 0) {
#ifdef FERRO_COMM_MPI
        return make_mpi_communicator(nullptr);
#else
        throw plugin::Error(FERRO_UNIMPLEMENTED, "comm: an MPI launcher started this process as one of " +
                                                     std::to_string(launched) +
                                                     " ranks, but libferro_comm.so was built without MPI (install "
                                                     "libopenmpi-dev and rebuild)");
#endif
    }
    return make_self_communicator();
}

int64_t env_i64(const char* name) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return 0;
    char* end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    return *end == '\0' && v > 0 ? v : 0;
}

}  // namespace

std::shared_ptr<Communicator> make_self_communicator() { return std::make_shared<SelfCommunicator>(); }

int64_t launcher_size() {
    // Open MPI's mpirun, then MPICH's hydra and Slurm's PMI; PMIx launchers name the rank only.
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
        if (const int64_t n = env_i64(name); n > 0) return n;
    }
    return std::getenv("PMIX_RANK") != nullptr ? 1 : 0;
}

std::shared_ptr<Communicator> communicator_for(const ferro_host_api* host) {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    std::weak_ptr<Communicator>& slot = r.by_host[host];
    std::shared_ptr<Communicator> c = slot.lock();
    if (c == nullptr) {
        try {
            c = make_communicator(host);
        } catch (const std::exception& e) {
            r.failures[host] = e.what();
            throw;
        }
        r.failures.erase(host);
        slot = c;
    }
    return c;
}

std::string communicator_failure(const ferro_host_api* host) {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    const auto it = r.failures.find(host);
    return it != r.failures.end() ? it->second : std::string();
}

std::shared_ptr<Communicator> existing_communicator(const ferro_host_api* host) {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    const auto it = r.by_host.find(host);
    if (it == r.by_host.end()) return nullptr;
    std::shared_ptr<Communicator> c = it->second.lock();
    if (c == nullptr) r.by_host.erase(it);
    return c;
}

}  // namespace ferro::comm
