// The host object: holds the current Snapshot behind a pointer swapped under a mutex, an epoch
// counter, the logger and the host services table handed to plugins. Thread-safe.
#pragma once

#include "dispatch/dispatcher.hpp"
#include "registry/registration.hpp"
#include "runtime/search_path.hpp"
#include "runtime/snapshot.hpp"
#include "support/logging.hpp"

#include <ferro/host.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace ferro::host {

struct RuntimeOptions {
    std::vector<std::string> plugin_paths;  // searched first
    bool use_environment_path = true;       // FERRO_PLUGIN_PATH
    bool use_default_dir = true;            // lib/ferro/plugins next to libferro
    bool autoload = true;                   // scan the search path at creation
    std::optional<uint32_t> log_level;      // unset: FERRO_LOG_LEVEL, else warn
    LogCallback log_callback = nullptr;
    void* log_user = nullptr;
    uint64_t plan_cache_max_entries = 4096;
    uint64_t plan_cache_max_bytes = uint64_t{256} << 20;
    // The application's communicator (ferro/communicator.h): its kind ("" for none) and a
    // copy of its handle's bytes, lent to the comm family through the host services.
    std::string communicator_kind;
    std::vector<std::byte> communicator;
};

// The outcome of loading one file.
struct LoadResult {
    std::string plugin;                    // name, when loaded
    std::optional<Diagnostic> diagnostic;  // set when the load failed
    bool already_loaded = false;           // the file (by canonical path) was loaded before: nothing done
};

class Runtime {
public:
    explicit Runtime(RuntimeOptions options);
    ~Runtime();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    // Unique in the process, never reused (per-thread caches key on it).
    uint64_t id() const noexcept { return id_; }

    // The snapshot in force now; callers keep it for the duration of their work.
    SnapshotPtr snapshot() const;
    uint64_t epoch() const { return snapshot()->epoch; }
    // The epoch of the current snapshot without pinning it (a hint: it may change right after).
    uint64_t current_epoch() const noexcept { return epoch_.load(std::memory_order_acquire); }
    const std::atomic<uint64_t>& epoch_counter() const noexcept { return epoch_; }

    // Loads one plugin file: open, entry, query, abi, validate, probe, register. A failure is
    // recorded as a diagnostic (in the returned result and in the next snapshot) and leaves
    // everything else as it was; it never throws for a bad file. A file already loaded (the
    // same file by canonical path) is left as it is and reported as already loaded.
    LoadResult load_plugin(const std::filesystem::path& path);
    // Loads every candidate file of every search directory; returns the results in order.
    std::vector<LoadResult> load_search_path();
    // Unloads a plugin. FAILED_PRECONDITION while objects it created are alive (tensors on its
    // engines, cached plans); NOT_FOUND when no plugin has that name.
    void unload_plugin(const std::string& name);

    std::vector<SearchDir> search_path() const;
    const RuntimeOptions& options() const noexcept { return options_; }
    const Logger& logger() const noexcept { return logger_; }
    const ferro_host_api* host_api() const noexcept { return &host_api_; }

    // Copy-on-write transaction: copies the current snapshot, applies `edit`, publishes the
    // copy as epoch + 1. An edit that throws publishes nothing.
    void reconfigure(const std::function<void(Snapshot&)>& edit);

    // The op handle for a qualified name; interned for the runtime's lifetime. Resolution
    // against the snapshot happens (and is cached per epoch) at each call.
    ferro_op_impl& op(const std::string& qualified_name);
    // Handles of every core op by its ferro_core_op number, and of a family's declared rule
    // calls (interned once per list of names): what the host hands VJP and JVP rules.
    std::span<const ferro_op> core_rule_ops() const noexcept { return core_rule_ops_; }
    std::span<const ferro_op> rule_ops(std::span<const char* const> names);
    // Calls an op eagerly; inputs borrowed, outputs new references.
    Outputs call(ferro_op_impl& op, std::span<const ferro_named_attr> attrs, std::span<ferro_tensor_impl* const> inputs);
    Dispatcher& dispatcher() noexcept { return *dispatcher_; }
    Outputs call(const std::string& qualified_name, std::span<const ferro_named_attr> attrs,
                 std::span<ferro_tensor_impl* const> inputs);
    PlanCache& plan_cache() noexcept { return dispatcher_->plan_cache(); }
    // The plan cache's statistics, with the op handles' hits and misses.
    PlanCacheStats plan_cache_stats();
    // Drops every cached plan (plans hold their plugin's library, so this runs before an
    // unload counts live objects).
    void clear_plans();
    // The engine named `name` in the current snapshot; NOT_FOUND listing the available ones.
    EnginePtr engine(const std::string& name) const;

private:
    void register_builtins();
    RegistrationContext registration_context();
    static void attach_core_host_ops(Snapshot& s);
    void publish(std::shared_ptr<Snapshot> next);
    void record_diagnostic(Diagnostic diagnostic);
    LoadResult load_one(const std::filesystem::path& path);
    // Warns about ops the rules of `plugins`' families call that no loaded plugin provides.
    void warn_unresolved_rule_calls(const std::vector<std::string>& plugins);

    RuntimeOptions options_;
    Logger logger_;
    ferro_host_api host_api_{};
    mutable std::mutex snapshot_mutex_;  // guards current_ (the pointer, not the snapshot)
    SnapshotPtr current_;
    std::atomic<uint64_t> epoch_{0};  // current_->epoch, readable without the mutex
    std::mutex writer_mutex_;         // serialises reconfigure transactions
    std::mutex ops_mutex_;
    std::unordered_map<std::string, std::unique_ptr<ferro_op_impl>> ops_;
    std::array<ferro_op, FERRO_CORE_OP_COUNT> core_rule_ops_{};
    std::mutex rule_ops_mutex_;
    std::map<std::vector<std::string>, std::vector<ferro_op>> rule_ops_;  // by the names
    const uint64_t id_ = next_id();
    static uint64_t next_id() noexcept;
    // Declared last, destroyed first: cached plans go before the modules and libraries of the
    // snapshot they came from.
    std::unique_ptr<Dispatcher> dispatcher_;
};

}  // namespace ferro::host
